"""Quiz start-up against the number of cards: 1,000 cards against 100,000.

Builds two databases whose cards are in a realistic mix of states (most in review,
some in learning and relearning, a few suspended or buried, about a fifth of the
built-in deck never seen), each card with the reviews that brought it there (one to
five, the last at its last review; a few cards were first answered today). The cards
beyond the built-in deck belong to questions of other decks, not loaded this time (or
removed since): a user with 100,000 cards has them from decks they are not drilling
today, and the quiz must not pay for them.

Then times `python -m drill quiz --now NOW` on each, from spawning to the first
question's position line, as benchmarks/startup.py does (a subprocess, killed there),
with the deck cache built (warm) and without it (cold: a fresh home, where the built-in
deck comes from its validated copy, question_bank/validated_deck.pickle), rounds interleaved
(1k, 100k, 100k cold, 1k cold, ...), after one warm-up run of each (which writes the
day's backup, as the first quiz of a day does). Printed: median wall and CPU time, peak
memory (VmHWM at the first question) and the ratios 100k/1k. The aims: 100k within
1.3x of 1k (wall, warm and cold), and at most 64 MiB at 100k. Beside them, the page
check every open runs (PRAGMA quick_check, timed in this process): it reads the whole
file, so it is the part of a start that grows with the history (about 1.3 ms per MiB),
and it is kept.

    python benchmarks/quiz_scale.py [--rounds 7] [--quick] [--json] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import bench_targets  # beside this script in benchmarks/

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

from startup import child_env, first_question  # noqa: E402

from drill.srs import iso  # noqa: E402
from drill.storage.database import open_db  # noqa: E402

NOW = datetime(2026, 11, 18, 15, 0, tzinfo=timezone.utc)
SIZES = (1_000, 100_000)
RATIO_LIMIT = 1.3
PEAK_LIMIT_MIB = 64.0
LEARNING, REVIEW, RELEARNING = 1, 2, 3


def deck_ids() -> list[str]:
    """The built-in deck's question ids, in bank order."""
    from drill.bank.loader import builtin_bank_files, load_bank

    return list(load_bank(builtin_bank_files()).ids)


def card_row(rng: random.Random, qid: str) -> tuple:
    """One card: state, schedule, holds (columns of INSERT_CARD). About one card in 250 is
    in learning or relearning (a day's new cards and lapses), the rest in review, due from
    two weeks ago to four months ahead; about one in 200 was answered today."""
    state = rng.choices((LEARNING, REVIEW, RELEARNING), weights=(2, 996, 2))[0]
    if state == REVIEW:
        due = NOW + timedelta(days=rng.uniform(-15, 120))
        stability = rng.uniform(1, 300)
        last = NOW - timedelta(days=rng.uniform(0.1, 90))
    else:  # a learning step of minutes: some passed already, some to come today
        due = NOW + timedelta(minutes=rng.uniform(-600, 60))
        stability = rng.uniform(0.1, 3)
        last = due - timedelta(minutes=10)
    reps = rng.randrange(1, 6)
    if rng.random() < 0.002:
        last = NOW - timedelta(hours=rng.uniform(0.5, 8))  # first answered today
        reps = 1
    held = rng.random()
    suspended = iso(last) if held < 0.01 else None
    buried = iso(NOW + timedelta(hours=6)) if 0.01 <= held < 0.015 else None
    return (qid, state, 0 if state == REVIEW else 1, stability, rng.uniform(1, 10), iso(due),
            iso(last), reps, rng.randrange(0, 4), suspended, buried)  # fmt: skip


INSERT_CARD = (
    "insert into cards (question_id, state, step, stability, difficulty, due, last_review,"
    " reps, lapses, suspended_at, buried_until) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
INSERT_REVIEW = (
    "insert into reviews (id, question_id, reviewed_at, rating, correct, answer, seed,"
    " params, expected, unit, misconception, duration_ms, session_id, cram)"
    " values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)"
)


def build(path: Path, cards: int, deck: list[str], seed: int = 0) -> None:
    """A database of `cards` cards (about four fifths of `deck` first), with their reviews."""
    rng = random.Random(seed)
    seen = [qid for qid in deck if rng.random() < 0.8]
    qids = (seen + [f"other-deck-q{i:06d}" for i in range(cards)])[:cards]
    card_rows = [card_row(rng, qid) for qid in qids]
    review_rows = []
    for qid, state, _, _, _, _, last, reps, *_ in card_rows:
        at = datetime.fromisoformat(last)
        for back in range(reps):
            rating = 1 if state == RELEARNING and back == 0 else rng.choice((2, 3, 3, 3, 4))
            review_rows.append((
                str(uuid.UUID(int=rng.getrandbits(128), version=4)), qid, iso(at), rating,
                int(rating > 1), "0.5 GiB", rng.randrange(2**31), '{"layers":32}', 5.4e8,
                "bytes", None, rng.randrange(2000, 60000), None,
            ))  # fmt: skip
            at -= timedelta(days=rng.uniform(1, 30))
    db = open_db(path, now=NOW)
    conn = db.conn
    conn.execute("BEGIN")
    conn.executemany(INSERT_CARD, card_rows)
    conn.executemany(INSERT_REVIEW, review_rows)
    conn.execute("COMMIT")
    conn.close()  # no ANALYZE: a user's database never gets one either


def quiz_command(db: Path) -> list[str]:
    return [sys.executable, "-m", "drill", "quiz", "--db", str(db), "--seed", "1",
            "--now", iso(NOW)]  # fmt: skip


def time_page_check(path: Path) -> tuple[float, float, float]:
    """(wall s, CPU s, file MiB) of the page check every open runs (PRAGMA quick_check):
    the part of a start that grows with the file, kept as a safety check."""
    conn = sqlite3.connect(path)
    start, cpu = time.perf_counter(), time.process_time()
    assert conn.execute("PRAGMA quick_check").fetchall() == [("ok",)]
    wall_s, cpu_s = time.perf_counter() - start, time.process_time() - cpu
    conn.close()
    return wall_s, cpu_s, path.stat().st_size / 2**20


def measure(workdir: Path, rounds: int, sizes: tuple[int, ...]) -> dict[str, list]:
    """Runs of each (size, warm|cold), rounds interleaved; each run (wall s, CPU s, MiB);
    and under "SIZE check", the page check's (wall s, CPU s, file MiB)."""
    deck = deck_ids()
    home = workdir / "home"
    env = child_env(home)
    paths = {}
    for size in sizes:
        paths[size] = workdir / f"cards{size}.db"
        if not paths[size].exists():
            build(paths[size], size, deck)
    found: dict[str, list] = {f"{size} {kind}": [] for size in sizes for kind in ("warm", "cold")}
    checks: dict[str, list] = {f"{size} check": [] for size in sizes}
    for size in sizes:  # warm-up: bytecode, the day's backup, the deck cache
        first_question(quiz_command(paths[size]), env)
    for n in range(rounds):
        order = [(size, kind) for size in sizes for kind in ("warm", "cold")]
        if n % 2:
            order.reverse()
        for size, kind in order:
            if kind == "cold":
                shutil.rmtree(home / "cache", ignore_errors=True)
            found[f"{size} {kind}"].append(first_question(quiz_command(paths[size]), env))
            if kind == "cold":  # the next warm run finds the cache as a second quiz would
                first_question(quiz_command(paths[size]), env)
            else:
                checks[f"{size} check"].append(time_page_check(paths[size]))
    return {**found, **checks}


def median_of(runs: list, index: int) -> float:
    return statistics.median(run[index] for run in runs)


def targets_of(found: dict[str, list], small: int, large: int) -> list[dict[str, object]]:
    targets: list[dict[str, object]] = []
    for kind, words in (("warm", "deck cache built"), ("cold", "no deck cache")):
        runs, floor = found[f"{large} {kind}"], found[f"{small} {kind}"]
        targets.append(bench_targets.target(
            f"quiz start-up at {large:,} cards against {small:,} ({words})",
            round(median_of(runs, 0), 4), floor=round(median_of(floor, 0), 4),
            floor_name=f"quiz start-up at {small:,} cards ({words})", unit="s",
            limit=RATIO_LIMIT, kind="max_ratio",
            cpu=median_of(runs, 1), cpu_floor=median_of(floor, 1),
        ))  # fmt: skip
    peak = max(median_of(found[f"{large} {kind}"], 2) for kind in ("warm", "cold"))
    targets.append(bench_targets.target(
        f"peak memory of the quiz up to its first question at {large:,} cards",
        round(peak, 1), unit="MiB", limit=PEAK_LIMIT_MIB, kind="max",
    ))  # fmt: skip
    return targets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--quick", action="store_true",
                        help="2 rounds at 1,000 and 20,000 cards, to check it works")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--keep", type=Path, help="build in this folder and keep the files")
    args = parser.parse_args()
    sizes = (1_000, 20_000) if args.quick else SIZES
    rounds = 2 if args.quick else args.rounds
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        found = measure(args.keep, rounds, sizes)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            found = measure(Path(tmp), rounds, sizes)
    targets = targets_of(found, *sizes)
    if args.json:
        medians = {
            name.replace(" ", "_"): {
                "wall_s": round(median_of(runs, 0), 4),
                "cpu_s": round(median_of(runs, 1), 4),
                "file_mib" if name.endswith("check") else "peak_mib": round(median_of(runs, 2), 1),
            }
            for name, runs in found.items()
        }
        print(json.dumps({"rounds": rounds, "cpus": os.cpu_count(), "medians": medians,
                          "targets": targets}))  # fmt: skip
        return
    print(f"medians of {rounds} rounds        wall        CPU    peak")
    for name, runs in found.items():
        if name.endswith("check"):
            continue
        print(f"{name + ' cards':<24} {median_of(runs, 0) * 1000:7.1f} ms "
              f"{median_of(runs, 1) * 1000:7.1f} ms {median_of(runs, 2):5.1f} MiB")  # fmt: skip
    print("of which the page check every open runs (PRAGMA quick_check), in-process:")
    for size in sizes:
        runs = found[f"{size} check"]
        print(f"{f'{size} cards':<24} {median_of(runs, 0) * 1000:7.1f} ms "
              f"{median_of(runs, 1) * 1000:7.1f} ms  (file {median_of(runs, 2):.1f} MiB)")  # fmt: skip
    for entry in targets:
        verdict = "met" if entry["met"] else "NOT met"
        shown = (f"{entry['ratio']:.3f}x wall, {entry['cpu_ratio']:.3f}x CPU"
                 if entry["ratio"] is not None else f"{entry['measured']} {entry['unit']}")  # fmt: skip
        print(f"{entry['target']}: {shown} (aim <= {entry['limit']}; {verdict})")


if __name__ == "__main__":
    main()
