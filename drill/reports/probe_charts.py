"""A probe's charts (`kvdrill engine probe --html`): TTFT against prompt length, one line
per concurrency, and TPOT against concurrency, one line per prompt length, the measured
medians with the calculator's predictions dashed beside them when the probe has them.
Each function takes the result object and returns a matplotlib Figure for
`drill.reports.charts.to_svg`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from drill.reports.charts import BLUE, GREEN, GREY, ORANGE, VERMILION, empty_note, new_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

COLOURS = (BLUE, VERMILION, GREEN, ORANGE, GREY)


def _prompt(point: Mapping[str, Any]) -> float:
    return point.get("prompt_tokens_served") or point["prompt_tokens"]


def _series(result: Mapping[str, Any], by: str, x: str, metric: str) -> dict[Any, list]:
    """{value of `by`: [(x, median of metric)]}, sorted by x."""
    found: dict[Any, list] = {}
    for point in result.get("points") or []:
        spread = point.get(metric)
        if spread:
            x_value = _prompt(point) if x == "prompt" else point[x]
            found.setdefault(point[by], []).append((x_value, spread["p50"]))
    return {key: sorted(rows) for key, rows in sorted(found.items())}


def _predicted(result: Mapping[str, Any], key: str) -> list[tuple[float, float, int]]:
    calc = result.get("calculator") or {}
    return [
        (row["prompt_tokens"], row[key], row["concurrency"])
        for row in calc.get("points") or []
        if row.get(key) is not None
    ]


def draw_ttft(result: Mapping[str, Any]) -> Figure:
    """Median TTFT (ms) against prompt length, one line per concurrency."""
    fig = new_figure(3.4)
    ax = fig.subplots()
    series = _series(result, "concurrency", "prompt", "ttft_ms")
    if not series:
        empty_note(ax, "no request completed")
        return fig
    for colour, (concurrency, rows) in zip(COLOURS * 10, series.items(), strict=False):
        xs, ys = zip(*rows, strict=True)
        ax.plot(xs, ys, marker="o", color=colour, label=f"measured, concurrency {concurrency}")
    predicted = sorted(_predicted(result, "ttft_predicted_ms"))
    if predicted:
        xs, ys, _c = zip(*predicted, strict=True)
        ax.plot(xs, ys, ls="--", marker="x", color=GREY, label="calculator")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("prompt length (tokens)")
    ax.set_ylabel("TTFT, median (ms)")
    ax.legend(fontsize=8)
    return fig


def draw_tpot(result: Mapping[str, Any]) -> Figure:
    """Median TPOT (ms) against concurrency, one line per prompt length."""
    fig = new_figure(3.4)
    ax = fig.subplots()
    series = _series(result, "prompt_tokens", "concurrency", "tpot_ms")
    if not series:
        empty_note(ax, "no request gave two tokens or more")
        return fig
    predicted = _predicted(result, "tpot_predicted_ms")
    prompts = {p["prompt_tokens"]: round(_prompt(p)) for p in result.get("points") or []}
    for colour, (prompt, rows) in zip(COLOURS * 10, series.items(), strict=False):
        xs, ys = zip(*rows, strict=True)
        ax.plot(xs, ys, marker="o", color=colour, label=f"measured, prompt ~{prompt:,}")
        mine = sorted((c, y) for p, y, c in predicted if p == prompts.get(prompt))
        if mine:
            cx, cy = zip(*mine, strict=True)
            ax.plot(cx, cy, ls="--", marker="x", color=colour, alpha=0.6,
                    label=f"calculator, prompt ~{prompt:,}")  # fmt: skip
    ax.set_xscale("log", base=2)
    ax.set_xlabel("concurrency (requests in flight)")
    ax.set_ylabel("TPOT, median (ms)")
    ax.legend(fontsize=8)
    return fig
