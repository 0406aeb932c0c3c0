"""Start-up cost of `kvdrill quiz` against the import time of its dependencies.

(a) the floor: `python -c "import click, pydantic, yaml, sqlite_utils, fsrs"`, with pandas
    and numpy hidden from sqlite_utils as kvdrill hides them (drill.storage.sqlite_library).
(b) warm: `python -m drill quiz` on a fresh database with the deck cache built: time until
    the first question's position line (`[0 done, N left]`) appears on its stdout; the
    process is then killed.
(c) cold: the same on a fresh home, with no deck cache (a first start: the built-in deck
    comes from its validated copy, question_bank/validated_deck.pickle, after each file's
    bytes are hashed against it; a deck of the user's would be read, validated and cached,
    which bank_scale.py measures).

Rounds alternate a, b, c (`--warm` or `--cold`: b or c only), after one warm-up run of
each (which also writes the bytecode caches, as any installed copy has them; the children
run with bytecode writing on even when this shell sets PYTHONDONTWRITEBYTECODE). Printed: median wall time, median CPU time
(user + system of the child, up to the first question for b and c), peak memory, and the
ratios b/a and c/a. The aims: warm at most 1.3x the floor, cold at most 1.6x. CPU time is
steadier than wall time on a busy machine.

    python benchmarks/startup.py [--runs 10] [--warm | --cold] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bench_targets  # beside this script in benchmarks/

# sqlite_utils with pandas and numpy hidden, as drill.storage.sqlite_library loads it: an
# installed pandas and numpy cost about 0.45 s that kvdrill never pays, and a floor that paid
# them would flatter
DEPENDENCIES = (
    "import sys; sys.modules['pandas'] = sys.modules['numpy'] = None; "
    "import click, pydantic, yaml, sqlite_utils, fsrs; del sys.modules['pandas'], sys.modules['numpy']"
)
# `import pydantic` alone loads a lazy shell; any model needs pydantic.main as well.
# Shown for context, not part of the ratio.
DEPENDENCIES_WITH_MODELS = DEPENDENCIES + "; from pydantic import BaseModel"
REPO = Path(__file__).resolve().parent.parent
WARM_LIMIT = 1.3
COLD_LIMIT = 1.6


def child_env(home: Path) -> dict[str, str]:
    env = {**os.environ, "KVDRILL_HOME": str(home), "NO_COLOR": "1"}
    for name in ("KVDRILL_BANK", "PYTHONDONTWRITEBYTECODE"):
        env.pop(name, None)
    return env


def _reap(pid: int) -> tuple[int, float, float]:
    """Reap `pid`: its exit status, user + system CPU seconds and peak RSS in MiB."""
    _, status, usage = os.wait4(pid, 0)
    return status, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def time_imports(home: Path, code: str = DEPENDENCIES) -> tuple[float, float, float]:
    """(wall s, CPU s, peak MiB) of a fresh interpreter running `code` (imports)."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code], env=child_env(home))
    status, cpu_s, peak_mib = _reap(proc.pid)
    wall_s = time.perf_counter() - start
    proc.returncode = status  # reaped above; keep Popen from waiting again
    if status != 0:
        raise SystemExit("importing the dependencies failed")
    return wall_s, cpu_s, peak_mib


def _peak_mib(pid: int) -> float | None:
    """The process's peak resident memory so far (VmHWM), in MiB; None where unknown."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return None


def first_question(command: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """(wall s, CPU s, peak MiB) from spawning `command` (a quiz) to its first question's
    position line; the process is killed there. Peak memory is read at that moment."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=REPO,
    )
    assert proc.stdout is not None
    wall_s = peak_mib = None
    for raw in proc.stdout:
        if raw.startswith(b"[0 done, "):
            wall_s = time.perf_counter() - start
            peak_mib = _peak_mib(proc.pid)
            break
    proc.send_signal(signal.SIGKILL)
    status, cpu_s, max_rss_mib = _reap(proc.pid)
    proc.returncode = status
    if wall_s is None:
        raise SystemExit(f"{' '.join(command[2:])} printed no question; run it by hand")
    return wall_s, cpu_s, peak_mib if peak_mib is not None else max_rss_mib


def time_first_question(home: Path, run: int, cold: bool = False) -> tuple[float, float, float]:
    """(wall s, CPU s, peak MiB) of `kvdrill quiz` on a fresh database, to its first question."""
    if cold:
        shutil.rmtree(home / "cache", ignore_errors=True)
    db = home / f"run{run}.db"
    command = [sys.executable, "-m", "drill", "quiz", "--db", str(db), "--seed", "1"]
    return first_question(command, child_env(home))


def median_of(runs: list[tuple[float, ...]], index: int) -> float:
    return statistics.median(run[index] for run in runs)


def ratio_target(
    target: str, measured: list, floor: list, floor_name: str, limit: float
) -> dict[str, object]:
    """One entry of the benchmark's "targets" (wall ratio to the floor, CPU ratio beside)."""
    return bench_targets.target(
        target, round(median_of(measured, 0), 4), floor=round(median_of(floor, 0), 4),
        floor_name=floor_name, unit="s", limit=limit, kind="max_ratio",
        cpu=median_of(measured, 1), cpu_floor=median_of(floor, 1),
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="3 runs, to check it works")
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--warm", action="store_true", help="time only the start with a deck cache")
    only.add_argument("--cold", action="store_true", help="time only the start without one")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    runs = 3 if args.quick else args.runs
    kinds = ["cold"] if args.cold else ["warm"] if args.warm else ["warm", "cold"]
    imports: list = []
    with_models: list = []
    first: dict[str, list] = {kind: [] for kind in kinds}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        time_imports(home)
        time_first_question(home, -1)
        for run in range(runs):
            imports.append(time_imports(home))
            with_models.append(time_imports(home, DEPENDENCIES_WITH_MODELS))
            for n, kind in enumerate(kinds):
                found = time_first_question(home, 2 * run + n, cold=kind == "cold")
                first[kind].append(found)
    rows = {
        "dependency imports": imports,
        "  + pydantic models": with_models,
        **{f"first question, {kind}": found for kind, found in first.items()},
    }
    floor_name = "python importing click, pydantic, yaml, sqlite_utils and fsrs"
    words = {
        "warm": ("time to the first quiz question, deck cache built", WARM_LIMIT),
        "cold": ("time to the first quiz question, first start (no deck cache)", COLD_LIMIT),
    }
    targets = [
        ratio_target(words[kind][0], found, imports, floor_name, words[kind][1])
        for kind, found in first.items()
    ]
    if args.json:
        medians = {
            name.strip(" +").replace(" ", "_").replace(",", ""): {
                "wall_s": round(median_of(found, 0), 4),
                "cpu_s": round(median_of(found, 1), 4),
                "peak_mib": round(median_of(found, 2), 1),
            }
            for name, found in rows.items()
        }
        print(json.dumps({"runs": runs, "python": sys.version.split()[0],
                          "cpus": os.cpu_count(), "medians": medians, "targets": targets}))  # fmt: skip
        return
    print(f"medians of {runs} runs       wall        CPU    peak")
    for name, found in rows.items():
        print(f"{name:<22} {median_of(found, 0) * 1000:7.1f} ms "
              f"{median_of(found, 1) * 1000:7.1f} ms {median_of(found, 2):5.1f} MiB")  # fmt: skip
    print("\n".join(bench_targets.ratio_lines(targets)))


if __name__ == "__main__":
    main()
