"""History I/O against the storage's own speed: each figure is a ratio to a bound measured
in the same run, on the same files.

- export JSON Lines and CSV: `kvdrill export` (drill.storage.history_out) against the sqlite3
  shell writing the same table as JSON (`-json`) and CSV (`-csv`), same query and order;
  target <= 1.5x;
- import of the exported JSON Lines into a fresh database: `kvdrill import` against the
  bound orjson parse + executemany insert + bare fsrs replay, each timed alone: orjson
  reads every line, one executemany puts the parsed values into a fresh kvdrill database
  (the counting trigger dropped, the import's page cache), and the replay calls fsrs's
  review_card for every non-cram review in time order on parsed datetimes; target <=
  1.15x;
- `kvdrill stats --json` as a command on the database against the same command on an
  empty database; target <= 2x. Every open checks every page (quick_check, drill.storage.database),
  so every run pays the check; the check alone is shown too. Stats reports the median of
  --repeat runs, interleaved with its bound's.

Builds the database of benchmarks/scale.py (10,000 cards, 1,000,000 reviews), or uses
--db (a copy is made; the file is not changed). Export and stats take the best of
--repeat runs, alternating with their bounds; the import runs once (about half a minute).

    python benchmarks/history_io.py [--db FILE] [--reviews N] [--repeat 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from drill.srs import iso, make_scheduler, parse_iso  # noqa: E402
from drill.storage.database import open_db  # noqa: E402
from drill.storage.files import quick_check  # noqa: E402
from drill.storage.history_in import IMPORT_CACHE_KIB  # noqa: E402
from drill.storage.history_out import export_history  # noqa: E402
from drill.storage.review_record import FIELDS  # noqa: E402

NOW = datetime(2026, 11, 18, 15, 0, tzinfo=timezone.utc)
SHELL_QUERY = f"select {', '.join(FIELDS)} from reviews order by reviewed_at, id"
TARGETS = {"export_jsonl": 1.5, "export_csv": 1.5, "import_jsonl": 1.15, "stats": 2.0}


def seconds(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def export_figures(db_path: Path, folder: Path, repeat: int) -> dict[str, float]:
    figures: dict[str, float] = {}
    db = open_db(db_path, write=False, now=NOW)
    for fmt, flag in (("jsonl", "-json"), ("csv", "-csv")):
        mine, shell = [], []
        for _ in range(repeat):

            def ours(fmt=fmt):
                with (folder / f"history.{fmt}").open("wb") as out:
                    export_history(db, out, fmt)

            def theirs(fmt=fmt, flag=flag):
                with (folder / f"shell.{fmt}").open("wb") as out:
                    subprocess.run(
                        ["sqlite3", flag, str(db_path), SHELL_QUERY], stdout=out, check=True
                    )

            mine.append(seconds(ours))
            shell.append(seconds(theirs))
        figures[f"export_{fmt}_s"] = min(mine)
        figures[f"export_{fmt}_bound_s"] = min(shell)
    db.conn.close()
    return figures


def bound_parse(path: Path) -> float:
    """orjson reading every line, each record dropped as the next is read."""
    import orjson

    def run():
        with path.open("rb") as fh:
            for line in fh:
                orjson.loads(line)

    return seconds(run)


def parsed(path: Path) -> list[dict]:
    import orjson

    with path.open("rb") as fh:
        return [orjson.loads(line) for line in fh]


def bound_insert(records: list[dict], folder: Path) -> float:
    rows = [tuple(r.get(name) for name in FIELDS) for r in records]
    rows = [
        (
            *row[:4],
            None if row[4] is None else int(row[4]),
            *row[5:8],
            None if row[8] is None else json.dumps(row[8], separators=(",", ":")),
            *row[9:13],
            int(row[13]),
        )
        for row in rows
    ]  # fmt: skip (the parsed values as columns, outside the timed part)
    db = open_db(folder / "bound.db", now=NOW)
    conn = db.conn
    conn.execute("drop trigger if exists count_review")
    conn.execute(f"pragma cache_size = -{IMPORT_CACHE_KIB}")
    insert = f"insert into reviews ({', '.join(FIELDS)}) values ({', '.join('?' for _ in FIELDS)})"

    def run():
        conn.execute("begin immediate")
        conn.executemany(insert, rows)
        conn.execute("commit")

    took = seconds(run)
    conn.close()
    return took


def bound_replay(records: list[dict]) -> float:
    from fsrs import Card, Rating

    scheduler = make_scheduler(fuzz=False)
    ordered = sorted(
        (r["reviewed_at"], r["id"], r["question_id"], Rating(r["rating"]))
        for r in records
        if not r.get("cram")
    )
    reviews = [(parse_iso(at), qid, rating) for at, _id, qid, rating in ordered]

    def run():
        cards = {}
        for at, qid, rating in reviews:
            card = cards.get(qid)
            if card is None:
                card = Card(card_id=0, due=at)
            cards[qid] = scheduler.review_card(card, rating, at)[0]

    return seconds(run)


def import_figures(folder: Path) -> dict[str, float]:
    """`kvdrill import` of the exported file into a fresh database, as a user runs it (a
    fresh process), then the bound's three parts."""
    path = folder / "history.jsonl"
    target = folder / "imported.db"
    open_db(target, now=NOW).conn.close()  # created and migrated outside the timing
    command = [sys.executable, "-m", "drill", "import", str(path), "--db", str(target)]
    env = {**os.environ, "KVDRILL_HOME": str(folder / "home"), "KVDRILL_BACKUP_KEEP": "0"}
    done = []
    figures = {
        "import_jsonl_s": seconds(
            lambda: done.append(subprocess.run(command, check=True, capture_output=True, env=env))
        )
    }
    figures["import_added"] = int(done[0].stdout.split()[1])
    figures["import_bound_parse_s"] = bound_parse(path)
    records = parsed(path)
    figures["import_bound_insert_s"] = bound_insert(records, folder)
    figures["import_bound_replay_s"] = bound_replay(records)
    figures["import_jsonl_bound_s"] = sum(
        figures[f"import_bound_{part}_s"] for part in ("parse", "insert", "replay")
    )
    return figures


def stats_figures(db_path: Path, folder: Path, repeat: int) -> dict[str, float]:
    empty = folder / "empty.db"
    open_db(empty, now=NOW).conn.close()
    env = {**os.environ, "KVDRILL_HOME": str(folder / "home"), "NO_COLOR": "1"}
    env.pop("KVDRILL_BANK", None)

    def command(path: Path) -> list[str]:
        return [
            sys.executable,
            "-m",
            "drill",
            "stats",
            "--json",
            "--db",
            str(path),
            "--now",
            iso(NOW),
        ]

    full, bare = [], []
    for _ in range(repeat):
        full.append(
            seconds(
                lambda: subprocess.run(
                    command(db_path), check=True, capture_output=True, env=env, cwd=REPO
                )
            )
        )
        bare.append(
            seconds(
                lambda: subprocess.run(
                    command(empty), check=True, capture_output=True, env=env, cwd=REPO
                )
            )
        )
    db = open_db(db_path, write=False, now=NOW)
    check = statistics.median(seconds(lambda: quick_check(db.conn)) for _ in range(repeat))
    db.conn.close()
    return {
        "stats_s": statistics.median(full),
        "stats_bound_s": statistics.median(bare),
        "stats_quick_check_s": check,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--db", type=Path, help="use (a copy of) this database instead of building one"
    )
    parser.add_argument("--cards", type=int, default=10_000)
    parser.add_argument("--reviews", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if shutil.which("sqlite3") is None:
        sys.exit("the sqlite3 shell is needed for the export bound (apt-get install sqlite3)")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        db_path = folder / "scale.db"
        if args.db is None:
            from scale import build

            build(db_path, args.cards, args.reviews)
        else:
            shutil.copyfile(args.db, db_path)
        figures = export_figures(db_path, folder, args.repeat)
        figures |= import_figures(folder)
        figures |= stats_figures(db_path, folder, args.repeat)
    ratios = {name: figures[f"{name}_s"] / figures[f"{name}_bound_s"] for name in TARGETS}
    if args.json:
        print(json.dumps({"figures": figures, "ratios": ratios}, indent=2))
        return
    print(f"{figures['import_added']:,} reviews, {os.cpu_count()} CPUs")
    for name, target in TARGETS.items():
        mark = "meets" if ratios[name] <= target else "MISSES"
        print(
            f"  {name:<13} {figures[f'{name}_s']:7.2f} s  bound {figures[f'{name}_bound_s']:7.2f} s"
            f"  ratio {ratios[name]:5.2f}  [{mark} {target}x]"
        )
    print(
        "  import bound = parse {import_bound_parse_s:.2f} s + insert {import_bound_insert_s:.2f} s"
        " + replay {import_bound_replay_s:.2f} s".format(**figures)
    )
    print(f"  stats: the page check alone {figures['stats_quick_check_s']:.2f} s")


if __name__ == "__main__":
    main()
