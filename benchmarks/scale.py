"""kvdrill at scale: 10,000 cards and 1,000,000 reviews.

Builds such a database (executemany in one transaction), then times
- `collect_stats` in-process and `kvdrill stats --json` as a subprocess,
- choosing a quiz session: the SQL shape "due <= now ordered by state then due,
  limit N", and the quiz's own planning (its questions' due cards, limited in
  SQL, the questions never seen, today's new cards; then the plan),
- `export` of every review as JSON Lines and CSV, and `import` of the JSON Lines
  file into a fresh database (merge, then the replay of every review).

Reviews are spread over two years with ten-minute-ish gaps on the same day, so a
day has ~1,400 reviews; 5 % are cram, 6 % name a misconception (20 kinds).

    python benchmarks/scale.py [--cards 10000] [--reviews 1000000] [--json] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from drill.srs import iso, make_scheduler  # noqa: E402
from drill.storage.database import open_db  # noqa: E402

NOW = datetime(2026, 11, 18, 15, 0, tzinfo=timezone.utc)
HISTORY_DAYS = 730
TOPICS = [f"topic-{i:02d}" for i in range(12)]
MISCONCEPTIONS = [f"mistake-{i:02d}" for i in range(20)]
REMOVED_SHARE = 0.01  # questions with history that left the bank


def build(path: Path, cards: int, reviews: int, seed: int = 0) -> None:
    """A database with `cards` cards and `reviews` reviews, written in one transaction."""
    rng = random.Random(seed)
    db = open_db(path)
    qids = [f"q-{i:05d}" for i in range(cards)]
    start = NOW - timedelta(days=HISTORY_DAYS)
    span_s = HISTORY_DAYS * 86400
    review_rows = []
    last_seen: dict[str, str] = {}
    for n in range(reviews):
        # times spread evenly over the span, in order, like a real history
        at = start + timedelta(seconds=span_s * n / reviews + rng.random())
        qid = qids[rng.randrange(cards)]
        rating = rng.choices((1, 2, 3, 4), weights=(12, 8, 65, 15))[0]
        graded = rng.random() < 0.7
        wrong_with_name = graded and rating == 1 and rng.random() < 0.5
        when = iso(at)
        last_seen[qid] = when
        review_rows.append(
            (
                str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                qid,
                when,
                rating,
                (1 if rating > 1 else 0) if graded else None,
                "0.5 GiB",
                rng.randrange(2**31),
                '{"layers":32,"kv_heads":8}' if graded else None,
                536870912.0 if graded else None,
                "bytes" if graded else None,
                rng.choice(MISCONCEPTIONS) if wrong_with_name else None,
                rng.randrange(2000, 60000),
                None,
                1 if rng.random() < 0.05 else 0,
            )
        )
    card_rows = []
    for qid in qids:
        state = rng.choices((1, 2, 3), weights=(5, 90, 5))[0]
        due = NOW + timedelta(days=rng.uniform(-20, 90))
        card_rows.append(
            (
                qid,
                state,
                0 if state == 2 else 1,
                rng.uniform(0.5, 200),
                rng.uniform(1, 10),
                iso(due),
                last_seen.get(qid, iso(NOW - timedelta(days=30))),
                rng.randrange(1, 200),
                rng.randrange(0, 10),
            )
        )
    conn = db.conn
    conn.execute("BEGIN")
    conn.executemany(
        "insert into reviews (id, question_id, reviewed_at, rating, correct, answer, seed,"
        " params, expected, unit, misconception, duration_ms, session_id, cram)"
        " values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        review_rows,
    )
    conn.executemany(
        "insert into cards (question_id, state, step, stability, difficulty, due, last_review,"
        " reps, lapses) values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        card_rows,
    )
    conn.execute("COMMIT")
    conn.close()  # no ANALYZE: a user's database never gets one either


@dataclass(frozen=True)
class FakeQuestion:
    id: str
    topic: str
    difficulty: int


def bank_of(cards: int) -> list[FakeQuestion]:
    kept = int(cards * (1 - REMOVED_SHARE))
    # a bank a little larger than the history: some questions were never asked
    return [
        FakeQuestion(f"q-{i:05d}", TOPICS[i % len(TOPICS)], 1 + i % 3) for i in range(kept + 50)
    ]


def timed(fn, repeat: int = 3) -> tuple[float, object]:
    """Best of `repeat` wall-clock seconds, and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def run(cards: int, reviews: int, workdir: Path) -> dict[str, float]:
    from drill.reports.stats import collect_stats
    from drill.storage.history_in import import_history
    from drill.storage.history_out import export_history

    figures: dict[str, float] = {}
    path = workdir / "scale.db"
    start = time.perf_counter()
    build(path, cards, reviews)
    figures["build_s"] = time.perf_counter() - start
    figures["db_mib"] = path.stat().st_size / 2**20

    db = open_db(path)
    questions = bank_of(cards)
    topics = {q.id: q.topic for q in questions}
    names = {m: m.replace("-", " ") for m in MISCONCEPTIONS}
    figures["stats_in_process_s"], _ = timed(
        lambda: collect_stats(db, NOW, topics=topics, misconception_names=names)
    )

    env = {**os.environ, "KVDRILL_HOME": str(workdir / "home"), "NO_COLOR": "1"}
    env.pop("KVDRILL_BANK", None)
    command = [sys.executable, "-m", "drill", "stats", "--json", "--db", str(path)]
    command += ["--now", iso(NOW)]
    figures["stats_cli_s"], _ = timed(
        lambda: subprocess.run(command, check=True, capture_output=True, env=env, cwd=REPO)
    )

    def due_sql():
        return db.execute(
            "select * from cards where due <= ? order by state, due limit 20", [iso(NOW)]
        ).fetchall()

    figures["due_sql_s"], _ = timed(due_sql, repeat=5)

    from drill.storage.reviews import new_cards_since
    from drill.storage.session_cards import due_cards, without_card
    from drill.study.plan import plan_review

    ids = [q.id for q in questions]

    def plan():  # the quiz's reads: its questions' due cards, limited, and the unseen ones
        due = due_cards(db, ids, iso(NOW), 20)
        new_today = new_cards_since(db, iso(NOW.replace(hour=0, minute=0)))
        return plan_review(questions, due, NOW, new_today=new_today, new_limit=10,
                           max_items=20, unseen=without_card(db, ids))  # fmt: skip

    figures["quiz_plan_s"], _ = timed(plan)
    today = iso(NOW.replace(hour=0, minute=0))
    figures["quiz_new_cards_since_s"], _ = timed(lambda: new_cards_since(db, today))


    for fmt in ("jsonl", "csv"):
        out = workdir / f"history.{fmt}"

        def export(out=out, fmt=fmt):
            with out.open("wb") as fh:
                return export_history(db, fh, fmt)

        figures[f"export_{fmt}_s"], count = timed(export, repeat=1)
        assert count == reviews, count

    fresh = open_db(workdir / "imported.db")
    start = time.perf_counter()
    result = import_history(fresh, workdir / "history.jsonl", make_scheduler(fuzz=False))
    figures["import_jsonl_s"] = time.perf_counter() - start
    assert result.added == reviews, result
    start = time.perf_counter()
    again = import_history(fresh, workdir / "history.jsonl", make_scheduler(fuzz=False))
    figures["import_again_s"] = time.perf_counter() - start
    assert again.added == 0, again
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=10_000)
    parser.add_argument("--reviews", type=int, default=1_000_000)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--keep", type=Path, help="build in this folder and keep the files")
    args = parser.parse_args()
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        figures = run(args.cards, args.reviews, args.keep)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            figures = run(args.cards, args.reviews, Path(tmp))
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"{args.cards:,} cards, {args.reviews:,} reviews, {os.cpu_count()} CPUs")
    for name, value in figures.items():
        print(f"  {name:<24} {value:9.3f}")


if __name__ == "__main__":
    main()
