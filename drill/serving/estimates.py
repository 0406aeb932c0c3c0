"""What one GPU of a tensor-parallel deployment holds and how fast it serves: weights and
KV-cache bytes per GPU, the sequences that fit, time to first token, time per output
token, and the largest batch that meets a TPOT target. Pure functions of a model shape,
a GPU's spec sheet (drill.serving.gpus) and two efficiencies; no torch, no database.

Per GPU, with tensor parallelism over `tp` GPUs (communication between them left out):

    weights    = params · weight_bytes / tp
    KV         the cache formula (drill.serving.kvmath) with kv_heads / tp heads per GPU while
               tp <= kv_heads; beyond that each GPU keeps one KV head, and every head is
               replicated tp / kv_heads times; an MLA latent is replicated on every GPU
    usable     = memory · 90 % (what serving engines leave themselves; vLLM's default)
    sequences  = floor((usable - weights) / KV bytes of one sequence of seq_len tokens)

Times are roofline times with efficiencies: compute at peak FLOP/s · MFU, memory at peak
bytes/s · MBU, the slower of the two. A decode step has efficiencies of its own where a
stored run measured them: its few-row matmuls reach a smaller share of the FLOP/s than a
prompt's (decode MFU, from the run's largest batch where that batch is compute-bound), and
several sequences stream the weights through another kernel than one sequence's
matrix-vector product (batch MBU, from the run's smallest batch above 1); without a run
they are MFU and MBU:

    TTFT(P)   FLOPs = P · 2 · active + 4 · layers · q_heads · head_dim · P(P+1)/2, over tp;
              bytes = weights read + P tokens' KV written
    TPOT(B)   one decode step of B sequences at context L:
              FLOPs = B · (2 · active + 4 · layers · q_heads · head_dim · L), over tp;
              bytes = weights read + B · KV bytes of L tokens
    weights read = min(params, tokens · active) · weight_bytes / tp: a dense model reads
              all of them once per forward; a mixture of experts reads the experts its
              tokens pass through, at most all of them
    SLO batch = the largest B <= sequences with TPOT(B) <= the target (TPOT grows with B)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from drill.errors import ConfigError
from drill.quantities.units import format_quantity
from drill.serving.gpus import GpuSpec, gpu_for_device
from drill.serving.kvmath import ModelShape, dtype_bytes, kv_estimate

MEMORY_PERCENT = 90  # of a GPU's memory that the weights and the KV cache may use
# Used when no engine run is stored: what a well-tuned server reaches on a data-centre
# GPU against its spec sheet, prefill's matmuls and decode's weight reads.
DEFAULT_MFU = 0.5
DEFAULT_MBU = 0.7


@dataclass(frozen=True)
class Efficiencies:
    """Shares of the spec sheet's peaks reached: FLOP/s (MFU) and memory bytes/s (MBU)."""

    mfu: float
    mbu: float
    source: str  # where they come from, in words
    # a decode step's: its matmuls' share of peak FLOP/s, and the weights' read rate for
    # batches above 1 (None: mfu and mbu)
    decode_mfu: float | None = None
    batch_mbu: float | None = None

    def __post_init__(self) -> None:
        for name in ("mfu", "mbu", "decode_mfu", "batch_mbu"):
            value = getattr(self, name)
            if value is not None and not 0 < value <= 1:
                label = name.replace("_", " ").replace("mfu", "MFU").replace("mbu", "MBU")
                raise ConfigError(f"{label} must be above 0 and at most 1, got {value}")

    def for_decode(self, batch: int) -> tuple[float, float]:
        """(MFU, MBU) of a decode step of `batch` sequences. A batch never reads the
        weights faster than one sequence does here, so TPOT grows with the batch (which
        the SLO's search needs) even where a run measured its batch faster."""
        mfu = self.mfu if self.decode_mfu is None else self.decode_mfu
        mbu = self.mbu if batch <= 1 or self.batch_mbu is None else min(self.mbu, self.batch_mbu)
        return mfu, mbu


def default_efficiencies(why: str) -> Efficiencies:
    """The stated defaults, saying `why` they are used."""
    return Efficiencies(DEFAULT_MFU, DEFAULT_MBU, f"defaults typical of a tuned server ({why})")


DEFAULTS = default_efficiencies("no engine run stored")


def run_is_on(run: Mapping[str, Any], gpu: GpuSpec) -> bool:
    """Whether a stored engine run measured `gpu`: a CUDA run whose device name is that
    GPU of the table. Efficiencies measured on one device say nothing about another."""
    name = run.get("device_name")
    return run.get("device") == "cuda" and isinstance(name, str) and gpu_for_device(name) == gpu


def efficiencies_from_run(run: Mapping[str, Any] | None, run_id: int | None = None) -> Efficiencies:
    """MFU from prefill at the longest prompt and MBU from batch-1 decode at the shortest
    context of a stored engine run, and from its batch sweep a decode step's own
    (`decode_points`: batch MBU, decode MFU, each None where the sweep cannot give it):
    against the spec sheet where the run's GPU has one, else against the peaks the run
    measured. DEFAULTS without a usable run. Which device the run measured is the
    caller's business (`run_is_on`)."""
    if run is None:
        return DEFAULTS
    try:
        prefill = max(run["prefill"], key=lambda r: r["prompt_len"])
        decode = min(run["decode"], key=lambda r: r["context_len"])
        spec = run["peaks"].get("spec")
        when = str(run.get("created_at") or "")[:10]
        if spec:
            against = f"against the {spec['name']} spec sheet"

            def flops_share(row: Mapping[str, Any]) -> float:
                return float(row["flops_per_s"]) / spec["bf16_dense_flops_per_s"]

            def bytes_share(row: Mapping[str, Any]) -> float:
                return float(row["bytes_per_s"]) / spec["hbm_bytes_per_s"]
        else:  # the shares the run stored against its own peaks
            against = "against the peaks it measured"

            def flops_share(row: Mapping[str, Any]) -> float:
                return float(row["mfu"] if "mfu" in row else row["flops_util"])

            def bytes_share(row: Mapping[str, Any]) -> float:
                return float(row["mbu"])

        mfu, mbu = flops_share(prefill), bytes_share(decode)
        device = run["device_name"]
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return DEFAULTS
    try:  # a sweep stored without a rate (an older run) still leaves MFU and MBU
        small, large = decode_points(run.get("batch") or [], run.get("batch_ridge"))
        decode_mfu = None if large is None else min(1.0, flops_share(large))
        batch_mbu = None if small is None else min(1.0, bytes_share(small))
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        small = large = decode_mfu = batch_mbu = None
    number = "" if run_id is None else f" {run_id}"
    source = (
        f"your engine run{number}{' of ' + when if when else ''} on {device}: prefill of "
        f"{prefill['prompt_len']:,} tokens and decode at context {decode['context_len']:,}"
        f"{decode_points_named(small, large)}, {against}"
    )
    return Efficiencies(min(1.0, mfu), min(1.0, mbu), source, decode_mfu, batch_mbu)


def decode_points(
    batch_rows: Sequence[Mapping[str, Any]], ridge: int | None
) -> tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]:
    """The batch sweep's points a decode step's own efficiencies come from: (the smallest
    batch above 1, where several sequences stream the weights and compute is still
    hidden; the largest batch, where it reaches the roofline's ridge `ridge`, else None:
    a memory-bound step says nothing about the FLOP/s a decode step reaches)."""
    several = sorted((r for r in batch_rows if r["batch"] > 1), key=lambda r: r["batch"])
    if not several:
        return None, None
    smallest = several[0] if ridge is None or several[0]["batch"] < ridge else None
    largest = several[-1] if ridge is not None and several[-1]["batch"] >= ridge else None
    return smallest, largest


def decode_points_named(small: Mapping[str, Any] | None, large: Mapping[str, Any] | None) -> str:
    """", batch MBU at batch 2, decode MFU at batch 32" for the points `decode_points`
    found ("" for none)."""
    return "".join(
        f", {what} at batch {row['batch']}"
        for what, row in (("batch MBU", small), ("decode MFU", large)) if row is not None
    )  # fmt: skip


def decode_efficiencies_named(decode_mfu: float | None, batch_mbu: float | None) -> str:
    """", decode MFU 40%, batch MBU 33.3%" for those a run measured ("" for none)."""
    return "".join(
        f", {name} {format_quantity(value, 'fraction')}"
        for name, value in (("decode MFU", decode_mfu), ("batch MBU", batch_mbu))
        if value is not None
    )


@dataclass(frozen=True)
class Memory:
    """What one GPU holds."""

    tp: int
    seq_len: int  # tokens each sequence holds
    weight_width: float  # bytes per weight
    weight_bytes: int  # per GPU
    kv_heads_per_gpu: int | None  # None for MLA (one latent, not heads)
    kv_replicas: int  # GPUs that hold each KV head (or the latent)
    kv_bytes_per_token: int  # per GPU
    kv_bytes_per_sequence: int  # per GPU, for seq_len tokens
    usable_bytes: int
    kv_budget_bytes: int  # usable - weights, at least 0
    max_sequences: int


def _params(shape: ModelShape) -> tuple[int, int]:
    """(all parameters, those one token passes through)."""
    if shape.params is None or shape.active is None:
        why = f" ({shape.params_source})" if shape.params_source else ""
        raise ConfigError(
            f"{shape.display_name} has no parameter count{why}; give it with --params N "
            "(e.g. 8.03B), or use a preset"
        )
    return shape.params, shape.active


def per_gpu_shape(shape: ModelShape, tp: int) -> tuple[ModelShape, int | None, int]:
    """(the shape one GPU caches, its KV heads or None for MLA, how many GPUs hold each)."""
    if tp < 1:
        raise ConfigError(f"tp must be at least 1, got {tp}")
    if shape.is_mla:
        return shape, None, tp
    heads = math.ceil(shape.kv_heads / tp)
    replicas = max(1, tp // shape.kv_heads)
    return dataclasses.replace(shape, kv_heads=heads, q_heads=None), heads, replicas


def memory_per_gpu(
    shape: ModelShape,
    gpu: GpuSpec,
    tp: int,
    seq_len: int,
    kv_dtype: str | float | None = None,
    weights_dtype: str | None = None,
) -> Memory:
    """Weights and KV bytes on one GPU, and how many sequences of `seq_len` tokens fit."""
    local, heads, replicas = per_gpu_shape(shape, tp)
    params, _active = _params(shape)
    width = dtype_bytes(weights_dtype or shape.dtype or "bf16")
    weight_bytes = math.ceil(params * width / tp)
    estimate = kv_estimate(local, seq_len, dtype_bytes=kv_dtype)
    usable = gpu.memory_bytes * MEMORY_PERCENT // 100
    budget = max(0, usable - weight_bytes)
    return Memory(
        tp=tp,
        seq_len=seq_len,
        weight_width=width,
        weight_bytes=weight_bytes,
        kv_heads_per_gpu=heads,
        kv_replicas=replicas,
        kv_bytes_per_token=estimate.bytes_per_token,
        kv_bytes_per_sequence=estimate.bytes_per_request,
        usable_bytes=usable,
        kv_budget_bytes=budget,
        max_sequences=budget // estimate.bytes_per_request,
    )


@dataclass(frozen=True)
class StepTime:
    """A roofline time with efficiencies: the slower of compute and memory traffic."""

    flops: float  # per GPU
    bytes: float  # per GPU
    compute_s: float
    memory_s: float

    @property
    def seconds(self) -> float:
        return max(self.compute_s, self.memory_s)

    @property
    def bound(self) -> str:
        return "compute" if self.compute_s >= self.memory_s else "memory"


def attention_flops(layers: int, q_heads: int, head_dim: int, attended_positions: int) -> int:
    """Attention's FLOPs for query tokens that attend `attended_positions` positions in all:
    4 · layers · q_heads · head_dim · positions (QKᵀ and PV, 2 FLOPs per multiply-add
    each). The engine's roofline (engine_check.roofline) counts with this too."""
    return 4 * layers * q_heads * head_dim * attended_positions


def _attention_flops(shape: ModelShape, attended_positions: int) -> int:
    if shape.q_heads is None:
        raise ConfigError(f"{shape.display_name} names no query heads; --latency needs them")
    return attention_flops(shape.layers, shape.q_heads, shape.head_dim, attended_positions)


def _weights_read(shape: ModelShape, tokens: int, width: float, tp: int) -> float:
    params, active = _params(shape)
    return min(params, tokens * active) * width / tp


def _step(flops: float, nbytes: float, gpu: GpuSpec, mfu: float, mbu: float) -> StepTime:
    return StepTime(
        flops=flops,
        bytes=nbytes,
        compute_s=flops / (gpu.flops_per_s * mfu),
        memory_s=nbytes / (gpu.bytes_per_s * mbu),
    )


def ttft(
    shape: ModelShape, gpu: GpuSpec, memory: Memory, prompt_len: int, eff: Efficiencies
) -> StepTime:
    """Prefill of one prompt of `prompt_len` tokens on each of `memory.tp` GPUs."""
    _params_all, active = _params(shape)
    attended = prompt_len * (prompt_len + 1) // 2
    flops = (prompt_len * 2 * active + _attention_flops(shape, attended)) / memory.tp
    nbytes = (
        _weights_read(shape, prompt_len, memory.weight_width, memory.tp)
        + prompt_len * memory.kv_bytes_per_token
    )
    return _step(flops, nbytes, gpu, eff.mfu, eff.mbu)


def tpot(
    shape: ModelShape, gpu: GpuSpec, memory: Memory, batch: int, eff: Efficiencies
) -> StepTime:
    """One decode step of `batch` sequences, each holding the `seq_len` tokens `memory`
    was sized for."""
    _params_all, active = _params(shape)
    per_sequence = 2 * active + _attention_flops(shape, memory.seq_len)
    flops = batch * per_sequence / memory.tp
    weights = _weights_read(shape, batch, memory.weight_width, memory.tp)
    nbytes = weights + batch * memory.kv_bytes_per_sequence
    return _step(flops, nbytes, gpu, *eff.for_decode(batch))


def slo_batch(
    shape: ModelShape, gpu: GpuSpec, memory: Memory, slo_tpot_s: float, eff: Efficiencies
) -> int:
    """The largest batch, at most `memory.max_sequences`, whose TPOT meets `slo_tpot_s`
    (0 when not even one sequence does, or none fits)."""

    def meets(batch: int) -> bool:
        return tpot(shape, gpu, memory, batch, eff).seconds <= slo_tpot_s

    low, high = 0, memory.max_sequences  # meets(low) holds (or low is 0); find the last
    while low < high:
        middle = (low + high + 1) // 2
        if meets(middle):
            low = middle
        else:
            high = middle - 1
    return low
