"""Every speed and memory target of kvdrill, each beside its floor, in one table.

Runs each benchmark below one after another (never two at once: they would time each
other) with `--json`, reads the "targets" list each prints, and prints one row per
target: what was measured, its floor and the floor's name, the ratio (wall time, and CPU
time where the benchmark measured it), the limit and whether it was met. The machine's
load average is printed before and after each benchmark: a figure taken while other
programs ran is slower than the code is.

    python benchmarks/run_all.py [--quick] [--only NAME[,NAME]] [--json]

`make bench` runs it; `make bench BENCH_ARGS=--quick` is a smoke test in a few minutes.
A benchmark that fails is reported with its last error line, and the exit status is 1
when any failed (an unmet target is a finding, not a failure).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from engine_check.contention import cpu_model_name

HERE = Path(__file__).resolve().parent

# (name, script, extra arguments): what `make bench` measures, in this order
BENCHMARKS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("startup warm", "startup.py", ("--warm",)),
    ("startup cold", "startup.py", ("--cold",)),
    ("quiz at scale", "quiz_scale.py", ()),
    ("stats and export", "stats_export.py", ()),
    ("import", "import_bench.py", ()),
    ("grading", "grader_throughput.py", ()),
    ("bank loading", "bank_scale.py", ()),
)


def load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def run_one(script: str, extra: tuple[str, ...], quick: bool) -> tuple[dict | None, str]:
    """(the benchmark's JSON, or None; its last error line when it failed)."""
    command = [sys.executable, str(HERE / script), "--json", *extra]
    if quick:
        command.append("--quick")
    done = subprocess.run(command, capture_output=True, text=True, cwd=HERE.parent)
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        return None, lines[-1] if lines else f"exit status {done.returncode}"
    try:
        return json.loads(done.stdout), ""
    except json.JSONDecodeError as error:
        return None, f"its --json output is not JSON ({error})"


def _num(value: float | None, unit: str = "") -> str:
    if value is None:
        return "-"
    if unit == "s":
        return f"{value * 1e3:,.0f} ms" if value < 10 else f"{value:,.1f} s"
    if abs(value) >= 1000:
        return f"{value:,.0f} {unit}".strip()
    return f"{value:.3g} {unit}".strip()


def row(target: dict) -> list[str]:
    unit = target.get("unit") or ""
    ratio = target.get("ratio")
    cpu = target.get("cpu_ratio")
    kind = target.get("kind")
    if kind == "max_ratio":
        limit = f"<= {target['limit']:g}x"
        shown = "-" if ratio is None else f"{ratio:.2f}x"
        if cpu is not None:
            shown += f" (CPU {cpu:.2f}x)"
    else:
        limit = f"{'<=' if kind == 'max' else '>='} {_num(target['limit'], unit)}"
        shown = "-" if ratio is None else f"{ratio:.2f}x"
    floor = target.get("floor")
    floor_text = "-" if floor is None else _num(floor, unit)
    if target.get("floor_name"):
        floor_text += f" ({target['floor_name']})"
    return [
        target["target"],
        _num(target.get("measured"), unit),
        floor_text,
        shown,
        limit,
        "met" if target.get("met") else "NOT MET",
    ]


def table(rows: list[list[str]]) -> list[str]:
    head = ["target", "measured", "floor", "ratio", "limit", ""]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    return [
        "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(r)).rstrip()
        for r in [head, *rows]
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="each benchmark's small run")
    parser.add_argument("--only", help="comma-separated names of the benchmarks to run")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    chosen = BENCHMARKS
    if args.only:
        wanted = {name.strip() for name in args.only.split(",")}
        chosen = tuple(b for b in BENCHMARKS if b[0] in wanted)
        unknown = wanted - {b[0] for b in chosen}
        if unknown:
            names = ", ".join(b[0] for b in BENCHMARKS)
            print(f"error: no benchmark named {', '.join(sorted(unknown))} (names: {names})",
                  file=sys.stderr)  # fmt: skip
            return 2
    machine = (
        f"{cpu_model_name()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{platform.system()} {platform.machine()}"
    )
    print(f"kvdrill benchmarks{' (quick)' if args.quick else ''} on {machine}", flush=True)
    results, rows, failed = [], [], []
    for name, script, extra in chosen:
        before = load()
        start = time.perf_counter()
        found, error = run_one(script, extra, args.quick)
        took = time.perf_counter() - start
        after = load()
        print(f"  {name}: {took:.0f} s, load average {before} before, {after} after"
              + (f"; FAILED: {error}" if found is None else ""), flush=True)  # fmt: skip
        if found is None:
            failed.append(name)
            results.append({"name": name, "error": error})
            continue
        targets = found.get("targets") or []
        results.append(
            {"name": name, "seconds": took, "load_before": before, "load_after": after,
             "targets": targets}
        )  # fmt: skip
        rows += [row(t) for t in targets]
    if args.json:
        print(json.dumps({"machine": machine, "benchmarks": results}, indent=2))
    else:
        print()
        print("\n".join(table(rows)) if rows else "no targets measured")
        met = sum(1 for r in rows if r[-1] == "met")
        print(f"\n{met} of {len(rows)} targets met" + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
