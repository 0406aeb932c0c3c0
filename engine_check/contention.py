"""How much of the CPU other programs used while a run measured (no torch here).

A benchmark that shares the CPU with other work reads low, and a multi-threaded
kernel reads very low: each parallel region waits for its slowest thread, and a
thread whose core was taken waits a whole scheduler slice. So a run records the
share of the machine's CPU time that went to anything but itself:

    other share = (busy CPU time of all CPUs - this process's CPU time) / (wall time x CPUs)

Busy time comes from /proc/stat (Linux; `steal`, time the hypervisor gave this
virtual machine's CPUs to someone else, counts as busy). Elsewhere it is None.

Each experiment point is metered on its own (`measure_steady`): a point that other
programs disturbed is timed again while a budget of seconds lasts, and the row keeps
the share measured during the try it kept, so the verdicts can tell a trend the
machine blurred from one that is not there.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from engine_check.timing import Timer, Timing, measure

PROC_STAT = Path("/proc/stat")
# Above this share the report warns that the numbers may be low.
BUSY_SHARE_WARN = 0.10


def busy_cpu_seconds(stat_text: str, ticks_per_s: int) -> float:
    """Non-idle seconds of all CPUs since boot, from the text of /proc/stat."""
    first = stat_text.splitlines()[0].split()
    if first[0] != "cpu":
        raise ValueError("/proc/stat does not start with the all-CPU line")
    fields = [int(x) for x in first[1:9]]  # user nice system idle iowait irq softirq steal
    fields += [0] * (8 - len(fields))
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq + steal) / ticks_per_s


def other_share(busy_s: float, own_cpu_s: float, wall_s: float, cpus: int) -> float:
    """Share of all CPUs' time that other programs (or the hypervisor) used, 0..1."""
    if wall_s <= 0 or cpus < 1:
        return 0.0
    return min(1.0, max(0.0, (busy_s - own_cpu_s) / (wall_s * cpus)))


class CpuMeter:
    """Counts other programs' CPU use between start() and stop()."""

    def __init__(self) -> None:
        self._start: tuple[float, float, float] | None = None

    @staticmethod
    def _read_busy() -> float | None:
        try:
            ticks = os.sysconf("SC_CLK_TCK")
            return busy_cpu_seconds(PROC_STAT.read_text(), ticks)
        except (OSError, ValueError, AttributeError, IndexError):
            return None

    def start(self) -> None:
        busy = self._read_busy()
        if busy is not None:
            self._start = (busy, time.process_time(), time.perf_counter())

    def stop(self) -> float | None:
        """The other programs' share since start(), or None where it cannot be known."""
        busy = self._read_busy()
        if self._start is None or busy is None:
            return None
        busy0, own0, wall0 = self._start
        return other_share(
            busy - busy0,
            time.process_time() - own0,
            time.perf_counter() - wall0,
            os.cpu_count() or 1,
        )


# A point is timed again when other programs took more than this share of the CPU
# while it was measured; the try with the fastest median is kept.
RETRY_SHARE = BUSY_SHARE_WARN
MAX_TRIES = 3

T = TypeVar("T")


class Meter(Protocol):
    def start(self) -> None: ...

    def stop(self) -> float | None: ...


@dataclass
class RetryBudget:
    """Seconds of timed work that repeats of disturbed points may still spend."""

    seconds: float
    spent: float = 0.0

    def allows(self, cost_s: float) -> bool:
        """Whether another try that costs about `cost_s` seconds fits in what is left."""
        return self.spent + cost_s <= self.seconds


@dataclass(frozen=True)
class SteadyTiming:
    """A point's timing with the other programs' CPU share while it ran (None where
    unknown) and how many times it was measured."""

    timing: Timing
    other_share: float | None
    tries: int

    def fields(self) -> dict:
        """What every experiment row records about how it was timed."""
        return {
            "ms": self.timing.median_ms,
            "p90_ms": self.timing.p90_ms,
            "best_ms": self.timing.best_ms,
            "warmup_ms": list(self.timing.warmup_ms),
            "other_share": self.other_share,
            "tries": self.tries,
        }


def disturbed(share: float | None) -> bool:
    return share is not None and share > RETRY_SHARE


def metered_tries(
    try_once: Callable[[int], tuple[T, float]],
    new_meter: Callable[[], Meter],
    budget: RetryBudget,
    max_tries: int = MAX_TRIES,
) -> list[tuple[T, float | None]]:
    """Run `try_once(attempt)` (its result and the seconds of timed work it cost) under a
    fresh meter of the other programs' CPU use; if they took more than RETRY_SHARE, run
    it again while the budget lasts, up to `max_tries` in all. Each repeat's cost is
    charged to the budget. Returns every try's result with the share measured during it."""
    tries: list[tuple[T, float | None]] = []
    for attempt in range(max_tries):
        meter = new_meter()
        meter.start()
        result, cost_s = try_once(attempt)
        share = meter.stop()
        tries.append((result, share))
        if attempt:
            budget.spent += cost_s
        if not disturbed(share) or not budget.allows(cost_s):
            break
    return tries


def measure_steady(
    fn: Callable[[], object],
    timer: Timer,
    warmups: int,
    repeats: int,
    new_meter: Callable[[], Meter],
    budget: RetryBudget,
    max_tries: int = MAX_TRIES,
) -> SteadyTiming:
    """Time `fn` as `measure` does while a meter counts the other programs' CPU use; if
    they took more than RETRY_SHARE, time it again (without warm-ups) while the budget
    lasts, up to `max_tries` in all. Keeps the try with the fastest median: other work
    only ever slows a kernel down. The cost of a try is its timed work, so the budget
    is the same under a real or a scripted timer."""

    def once(attempt: int) -> tuple[Timing, float]:
        timing = measure(fn, timer, warmups if attempt == 0 else 0, repeats)
        return timing, sum(timing.samples_ms) / 1e3

    tries = metered_tries(once, new_meter, budget, max_tries)
    timing, share = min(tries, key=lambda t: t[0].median_ms)
    warm = tries[0][0].warmup_ms
    return SteadyTiming(Timing(warm, timing.samples_ms), share, len(tries))


def cpu_model_name() -> str:
    """This machine's CPU as the system names it ("AMD EPYC 7B13"), else what Python knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "CPU"
