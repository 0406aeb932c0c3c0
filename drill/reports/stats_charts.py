"""The progress report's charts: each function takes figures from `drill.reports.stats` and
returns a matplotlib Figure, which `drill.reports.charts.to_svg` turns into one `<svg>` element.
Only `kvdrill stats --html` imports this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import TYPE_CHECKING, Any

from drill.reports.charts import (
    BLUE,
    GREEN,
    GREY,
    INK,
    ORANGE,
    VERMILION,
    chart_label,
    empty_note,
    new_figure,
)
from drill.reports.stats import MATURE_DAYS, MONTHS, WEEKDAYS, heatmap_level

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# GitHub's calendar greens: no reviews, then levels 1..4 of drill.reports.stats.heatmap_level
LEVEL_COLOURS = ("#ebedf0", "#9be9a8", "#40c463", "#30a14e", "#216e39")


def _month_day(day: date) -> str:
    return f"{MONTHS[day.month - 1]} {day.day}"


# ------------------------------------------------------------------------ calendar


def draw_calendar(per_day: Sequence[dict[str, Any]]) -> Figure:
    """Reviews per day as a calendar: weeks as columns (oldest left), Mon..Sun as rows."""
    from matplotlib.patches import Rectangle

    fig = new_figure(3.1)
    ax = fig.subplots()
    start = date.fromisoformat(per_day[0]["date"])
    counts = [d["reviews"] for d in per_day]
    busiest = max(counts, default=0)
    weeks = (len(counts) + 6) // 7
    for index, count in enumerate(counts):
        week, weekday = divmod(index, 7)
        colour = LEVEL_COLOURS[heatmap_level(count, busiest)]
        ax.add_patch(Rectangle((week + 0.08, weekday + 0.08), 0.84, 0.84, color=colour, lw=0))
    previous = None
    for week in range(weeks):
        month = MONTHS[date.fromordinal(start.toordinal() + 7 * week).month - 1]
        if month != previous:
            ax.text(week + 0.08, -0.35, month, ha="left", va="bottom", color=INK)
        previous = month
    for weekday in (0, 2, 4, 6):
        ax.text(-0.25, weekday + 0.5, WEEKDAYS[weekday], ha="right", va="center", color=INK)
    # the legend: less .. more, under the last columns
    right = weeks - 5 * 0.7
    ax.text(right - 0.2, 7.85, "less", ha="right", va="center", color=INK, fontsize=8)
    for level, colour in enumerate(LEVEL_COLOURS):
        x = right + 0.7 * level
        ax.add_patch(Rectangle((x, 7.55), 0.6, 0.6, color=colour, lw=0))
    ax.text(weeks + 0.1, 7.85, "more", ha="left", va="center", color=INK, fontsize=8)
    busiest_text = f"busiest day: {busiest:,} review{'' if busiest == 1 else 's'}"
    ax.text(0.08, 7.85, busiest_text, va="center", color=INK, fontsize=8)
    ax.set_xlim(-1.6, weeks + 1.2)
    ax.set_ylim(8.4, -1.0)
    ax.set_aspect("equal")
    ax.axis("off")
    return fig


# ------------------------------------------------------------------------ retention


def _percent_axis(ax: Axes, low: float, high: float = 101.0) -> None:
    from matplotlib.ticker import PercentFormatter

    ax.set_ylim(low, high)
    ax.yaxis.set_major_formatter(PercentFormatter(decimals=0))
    ax.grid(axis="y", color="#e6e6e6", lw=0.8)
    ax.set_axisbelow(True)


def draw_retention(weekly: Sequence[dict[str, Any]], target: float | None) -> Figure:
    """True retention per week: all counted reviews, young and mature cards, the target
    FSRS schedules for; light bars under them count the reviews each week."""
    from matplotlib.ticker import MaxNLocator

    fig = new_figure(3.0)
    ax = fig.subplots()
    x = list(range(len(weekly)))
    counted = [w["reviews"] for w in weekly]
    # the counts on a second axis, kept to the lower third so the lines stay readable
    bars = ax.twinx()
    bars.bar(x, counted, width=0.6, color="#e3e3e3", zorder=0)
    bars.set_ylim(0, 3 * max(max(counted), 1))
    bars.yaxis.set_major_locator(MaxNLocator(integer=True))
    bars.set_ylabel("reviews counted", color=GREY)
    bars.tick_params(axis="y", colors=GREY)
    bars.spines["right"].set_visible(True)
    bars.spines["top"].set_visible(False)
    ax.set_zorder(bars.get_zorder() + 1)
    ax.patch.set_visible(False)

    def series(key: str | None) -> list[float]:
        """Percentages; NaN (a gap in the line) for a week without counted reviews."""
        shares = [w[key] if key else w for w in weekly]
        return [float("nan") if s["rate"] is None else 100 * s["rate"] for s in shares]

    rates = [r for key in (None, "young", "mature") for r in series(key) if r == r]
    # all reviews underneath, thick: where young (or mature) is all there is, its thin
    # line runs inside it instead of hiding under it
    for key, colour, name, width, size in (
        (None, "#555555", "all", 3.4, 6),
        ("young", BLUE, "young cards", 1.4, 3.5),
        ("mature", ORANGE, f"mature cards ({MATURE_DAYS}+ days)", 1.4, 3.5),
    ):
        ax.plot(x, series(key), marker="o", ms=size, lw=width, color=colour, label=name)
    if target is not None:
        ax.axhline(100 * target, ls="--", lw=1, color=GREEN, label=f"target {100 * target:.0f}%")
    low = min([50.0, *(10 * (r // 10) for r in rates)])
    _percent_axis(ax, low)
    ticks = x[::2]
    ax.set_xticks(ticks, [_month_day(date.fromisoformat(weekly[i]["week"])) for i in ticks])
    ax.set_xlim(-0.6, len(weekly) - 0.4)
    ax.set_xlabel("week beginning")
    if not rates:
        empty_note(ax, "no reviews of questions seen on an earlier day yet")
    ax.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncols=4, fontsize=8)
    return fig


# ------------------------------------------------------------------------- forecast


def draw_forecast(days: Sequence[dict[str, Any]]) -> Figure:
    """Cards due on each coming day; today's bar (overdue cards included) stands out."""
    from matplotlib.ticker import MaxNLocator

    fig = new_figure(2.5)
    ax = fig.subplots()
    x = list(range(len(days)))
    due = [d["due"] for d in days]
    colours = [VERMILION, *[BLUE] * (len(days) - 1)]
    bars = ax.bar(x, due, width=0.7, color=colours)
    ax.bar_label(bars, labels=[f"{n:,}" if n else "" for n in due], fontsize=7, padding=2)
    ticks = x[::7]
    names = ["today", *(_month_day(date.fromisoformat(days[i]["date"])) for i in ticks[1:])]
    ax.set_xticks(ticks, names)
    ax.set_xlim(-0.6, len(days) - 0.4)
    ax.set_ylim(0, max(max(due, default=0), 1) * 1.18)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(axis="y", color="#e6e6e6", lw=0.8)
    ax.set_axisbelow(True)
    ax.set_ylabel("cards due")
    if not any(due):
        empty_note(ax, "nothing scheduled")
    return fig


# --------------------------------------------------------------------------- topics


def draw_topics(topics: Sequence[dict[str, Any]]) -> Figure:
    """Per topic, recall now (mean FSRS retrievability) and accuracy, as paired bars."""
    fig = new_figure(0.9 + 0.42 * max(len(topics), 1))
    ax = fig.subplots()
    y = list(range(len(topics)))
    for offset, key, colour, name in (
        (-0.2, "retrievability", BLUE, "recall now"),
        (0.2, "accuracy", GREEN, "accuracy"),
    ):
        values = [100 * (t[key] or 0.0) for t in topics]
        bars = ax.barh([i + offset for i in y], values, height=0.38, color=colour, label=name)
        shown = ["-" if t[key] is None else f"{100 * t[key]:.0f}%" for t in topics]
        ax.bar_label(bars, labels=shown, fontsize=7, padding=3)
    ax.set_yticks(y, [f"{chart_label(t['topic'])} ({t['questions']})" for t in topics])
    ax.set_ylim(len(topics) - 0.5, -0.5 if topics else 0.5)
    ax.set_xlim(0, 110)
    ax.set_xticks([0, 25, 50, 75, 100], ["0%", "25%", "50%", "75%", "100%"])
    ax.grid(axis="x", color="#e6e6e6", lw=0.8)
    ax.set_axisbelow(True)
    ax.tick_params(axis="y", length=0)
    if topics:
        ax.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncols=2, fontsize=8)
    else:
        empty_note(ax, "no questions answered yet")
    return fig
