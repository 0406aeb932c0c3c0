"""The experiments of an engine check: each point timed, with the FLOPs and bytes it
counts (engine_check.roofline).

(a) prefill: TTFT vs prompt length (the FLOPs grow, the weights read stay the same);
(b) decode: TPOT vs context length at batch 1;
(b') depth: a batch-1 decode step through the first k blocks (the bytes read grow, the
     batch stays 1);
(b'') stream pair: a batch-1 decode step and a read of the same weights in turns (the
     share of the read stream a step reaches);
(dtype probe) one-row matmuls in the run's dtype and the other width: whether a sweep
     of dtypes would vary the bytes cleanly;
(c) batch: TPOT vs batch size at a fixed context (the FLOPs grow, the bytes barely);
(d) recompute: a cached decode step vs recomputing the whole prefix, by position;
(e) kv: bytes of the allocated cache tensor against `drill.serving.kvmath.kv_cache_bytes`.

Rates, utilisations and roofline times depend on the peaks, which are settled only after
the experiments (engine_check.peaks), so engine_check.report derives them. The peaks
measured before the experiments only decide which points are slow enough to time fewer
times.

Every point is timed under a meter of the other programs' CPU use, and timed again when
they disturbed it (engine_check.contention.measure_steady); each row records the share
and the tries beside its times.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import torch
import torch.nn.functional as F

from drill.serving.kvmath import kv_cache_bytes
from engine_check import roofline
from engine_check.config import RunPlan
from engine_check.contention import (
    CpuMeter,
    Meter,
    RetryBudget,
    SteadyTiming,
    measure_steady,
    metered_tries,
)
from engine_check.model import KVCache, Transformer, decode_step, forward_no_cache, prefill
from engine_check.timing import Timer, measure

# A point whose roofline time is above this is timed `slow_repeats` times, not `repeats`.
SLOW_POINT_S = 0.5


@dataclass
class Bench:
    """Everything the experiments share."""

    model: Transformer
    timer: Timer
    plan: RunPlan
    dtype_bytes: int
    peak_flops_per_s: float
    peak_bytes_per_s: float
    tick: Callable[[str], None]  # reports that a point is about to be measured
    decode_runner: str = "eager"  # or "cuda_graph" once one capture has worked
    new_meter: Callable[[], Meter] = CpuMeter
    budget: RetryBudget = field(default_factory=lambda: RetryBudget(0.0))

    @property
    def cfg(self):
        return self.model.cfg

    @property
    def device(self) -> torch.device:
        return self.model.output.weight.device

    def predicted_s(self, flops: float, nbytes: float) -> float:
        return roofline.roofline_seconds(
            flops, nbytes, self.peak_flops_per_s, self.peak_bytes_per_s
        )

    def time_point(self, fn: Callable[[], object], predicted_s: float) -> SteadyTiming:
        slow = predicted_s > SLOW_POINT_S
        warmups = min(1, self.plan.warmups) if slow else self.plan.warmups
        repeats = self.plan.slow_repeats if slow else self.plan.repeats
        return measure_steady(fn, self.timer, warmups, repeats, self.new_meter, self.budget)

    def tokens(self, batch: int, length: int) -> torch.Tensor:
        gen = torch.Generator(device=self.device).manual_seed(batch * 100_003 + length)
        return torch.randint(0, self.cfg.vocab, (batch, length), generator=gen, device=self.device)

    def step_fn(self, fn: Callable[[], object]) -> Callable[[], object]:
        """`fn` itself, or on an NVIDIA GPU a CUDA graph replaying it: a decode step is
        hundreds of small kernels, and launching them one by one from Python would time
        the launches rather than the memory traffic."""
        if self.device.type != "cuda" or not self.plan.cuda_graphs:
            return fn
        try:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):  # warm up off the capture stream, as capture needs
                for _ in range(2):
                    fn()
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                fn()
        except RuntimeError:
            torch.cuda.synchronize()
            self.plan = replace(self.plan, cuda_graphs=False)
            self.decode_runner = "eager"
            return fn
        self.decode_runner = "cuda_graph"
        return graph.replay


def _release(bench: Bench) -> None:
    bench.model.cache = None
    gc.collect()
    if bench.device.type == "cuda":
        torch.cuda.empty_cache()


def run_prefill(bench: Bench) -> list[dict]:
    """(a) Time to first token for each prompt length, batch 1."""
    cfg, rows = bench.cfg, []
    bench.model.setup_cache(1, max(bench.plan.prompt_lens))
    for prompt_len in bench.plan.prompt_lens:
        bench.tick(f"prefill {prompt_len} tokens")
        tokens = bench.tokens(1, prompt_len)
        flops = roofline.prefill_flops(cfg, prompt_len)
        nbytes = roofline.prefill_bytes(cfg, prompt_len, bench.dtype_bytes)
        predicted = bench.predicted_s(flops, nbytes)
        timing = bench.time_point(lambda t=tokens: prefill(bench.model, t), predicted)
        rows.append(
            {
                "prompt_len": prompt_len,
                **timing.fields(),
                "flops": flops,
                "bytes": nbytes,
            }
        )
    _release(bench)
    return rows


def _decode_row(bench: Bench, batch: int, context_len: int, depth: int | None = None) -> dict:
    """Time one decode step for `batch` sequences whose new token sits at position
    context_len - 1 (so it attends to `context_len` positions), through the first
    `depth` blocks (all when None). Needs a cache set up."""
    cfg = bench.cfg if depth is None else replace(bench.cfg, layers=depth)
    token = bench.tokens(batch, 1)
    pos = context_len - 1
    flops = roofline.decode_step_flops(cfg, context_len, batch)
    nbytes = roofline.decode_step_bytes(cfg, context_len, batch, bench.dtype_bytes)
    predicted = bench.predicted_s(flops, nbytes)
    step = bench.step_fn(lambda: decode_step(bench.model, token, pos, depth))
    timing = bench.time_point(step, predicted)
    return {
        "batch": batch,
        "context_len": context_len,
        **timing.fields(),
        "flops": flops,
        "bytes": nbytes,
    }


def run_decode(bench: Bench) -> list[dict]:
    """(b) Time per output token at batch 1 for each context length."""
    rows = []
    bench.model.setup_cache(1, max(bench.plan.context_lens))
    for context_len in bench.plan.context_lens:
        bench.tick(f"decode at context {context_len}")
        row = _decode_row(bench, 1, context_len)
        del row["batch"]
        rows.append(row)
    _release(bench)
    return rows


def run_depth(bench: Bench) -> list[dict]:
    """(b') A batch-1 decode step through the first k blocks, for each k of the plan: the
    weights read grow with k while the batch stays 1."""
    rows = []
    context_len = bench.plan.batch_context_len
    bench.model.setup_cache(1, context_len)
    for depth in bench.plan.depth_layers:
        bench.tick(f"decode through {depth} of {bench.cfg.layers} blocks")
        row = _decode_row(bench, 1, context_len, depth)
        del row["batch"]
        rows.append({"layers": depth, **row})
    _release(bench)
    return rows


def run_stream_pair(bench: Bench) -> dict:
    """(b'') A batch-1 decode step and a plain read of the same weights (a sum over each
    matmul's weight, as the read-stream peak sums one large tensor), timed in turns:
    the share of the read stream a step reaches, with both measured at the same moments.
    A virtual machine's memory bandwidth drifts as its neighbours load the host, so a
    step set against a read stream timed minutes earlier can read low or high."""
    from engine_check.model import Linear

    bench.tick("decode step beside a read of the same weights")
    context_len = bench.plan.batch_context_len
    bench.model.setup_cache(1, context_len)
    token, pos = bench.tokens(1, 1), context_len - 1
    weights = [m.weight for m in bench.model.modules() if isinstance(m, Linear)]
    step = bench.step_fn(lambda: decode_step(bench.model, token, pos))

    def read() -> None:
        for weight in weights:
            torch.sum(weight)

    for fn in (step, read):  # warm-ups
        for _ in range(max(1, bench.plan.warmups)):
            bench.timer.time_ms(fn)

    def in_turns(attempt: int) -> tuple[tuple[list[float], list[float]], float]:
        step_ms, read_ms = [], []
        for _ in range(bench.plan.repeats):
            step_ms.append(bench.timer.time_ms(step))
            read_ms.append(bench.timer.time_ms(read))
        return (step_ms, read_ms), (sum(step_ms) + sum(read_ms)) / 1e3

    # timed again while other programs disturb it; the quietest try is kept (an unknown
    # share counts as quiet: nothing says otherwise)
    tries = metered_tries(in_turns, bench.new_meter, bench.budget)
    (step_ms, read_ms), share = min(tries, key=lambda t: t[1] or 0.0)
    step_bytes = roofline.decode_step_bytes(bench.cfg, context_len, 1, bench.dtype_bytes)
    read_bytes = sum(w.numel() * w.element_size() for w in weights)
    _release(bench)
    return {
        "context_len": context_len,
        "step_ms": step_ms,
        "read_ms": read_ms,
        "step_bytes": step_bytes,
        "read_bytes": read_bytes,
        # each at its fastest call: other work only ever slows a call down
        "fraction": (step_bytes / min(step_ms)) / (read_bytes / min(read_ms)),
        "other_share": share,
        "tries": len(tries),
    }


# The other width a dtype probe sets against the run's: the bytes halve or double, the
# FLOPs stay the same
_OTHER_WIDTH = {torch.float32: torch.bfloat16, torch.bfloat16: torch.float32,
                torch.float16: torch.float32}  # fmt: skip


# blocks whose gate-and-up weights the dtype probe copies: far more bytes than any cache
# holds, while a copy in the wider dtype stays small beside the model
DTYPE_PROBE_BLOCKS = 4


def run_dtype_probe(bench: Bench) -> list[dict]:
    """Whether a narrower or wider dtype would vary the bytes cleanly at the same depth:
    the largest weight (gate and up) of each of the first DTYPE_PROBE_BLOCKS blocks
    multiplies one row, in the run's dtype
    and in the other width, each by the faster of the default and (on a CPU) the
    prepacked one-row kernel. A sweep of dtypes tests the bytes only if both widths
    stream at about the same bytes per second; on CPUs bf16 often streams slower."""
    from engine_check import cpu_linear

    bench.tick("one-row matmuls in two dtypes")
    dtype = bench.model.output.weight.dtype
    rows = []
    for width in (dtype, _OTHER_WIDTH[dtype]):
        weights = [
            block.feed_forward.w13.weight.to(width)
            for block in bench.model.layers[:DTYPE_PROBE_BLOCKS]
        ]
        x = torch.ones(1, 1, weights[0].shape[1], dtype=width, device=bench.device)
        kernels = {"default": [lambda w=w, x=x: F.linear(x, w) for w in weights]}
        if bench.device.type == "cpu" and cpu_linear.prepack_works(width):
            packed = [cpu_linear.pack_weight(w, cpu_linear.ONE_ROW_LAYOUT_ROWS) for w in weights]
            kernels["prepacked"] = [lambda p=p, x=x: cpu_linear.packed_linear(x, p) for p in packed]
        nbytes = sum(w.numel() * w.element_size() for w in weights)
        best = {}
        for name, calls in kernels.items():
            timing = measure(lambda calls=calls: [c() for c in calls], bench.timer,
                             bench.plan.warmups, bench.plan.repeats)  # fmt: skip
            best[name] = timing.best_ms
        kernel = min(best, key=lambda name: best[name])
        rows.append(
            {
                "dtype": str(width).removeprefix("torch."),
                "bytes": nbytes,
                "best_ms": best[kernel],
                "kernel": kernel,
                "bytes_per_s": nbytes / (best[kernel] / 1e3),
            }
        )
        del weights, kernels
        _release(bench)
    return rows


def run_batch(bench: Bench) -> list[dict]:
    """(c) Time per decode step for growing batches at one context length."""
    rows = []
    context_len = bench.plan.batch_context_len
    for batch in bench.plan.batch_sizes:
        bench.tick(f"decode batch {batch}")
        bench.model.setup_cache(batch, context_len)
        rows.append(_decode_row(bench, batch, context_len))
        _release(bench)
    return rows


def run_recompute(bench: Bench) -> list[dict]:
    """(d) At each position: one cached decode step vs recomputing the whole prefix."""
    cfg, rows = bench.cfg, []
    positions = bench.plan.recompute_positions
    bench.model.setup_cache(1, max(positions) + 1)
    for position in positions:
        bench.tick(f"cached vs recompute at position {position}")
        cached = _decode_row(bench, 1, position + 1)
        tokens = bench.tokens(1, position + 1)
        flops = roofline.prefill_flops(cfg, position + 1)
        nbytes = roofline.prefill_bytes(cfg, position + 1, bench.dtype_bytes)
        predicted = bench.predicted_s(flops, nbytes)
        timing = bench.time_point(lambda t=tokens: forward_no_cache(bench.model, t), predicted)
        rows.append(
            {
                "position": position,
                "cached_ms": cached["ms"],
                "recompute_ms": timing.timing.median_ms,
                "cached_p90_ms": cached["p90_ms"],
                "recompute_p90_ms": timing.timing.p90_ms,
                "cached_other_share": cached["other_share"],
                "recompute_other_share": timing.other_share,
                "cached_flops": cached["flops"],
                "cached_bytes": cached["bytes"],
                "recompute_flops": flops,
                "recompute_bytes": nbytes,
            }
        )
    _release(bench)
    return rows


def _allocated_bytes(device: torch.device) -> int | None:
    if device.type == "cuda":
        return torch.cuda.memory_allocated(device)
    if device.type == "mps" and hasattr(torch.mps, "current_allocated_memory"):
        return torch.mps.current_allocated_memory()
    return None


def run_kv(bench: Bench) -> dict:
    """(e) The batch-1 cache for the longest decode context: bytes allocated vs formula."""
    bench.tick("KV cache bytes")
    _release(bench)
    cfg = bench.cfg
    seq_len = max(bench.plan.context_lens)
    before = _allocated_bytes(bench.device)
    cache = KVCache(cfg, 1, seq_len, bench.model.output.weight.dtype, bench.device)
    after = _allocated_bytes(bench.device)
    measured = cache.kv.numel() * cache.kv.element_size()
    formula = kv_cache_bytes(
        cfg.layers, cfg.kv_heads, cfg.head_dim, seq_len, bench.dtype_bytes, requests=1
    )
    result = {
        "measured_bytes": measured,
        "formula_bytes": formula,
        "allocator_delta_bytes": None if before is None else after - before,
        "shape": list(cache.kv.shape),
        "layers": cfg.layers,
        "kv_heads": cfg.kv_heads,
        "head_dim": cfg.head_dim,
        "seq_len": seq_len,
        "requests": 1,
        "dtype_bytes": bench.dtype_bytes,
    }
    del cache
    return result
