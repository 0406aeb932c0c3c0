"""What a probe of a serving endpoint measured, from the times its requests' chunks came.

Pure functions of recorded times (seconds on one clock); no network, no database.
The conventions are those of vLLM's serving benchmark (`vllm bench serve`), so figures
compare with what engineers already read:

    TTFT   = time of the first chunk with text - time the request was sent
    E2E    = time of the last chunk with text - time the request was sent
    TPOT   = (E2E - TTFT) / (output tokens - 1), per request; none with one token
    ITL    = every gap between two successive chunks with text (a chunk may hold
             more than one token; ITL is per chunk, TPOT per token)
    output tokens/s  = all output tokens of a point / the point's duration
    requests/s       = requests completed / the point's duration
    goodput          = requests that met every SLO given (TTFT <= --slo-ttft and
                       TPOT <= --slo-tpot; a one-token answer has no TPOT and meets
                       that one) / the point's duration
    duration         = from the first request sent to the last chunk received

Percentiles interpolate linearly between the two nearest ranks (numpy's default,
which vLLM's benchmark uses): p of [v0 <= ... <= v(n-1)] sits at rank p/100 * (n-1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

PERCENTILES = (50, 90, 99)
CONVENTION = (
    "vLLM's benchmark convention: TTFT to the first chunk with text; "
    "TPOT = (end-to-end - TTFT) / (output tokens - 1) per request; "
    "ITL = each gap between streamed chunks"
)


def percentile(values: Sequence[float], p: float) -> float:
    """The p-th percentile (0..100) of `values`, linear between the nearest ranks."""
    if not values:
        raise ValueError("no values")
    if not 0 <= p <= 100:
        raise ValueError(f"percentile must be within 0..100, got {p}")
    ordered = sorted(values)
    rank = p / 100 * (len(ordered) - 1)
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


@dataclass
class RequestRecord:
    """One request of a probe: when it was sent, when each chunk with text came, and
    its token counts (from the server's `usage` when it sent one)."""

    prompt_tokens: int  # the probe's approximate count, or the server's
    sent_s: float
    chunk_times_s: list[float] = field(default_factory=list)
    output_tokens: int | None = None  # the server's count; else one per chunk
    prompt_from_usage: bool = False
    done: bool = False  # the stream ended with `data: [DONE]`

    @property
    def tokens(self) -> int:
        return self.output_tokens if self.output_tokens is not None else len(self.chunk_times_s)

    @property
    def ttft_s(self) -> float | None:
        return self.chunk_times_s[0] - self.sent_s if self.chunk_times_s else None

    @property
    def e2e_s(self) -> float | None:
        return self.chunk_times_s[-1] - self.sent_s if self.chunk_times_s else None

    @property
    def tpot_s(self) -> float | None:
        ttft, e2e = self.ttft_s, self.e2e_s
        if ttft is None or e2e is None or self.tokens < 2:
            return None
        return (e2e - ttft) / (self.tokens - 1)

    @property
    def itls_s(self) -> list[float]:
        times = self.chunk_times_s
        return [times[i + 1] - times[i] for i in range(len(times) - 1)]


def meets_slo(record: RequestRecord, slo_ttft_s: float | None, slo_tpot_s: float | None) -> bool:
    """Whether a completed request met every SLO given (none given: every one does)."""
    ttft = record.ttft_s
    if ttft is None:
        return False
    if slo_ttft_s is not None and ttft > slo_ttft_s:
        return False
    tpot = record.tpot_s
    return slo_tpot_s is None or tpot is None or tpot <= slo_tpot_s


def _spread_ms(values_s: Sequence[float]) -> dict[str, float] | None:
    if not values_s:
        return None
    spread = {"mean": sum(values_s) / len(values_s) * 1000}
    for p in PERCENTILES:
        spread[f"p{p}"] = percentile(values_s, p) * 1000
    return spread


def summarize_point(
    prompt_tokens: int,
    concurrency: int,
    records: Sequence[RequestRecord],
    started_s: float,
    slo_ttft_s: float | None = None,
    slo_tpot_s: float | None = None,
) -> dict[str, Any]:
    """One point's figures (times in ms, rates per second) from the requests that
    completed (ended with [DONE] and had text); `started_s`: when its first was sent."""
    done = [r for r in records if r.done and r.chunk_times_s]
    ends = [r.chunk_times_s[-1] for r in done]
    duration = max(ends) - started_s if ends else 0.0
    tokens = sum(r.tokens for r in done)
    good = sum(1 for r in done if meets_slo(r, slo_ttft_s, slo_tpot_s))
    from_usage = [r.prompt_tokens for r in done if r.prompt_from_usage]

    def rate(count: float) -> float | None:
        return count / duration if duration > 0 else None

    return {
        "prompt_tokens": prompt_tokens,
        "prompt_tokens_served": sum(from_usage) / len(from_usage) if from_usage else None,
        "concurrency": concurrency,
        "sent": len(records),
        "completed": len(done),
        "duration_s": duration,
        "output_tokens": tokens,
        "output_tokens_per_s": rate(tokens),
        "requests_per_s": rate(len(done)),
        "good": good,
        "goodput_requests_per_s": rate(good),
        "ttft_ms": _spread_ms([t for r in done if (t := r.ttft_s) is not None]),
        "tpot_ms": _spread_ms([t for r in done if (t := r.tpot_s) is not None]),
        "itl_ms": _spread_ms([gap for r in done for gap in r.itls_s]),
        "e2e_ms": _spread_ms([t for r in done if (t := r.e2e_s) is not None]),
    }


def mean_abs_error(errors: Sequence[float | None]) -> float | None:
    """The mean of the errors' sizes, those not measured (None) left out; None when none is."""
    found = [abs(e) for e in errors if e is not None]
    return sum(found) / len(found) if found else None


def error_percent(predicted: float, measured: float) -> float | None:
    """(predicted - measured) / measured, in percent; None when nothing was measured."""
    if measured <= 0:
        return None
    return (predicted - measured) / measured * 100
