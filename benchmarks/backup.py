"""What keeping the database safe costs at scale: checks, backups, restore.

Builds the database of benchmarks/scale.py (10,000 cards, 1,000,000 reviews by
default; or uses --db) and times, best of --repeat runs:
- open_db for a command that reads (the header check and quick_check of every page),
- quick_check alone,
- one backup into the backups folder (SQLite's online backup API, then fsync and rename),
- check_copy of that backup (the full integrity_check `kvdrill restore` runs first),
- restore_database from that backup (check, save the current state, copy back),
- `kvdrill doctor` as a command (full integrity check).

    python benchmarks/backup.py [--cards 10000] [--reviews 1000000] [--db FILE] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from drill.storage.backup import check_copy, take_backup  # noqa: E402
from drill.storage.database import open_db  # noqa: E402
from drill.storage.files import quick_check  # noqa: E402
from drill.storage.restore import restore_database  # noqa: E402

NOW = datetime(2026, 11, 18, 15, 0, tzinfo=timezone.utc)


def best_of(repeat: int, fn) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def run(path: Path, repeat: int) -> dict[str, float]:
    figures = {"db_mib": path.stat().st_size / 2**20}

    def open_for_reading():
        open_db(path, write=False, now=NOW).conn.close()

    figures["open_read_s"], _ = best_of(repeat, open_for_reading)
    db = open_db(path, write=False, now=NOW)
    figures["quick_check_s"], _ = best_of(repeat, lambda: quick_check(db.conn))
    backups = []
    figures["backup_s"], _ = best_of(
        repeat, lambda: backups.append(take_backup(db.conn, path, NOW, "bench"))
    )
    db.conn.close()
    copy = backups[-1]
    figures["backup_mib"] = copy.stat().st_size / 2**20
    figures["check_copy_s"], summary = best_of(1, lambda: check_copy(copy))
    figures["restore_s"], _ = best_of(1, lambda: restore_database(path, copy, NOW))
    command = [sys.executable, "-m", "drill", "doctor", "--db", str(path)]
    figures["doctor_cli_s"], _ = best_of(
        1, lambda: subprocess.run(command, capture_output=True, cwd=REPO, check=False)
    )
    figures["reviews"] = summary.reviews
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=10_000)
    parser.add_argument("--reviews", type=int, default=1_000_000)
    parser.add_argument("--db", type=Path, help="use this database instead of building one")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.db is None:
            from scale import build

            path = Path(tmp) / "scale.db"
            build(path, args.cards, args.reviews)
        else:
            path = Path(tmp) / "copy.db"
            with args.db.open("rb") as src, path.open("wb") as dst:
                dst.write(src.read())
        figures = run(path, args.repeat)
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"{figures['reviews']:,} reviews, {figures['db_mib']:.0f} MiB, {os.cpu_count()} CPUs")
    for name, value in figures.items():
        print(f"  {name:<16} {value:9.3f}")


if __name__ == "__main__":
    main()
