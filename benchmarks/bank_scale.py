"""Bank loading against deck size: is it linear?

Writes the built-in deck 1x, 10x and 30x over (each copy's ids renamed) into a
temporary folder, then times `read_bank` on each in a fresh process, without the
deck cache and with a warm one, rounds interleaved (1x, 10x, 30x, 1x, ...), and
prints the median of each with the ratio to 1x. Linear means 30x costs about 30x
(the target: at most 32x). CPU time is printed beside wall time.

    python benchmarks/bank_scale.py [--rounds 5] [--quick] [--json]

--json prints {rows: {"cold 1x": {questions, wall_s, cpu_s, ratio}, ...}, targets: [...]},
the targets being 30x against 32 times 1x, without and with the deck cache.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import bench_targets  # beside this script in benchmarks/

REPO = Path(__file__).resolve().parent.parent
SIZES = (1, 10, 30)
CHILD = """
import sys, time
t0, c0 = time.perf_counter(), time.process_time()
from drill.bank.loader import read_bank
loaded = time.perf_counter(), time.process_time()
bank, problems = read_bank([__import__('pathlib').Path(sys.argv[1])],
                           None if sys.argv[2] == '-' else __import__('pathlib').Path(sys.argv[2]))
assert not problems, problems[:3]
t1, c1 = time.perf_counter(), time.process_time()
print(t1 - loaded[0], c1 - loaded[1], len(bank.ids))
"""


def write_copies(folder: Path, copies: int) -> Path:
    out = folder / f"x{copies}"
    out.mkdir()
    files = sorted(
        p
        for p in (REPO / "question_bank").glob("*.yaml")
        if p.name not in ("misconceptions.yaml", "phrasings.yaml")
    )
    for k in range(copies):
        for path in files:
            text = path.read_text(encoding="utf-8")
            if k:
                # every id and every reference to one gets the copy's suffix
                text = re.sub(
                    r"(\bid: |question: |prefer: |over: )([a-z0-9-]+)",
                    lambda m, k=k: f"{m[1]}{m[2]}-c{k}",
                    text,
                )
                text = re.sub(
                    r"^deck: (\S+)", lambda m, k=k: f"deck: {m[1]}-c{k}", text, flags=re.MULTILINE
                )
            (out / f"{path.stem}-{k}.yaml").write_text(text, encoding="utf-8")
    return out


def once(folder: Path, cache: str) -> tuple[float, float, int]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(folder), cache],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    wall, cpu, n = done.stdout.split()
    return float(wall), float(cpu), int(n)


def targets(result: dict) -> list[dict]:
    """Linear loading: 30x the deck in at most 32 times the time of 1x, each mode."""
    out = []
    for mode, words in (("cold", "without the deck cache"), ("warm", "with the deck cache")):
        one, many = result[f"{mode} 1x"], result[f"{mode} {SIZES[-1]}x"]
        out.append(
            bench_targets.target(
                f"bank loading, {SIZES[-1]}x the deck {words}", many["wall_s"],
                floor=one["wall_s"], floor_name="1x the deck", unit="s", limit=32.0,
                kind="max_ratio", cpu=many["cpu_s"], cpu_floor=one["cpu_s"], digits=None,
            )
        )  # fmt: skip
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="two rounds")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.rounds = 2
    with tempfile.TemporaryDirectory() as tmp:
        folders = {n: write_copies(Path(tmp), n) for n in SIZES}
        cache = Path(tmp) / "cache"
        for n in SIZES:  # fill the cache once
            once(folders[n], str(cache))
        times = {(mode, n): [] for mode in ("cold", "warm") for n in SIZES}
        questions = {}
        for _ in range(args.rounds):
            for n in SIZES:
                for mode in ("cold", "warm"):
                    wall, cpu, q = once(folders[n], "-" if mode == "cold" else str(cache))
                    times[(mode, n)].append((wall, cpu))
                    questions[n] = q
    result = {}
    for mode in ("cold", "warm"):
        base = statistics.median(w for w, _ in times[(mode, 1)])
        for n in SIZES:
            wall = statistics.median(w for w, _ in times[(mode, n)])
            cpu = statistics.median(c for _, c in times[(mode, n)])
            result[f"{mode} {n}x"] = {
                "questions": questions[n],
                "wall_s": round(wall, 4),
                "cpu_s": round(cpu, 4),
                "ratio": round(wall / base, 2),
            }
    if args.json:
        print(json.dumps({"rows": result, "targets": targets(result)}, indent=2))
        return
    label = {"cold": "no deck cache", "warm": "deck cache warm"}
    for key, row in result.items():
        mode, n = key.split()
        print(
            f"{label[mode]:16} {n:>4} {row['questions']:6} questions  "
            f"{row['wall_s'] * 1000:8.1f} ms wall  {row['cpu_s'] * 1000:8.1f} ms CPU  "
            f"{row['ratio']:6.2f}x of 1x"
        )


if __name__ == "__main__":
    main()
