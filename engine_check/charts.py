"""An engine run's charts (no torch here): the roofline with every measured point, time to
first token against prompt length and time per decode step against batch size, each
beside the roofline's prediction. Each function takes the result object and returns a
matplotlib Figure for `drill.reports.charts.to_svg`.

Predicted lines come from engine_check.roofline with the run's settled peaks, drawn over
a continuous range, so a point off its line shows how far the real kernels fall short.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from drill.quantities.units import format_quantity
from drill.reports.charts import BLUE, GREEN, GREY, INK, ORANGE, VERMILION, empty_note, new_figure
from engine_check import roofline
from engine_check.config import ModelConfig
from engine_check.report import current_peaks

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

PREDICTED = "#777777"
# (section, colour, marker, legend name, label side) of the points on the roofline;
# decode at batch 1 and the batch sweep's first point sit together, so their labels
# go to opposite sides
POINT_STYLES = (
    ("prefill", VERMILION, "s", "prefill (prompt tokens)", "right"),
    ("decode", BLUE, "o", "decode, batch 1 (context)", "left"),
    ("batch", GREEN, "^", "decode by batch (batch size)", "right"),
)


def _model(result: Mapping[str, Any]) -> tuple[ModelConfig, int]:
    return ModelConfig(**result["config"]["model"]), result["kv"]["dtype_bytes"]


def _geometric(low: float, high: float, count: int = 64) -> list[float]:
    ratio = (high / low) ** (1 / (count - 1))
    return [low * ratio**i for i in range(count)]


def _log_axis(axis: Any, label: Any, subs: Sequence[float] = (1.0,)) -> None:
    """Ticks of a log axis at `subs` x each power of ten, written by `label(value)`: plain
    text, since the charts never read mathtext (matplotlib's default log labels are)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=10, subs=tuple(subs)))
    axis.set_major_formatter(FuncFormatter(lambda value, _pos: label(value)))
    axis.set_minor_formatter(NullFormatter())


def _grid(ax: Axes) -> None:
    ax.grid(which="major", color="#e6e6e6", lw=0.8)
    ax.set_axisbelow(True)


def _point_label(section: str, row: Mapping[str, Any]) -> str:
    if section == "prefill":
        return f"{row['prompt_len']:,}"
    if section == "decode":
        return f"{row['context_len']:,}"
    return f"{row['batch']:,}"


# ------------------------------------------------------------------------- roofline


def draw_roofline(result: Mapping[str, Any]) -> Figure:
    """FLOP/s attained against arithmetic intensity (FLOP per byte moved), log-log: the
    roof is min(matmul peak, intensity x bandwidth peak), bending at the ridge point."""
    peaks = current_peaks(result)
    flops_peak, bytes_peak = peaks["matmul_flops_per_s"], peaks["bandwidth_bytes_per_s"]
    ridge = roofline.ridge_intensity(flops_peak, bytes_peak)
    fig = new_figure(4.6)
    ax = fig.subplots()
    ax.set_xscale("log")
    ax.set_yscale("log")
    points = [
        (section, row["flops"] / row["bytes"], row["flops"] / (row["ms"] / 1e3))
        for section, *_rest in POINT_STYLES
        for row in result.get(section) or []
    ]
    intensities = [i for _, i, _ in points] + [ridge]
    low, high = min(intensities) / 3, max(intensities) * 3
    xs = _geometric(low, high)
    ax.plot(xs, [min(flops_peak, x * bytes_peak) for x in xs], color=INK, lw=2, zorder=2)
    ax.plot([ridge], [flops_peak], marker="D", ms=6, color=INK, zorder=3)
    ax.annotate(
        f"ridge: {ridge:.3g} FLOP/byte",
        (ridge, flops_peak),
        xytext=(6, 8),
        textcoords="offset points",
        color=INK,
        fontsize=8,
    )
    ax.annotate(
        f"matmul peak {format_quantity(flops_peak, 'flop_per_s')}",
        (high, flops_peak),
        xytext=(-4, 5),
        textcoords="offset points",
        ha="right",
        color=INK,
        fontsize=8,
    )
    # the memory roof's label sits above the slope, halfway (on the log axis) to the ridge
    middle = math.sqrt(low * ridge)
    ax.annotate(
        f"memory {format_quantity(bytes_peak, 'bytes_per_s')} x intensity",
        (middle, middle * bytes_peak),
        xytext=(-8, 8),
        textcoords="offset points",
        ha="right",
        color=INK,
        fontsize=8,
    )
    spec = peaks.get("spec")
    if spec:
        spec_flops, spec_bytes = spec["bf16_dense_flops_per_s"], spec["hbm_bytes_per_s"]
        ax.plot(
            xs,
            [min(spec_flops, x * spec_bytes) for x in xs],
            color=GREY,
            lw=1,
            ls="--",
            label=f"spec sheet ({spec['name']})",
        )
    for section, colour, marker, name, side in POINT_STYLES:
        rows = result.get(section) or []
        if not rows:
            continue
        xs_pt = [row["flops"] / row["bytes"] for row in rows]
        ys_pt = [row["flops"] / (row["ms"] / 1e3) for row in rows]
        ax.scatter(xs_pt, ys_pt, color=colour, marker=marker, s=28, zorder=4, label=name)
        # points of one kind often sit close together: going up the chart, their labels
        # alternate below and above them, so two neighbours' labels never meet
        rank = {i: r for r, i in enumerate(sorted(range(len(rows)), key=lambda i: ys_pt[i]))}
        for index, (row, x, y) in enumerate(zip(rows, xs_pt, ys_pt, strict=True)):
            ax.annotate(
                _point_label(section, row),
                (x, y),
                xytext=(4 if side == "right" else -4, -10 if rank[index] % 2 == 0 else 5),
                textcoords="offset points",
                ha="left" if side == "right" else "right",
                color=colour,
                fontsize=7,
            )
    ys = [y for *_, y in points] + [flops_peak]
    ax.set_xlim(low, high)
    ax.set_ylim(min(ys + [low * bytes_peak]) / 2, flops_peak * 2.5)
    _log_axis(ax.yaxis, lambda v: format_quantity(v, "flop_per_s", digits=2))
    _log_axis(ax.xaxis, lambda v: f"{v:g}")
    ax.set_xlabel("arithmetic intensity (FLOP per byte moved)")
    ax.set_ylabel("attained")
    _grid(ax)
    ax.legend(loc="lower right", fontsize=8)
    return fig


# ------------------------------------------------------------------------ TTFT, TPOT


def draw_ttft(result: Mapping[str, Any]) -> Figure:
    """Time to first token against prompt length: median with its p90, and the roofline."""
    cfg, dtype_bytes = _model(result)

    def work(length: float) -> tuple[int, int]:
        tokens = round(length)
        return (
            roofline.prefill_flops(cfg, tokens),
            roofline.prefill_bytes(cfg, tokens, dtype_bytes),
        )

    fig, ax = _time_figure(result, "prefill", "prompt_len", work, ORANGE, low=1 / 1.5)
    ax.set_xlabel("prompt length (tokens), batch 1")
    ax.set_ylabel("time to first token")
    return fig


def draw_tpot(result: Mapping[str, Any]) -> Figure:
    """Time per decode step against batch size at the batch context, and the roofline;
    the dashed line is the ridge batch, where the roofline turns compute-bound."""
    cfg, dtype_bytes = _model(result)
    context = result["config"]["batch_context_len"]

    def work(batch: float) -> tuple[int, int]:
        sequences = math.ceil(batch)
        return (
            roofline.decode_step_flops(cfg, context, sequences),
            roofline.decode_step_bytes(cfg, context, sequences, dtype_bytes),
        )

    fig, ax = _time_figure(result, "batch", "batch", work, GREEN, low=None)
    ridge = result.get("batch_ridge")
    if ridge and result.get("batch") and ridge <= ax.get_xlim()[1]:
        ax.axvline(ridge, color=GREY, ls="--", lw=1)
        ax.annotate(
            f"ridge batch {ridge}",
            (ridge, 1),
            xycoords=("data", "axes fraction"),
            xytext=(4, -12),
            textcoords="offset points",
            color=GREY,
            fontsize=8,
        )
    ax.set_xlabel(f"batch size (sequences), context {context:,}")
    ax.set_ylabel("time per decode step")
    return fig


def _time_figure(
    result: Mapping[str, Any],
    section: str,
    x_key: str,
    work: Callable[[float], tuple[int, int]],
    colour: str,
    low: float | None,
) -> tuple[Figure, Axes]:
    """A log-log time chart of one experiment's points over its roofline line, drawn
    from `low` x the smallest x (or from 1) to 1.5 x the largest; `work(x)` is the
    (FLOPs, bytes) the roofline predicts from."""
    fig = new_figure(3.0)
    ax = fig.subplots()
    rows = result.get(section) or []
    if not rows:
        empty_note(ax, f"no {section} point was measured")
        return fig, ax
    xs_measured = [row[x_key] for row in rows]
    start = 1.0 if low is None else min(xs_measured) * low
    xs = _geometric(start, max(xs_measured) * 1.5)
    peaks = current_peaks(result)
    predicted = [_predicted_ms(*work(x), peaks) for x in xs]
    _time_chart(ax, xs, predicted, rows, x_key, colour)
    ax.set_xlim(xs[0] / 1.1, xs[-1])
    return fig, ax


def _predicted_ms(flops: float, nbytes: float, peaks: Mapping[str, Any]) -> float:
    return 1e3 * roofline.roofline_seconds(
        flops, nbytes, peaks["matmul_flops_per_s"], peaks["bandwidth_bytes_per_s"]
    )


def _time_chart(
    ax: Axes,
    xs: Sequence[float],
    predicted_ms: Sequence[float],
    rows: Sequence[Mapping[str, Any]],
    x_key: str,
    colour: str,
) -> None:
    """Log-log: the predicted line, then each point's median with a bar up to its p90."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.plot(xs, [ms / 1e3 for ms in predicted_ms], color=PREDICTED, lw=1.5, ls="--",
            label="roofline prediction")  # fmt: skip
    x = [row[x_key] for row in rows]
    median = [row["ms"] / 1e3 for row in rows]
    above = [max(0.0, (row["p90_ms"] - row["ms"]) / 1e3) for row in rows]
    ax.errorbar(x, median, yerr=[[0.0] * len(rows), above], fmt="o", color=colour, ms=5,
                capsize=3, label="measured (median, bar to p90)")  # fmt: skip
    for xi, yi in zip(x, median, strict=True):
        ax.annotate(format_quantity(yi, "seconds", digits=3), (xi, yi), xytext=(6, -3),
                    textcoords="offset points", fontsize=7, color=colour)  # fmt: skip
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.xaxis.set_major_locator(LogLocator(base=2))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:,.0f}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    _log_axis(ax.yaxis, lambda v: format_quantity(v, "seconds", digits=2), subs=(1, 2, 5))
    _grid(ax)
    ax.legend(loc="upper left", fontsize=8)
