"""How close the engine check comes to this machine's own peaks, and how long --quick takes.

Run:  .venv/bin/python benchmarks/engine_bench.py [--only quick|full] [--json] [--keep DIR]

Runs `kvdrill engine run --quick --json` and `kvdrill engine run --json` as users
would (fresh processes, torch import included), each into a throw-away database,
and prints for each:

- the peaks and the kernels they came from (the fastest of a read, a copy and a triad
  stream; the fastest of several matmul shapes; before and after the experiments);
- decode at batch 1 (shortest context) as a share of the measured memory bandwidth,
  and its share of the matmul peak;
- prefill at the longest prompt as a share of the measured matmul peak;
- the wall time of the whole command.

Targets on a 2-core CPU: decode >= 70 % of memory bandwidth, prefill >= 60 % of the
matmul peak, `--quick` <= 60 s. Other programs running at the same time take CPU
time from the run and lower every number; the load average is printed first and
each run reports the share of CPU time other programs used while it measured.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DECODE_TARGET = 0.70
PREFILL_TARGET = 0.60
QUICK_TARGET_S = 60.0


def run_cli(mode: str, db: Path) -> tuple[dict, float]:
    args = [sys.executable, "-m", "drill", "engine", "run", "--json", "--db", str(db)]
    if mode == "quick":
        args.append("--quick")
    started = time.perf_counter()
    out = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
    wall_s = time.perf_counter() - started
    if out.returncode != 0:
        sys.exit(f"engine run ({mode}) failed:\n{out.stderr}")
    return json.loads(out.stdout), wall_s


def summarise(mode: str, result: dict, wall_s: float) -> dict:
    decode = min(result["decode"], key=lambda r: r["context_len"])
    prefill = max(result["prefill"], key=lambda r: r["prompt_len"])
    return {
        "mode": mode,
        "device_name": result["device_name"],
        "threads": result["threads"],
        "matmul_gflops": result["peaks"]["matmul_flops_per_s"] / 1e9,
        "matmul_from": result["peaks"]["matmul_from"],
        "bandwidth_gb_s": result["peaks"]["bandwidth_bytes_per_s"] / 1e9,
        "bandwidth_from": result["peaks"]["bandwidth_from"],
        "peak_warnings": result["peaks"]["warnings"],
        "decode_context": decode["context_len"],
        "decode_ms": decode["ms"],
        "decode_gb_s": decode["bytes_per_s"] / 1e9,
        "decode_mbu": decode["mbu"],
        "decode_flops_util": decode["flops_util"],
        "prefill_tokens": prefill["prompt_len"],
        "prefill_ms": prefill["ms"],
        "prefill_mfu": prefill["mfu"],
        "wall_s": wall_s,
        "other_cpu_share": result.get("other_cpu_share"),
        "claims": {name: c["holds"] for name, c in result["claims"].items()},
    }


def print_summary(s: dict) -> None:
    def mark(ok: bool) -> str:
        return "meets target" if ok else "MISSES target"

    print(f"\n{s['mode']} run on {s['device_name']}, {s['threads']} threads")
    if s["other_cpu_share"] is not None:
        print(f"  other programs used {s['other_cpu_share']:.0%} of the CPU during the run")
    print(
        f"  peaks: matmul {s['matmul_gflops']:.0f} GFLOP/s ({s['matmul_from']}), "
        f"memory {s['bandwidth_gb_s']:.1f} GB/s ({s['bandwidth_from']})"
    )
    for warning in s["peak_warnings"]:
        print(f"  warning: {warning}")
    print(
        f"  decode, batch 1, context {s['decode_context']}: {s['decode_ms']:.1f} ms, "
        f"{s['decode_gb_s']:.1f} GB/s = {s['decode_mbu']:.0%} of memory bandwidth "
        f"({s['decode_flops_util']:.1%} of matmul peak)  "
        f"[{mark(s['decode_mbu'] >= DECODE_TARGET)} {DECODE_TARGET:.0%}]"
    )
    print(
        f"  prefill, {s['prefill_tokens']} tokens: {s['prefill_ms']:.0f} ms = "
        f"{s['prefill_mfu']:.0%} of matmul peak  "
        f"[{mark(s['prefill_mfu'] >= PREFILL_TARGET)} {PREFILL_TARGET:.0%}]"
    )
    line = f"  wall time: {s['wall_s']:.1f} s"
    if s["mode"] == "quick":
        line += f"  [{mark(s['wall_s'] <= QUICK_TARGET_S)} {QUICK_TARGET_S:.0f} s]"
    print(line)
    failing = [name for name, holds in s["claims"].items() if not holds]
    print(f"  claims not holding: {', '.join(failing) or 'none'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("quick", "full"))
    parser.add_argument("--json", action="store_true", help="print the summaries as JSON")
    parser.add_argument("--keep", type=Path, help="also write each run's result JSON here")
    args = parser.parse_args()
    modes = [args.only] if args.only else ["quick", "full"]
    if hasattr(os, "getloadavg"):
        print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    summaries = []
    with tempfile.TemporaryDirectory() as tmp:
        for mode in modes:
            result, wall_s = run_cli(mode, Path(tmp) / f"{mode}.db")
            summaries.append(summarise(mode, result, wall_s))
            if args.keep:
                args.keep.mkdir(parents=True, exist_ok=True)
                (args.keep / f"engine_{mode}.json").write_text(json.dumps(result, indent=2))
            if not args.json:
                print_summary(summaries[-1])
    if args.json:
        print(json.dumps(summaries, indent=2))


if __name__ == "__main__":
    main()
