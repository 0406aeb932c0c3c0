"""The device's peaks: the best of several kernels, measured before and after the
experiments, and checked against what the experiments themselves reached (no torch here;
the kernels are built by engine_check.peak_kernels).

Bandwidth: three streams over tensors far larger than any cache, each counted as the
bytes that cross the memory bus (n is one tensor's size):

* read: a sum over one tensor, n bytes;
* copy: dst.copy_(src), 2n, plus n on a CPU: a store to a line that is not in cache
  first reads the line (write-allocate), so a CPU copy moves 3n;
* triad: a = b + 2·c, 3n, plus n on a CPU for the same reason.

The bandwidth peak is the fastest of the three; on a CPU it is usually the read stream,
which is also what a decode step does with the weights.

Matmul: several shapes, the square n x n x n and the model's own two largest prefill
matmuls, 2·m·k·n FLOPs each; the peak is the fastest (the maximum achievable matmul
FLOP/s, as mamf-finder measures it).

Each kernel is timed for at least `min_seconds` and `min_repeats` calls after its
warm-ups, and its rate is the fastest call: a peak is the most the device did. Peaks
are measured before the experiments and again after them, and each is the best of all
measurements. If an experiment point still beats a peak (a utilisation above 100 %),
that peak was measured low: the run names it, measures it again for longer, and if the
point still beats it, takes the point's own rate as the peak, so no utilisation
exceeds 1.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from drill.quantities.units import format_quantity
from engine_check.timing import Timer, measure_for

BANDWIDTH = "bandwidth"
MATMUL = "matmul"
KINDS = (MATMUL, BANDWIDTH)
# the result's keys for each kind's peak, the kernel (or point) it came from, and its unit
PEAK_KEY = {MATMUL: "matmul_flops_per_s", BANDWIDTH: "bandwidth_bytes_per_s"}
FROM_KEY = {MATMUL: "matmul_from", BANDWIDTH: "bandwidth_from"}
RATE_DIMENSION = {MATMUL: "flop_per_s", BANDWIDTH: "bytes_per_s"}
# experiment sections whose utilisations the report shows
POINT_SECTIONS = ("prefill", "decode", "batch")


@dataclass(frozen=True)
class Kernel:
    """One call to time: `work` is the bytes it moves over the memory bus or its FLOPs."""

    name: str  # "read", "copy", "triad", "matmul 3072x3072x3072"
    kind: str  # BANDWIDTH or MATMUL
    work: float
    run: Callable[[], object]


@dataclass(frozen=True)
class PeakSettings:
    """How long each kernel is timed."""

    warmups: int
    min_repeats: int
    min_seconds: float  # of timed calls per kernel

    def longer(self, factor: float = 3.0) -> PeakSettings:
        """The settings of a re-measurement: `factor` times the calls and the time."""
        return PeakSettings(self.warmups, int(self.min_repeats * factor), self.min_seconds * factor)


def measure_kernels(
    timer: Timer, kernels: Iterable[Kernel], settings: PeakSettings, round_name: str
) -> list[dict[str, Any]]:
    """One row per kernel: its rate at the fastest call and at the median call."""
    rows = []
    for kernel in kernels:
        timing = measure_for(
            kernel.run, timer, settings.warmups, settings.min_repeats, settings.min_seconds
        )
        rows.append(
            {
                "name": kernel.name,
                "kind": kernel.kind,
                "round": round_name,
                "work": kernel.work,
                "rate": kernel.work / (timing.best_ms / 1e3),
                "median_rate": kernel.work / (timing.median_ms / 1e3),
                "best_ms": timing.best_ms,
                "median_ms": timing.median_ms,
                "calls": len(timing.samples_ms),
            }
        )
    return rows


def best_peaks(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """{matmul_flops_per_s, matmul_from, bandwidth_bytes_per_s, bandwidth_from}: for each
    kind, the fastest kernel of every round measured."""
    peaks: dict[str, Any] = {}
    for kind in KINDS:
        mine = [r for r in rows if r["kind"] == kind]
        if not mine:
            raise ValueError(f"no {kind} kernel was measured")
        best = max(mine, key=lambda r: r["rate"])
        peaks[PEAK_KEY[kind]] = best["rate"]
        peaks[FROM_KEY[kind]] = best["name"]
    return peaks


def point_label(section: str, row: Mapping[str, Any]) -> str:
    """How a warning names an experiment point."""
    if section == "prefill":
        return f"prefill of {row['prompt_len']:,} tokens"
    if section == "decode":
        return f"decode at context {row['context_len']:,}"
    return f"decode of batch {row['batch']:,}"


def fastest_points(
    sections: Mapping[str, Sequence[Mapping[str, Any]]],
) -> dict[str, tuple[str, float]]:
    """For each kind, the experiment point with the highest rate: (label, FLOP/s or bytes/s),
    from the FLOPs and bytes each point counts and its median time."""
    fastest: dict[str, tuple[str, float]] = {kind: ("", 0.0) for kind in KINDS}
    for section in POINT_SECTIONS:
        for row in sections.get(section) or []:
            seconds = row["ms"] / 1e3
            for kind, work in ((MATMUL, row["flops"]), (BANDWIDTH, row["bytes"])):
                if work / seconds > fastest[kind][1]:
                    fastest[kind] = (point_label(section, row), work / seconds)
    return fastest


def _rate(kind: str, value: float) -> str:
    return format_quantity(value, RATE_DIMENSION[kind])


def settle_peaks(
    rows: Sequence[Mapping[str, Any]],
    sections: Mapping[str, Sequence[Mapping[str, Any]]],
    remeasure: Callable[[str], list[dict[str, Any]]],
) -> tuple[list[dict[str, Any]], dict[str, Any], list[str]]:
    """(every kernel row, the peaks, warnings) once no experiment point beats a peak.

    `rows` are the kernel rows measured so far (before and after the experiments);
    `remeasure(kind)` measures that kind's kernels again, for longer, and returns the
    new rows. A peak that a point still beats after that becomes the point's own rate.
    """
    rows = list(rows)
    peaks = best_peaks(rows)
    warnings: list[str] = []
    for kind, (label, achieved) in fastest_points(sections).items():
        key, source = PEAK_KEY[kind], FROM_KEY[kind]
        if achieved <= peaks[key]:
            continue
        first, first_from = peaks[key], peaks[source]
        rows += remeasure(kind)
        remeasured = best_peaks(rows)
        peaks.update({key: remeasured[key], source: remeasured[source]})
        warning = (
            f"the {kind} peak was measured low: {label} reached {_rate(kind, achieved)}, "
            f"{format_quantity(achieved / first, 'fraction')} of it "
            f"({_rate(kind, first)}, {first_from}); measured again for longer, "
            f"{peaks[source]} reached {_rate(kind, peaks[key])}"
        )
        if achieved > peaks[key]:
            peaks.update({key: achieved, source: label})
            warning += f", still less, so the peak is the rate {label} reached"
        warnings.append(warning)
    return rows, peaks, warnings
