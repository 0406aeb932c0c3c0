"""One engine check from start to finish: pick the device, measure the peaks, build the
model, run the experiments, assemble the result. The caller passes a progress callback
(and nothing here prints)."""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from pathlib import Path

import torch

from drill.errors import EngineError
from engine_check import experiments
from engine_check.config import DTYPE_BYTES, canonical_dtype, plan_for, resolve_device
from engine_check.contention import CpuMeter
from engine_check.model import build_model, prepack_for_cpu
from engine_check.peaks import measure_copy_peak, measure_matmul_peak
from engine_check.report import assemble_result
from engine_check.specs import spec_for
from engine_check.timing import DeviceTimer, cpu_threads

# progress(done, total, label): `done` points finished out of `total`, `label` starts now
Progress = Callable[[int, int, str], None]


def mps_available() -> bool:
    backend = getattr(torch.backends, "mps", None)
    return bool(backend and backend.is_available())


def device_name(kind: str) -> str:
    if kind == "cuda":
        return torch.cuda.get_device_name()
    if kind == "mps":
        return f"Apple GPU (MPS, {platform.machine()})"
    return _cpu_model_name()


def _cpu_model_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "CPU"


def _check_dtype_works(kind: str, dtype: torch.dtype) -> None:
    """A tiny matmul at the dtype, so an unsupported combination fails in one line now."""
    try:
        a = torch.ones(8, 8, device=kind, dtype=dtype)
        torch.mm(a, a)
    except (RuntimeError, TypeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise EngineError(f"{dtype} matmuls do not run on {kind} here: {first}") from None


def run_engine_check(
    device: str = "auto",
    dtype: str | None = None,
    mode: str = "full",
    progress: Progress | None = None,
    seed: int = 0,
) -> dict:
    """Measure peaks and the five experiments; returns the result dict (see report.py)."""
    started = time.perf_counter()
    meter = CpuMeter()
    meter.start()
    kind = resolve_device(device, torch.cuda.is_available(), mps_available())
    dtype_name = canonical_dtype(dtype, kind)
    torch_dtype = getattr(torch, dtype_name)
    _check_dtype_works(kind, torch_dtype)
    dev = torch.device(kind)
    memory = torch.cuda.get_device_properties(dev).total_memory if kind == "cuda" else None
    plan = plan_for(kind, mode, dtype_name, memory)
    timer = DeviceTimer(dev)

    total = (
        3
        + len(plan.prompt_lens)
        + len(plan.context_lens)
        + len(plan.batch_sizes)
        + len(plan.recompute_positions)
        + 1
    )
    done = 0

    def tick(label: str) -> None:
        nonlocal done
        if progress is not None:
            progress(done, total, label)
        done += 1

    tick(f"matmul peak ({plan.matmul_size}^3, {dtype_name})")
    flops_per_s, mm_timing = measure_matmul_peak(
        timer, torch_dtype, plan.matmul_size, plan.warmups, plan.peak_repeats
    )
    tick(f"copy bandwidth ({plan.copy_bytes // 2**20} MiB)")
    bytes_per_s, copy_timing = measure_copy_peak(
        timer, torch_dtype, plan.copy_bytes, plan.warmups, plan.peak_repeats
    )
    if kind == "cuda":
        torch.cuda.empty_cache()
    name = device_name(kind)
    peaks = {
        "matmul_flops_per_s": flops_per_s,
        "copy_bytes_per_s": bytes_per_s,
        "matmul_size": plan.matmul_size,
        "copy_bytes": plan.copy_bytes,
        # the peaks above use the fastest repeat; these are the medians, for comparison
        "matmul_flops_per_s_median": 2 * plan.matmul_size**3 / (mm_timing.median_ms / 1e3),
        "copy_bytes_per_s_median": 2 * plan.copy_bytes / (copy_timing.median_ms / 1e3),
        "matmul_timing": mm_timing.to_dict(),
        "copy_timing": copy_timing.to_dict(),
        "spec": spec_for(name) if kind == "cuda" else None,
    }

    tick(f"building a {plan.model.params / 1e6:.0f} M-parameter model")
    model = build_model(plan.model, plan.max_seq, torch_dtype, dev, seed=seed)
    prepacked = prepack_for_cpu(model) if kind == "cpu" else False
    bench = experiments.Bench(
        model=model,
        timer=timer,
        plan=plan,
        dtype_bytes=DTYPE_BYTES[dtype_name],
        peak_flops_per_s=flops_per_s,
        peak_bytes_per_s=bytes_per_s,
        tick=tick,
    )
    prefill_rows = experiments.run_prefill(bench)
    decode_rows = experiments.run_decode(bench)
    batch_rows = experiments.run_batch(bench)
    recompute_rows = experiments.run_recompute(bench)
    kv = experiments.run_kv(bench)
    if progress is not None:
        progress(total, total, "done")

    config = {
        **plan.to_dict(),
        "cuda_graphs": bench.plan.cuda_graphs,
        "params": plan.model.params,
        "weight_bytes": plan.model.params * DTYPE_BYTES[dtype_name],
        "decode_runner": bench.decode_runner,
        # CPU: decode steps of 2..64 sequences use weights prepacked once (cpu_linear.py)
        "cpu_prepacked_linears": prepacked,
        "seed": seed,
    }
    meta = {
        "mode": plan.mode,
        "device": kind,
        "device_name": name,
        "dtype": dtype_name,
        "torch_version": torch.__version__,
        "threads": cpu_threads(),
        "wall_s": time.perf_counter() - started,
        "cpu_count": os.cpu_count(),
        # other programs busy on the CPU slow every measurement (and, on a GPU run, the
        # kernel launches); the report warns when the machine was not idle
        "other_cpu_share": meter.stop(),
    }
    return assemble_result(
        meta=meta,
        config=config,
        peaks=peaks,
        prefill=prefill_rows,
        decode=decode_rows,
        batch=batch_rows,
        recompute=recompute_rows,
        kv=kv,
    )
