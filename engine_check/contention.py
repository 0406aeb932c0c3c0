"""How much of the CPU other programs used while a run measured (no torch here).

A benchmark that shares the CPU with other work reads low, and a multi-threaded
kernel reads very low: each parallel region waits for its slowest thread, and a
thread whose core was taken waits a whole scheduler slice. So a run records the
share of the machine's CPU time that went to anything but itself:

    other share = (busy CPU time of all CPUs - this process's CPU time) / (wall time x CPUs)

Busy time comes from /proc/stat (Linux; `steal`, time the hypervisor gave this
virtual machine's CPUs to someone else, counts as busy). Elsewhere it is None.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

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
