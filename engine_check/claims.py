"""Verdicts drawn from a run's measurements, each a plain sentence with its numbers.

Pure functions of the result dict (no torch), so a stored run can be re-judged and
the quiz can quote them. Each claim is {"holds": bool, "text": str}.

Thresholds, chosen to be clear rather than generous:
* decode_memory_bound: batch-1 decode at the shortest context reaches at least
  50 % of the measured memory bandwidth and uses under 25 % of the matmul peak.
* prefill_compute_bound: prefill at the longest prompt reaches at least 50 % of
  the matmul peak, and a larger share of it than of the memory bandwidth.
* kv_formula_exact: the cache tensor's bytes (and the allocator's growth, where
  the device reports one) equal the formula to the byte.
* cache_beats_recompute: at the last position measured a cached step is faster
  than recomputing the prefix, and recompute got slower as the position grew.
* batch_amortizes_decode: at the largest measured batch b > 1 that is at most half
  the roofline ridge (where compute needs at most half the time the weight reads
  do, so even kernels that overlap nothing stay memory-bound), tokens/s is at least
  b/2 times batch 1's: a step took at most twice as long while serving b sequences.
"""

from __future__ import annotations

from drill.quantities.units import format_quantity
from drill.serving.evidence import CLAIM_NAMES

MBU_MIN = 0.5
DECODE_FLOP_UTIL_MAX = 0.25
MFU_MIN = 0.5
BATCH_GAIN_MIN = 0.5  # fraction of the ideal b-fold throughput gain


def pct(fraction: float) -> str:
    return format_quantity(fraction, "fraction")


def ms(value_ms: float) -> str:
    return format_quantity(value_ms / 1e3, "seconds")


def _claim(holds: bool, text: str) -> dict:
    return {"holds": bool(holds), "text": text}


def decode_memory_bound(result: dict) -> dict:
    rows = result.get("decode") or []
    if not rows:
        return _claim(False, "no decode step was measured")
    row = min(rows, key=lambda r: r["context_len"])
    holds = row["mbu"] >= MBU_MIN and row["flops_util"] < DECODE_FLOP_UTIL_MAX
    if holds:
        verdict = "memory-bound"
    elif row["flops_util"] >= DECODE_FLOP_UTIL_MAX:
        verdict = "not memory-bound: the matmul units are the limit"
    else:
        verdict = "neither limit reached: fixed overheads (kernel launches, Python) dominate"
    text = (
        f"decode at batch 1 (context {row['context_len']}) took {ms(row['ms'])} per token, "
        f"streaming {format_quantity(row['bytes_per_s'], 'bytes_per_s')}: "
        f"{pct(row['mbu'])} of the measured memory bandwidth and {pct(row['flops_util'])} "
        f"of the matmul peak: {verdict}"
    )
    return _claim(holds, text)


def prefill_compute_bound(result: dict) -> dict:
    rows = result.get("prefill") or []
    if not rows:
        return _claim(False, "no prefill was measured")
    row = max(rows, key=lambda r: r["prompt_len"])
    holds = row["mfu"] >= MFU_MIN and row["mfu"] > row["bandwidth_util"]
    if holds:
        verdict = "compute-bound"
    elif row["bandwidth_util"] >= row["mfu"]:
        verdict = "not compute-bound: memory traffic is the larger share"
    else:
        verdict = "below half the matmul peak, so not clearly compute-bound"
    text = (
        f"prefill of {row['prompt_len']} tokens took {ms(row['ms'])} at "
        f"{format_quantity(row['flops_per_s'], 'flop_per_s')}: {pct(row['mfu'])} of the "
        f"measured matmul peak, while moving {pct(row['bandwidth_util'])} of memory bandwidth: "
        f"{verdict}"
    )
    return _claim(holds, text)


def kv_formula_exact(result: dict) -> dict:
    kv = result.get("kv")
    if not kv:
        return _claim(False, "the KV cache was not measured")
    measured, formula = kv["measured_bytes"], kv["formula_bytes"]
    delta = kv.get("allocator_delta_bytes")
    holds = measured == formula and (delta is None or delta == formula)
    text = (
        f"the KV cache for {kv['requests']} request x {kv['seq_len']:,} positions "
        f"({kv['layers']} layers, {kv['kv_heads']} KV heads, head_dim {kv['head_dim']}, "
        f"{kv['dtype_bytes']}-byte elements) holds {measured:,} bytes; "
        f"2·{kv['layers']}·{kv['kv_heads']}·{kv['head_dim']}·{kv['seq_len']}·{kv['dtype_bytes']}"
        f" = {formula:,}"
    )
    if delta is not None:
        text += f"; the allocator grew by {delta:,} bytes"
    text += ": exact" if holds else ": they differ"
    return _claim(holds, text)


def cache_beats_recompute(result: dict) -> dict:
    rows = sorted(result.get("recompute") or [], key=lambda r: r["position"])
    if not rows:
        return _claim(False, "cached decode and recompute were not measured")
    first, last = rows[0], rows[-1]
    faster = last["cached_ms"] < last["recompute_ms"]
    grows = len(rows) > 1 and last["recompute_ms"] > first["recompute_ms"]
    text = (
        f"at position {last['position']:,} a cached decode step took {ms(last['cached_ms'])}; "
        f"recomputing the {last['position'] + 1:,}-token prefix took {ms(last['recompute_ms'])} "
        f"({last['recompute_ms'] / last['cached_ms']:.1f}x)"
    )
    if len(rows) > 1:
        text += (
            f"; recompute went from {ms(first['recompute_ms'])} at position "
            f"{first['position']:,} to {ms(last['recompute_ms'])}"
            f" while the cached step went from {ms(first['cached_ms'])} to {ms(last['cached_ms'])}"
        )
    holds = faster and grows
    return _claim(
        holds, text + (": the cache wins" if holds else ": the cache did not clearly win")
    )


def batch_amortizes_decode(result: dict) -> dict:
    rows = sorted(result.get("batch") or [], key=lambda r: r["batch"])
    base = next((r for r in rows if r["batch"] == 1), None)
    if base is None:
        return _claim(False, "decode at batch 1 was not measured")
    ridge = result.get("batch_ridge")
    below = [r for r in rows if r["batch"] > 1 and (ridge is None or 2 * r["batch"] <= ridge)]
    ridge_text = f"the roofline ridge is near batch {ridge}" if ridge else "no ridge in reach"
    if not below:
        return _claim(
            False, f"no batch above 1 was measured at or below half the ridge ({ridge_text})"
        )
    row = below[-1]
    gain = row["tokens_per_s"] / base["tokens_per_s"]
    holds = gain >= BATCH_GAIN_MIN * row["batch"]
    text = (
        f"batch {row['batch']} decoded {gain:.1f}x the tokens/s of batch 1 "
        f"({format_quantity(row['tokens_per_s'], 'tokens_per_s')}) while a step went from "
        f"{ms(base['ms'])} to {ms(row['ms'])}; {ridge_text}"
    )
    text += ": batching amortises the weight reads" if holds else ": batching did not pay off"
    return _claim(holds, text)


def compute_claims(result: dict) -> dict:
    """{claim name: {"holds": bool, "text": str}} for every claim in CLAIM_NAMES."""
    judges = {
        "decode_memory_bound": decode_memory_bound,
        "prefill_compute_bound": prefill_compute_bound,
        "kv_formula_exact": kv_formula_exact,
        "cache_beats_recompute": cache_beats_recompute,
        "batch_amortizes_decode": batch_amortizes_decode,
    }
    return {name: judges[name](result) for name in CLAIM_NAMES}
