"""Start-up cost of `kvdrill quiz` against the import time of its dependencies.

(a) `python -c "import click, pydantic, yaml, sqlite_utils, fsrs"`: the floor.
(b) `python -m drill quiz` on a fresh database: time until the first question's
    position line (`[1/N]`) appears on its stdout.

Each is run `--runs` times (after one warm-up run of each, so the file cache is
warm for both); the medians and their ratio b/a are printed. The aim is a
ratio of at most 1.3.

    python benchmarks/startup.py [--runs 10] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEPENDENCIES = "import click, pydantic, yaml, sqlite_utils, fsrs"
REPO = Path(__file__).resolve().parent.parent


def time_imports() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", DEPENDENCIES], check=True)
    return time.perf_counter() - start


def time_first_question(home: Path, run: int) -> float:
    """Seconds from spawning `kvdrill quiz` to its first question line on stdout."""
    env = {**os.environ, "KVDRILL_HOME": str(home), "NO_COLOR": "1"}
    env.pop("KVDRILL_BANK", None)
    db = home / f"run{run}.db"
    command = [sys.executable, "-m", "drill", "quiz", "--db", str(db), "--seed", "1"]
    start = time.perf_counter()
    proc = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=REPO,
    )
    assert proc.stdout is not None and proc.stdin is not None
    elapsed = None
    for raw in proc.stdout:
        if raw.startswith(b"[1/"):
            elapsed = time.perf_counter() - start
            break
    proc.stdin.close()  # end of input: the session ends with its summary
    proc.stdout.read()
    _, err = proc.communicate(timeout=30)
    if elapsed is None:
        raise SystemExit(f"kvdrill quiz printed no question: {err.decode(errors='replace')}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        time_imports()
        time_first_question(home, -1)
        imports_s, first_s = [], []
        for run in range(args.runs):
            imports_s.append(time_imports())
            first_s.append(time_first_question(home, run))
    imports_median = statistics.median(imports_s)
    first_median = statistics.median(first_s)
    result = {
        "runs": args.runs,
        "python": sys.version.split()[0],
        "imports_median_s": round(imports_median, 4),
        "first_question_median_s": round(first_median, 4),
        "ratio": round(first_median / imports_median, 3),
    }
    if args.json:
        print(json.dumps(result))
        return
    print(f"dependency imports   median {imports_median * 1000:7.1f} ms  ({args.runs} runs)")
    print(f"first quiz question  median {first_median * 1000:7.1f} ms  ({args.runs} runs)")
    print(f"ratio                {result['ratio']:.3f}  (aim: <= 1.3)")


if __name__ == "__main__":
    main()
