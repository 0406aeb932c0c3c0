"""`kvdrill import` of an exported history against its one-process floor, whole process
against whole process.

The history is benchmarks/scale.py's (1,000,000 reviews of 10,000 cards over two years)
exported as JSON Lines. Each round imports it into a fresh, migrated, empty database
twice, in turns (which goes first alternates):

- `kvdrill import FILE --db DB`, as a user runs it;
- benchmarks/import_floor.py FILE DB CACHE_KIB: orjson, sqlite3 and fsrs alone doing what
  the import must (parse, insert with the same indexes and trigger dropped and rebuilt and
  the import's page cache, replay with bare fsrs, card rows written), no checks and
  nothing of kvdrill.

Each run's wall time, CPU time (user + system of the process and every child it waited
for) and peak resident memory (ru_maxrss) come from wait4. This script imports nothing
but the standard library (the database is built and exported by child processes), so
the memory a child inherits from it at its start is a few MiB. Medians over the rounds.

Targets: CPU time <= 1.1x the floor's (wall time printed beside it, not a target); peak memory
<= 400 MiB; every import of the file gives the same card rows, byte for byte. Once the
runs are done, the floor's reviews and question counts are checked to be the import's.

    python benchmarks/import_bench.py [--reviews N] [--cards N] [--repeat N] [--quick] [--json]

--quick: 100,000 reviews of 1,000 cards, 5 rounds (well under a minute).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bench_targets  # beside this script in benchmarks/

REPO = Path(__file__).resolve().parent.parent
CPU_LIMIT = 1.1
MEMORY_LIMIT_MIB = 400.0

_SETUP = """
import sys
from pathlib import Path
sys.path[:0] = [{repo!r}, {benchmarks!r}]
from scale import NOW, build
from drill.storage.database import open_db
from drill.storage.history_in import IMPORT_CACHE_KIB
from drill.storage.history_out import export_history
folder, cards, reviews, fresh = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
build(folder / "scale.db", cards, reviews)
db = open_db(folder / "scale.db", write=False, now=NOW)
with (folder / "history.jsonl").open("wb") as out:
    export_history(db, out, "jsonl")
db.conn.close()
for n in range(fresh):
    open_db(folder / f"fresh-{{n}}.db", now=NOW).conn.close()
print(IMPORT_CACHE_KIB)
"""


def run(command: list[str], env: dict[str, str]) -> dict[str, float]:
    """Run `command`: its wall time, CPU time (the children it waited for included), peak
    resident memory in MiB, and what it printed."""
    start = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout is not None and child.stderr is not None
    out = child.stdout.read()
    err = child.stderr.read()
    _pid, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    wall = time.perf_counter() - start
    if child.returncode != 0:
        raise RuntimeError(f"{' '.join(command[1:4])} failed: {err.decode()[-500:]}")
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "rss_mib": usage.ru_maxrss / 1024,
        "out": out.decode().strip(),
    }


def table_digest(path: Path, query: str) -> str:
    conn = sqlite3.connect(path)
    digest = hashlib.sha256()
    for row in conn.execute(query):
        digest.update(repr(row).encode())
    conn.close()
    return digest.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reviews", type=int, default=1_000_000)
    parser.add_argument("--cards", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3, help="rounds (default 3)")
    parser.add_argument("--quick", action="store_true", help="100,000 reviews, 5 rounds")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.reviews, args.cards, args.repeat = 100_000, 1_000, 5
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="kvdrill-import-bench-") as tmp:
        folder = Path(tmp)
        setup = _SETUP.format(repo=str(REPO), benchmarks=str(REPO / "benchmarks"))
        fresh = 2 * args.repeat
        cache_kib = subprocess.run(
            [sys.executable, "-c", setup, tmp, str(args.cards), str(args.reviews), str(fresh)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()[-1]  # the import's page cache, which the floor takes too
        history = folder / "history.jsonl"
        env = {**os.environ, "KVDRILL_HOME": str(folder / "home"), "KVDRILL_BACKUP_KEEP": "0"}
        ours: list[dict] = []
        floor: list[dict] = []
        for n in range(args.repeat):
            import_db, floor_db = folder / f"fresh-{2 * n}.db", folder / f"fresh-{2 * n + 1}.db"
            commands = [
                (ours, [sys.executable, "-m", "drill", "import", str(history), "--db", str(import_db)]),
                (floor, [sys.executable, str(REPO / "benchmarks" / "import_floor.py"), str(history),
                         str(floor_db), cache_kib]),
            ]  # fmt: skip
            for runs, command in commands if n % 2 == 0 else commands[::-1]:
                runs.append(run(command, {**env, "PYTHONPATH": str(REPO)}))
        load_after = os.getloadavg()[0]
        reviews_query = "select * from reviews order by id"
        counts_query = "select * from question_counts order by question_id"
        cards_query = "select * from cards order by question_id"
        same_rows = all(
            table_digest(folder / "fresh-0.db", query) == table_digest(folder / "fresh-1.db", query)
            for query in (reviews_query, counts_query)
        )
        card_digests = {
            table_digest(folder / f"fresh-{2 * n}.db", cards_query) for n in range(args.repeat)
        }
    added = int(ours[0]["out"].split()[1])

    def median(runs: list[dict], key: str) -> float:
        return statistics.median(r[key] for r in runs)

    cpu, floor_cpu = median(ours, "cpu_s"), median(floor, "cpu_s")
    rss, floor_rss = max(r["rss_mib"] for r in ours), max(r["rss_mib"] for r in floor)
    scale = f"{added:,} reviews"
    targets = [
        bench_targets.target(
            f"import CPU time of {scale} against the one-process floor", cpu, floor=floor_cpu,
            floor_name="orjson + executemany + bare fsrs", unit="s", limit=CPU_LIMIT,
            kind="max_ratio", cpu=cpu, cpu_floor=floor_cpu, digits=None,
        ),
        # the floor's peak is shown beside, not a ratio's denominator
        {**bench_targets.target(
            f"import peak memory of {scale}", rss, unit="MiB", limit=MEMORY_LIMIT_MIB,
            kind="max",
        ), "floor": floor_rss, "floor_name": "the floor's peak memory"},
        bench_targets.target(
            "every import of one history gives the same card rows",
            float(len(card_digests) == 1), unit="yes", limit=1.0, kind="min",
        ),
    ]  # fmt: skip
    figures = {
        "reviews": added,
        "rounds": args.repeat,
        "cpus": os.cpu_count(),
        "load_1min_before": load_before,
        "load_1min_after": load_after,
        "import_cpu_s": [r["cpu_s"] for r in ours],
        "floor_cpu_s": [r["cpu_s"] for r in floor],
        "import_wall_s": [r["wall_s"] for r in ours],
        "floor_wall_s": [r["wall_s"] for r in floor],
        "import_rss_mib": [r["rss_mib"] for r in ours],
        "floor_rss_mib": [r["rss_mib"] for r in floor],
        "floor_reviews_and_counts_identical": same_rows,
    }
    if args.json:
        print(json.dumps({"targets": targets, "figures": figures}, indent=2))
        return
    print(
        f"{scale}, {args.repeat} rounds, {os.cpu_count()} CPUs,"
        f" load {load_before:.2f} -> {load_after:.2f}"
    )
    for t in targets:
        mark = "meets" if t["met"] else "MISSES"
        if t["kind"] == "max_ratio":
            print(
                f"  {t['target']}: {t['measured']:.2f} s, floor {t['floor']:.2f} s,"
                f" ratio {t['ratio']:.3f} [{mark} {t['limit']}x]"
            )
        elif t["kind"] == "max":
            print(
                f"  {t['target']}: {t['measured']:.0f} MiB (floor {t['floor']:.0f} MiB)"
                f" [{mark} <= {t['limit']:.0f}]"
            )
        else:
            print(f"  {t['target']}: {'yes' if t['met'] else 'NO'}")
    for name in ("import_cpu_s", "floor_cpu_s", "import_wall_s", "floor_wall_s"):
        print(f"  {name}: " + " ".join(f"{v:.2f}" for v in figures[name]))
    if not same_rows:
        print("  the floor's reviews or question counts differ from the import's")


if __name__ == "__main__":
    main()
