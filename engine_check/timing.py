"""Timing a region of device work: warm-ups kept apart, synchronised, repeated.

Every timed call is fenced: on an NVIDIA GPU by CUDA events recorded on the stream
after a full synchronize, then waited on; on an Apple GPU by `torch.mps.synchronize()`
around a wall clock; on the CPU the ops are synchronous and `perf_counter` suffices.

torch is imported by `DeviceTimer` only: `measure` and `Timing` take any object with a
`time_ms(fn)` method, so the peak logic can be tested with a scripted clock.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) by linear interpolation between order statistics,
    as numpy's default method does: percentile([1, 2, 3, 4], 90) == 3.7."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError(f"percentile q must be in 0..100, got {q}")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


@dataclass(frozen=True)
class Timing:
    """Milliseconds of each warm-up call and each timed repeat."""

    warmup_ms: tuple[float, ...]
    samples_ms: tuple[float, ...]

    @property
    def median_ms(self) -> float:
        return percentile(self.samples_ms, 50)

    @property
    def p90_ms(self) -> float:
        return percentile(self.samples_ms, 90)

    @property
    def best_ms(self) -> float:
        return min(self.samples_ms)

    def to_dict(self) -> dict:
        return {
            "median_ms": self.median_ms,
            "p90_ms": self.p90_ms,
            "best_ms": self.best_ms,
            "warmup_ms": list(self.warmup_ms),
            "samples_ms": list(self.samples_ms),
        }


class Timer(Protocol):
    def time_ms(self, fn: Callable[[], object]) -> float: ...


class DeviceTimer:
    """Times one call at a time on a torch device."""

    def __init__(self, device: Any) -> None:
        import torch

        self._torch = torch
        self.device = torch.device(device)

    def synchronize(self) -> None:
        torch = self._torch
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        elif self.device.type == "mps":
            torch.mps.synchronize()

    def time_ms(self, fn: Callable[[], object]) -> float:
        """Milliseconds of device time for one call of `fn`, all earlier work finished first."""
        torch = self._torch
        if self.device.type == "cuda":
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize(self.device)
            start.record()
            fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end)
        self.synchronize()
        t0 = time.perf_counter()
        fn()
        self.synchronize()
        return (time.perf_counter() - t0) * 1e3


def measure(fn: Callable[[], object], timer: Timer, warmups: int, repeats: int) -> Timing:
    """Run `fn` `warmups` times (timed, reported apart) and then `repeats` timed times."""
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    warm = tuple(timer.time_ms(fn) for _ in range(max(0, warmups)))
    samples = tuple(timer.time_ms(fn) for _ in range(repeats))
    return Timing(warmup_ms=warm, samples_ms=samples)


def measure_for(
    fn: Callable[[], object],
    timer: Timer,
    warmups: int,
    min_repeats: int,
    min_seconds: float,
    max_repeats: int = 1000,
) -> Timing:
    """Like `measure`, but repeats until at least `min_repeats` calls and `min_seconds`
    of timed work (at most `max_repeats` calls): a short kernel is timed as long as a
    long one, so its fastest repeat is as trustworthy."""
    if min_repeats < 1:
        raise ValueError(f"min_repeats must be at least 1, got {min_repeats}")
    warm = tuple(timer.time_ms(fn) for _ in range(max(0, warmups)))
    samples: list[float] = []
    while len(samples) < max_repeats and (
        len(samples) < min_repeats or sum(samples) < 1e3 * min_seconds
    ):
        samples.append(timer.time_ms(fn))
    return Timing(warmup_ms=warm, samples_ms=tuple(samples))


def cpu_threads() -> int:
    """Threads torch's CPU kernels use (intra-op)."""
    import torch

    return torch.get_num_threads()
