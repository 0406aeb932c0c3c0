"""Power laws fitted to measured times (no torch here): what the step time follows.

A kernel bound by memory takes time in proportion to the bytes it must read, whatever
FLOPs it does; one bound by the matmul units, in proportion to its FLOPs. So each
experiment varies one of them and the time it took is fitted as a power law over all
its points, by least squares on the logarithms:

    log t = c + e · log x            (one factor: `loglog_fit`)
    log t = c + a · log B + f · log F  (bytes and FLOPs together: `two_factor_fit`)

An exponent near 1 means the time follows that quantity; near 0, it does not. The
fit uses every point, so one disturbed point moves it less than it moves a ratio of
two points, and its R² says how well a power law describes the points at all.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Fit:
    """Fitted exponents (one per factor, in the order given), R² and the points used."""

    exponents: tuple[float, ...]
    r2: float
    points: int


def _logs(values: Sequence[float]) -> list[float]:
    if any(not v > 0 for v in values):
        raise ValueError("a power-law fit needs positive values")
    return [math.log(v) for v in values]


def _r2(ys: Sequence[float], predicted: Sequence[float]) -> float:
    mean = sum(ys) / len(ys)
    total = sum((y - mean) ** 2 for y in ys)
    residual = sum((y - p) ** 2 for y, p in zip(ys, predicted, strict=True))
    return 1.0 if total == 0 else 1.0 - residual / total


def loglog_fit(xs: Sequence[float], times: Sequence[float]) -> Fit | None:
    """t ∝ x^e over all points; None with fewer than two distinct x."""
    if len(xs) != len(times):
        raise ValueError("a fit needs one time per point")
    lx, ly = _logs(xs), _logs(times)
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    sxx = sum((x - mx) ** 2 for x in lx)
    if len(lx) < 2 or sxx < 1e-12:
        return None
    slope = sum((x - mx) * (y - my) for x, y in zip(lx, ly, strict=True)) / sxx
    predicted = [my + slope * (x - mx) for x in lx]
    return Fit((slope,), _r2(ly, predicted), len(lx))


def two_factor_fit(
    nbytes: Sequence[float], flops: Sequence[float], times: Sequence[float]
) -> Fit | None:
    """t ∝ B^a · F^f over all points: exponents (a, f). None when the points cannot
    separate bytes from FLOPs (fewer than three, or the two always moving together)."""
    if not len(nbytes) == len(flops) == len(times):
        raise ValueError("a fit needs bytes, FLOPs and a time for every point")
    lb, lf, ly = _logs(nbytes), _logs(flops), _logs(times)
    n = len(ly)
    if n < 3:
        return None
    mb, mf, my = sum(lb) / n, sum(lf) / n, sum(ly) / n
    b = [x - mb for x in lb]
    f = [x - mf for x in lf]
    y = [v - my for v in ly]
    sbb = sum(x * x for x in b)
    sff = sum(x * x for x in f)
    sbf = sum(p * q for p, q in zip(b, f, strict=True))
    sby = sum(p * q for p, q in zip(b, y, strict=True))
    sfy = sum(p * q for p, q in zip(f, y, strict=True))
    det = sbb * sff - sbf * sbf
    if det <= 1e-9 * max(sbb * sff, 1e-300):
        return None
    a = (sby * sff - sfy * sbf) / det
    e = (sfy * sbb - sby * sbf) / det
    predicted = [my + a * p + e * q for p, q in zip(b, f, strict=True)]
    return Fit((a, e), _r2(ly, predicted), n)


def cost_of(ratio: float, exponent: float) -> float:
    """How many times the time grows when the quantity grows `ratio` times."""
    return ratio**exponent
