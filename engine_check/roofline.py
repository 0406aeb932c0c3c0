"""FLOPs and bytes of prefill and decode for a `ModelConfig`, and the roofline time.

Counting conventions (one place, so every experiment uses the same):

* A matmul of an [M, K] activation by a [K, N] weight is 2·M·K·N FLOPs.
* Attention per query token and layer is 4·heads·head_dim·L FLOPs for L attended
  positions (QKᵀ and PV); causal prefill of T tokens attends 1 + 2 + … + T positions.
* Prefill computes logits for the last position only, as a server does.
* Bytes are what must cross the memory bus at least once: every weight read
  once per forward (only the looked-up embedding rows), the KV rows read by
  attention, and the KV rows written. Activations are left out; they are small
  next to the weights at the batch sizes measured here.

The roofline prediction is max(FLOPs / peak FLOP/s, bytes / peak bytes/s).
"""

from __future__ import annotations

from drill.serving.estimates import attention_flops
from drill.serving.kvmath import kv_cache_bytes
from engine_check.config import ModelConfig


def weight_bytes_per_forward(cfg: ModelConfig, dtype_bytes: int, embedded_rows: int) -> int:
    """Weights one forward reads: all blocks, final norm, output head, and the embedding
    rows of the `embedded_rows` tokens looked up."""
    per_layer = cfg.linear_params_per_layer + cfg.norm_params_per_layer
    elems = cfg.layers * per_layer + cfg.d_model + cfg.vocab * cfg.d_model
    elems += min(embedded_rows, cfg.vocab) * cfg.d_model
    return elems * dtype_bytes


def kv_row_bytes(cfg: ModelConfig, dtype_bytes: int) -> int:
    """Bytes of K and V for one token across all layers (drill.serving.kvmath's formula
    at one token: 2·layers·kv_heads·head_dim·dtype)."""
    return kv_cache_bytes(cfg.layers, cfg.kv_heads, cfg.head_dim, 1, dtype_bytes)


def _linear_flops_per_token(cfg: ModelConfig) -> int:
    return 2 * cfg.layers * cfg.linear_params_per_layer


def _attention_flops(cfg: ModelConfig, attended_positions: int) -> int:
    return attention_flops(cfg.layers, cfg.heads, cfg.head_dim, attended_positions)


def decode_step_flops(cfg: ModelConfig, context_len: int, batch: int) -> int:
    """One decode step: each of `batch` sequences adds a token attending `context_len`
    positions (its own included) and computes logits."""
    per_seq = (
        _linear_flops_per_token(cfg)
        + _attention_flops(cfg, context_len)
        + 2 * cfg.d_model * cfg.vocab
    )
    return batch * per_seq


def decode_step_bytes(cfg: ModelConfig, context_len: int, batch: int, dtype_bytes: int) -> int:
    """Weights once, plus each sequence's KV for `context_len` positions read and one row
    written."""
    kv = batch * (context_len + 1) * kv_row_bytes(cfg, dtype_bytes)
    return weight_bytes_per_forward(cfg, dtype_bytes, embedded_rows=batch) + kv


def prefill_flops(cfg: ModelConfig, prompt_len: int, batch: int = 1) -> int:
    """A causal forward over `prompt_len` tokens, logits for the last one."""
    attended = prompt_len * (prompt_len + 1) // 2
    per_seq = (
        prompt_len * _linear_flops_per_token(cfg)
        + _attention_flops(cfg, attended)
        + 2 * cfg.d_model * cfg.vocab
    )
    return batch * per_seq


def prefill_bytes(cfg: ModelConfig, prompt_len: int, dtype_bytes: int, batch: int = 1) -> int:
    """Weights once plus the KV rows written for every prompt position."""
    weights = weight_bytes_per_forward(cfg, dtype_bytes, embedded_rows=batch * prompt_len)
    return weights + batch * prompt_len * kv_row_bytes(cfg, dtype_bytes)


def roofline_seconds(
    flops: float, nbytes: float, peak_flops_per_s: float, peak_bytes_per_s: float
) -> float:
    """The lower bound on time: whichever of compute and memory traffic takes longer."""
    return max(flops / peak_flops_per_s, nbytes / peak_bytes_per_s)


def ridge_intensity(peak_flops_per_s: float, peak_bytes_per_s: float) -> float:
    """FLOP per byte above which work is compute-bound on this device."""
    return peak_flops_per_s / peak_bytes_per_s


def ridge_batch(
    cfg: ModelConfig,
    context_len: int,
    dtype_bytes: int,
    peak_flops_per_s: float,
    peak_bytes_per_s: float,
    limit: int = 1 << 16,
) -> int | None:
    """The smallest batch whose decode step the roofline calls compute-bound, or None
    when none up to `limit` is (KV reads grow with the batch too)."""
    lo, hi = 1, limit

    def compute_bound(batch: int) -> bool:
        flops = decode_step_flops(cfg, context_len, batch)
        nbytes = decode_step_bytes(cfg, context_len, batch, dtype_bytes)
        return flops / peak_flops_per_s >= nbytes / peak_bytes_per_s

    if not compute_bound(hi):
        return None
    while lo < hi:  # compute_bound is monotone in the batch
        mid = (lo + hi) // 2
        if compute_bound(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo
