"""Verdicts drawn from a run's measurements, each a plain sentence with its numbers.

Pure functions of the result dict (no torch), so a stored run can be re-judged and
the quiz can quote them. Each claim is {"holds": bool, "verdict": "holds" | "does not
hold" | "unsure", "text": str}; a run stored before "verdict" existed has only "holds".

Which limit a step hits is judged by experiment, whatever the kernels' efficiency
(engine_check.fits): vary the bytes a step reads and the FLOPs it does, and see which
the time follows, as power laws fitted over all the points.

* decode_memory_bound: batch-1 decode through more of the model's blocks (the bytes
  grow, batch 1) and decode of batch 1, 2, 4, ... up to the roofline ridge (the FLOPs
  grow, the bytes barely) are fitted together as t ∝ bytes^a · FLOPs^f; memory-bound
  when a >= 0.65 and f <= 0.35: the time follows the bytes and not the FLOPs. The MBU
  (bytes per second over the measured read bandwidth) is quoted beside it, as how close
  the kernel comes to the bandwidth, not as the test. A run without the depth sweep
  (stored before it existed) is judged by the old threshold: MBU >= 50 % and under 25 %
  of the matmul peak. The bytes are varied by depth: fewer blocks also drop their
  fixed per-block costs (norms, attention, the launches), which on the CPU model are a
  few percent of a step. Weights in a narrower or wider dtype would vary the bytes at
  the same depth, but only where both widths stream alike; the run's dtype probe times
  one-row matmuls in both and the verdict says which way it went (on CPUs bf16 tends to
  stream fewer bytes per second than fp32, so depth is the cleaner experiment there).
* prefill_compute_bound: prefill time against its FLOPs over every prompt length (the
  weights read stay the same): compute-bound when the exponent is at least 0.65.
  The MFU is quoted beside it.
* kv_formula_exact: the cache tensor's bytes (and the allocator's growth, where
  the device reports one) equal the formula to the byte.
* cache_beats_recompute: at the last position measured a cached step is faster
  than recomputing the prefix, and recompute got slower as the position grew.
* batch_amortizes_decode: the step time fitted against the batch over every batch up
  to the roofline ridge grows at most as batch^0.5: at four sequences a step takes at
  most twice as long, so tokens/s grows at least as fast as the square root of the batch.

A timed claim the measurements do not bear out while other programs took more than
engine_check.contention.RETRY_SHARE of the CPU during its points (after those points
were timed again) is "unsure: the machine was busy", not "does not hold": a busy
machine slows some points more than others and blurs any trend. On a quiet machine
the verdicts are as the numbers say. Times fitted are each point's fastest call
(`best_ms`, the median for older runs): other work only ever slows a call down.
"""

from __future__ import annotations

from collections.abc import Sequence

from drill.quantities.units import format_quantity
from drill.serving.evidence import CLAIM_NAMES
from engine_check.contention import RETRY_SHARE
from engine_check.fits import Fit, cost_of, loglog_fit, two_factor_fit

MBU_MIN = 0.5
DECODE_FLOP_UTIL_MAX = 0.25
MFU_MIN = 0.5
BATCH_GAIN_MIN = 0.5  # fraction of the ideal b-fold throughput gain (runs before the fits)
FOLLOWS = 0.65  # an exponent at least this: the time follows that quantity
IGNORES = 0.35  # at most this: it does not
BATCH_EXPONENT_MAX = 0.5  # step time at most ∝ batch^0.5 below the ridge
MIN_FLOP_POINTS = 3  # the FLOP sweep takes at least this many batches, ridge or not
HOLDS, FAILS, UNSURE = "holds", "does not hold", "unsure"
# two dtypes whose one-row matmuls stream within this share of each other's bytes/s
# would vary the bytes as cleanly as the depth does
DTYPE_RATE_SAME = 0.15


def pct(fraction: float) -> str:
    return format_quantity(fraction, "fraction")


def ms(value_ms: float) -> str:
    return format_quantity(value_ms / 1e3, "seconds")


def _claim(holds: bool, text: str) -> dict:
    return {"holds": bool(holds), "verdict": HOLDS if holds else FAILS, "text": text}


def verdict_of(claim: dict) -> str:
    """holds / does not hold / unsure, also for a claim stored with only "holds"."""
    verdict = claim.get("verdict")
    if verdict in (HOLDS, FAILS, UNSURE):
        return str(verdict)
    return HOLDS if claim.get("holds") else FAILS


def busiest_share(shares: Sequence[float | None]) -> float | None:
    """The largest share other programs took during the points, None when none is known."""
    known = [s for s in shares if s is not None]
    return max(known) if known else None


def _judged(holds: bool, text: str, good: str, bad: str, busy: float | None) -> dict:
    """`text` with its ending: the good one, the bad one, or, when the claim fails while
    other programs disturbed its points, unsure."""
    if holds:
        return _claim(True, f"{text}: {good}")
    if busy is not None and busy > RETRY_SHARE:
        claim = _claim(
            False,
            f"{text}: unsure: the machine was busy (other programs used up to {pct(busy)} "
            f"of the CPU while these points ran), so the measurements cannot tell",
        )
        claim["verdict"] = UNSURE
        return claim
    return _claim(False, f"{text}: {bad}")


def _seconds(row: dict) -> float:
    return (row.get("best_ms") or row["ms"]) / 1e3


def _times(rows: Sequence[dict]) -> list[float]:
    return [_seconds(r) for r in rows]


def _x(value: float) -> str:
    return f"{value:.2f}x"


def flop_sweep(result: dict) -> list[dict]:
    """The batch points up to the roofline ridge (at least the MIN_FLOP_POINTS smallest):
    there the FLOPs grow with the batch while the bytes read barely do."""
    rows = sorted(result.get("batch") or [], key=lambda r: r["batch"])
    ridge = result.get("batch_ridge")
    below = [r for r in rows if ridge is None or r["batch"] <= ridge]
    return below if len(below) >= MIN_FLOP_POINTS else rows[:MIN_FLOP_POINTS]


def decode_exponents(result: dict) -> Fit | None:
    """t ∝ bytes^a · FLOPs^f over the depth sweep and the FLOP sweep, or None."""
    points = [*(result.get("depth") or []), *flop_sweep(result)]
    if not result.get("depth") or len(points) < 3:
        return None
    return two_factor_fit(
        [r["bytes"] for r in points], [r["flops"] for r in points], _times(points)
    )


def decode_memory_bound(result: dict) -> dict:
    fit = decode_exponents(result)
    if fit is None:
        return _decode_by_threshold(result)
    depth = sorted(result["depth"], key=lambda r: r["bytes"])
    flops_rows = flop_sweep(result)
    a, f = fit.exponents
    bytes_ratio = depth[-1]["bytes"] / depth[0]["bytes"]
    flops_ratio = flops_rows[-1]["flops"] / flops_rows[0]["flops"]
    deepest = depth[-1]
    seconds = _seconds(deepest)
    peak = result.get("peaks", {}).get("bandwidth_bytes_per_s")
    stream = deepest["bytes"] / seconds
    mbu = f", {pct(stream / peak)} of the measured memory bandwidth (MBU)" if peak else ""
    # a decode step only reads its weights: the read stream is its own yardstick, best
    # timed beside the step (a virtual machine's bandwidth drifts)
    reads = [k["rate"] for k in result.get("peaks", {}).get("kernels") or [] if k["name"] == "read"]
    pair = result.get("stream_pair")
    if pair:
        mbu += f" and {pct(pair['fraction'])} of a read of the same weights timed in turns with it"
    elif reads:
        mbu += f" and {pct(stream / max(reads))} of the read stream"
    text = (
        f"{_x(flops_ratio)} the FLOPs (batch {flops_rows[0]['batch']} to "
        f"{flops_rows[-1]['batch']}) cost {_x(cost_of(flops_ratio, f))} the time; "
        f"{_x(bytes_ratio)} the bytes ({depth[0]['layers']} to {deepest['layers']} blocks at "
        f"batch 1) cost {_x(cost_of(bytes_ratio, a))}: time ∝ bytes^{a:.2f} · FLOPs^{f:.2f} "
        f"over {fit.points} points (R² {fit.r2:.2f}); a batch-1 step took {ms(seconds * 1e3)}, "
        f"streaming {format_quantity(stream, 'bytes_per_s')}{mbu}{bytes_experiment(result)}"
    )
    holds = a >= FOLLOWS and f <= IGNORES
    if f > IGNORES:
        bad = "the time follows the FLOPs, so decode here is compute-bound"
    else:
        bad = "the time follows neither bytes nor FLOPs: fixed overheads dominate"
    busy = busiest_share([r.get("other_share") for r in [*depth, *flops_rows]])
    return _judged(holds, text, "decode is bound by reading the weights", bad, busy)


def bytes_experiment(result: dict) -> str:
    """Why the bytes were varied by depth and not by dtype, from the run's dtype probe
    ("" for a run without one)."""
    probe = result.get("dtype_probe") or []
    if len(probe) < 2:
        return ""
    own, other = probe[0], probe[1]
    rates = (
        f"{other['dtype']} weights streamed {format_quantity(other['bytes_per_s'], 'bytes_per_s')}"
        f" in a one-row matmul against {format_quantity(own['bytes_per_s'], 'bytes_per_s')} "
        f"for {own['dtype']}"
    )
    if abs(other["bytes_per_s"] / own["bytes_per_s"] - 1) <= DTYPE_RATE_SAME:
        return f"; the bytes were varied by depth ({rates}: a sweep of dtypes would serve too)"
    return (
        f"; the bytes were varied by depth, not by dtype: {rates}, so a sweep of dtypes "
        f"would time the kernels as well as the bytes"
    )


def _decode_by_threshold(result: dict) -> dict:
    """The judgement of runs stored before the depth sweep: MBU against a threshold."""
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
    rows = sorted(result.get("prefill") or [], key=lambda r: r["prompt_len"])
    fit = (
        loglog_fit([r["flops"] for r in rows], _times(rows))
        if "flops" in (rows[0] if rows else {})
        else None
    )
    if fit is None:
        return _prefill_by_threshold(result)
    (e,) = fit.exponents
    ratio = rows[-1]["flops"] / rows[0]["flops"]
    row = rows[-1]
    text = (
        f"prefill of {rows[0]['prompt_len']} to {row['prompt_len']} tokens: {_x(ratio)} the "
        f"FLOPs cost {_x(cost_of(ratio, e))} the time at the same weights read (time ∝ "
        f"FLOPs^{e:.2f} over {fit.points} prompt lengths, R² {fit.r2:.2f}); {row['prompt_len']} "
        f"tokens took {ms(row['ms'])} at {format_quantity(row['flops_per_s'], 'flop_per_s')}, "
        f"{pct(row['mfu'])} of the measured matmul peak (MFU)"
    )
    busy = busiest_share([r.get("other_share") for r in rows])
    return _judged(
        e >= FOLLOWS,
        text,
        "prefill is bound by the matmuls",
        "the time does not follow the FLOPs, so prefill here is not compute-bound",
        busy,
    )


def _prefill_by_threshold(result: dict) -> dict:
    """The judgement of a run with one prompt length: MFU against a threshold."""
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
    busy = busiest_share(
        [s for r in rows for s in (r.get("cached_other_share"), r.get("recompute_other_share"))]
    )
    return _judged(faster and grows, text, "the cache wins", "the cache did not clearly win", busy)


def batch_amortizes_decode(result: dict) -> dict:
    rows = sorted(result.get("batch") or [], key=lambda r: r["batch"])
    base = next((r for r in rows if r["batch"] == 1), None)
    if base is None:
        return _claim(False, "decode at batch 1 was not measured")
    ridge = result.get("batch_ridge")
    below = [r for r in rows if r["batch"] > 1 and (ridge is None or 2 * r["batch"] <= ridge)]
    ridge_text = f"the roofline ridge is near batch {ridge}" if ridge else "no ridge in reach"
    swept = flop_sweep(result)
    fit = loglog_fit([r["batch"] for r in swept], _times(swept)) if len(swept) >= 3 else None
    if fit is None and not below:
        return _claim(
            False, f"no batch above 1 was measured at or below half the ridge ({ridge_text})"
        )
    row = swept[-1] if fit is not None else below[-1]
    gain = row["tokens_per_s"] / base["tokens_per_s"]
    if fit is None:  # one pair only (a run with too few batches)
        holds = gain >= BATCH_GAIN_MIN * row["batch"]
        trend = ""
    else:
        (e,) = fit.exponents
        holds = e <= BATCH_EXPONENT_MAX
        trend = (
            f"; over batches {', '.join(str(r['batch']) for r in swept)} the step time grew "
            f"as batch^{e:.2f} (R² {fit.r2:.2f})"
        )
    text = (
        f"batch {row['batch']} decoded {gain:.1f}x the tokens/s of batch 1 "
        f"({format_quantity(row['tokens_per_s'], 'tokens_per_s')}) while a step went from "
        f"{ms(base['ms'])} to {ms(row['ms'])}{trend}; {ridge_text}"
    )
    busy = busiest_share([r.get("other_share") for r in swept])
    return _judged(
        holds, text, "batching amortises the weight reads", "batching did not pay off", busy
    )


def compute_claims(result: dict) -> dict:
    """{claim name: {"holds": bool, "verdict": str, "text": str}} for every claim in
    CLAIM_NAMES."""
    judges = {
        "decode_memory_bound": decode_memory_bound,
        "prefill_compute_bound": prefill_compute_bound,
        "kv_formula_exact": kv_formula_exact,
        "cache_beats_recompute": cache_beats_recompute,
        "batch_amortizes_decode": batch_amortizes_decode,
    }
    return {name: judges[name](result) for name in CLAIM_NAMES}
