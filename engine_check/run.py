"""One engine check from start to finish: pick the device, measure the peaks, build the
model, run the experiments, measure the peaks again, settle them (engine_check.peaks),
assemble the result. The caller passes a progress callback (and nothing here prints)."""

from __future__ import annotations

import gc
import os
import platform
import time
from collections.abc import Callable, Sequence

import torch

from drill.errors import EngineError
from drill.serving.gpus import spec_for
from engine_check import experiments
from engine_check.config import DTYPE_BYTES, RunPlan, canonical_dtype, plan_for, resolve_device
from engine_check.contention import CpuMeter, Meter, RetryBudget, cpu_model_name
from engine_check.model import build_model, prepack_for_cpu
from engine_check.peak_kernels import matmul_kernels, stream_kernels
from engine_check.peaks import (
    BANDWIDTH,
    KINDS,
    MATMUL,
    PeakSettings,
    best_peaks,
    measure_kernels,
    settle_peaks,
)
from engine_check.report import assemble_result
from engine_check.timing import DeviceTimer, Timer, cpu_threads

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
    return cpu_model_name()


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
    timer: Timer | None = None,
    new_meter: Callable[[], Meter] = CpuMeter,
) -> dict:
    """Measure peaks and the experiments; returns the result dict (see report.py).
    `timer` and `new_meter` replace the device's clock and the CPU meter (for tests)."""
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
    if timer is None:
        timer = DeviceTimer(dev)

    total = (
        2
        + 1
        + len(plan.prompt_lens)
        + len(plan.context_lens)
        + len(plan.depth_layers)
        + 2
        + len(plan.batch_sizes)
        + len(plan.recompute_positions)
        + 1
        + 2
    )
    done = 0

    def tick(label: str) -> None:
        nonlocal done
        if progress is not None:
            progress(done, total, label)
        done += 1

    settings = PeakSettings(plan.warmups, plan.peak_repeats, plan.peak_seconds)

    def measure_peaks(round_name: str, kinds: Sequence[str], how: PeakSettings) -> list[dict]:
        rows: list[dict] = []
        for peak_kind in kinds:
            if round_name != "again":
                tick(_peak_label(peak_kind, round_name, plan, dtype_name))
            if peak_kind == MATMUL:
                kernels = matmul_kernels(dev, torch_dtype, plan.matmul_shapes)
            else:
                kernels = stream_kernels(dev, torch_dtype, plan.stream_bytes)
            rows += measure_kernels(timer, kernels, how, round_name)
            del kernels  # frees their tensors
            _release(kind)
        return rows

    kernel_rows = measure_peaks("before", KINDS, settings)
    first = best_peaks(kernel_rows)

    tick(f"building a {plan.model.params / 1e6:.0f} M-parameter model")
    model = build_model(plan.model, plan.max_seq, torch_dtype, dev, seed=seed)
    packed_min_rows = (
        prepack_for_cpu(model, prompt_rows=max(plan.prompt_lens)) if kind == "cpu" else 0
    )
    packed_prompts = bool(packed_min_rows) and model.output.packed_max_rows is None
    bench = experiments.Bench(
        model=model,
        timer=timer,
        plan=plan,
        dtype_bytes=DTYPE_BYTES[dtype_name],
        peak_flops_per_s=first["matmul_flops_per_s"],
        peak_bytes_per_s=first["bandwidth_bytes_per_s"],
        tick=tick,
        new_meter=new_meter,
        budget=RetryBudget(plan.retry_seconds),
    )
    sections = {
        "prefill": experiments.run_prefill(bench),
        "decode": experiments.run_decode(bench),
        "depth": experiments.run_depth(bench),
        "batch": experiments.run_batch(bench),
        "recompute": experiments.run_recompute(bench),
    }
    stream_pair = experiments.run_stream_pair(bench)
    dtype_probe = experiments.run_dtype_probe(bench)
    kv = experiments.run_kv(bench)
    cuda_graphs, decode_runner = bench.plan.cuda_graphs, bench.decode_runner
    retry_spent_s = bench.budget.spent
    del bench, model  # the second round of peaks gets the memory back
    _release(kind)

    kernel_rows += measure_peaks("after", KINDS, settings)
    kernel_rows, settled, warnings = settle_peaks(
        kernel_rows, sections, lambda k: measure_peaks("again", (k,), settings.longer())
    )
    if progress is not None:
        progress(total, total, "done")
    peaks = {
        **settled,
        "kernels": kernel_rows,
        "warnings": warnings,
        "spec": spec_for(device_name(kind)) if kind == "cuda" else None,
    }

    config = {
        **plan.to_dict(),
        "cuda_graphs": cuda_graphs,
        "params": plan.model.params,
        "weight_bytes": plan.model.params * DTYPE_BYTES[dtype_name],
        "decode_runner": decode_runner,
        # CPU: decode steps of 2..64 sequences use weights prepacked once (cpu_linear.py),
        # and steps of one sequence a copy laid out for one row where that beats the
        # default kernel here
        "cpu_prepacked_linears": packed_min_rows > 0,
        "cpu_packed_min_rows": packed_min_rows or None,
        # and prompts of any length where the packed kernel won the longest prompt's matmul
        "cpu_packed_prompts": packed_prompts,
        "seed": seed,
    }
    meta = {
        "mode": plan.mode,
        "device": kind,
        "device_name": device_name(kind),
        "dtype": dtype_name,
        "torch_version": torch.__version__,
        "threads": cpu_threads(),
        "wall_s": time.perf_counter() - started,
        "cpu_count": os.cpu_count(),
        # other programs busy on the CPU slow every measurement (and, on a GPU run, the
        # kernel launches); the report warns when the machine was not idle
        "other_cpu_share": meter.stop(),
        # seconds of timed work spent timing disturbed points again
        "retry_s": retry_spent_s,
    }
    return assemble_result(
        meta=meta,
        config=config,
        peaks=peaks,
        **sections,
        kv=kv,
        stream_pair=stream_pair,
        dtype_probe=dtype_probe,
    )


def _release(kind: str) -> None:
    gc.collect()
    if kind == "cuda":
        torch.cuda.empty_cache()


def _peak_label(kind: str, round_name: str, plan: RunPlan, dtype_name: str) -> str:
    if kind == MATMUL:
        shapes = ", ".join("x".join(map(str, shape)) for shape in plan.matmul_shapes)
        return f"matmul peak {round_name} the experiments ({shapes}, {dtype_name})"
    assert kind == BANDWIDTH
    size = plan.stream_bytes // 2**20
    return f"memory bandwidth {round_name} the experiments (read, copy, triad of {size} MiB)"
