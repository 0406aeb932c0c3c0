"""`kvdrill stats` and the history export at scale, each against a floor measured in the same
run on the same file.

- stats: `kvdrill stats --json` as a whole process on the database of benchmarks/scale.py
  (10,000 cards, 1,000,000 reviews) against the floor (the same command on an empty
  database, as a whole process) + (the sqlite3 shell's `PRAGMA quick_check` of the same
  file, as a whole process); target <= 2x. Every open checks every page
  (drill.storage.database), so every run pays the check, as the floor does. Measured
  cold, the first read after a write (each run follows a one-row write by another
  process, which leaves the file changed), and warm, a read straight after a read.
- export: `export_history` of every review into a file (the database opened, and its
  pages checked, beforehand) against the sqlite3 shell writing the same table as CSV
  (`-csv`) or JSON (`-json`) as a whole process, same query and order; target <= 1.3x
  for CSV, 1.5x for JSON Lines.

Each round runs every measurement once, in turns; a figure is the median over the rounds,
wall-clock and CPU time (a child's from its resource usage) side by side. The machine's
load average is printed with them: figures taken beside other work are not a verdict.

    python benchmarks/stats_export.py [--db FILE] [--reviews N] [--rounds 7] [--quick] [--json]

--quick: 100,000 reviews and 3 rounds, to check that it works.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import bench_targets  # beside this script in benchmarks/

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from drill.srs import iso  # noqa: E402
from drill.storage.database import open_db  # noqa: E402
from drill.storage.history_out import export_history  # noqa: E402
from drill.storage.review_record import FIELDS  # noqa: E402

NOW = datetime(2026, 11, 18, 15, 0, tzinfo=timezone.utc)
SHELL_QUERY = f"select {', '.join(FIELDS)} from reviews order by reviewed_at, id"
STATS_LIMIT = 2.0
EXPORT_CSV_LIMIT = 1.3
EXPORT_JSONL_LIMIT = 1.5


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def process(command: list[str], **kwargs) -> tuple[float, float]:
    """Wall and CPU seconds of one child process run to its end."""
    cpu, start = children_cpu(), time.perf_counter()
    subprocess.run(command, check=True, **kwargs)
    return time.perf_counter() - start, children_cpu() - cpu


def in_process(fn: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds of `fn` run in this process."""
    cpu, start = own_cpu(), time.perf_counter()
    fn()
    return time.perf_counter() - start, own_cpu() - cpu


def touch(db_path: Path) -> None:
    """One write by another process, as a quiz answer leaves the file: a card row rewritten
    (to the same values), committed, the connection closed."""
    conn = sqlite3.connect(db_path, isolation_level=None)
    conn.execute("update cards set reps = reps where rowid = (select min(rowid) from cards)")
    conn.close()


def measure(db_path: Path, folder: Path, rounds: int) -> dict[str, list[tuple[float, float]]]:
    empty = folder / "empty.db"
    open_db(empty, now=NOW).conn.close()
    env = {**os.environ, "KVDRILL_HOME": str(folder / "home"), "NO_COLOR": "1"}
    env.pop("KVDRILL_BANK", None)
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}

    def stats(path: Path) -> tuple[float, float]:
        command = [sys.executable, "-m", "drill", "stats", "--json", "--db", str(path)]
        return process(command + ["--now", iso(NOW)], env=env, cwd=REPO, **quiet)

    def export_ours(fmt: str) -> tuple[float, float]:
        """The export's own work: the database opened (and its pages checked) beforehand."""
        db = open_db(db_path, write=False, now=NOW)
        try:
            with (folder / f"ours.{fmt}").open("wb") as out:
                return in_process(lambda: export_history(db, out, fmt))
        finally:
            db.conn.close()

    def export_shell(fmt: str) -> tuple[float, float]:
        flag = "-csv" if fmt == "csv" else "-json"
        with (folder / f"shell.{fmt}").open("wb") as out:
            return process(["sqlite3", flag, str(db_path), SHELL_QUERY], stdout=out)

    runs: dict[str, list[tuple[float, float]]] = {
        name: []
        for name in ("stats_cold", "stats_warm", "stats_empty", "quick_check", "csv", "csv_shell",
                     "jsonl", "jsonl_shell")
    }
    for _ in range(rounds):
        touch(db_path)
        runs["stats_cold"].append(stats(db_path))
        runs["stats_warm"].append(stats(db_path))
        runs["stats_empty"].append(stats(empty))
        runs["quick_check"].append(
            process(["sqlite3", str(db_path), "PRAGMA quick_check"], **quiet)
        )
        for fmt in ("csv", "jsonl"):
            runs[fmt].append(export_ours(fmt))
            runs[f"{fmt}_shell"].append(export_shell(fmt))
    # the shell writes booleans and quotes its own way: the rows must match in number
    ours = (folder / "ours.csv").read_bytes().count(b"\n")
    shell = (folder / "shell.csv").read_bytes().count(b"\n")
    if ours != shell + 1:  # the export's header line
        sys.exit(f"the export wrote {ours} lines, the shell {shell}")
    return runs


def median(runs: list[tuple[float, float]], index: int) -> float:
    return statistics.median(run[index] for run in runs)


def targets_of(runs: dict[str, list[tuple[float, float]]]) -> list[dict[str, object]]:
    def target(text, name, floor_names, floor_name, limit):
        return bench_targets.target(
            text, round(median(runs[name], 0), 4),
            floor=round(sum(median(runs[part], 0) for part in floor_names), 4),
            floor_name=floor_name, unit="s", limit=limit, kind="max_ratio",
            cpu=median(runs[name], 1), cpu_floor=sum(median(runs[part], 1) for part in floor_names),
        )  # fmt: skip

    stats_floor = "kvdrill stats --json on an empty database + sqlite3 shell's quick_check"
    return [
        target("stats, first read after a write", "stats_cold",
               ("stats_empty", "quick_check"), stats_floor, STATS_LIMIT),
        target("stats, a read after a read", "stats_warm",
               ("stats_empty", "quick_check"), stats_floor, STATS_LIMIT),
        target("export CSV", "csv", ("csv_shell",), "sqlite3 shell -csv, same query",
               EXPORT_CSV_LIMIT),
        target("export JSON Lines", "jsonl", ("jsonl_shell",), "sqlite3 shell -json, same query",
               EXPORT_JSONL_LIMIT),
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--db", type=Path, help="use (a copy of) this database instead of building one"
    )
    parser.add_argument("--cards", type=int, default=10_000)
    parser.add_argument("--reviews", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="100,000 reviews, 3 rounds")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    if shutil.which("sqlite3") is None:
        sys.exit("the sqlite3 shell is needed for the floors (apt-get install sqlite3)")
    reviews, rounds = (100_000, 3) if args.quick else (args.reviews, args.rounds)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        db_path = folder / "scale.db"
        if args.db is None:
            from scale import build

            build(db_path, args.cards, reviews)
        else:
            shutil.copyfile(args.db, db_path)
        size_mib = db_path.stat().st_size / 2**20
        runs = measure(db_path, folder, rounds)
    targets = targets_of(runs)
    load = os.getloadavg()
    if args.json:
        medians = {
            name: {"wall_s": round(median(found, 0), 4), "cpu_s": round(median(found, 1), 4)}
            for name, found in runs.items()
        }
        print(json.dumps({"rounds": rounds, "database_mib": round(size_mib, 1),
                          "load_average": [round(x, 2) for x in load], "medians": medians,
                          "targets": targets}))  # fmt: skip
        return
    print(f"{size_mib:.0f} MiB database, medians of {rounds} rounds, {os.cpu_count()} CPUs, "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")  # fmt: skip
    print(f"{'':<14}{'wall':>10}{'CPU':>10}")
    for name, found in runs.items():
        print(f"{name:<14}{median(found, 0):9.3f}s{median(found, 1):9.3f}s")
    print("\n".join(bench_targets.ratio_lines(targets)))


if __name__ == "__main__":
    main()
