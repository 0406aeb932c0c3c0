"""History I/O against the storage's own speed: each figure is a ratio to a bound measured
in the same run, on the same files.

- export JSON Lines and CSV: `kvdrill export` (drill.storage.history_out) against the sqlite3
  shell writing the same table as JSON (`-json`) and CSV (`-csv`), same query and order;
  target <= 1.5x;
- `kvdrill stats --json` as a command on the database against the same command on an
  empty database; target <= 2x. Every open checks every page (quick_check, drill.storage.database),
  so every run pays the check; the check alone is shown too. Stats reports the median of
  --repeat runs, interleaved with its bound's.

Builds the database of benchmarks/scale.py (10,000 cards, 1,000,000 reviews), or uses
--db (a copy is made; the file is not changed). Export and stats take the best of
--repeat runs, alternating with their bounds. The import is measured by
benchmarks/import_bench.py.

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

from drill.srs import iso  # noqa: E402
from drill.storage.database import open_db  # noqa: E402
from drill.storage.files import quick_check  # noqa: E402
from drill.storage.history_out import export_history  # noqa: E402
from drill.storage.review_record import FIELDS  # noqa: E402

NOW = datetime(2026, 11, 18, 15, 0, tzinfo=timezone.utc)
SHELL_QUERY = f"select {', '.join(FIELDS)} from reviews order by reviewed_at, id"
TARGETS = {"export_jsonl": 1.5, "export_csv": 1.5, "stats": 2.0}


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
        figures |= stats_figures(db_path, folder, args.repeat)
    ratios = {name: figures[f"{name}_s"] / figures[f"{name}_bound_s"] for name in TARGETS}
    if args.json:
        print(json.dumps({"figures": figures, "ratios": ratios}, indent=2))
        return
    print(f"{args.reviews:,} reviews, {os.cpu_count()} CPUs")
    for name, target in TARGETS.items():
        mark = "meets" if ratios[name] <= target else "MISSES"
        print(
            f"  {name:<13} {figures[f'{name}_s']:7.2f} s  bound {figures[f'{name}_bound_s']:7.2f} s"
            f"  ratio {ratios[name]:5.2f}  [{mark} {target}x]"
        )
    print(f"  stats: the page check alone {figures['stats_quick_check_s']:.2f} s")


if __name__ == "__main__":
    main()
