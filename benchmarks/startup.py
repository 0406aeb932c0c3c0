"""Start-up cost of `kvdrill quiz` against the import time of its dependencies.

(a) `python -c "import click, pydantic, yaml, sqlite_utils, fsrs"`: the floor, with pandas
    hidden from sqlite_utils as kvdrill hides it (drill.storage.sqlite_library).
(b) `python -m drill quiz` on a fresh database: time until the first question's
    position line (`[0 done, N left]`) appears on its stdout; the process is then killed.

Each is run `--runs` times, alternating, after one warm-up run of each (which
also writes the bytecode caches, as any installed copy has them, and the deck
cache in the temporary kvdrill home, as any second quiz finds it; the children
run with bytecode writing on even when this shell sets PYTHONDONTWRITEBYTECODE).
`--cold` removes the deck cache before each quiz run, to time a first start.
Printed: median wall time, median CPU time (user + system of the child, up to
the first question for b), and the ratios b/a. The aim is a wall ratio of at
most 1.3. CPU time is steadier than wall time on a busy machine.

    python benchmarks/startup.py [--runs 10] [--cold] [--json]
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

# sqlite_utils with pandas hidden, as drill.storage.sqlite_library loads it: an installed
# pandas costs about 0.35 s that kvdrill never pays, and a floor that paid it would flatter
DEPENDENCIES = (
    "import sys; sys.modules['pandas'] = None; "
    "import click, pydantic, yaml, sqlite_utils, fsrs; del sys.modules['pandas']"
)
# `import pydantic` alone loads a lazy shell; any model needs pydantic.main as well.
# Shown for context, not part of the ratio.
DEPENDENCIES_WITH_MODELS = DEPENDENCIES + "; from pydantic import BaseModel"
REPO = Path(__file__).resolve().parent.parent


def child_env(home: Path) -> dict[str, str]:
    env = {**os.environ, "KVDRILL_HOME": str(home), "NO_COLOR": "1"}
    for name in ("KVDRILL_BANK", "PYTHONDONTWRITEBYTECODE"):
        env.pop(name, None)
    return env


def _cpu_s(pid: int) -> tuple[int, float]:
    """Reap `pid`: its exit status and its user + system CPU seconds."""
    _, status, usage = os.wait4(pid, 0)
    return status, usage.ru_utime + usage.ru_stime


def time_imports(home: Path, code: str = DEPENDENCIES) -> tuple[float, float]:
    """(wall s, CPU s) of a fresh interpreter running `code` (imports)."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code], env=child_env(home))
    status, cpu_s = _cpu_s(proc.pid)
    wall_s = time.perf_counter() - start
    proc.returncode = status  # reaped above; keep Popen from waiting again
    if status != 0:
        raise SystemExit("importing the dependencies failed")
    return wall_s, cpu_s


def time_first_question(home: Path, run: int, cold: bool = False) -> tuple[float, float]:
    """(wall s, CPU s) from spawning `kvdrill quiz` to its first question line."""
    if cold:
        shutil.rmtree(home / "cache", ignore_errors=True)
    db = home / f"run{run}.db"
    command = [sys.executable, "-m", "drill", "quiz", "--db", str(db), "--seed", "1"]
    start = time.perf_counter()
    proc = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=child_env(home),
        cwd=REPO,
    )
    assert proc.stdout is not None
    wall_s = None
    for raw in proc.stdout:
        if raw.startswith(b"[0 done, "):
            wall_s = time.perf_counter() - start
            break
    proc.send_signal(signal.SIGKILL)
    status, cpu_s = _cpu_s(proc.pid)
    proc.returncode = status
    if wall_s is None:
        raise SystemExit("kvdrill quiz printed no question; run it by hand to see why")
    return wall_s, cpu_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--cold", action="store_true", help="no deck cache for the quiz runs")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    imports, with_models, first = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        time_imports(home)
        time_first_question(home, -1)
        for run in range(args.runs):
            imports.append(time_imports(home))
            with_models.append(time_imports(home, DEPENDENCIES_WITH_MODELS))
            first.append(time_first_question(home, run, args.cold))
    medians = {
        "imports_wall_s": statistics.median(w for w, _ in imports),
        "imports_cpu_s": statistics.median(c for _, c in imports),
        "imports_with_basemodel_wall_s": statistics.median(w for w, _ in with_models),
        "imports_with_basemodel_cpu_s": statistics.median(c for _, c in with_models),
        "first_question_wall_s": statistics.median(w for w, _ in first),
        "first_question_cpu_s": statistics.median(c for _, c in first),
    }
    result = {
        "runs": args.runs,
        "deck_cache": "cold" if args.cold else "warm",
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        **{k: round(v, 4) for k, v in medians.items()},
        "ratio_wall": round(medians["first_question_wall_s"] / medians["imports_wall_s"], 3),
        "ratio_cpu": round(medians["first_question_cpu_s"] / medians["imports_cpu_s"], 3),
    }
    if args.json:
        print(json.dumps(result))
        return
    print(f"medians of {args.runs} runs    wall        CPU")
    print(
        f"dependency imports  {medians['imports_wall_s'] * 1000:7.1f} ms "
        f"{medians['imports_cpu_s'] * 1000:7.1f} ms"
    )
    print(
        f"  + pydantic models {medians['imports_with_basemodel_wall_s'] * 1000:7.1f} ms "
        f"{medians['imports_with_basemodel_cpu_s'] * 1000:7.1f} ms   (context only)"
    )
    print(
        f"first quiz question {medians['first_question_wall_s'] * 1000:7.1f} ms "
        f"{medians['first_question_cpu_s'] * 1000:7.1f} ms"
    )
    print(f"ratio               {result['ratio_wall']:7.3f}    {result['ratio_cpu']:7.3f}"
          "   (aim: <= 1.3)")


if __name__ == "__main__":
    main()
