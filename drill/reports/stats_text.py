"""`kvdrill stats` as text at a terminal: the heatmap, the tables and the whole page of
figures that drill.reports.stats collects."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, timedelta
from typing import Any

from drill.reports.stats import HEATMAP_WEEKS, MONTHS, WEEKDAYS, heatmap_level
from drill.study.screen import wrap_line

HEATMAP_CHARS = " .:*#"  # level 0 (no reviews) .. 4 (the busiest days)
# 256-colour greens for levels 1..4 and a dim grey for days without reviews
_HEATMAP_COLOURS = (238, 22, 28, 34, 40)


def render_heatmap(per_day: list[dict[str, Any]], *, color: bool = False) -> list[str]:
    """Weeks as columns (oldest left), weekdays Mon..Sun as rows, a month label row on top.

    `per_day` starts on a Monday (as `reviews_per_day` returns it); days after its last
    entry stay blank. Plain characters use HEATMAP_CHARS; `color` draws 256-colour squares.
    """
    start = date.fromisoformat(per_day[0]["date"])
    counts = [d["reviews"] for d in per_day]
    busiest = max(counts, default=0)
    weeks = (len(counts) + 6) // 7
    label_width = 4  # "Mon "

    month_row = [" "] * (label_width + 2 * weeks)
    free_from = 0
    previous_month = None
    for week in range(weeks):
        month = (start + timedelta(weeks=week)).month
        pos = label_width + 2 * week
        if month != previous_month and pos >= free_from:
            month_row[pos : pos + 3] = MONTHS[month - 1]
            free_from = pos + 4
        previous_month = month
    lines = ["".join(month_row).rstrip()]

    for weekday in range(7):
        cells = []
        for week in range(weeks):
            index = 7 * week + weekday
            if index >= len(counts):
                cells.append(" ")
                continue
            level = heatmap_level(counts[index], busiest)
            if color:
                cells.append(f"\x1b[38;5;{_HEATMAP_COLOURS[level]}m\u25a0\x1b[0m")
            else:
                cells.append(HEATMAP_CHARS[level])
        lines.append((WEEKDAYS[weekday] + " " + " ".join(cells)).rstrip())
    return lines


def heatmap_legend(*, color: bool = False) -> str:
    """The five levels, least to most, as the heatmap draws them."""
    if color:
        return " ".join(f"\x1b[38;5;{c}m\u25a0\x1b[0m" for c in _HEATMAP_COLOURS)
    return f"'{HEATMAP_CHARS}'"


def render_interview(figures: Mapping[str, Any]) -> list[str]:
    """The interview lines of the text report."""
    left = figures["days_left"]
    when = f"{figures['date']}, " + (
        "today" if left == 0 else "passed" if left < 0 else f"in {left} day{'s' * (left != 1)}"
    )
    lines = [f"Interview {when}"]
    workload = figures["workload"]
    if workload:
        busiest = max(workload, key=lambda d: d["due"])
        lines.append(
            f"  {reviews_due_before(figures['reviews_before'])}; the busiest day "
            f"{busiest['date'][5:]} ({busiest['due']})"
        )
    if figures["topics"]:
        ready = ", ".join(f"{t['topic']} {percent(t['recall'])}" for t in figures["topics"])
        lines.append(f"  recall on the day if you stopped reviewing now: {ready}")
    if "plan" in figures:  # the days to it simulated (`kvdrill plan`)
        from drill.reports.plan_text import summary_lines

        lines += [f"  {line}" for line in summary_lines(figures["plan"])]
    return lines


def mock_trend(trend: list[dict[str, Any]]) -> str:
    """The mock interviews' scores in one line, the oldest first: "11-18 20% in 3.5 min · ..."."""
    shown = []
    for item in trend:
        took = f" in {item['minutes']:g} min" if item["minutes"] is not None else ""
        shown.append(f"{item['date'][5:]} {percent(item['score'])}{took}")
    return " · ".join(shown)


def counted(count: int, word: str) -> str:
    """"1 review", "1,200 reviews"."""
    return f"{count:,} {word}{'s' * (count != 1)}"


def reviews_due_before(count: int) -> str:
    """"1 review due before it", "12 reviews due before it"."""
    return f"{counted(count, 'review')} due before it"


def percent(value: float | None) -> str:
    """A fraction as a whole percentage ("-" for none)."""
    return "-" if value is None else f"{100 * value:.0f}%"


def text_table(
    header: list[str], rows: list[list[str]], indent: str = "  ", align: str | None = None
) -> list[str]:
    """Columns aligned as `align` says, one letter per column (l left, r right); by
    default the first column left and the rest (numbers) right."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    align = align or "l" + "r" * (len(header) - 1)

    def line(cells: list[str]) -> str:
        padded = [
            c.ljust(w) if a == "l" else c.rjust(w)
            for c, w, a in zip(cells, widths, align, strict=True)
        ]
        return (indent + "  ".join(padded)).rstrip()

    return [line(header), *map(line, rows)]


def render_text(
    stats: Mapping[str, Any], *, color: bool = False, columns: int | None = None
) -> str:
    """The human form of `collect_stats`'s object; with `columns`, its sentences wrapped
    between words to that many columns (the heatmap and the tables are kept whole)."""
    whole: set[int] = set()  # lines never wrapped: the heatmap and the tables

    def keep_whole(lines: list[str]) -> list[str]:
        whole.update(range(len(out), len(out) + len(lines)))
        return lines

    due, ret, st, days = stats["due"], stats["retention"], stats["streak"], stats["days"]
    out = [
        f"Due now: {due['now']}    later today: {due['later_today']}"
        f"    (days begin {days['rollover_hour']:02d}:00, {days['zone']})"
    ]
    out.append(
        "Next 7 days: " + "  ".join(f"{d['date'][5:]} {d['due']}" for d in stats["forecast"])
    )
    plural = "day" if st["days"] == 1 else "days"
    today_note = "reviewed today" if st["reviewed_today"] else "review today to extend it"
    out.append(f"Streak: {st['days']} {plural}" + (f" ({today_note})" if st["days"] else ""))
    if ret["reviews"]:
        mature = ret["mature"]
        split = (
            f"; mature cards {100 * mature['rate']:.1f}% of {mature['reviews']}"
            if mature["reviews"]
            else ""
        )
        out.append(
            f"True retention, last {ret['window_days']} days: {100 * ret['rate']:.1f}%"
            f" ({ret['passed']} of {ret['reviews']} recalled{split})"
        )
    else:
        out.append(
            f"True retention, last {ret['window_days']} days: -"
            " (no reviews yet of questions seen on an earlier day)"
        )
    if "interview" in stats:
        out += render_interview(stats["interview"])

    per_day = stats["heatmap"]
    busiest = max((d["reviews"] for d in per_day), default=0)
    out += ["", f"Reviews per day, last {HEATMAP_WEEKS} weeks (busiest day: {busiest})"]
    out += keep_whole(render_heatmap(per_day, color=color))
    out += keep_whole(["    less " + heatmap_legend(color=color) + " more"])

    if stats["topics"]:
        rows = [
            [
                t["topic"] or "-",
                str(t["questions"]),
                str(t["reviews"]),
                percent(t["retrievability"]),
                percent(t["accuracy"]),
            ]
            for t in stats["topics"]
        ]
        out += ["", "Mastery by topic"]
        out += keep_whole(
            text_table(["topic", "questions", "reviews", "recall now", "accuracy"], rows)
        )
    if stats["weakest"]:
        rows = [
            [
                w["question_id"],
                w["topic"] or "-",
                percent(w["retrievability"]) + ("*" if w.get("learning") else ""),
                percent(w["accuracy"]),
                str(w["reviews"]),
            ]
            for w in stats["weakest"]
        ]
        out += ["", "Weakest questions"]
        out += keep_whole(
            text_table(["question", "topic", "recall now", "accuracy", "reviews"], rows)
        )
        if any(w.get("learning") for w in stats["weakest"]):
            out.append(
                "  * still learning (failed, or new): recall a day after its last answer, "
                "since right after one it is near 100%"
            )
    if stats["misconceptions"]:
        out += ["", "Most frequent mistakes"]
        width = len(str(stats["misconceptions"][0]["count"]))
        for m in stats["misconceptions"]:
            label = m["name"] if m["name"] == m["id"] else f"{m['name']} ({m['id']})"
            out.append(f"  {str(m['count']).rjust(width)}x  {label}")
    if stats.get("missed_points"):
        out += ["", "Key points missed most"]
        width = len(str(stats["missed_points"][0]["missed"]))
        for m in stats["missed_points"]:
            out.append(
                f"  {str(m['missed']).rjust(width)} of {m['reviews']}  {m['question_id']} "
                f"{m['point']}. {m['text']}"
            )
    if stats.get("mock_interviews"):
        out += ["", "Mock interviews: " + mock_trend(stats["mock_interviews"])]
    totals = stats["totals"]
    if totals["suspended"] or totals["buried"] or totals["leeches"]:
        out += [
            "",
            f"Held back: {totals['suspended']} suspended, {totals['buried']} buried; "
            f"leeches: {totals['leeches']} (`kvdrill unsuspend --list` shows them)",
        ]
    if not stats["totals"]["reviews"]:
        out += ["", "No reviews yet: `kvdrill quiz` starts one."]
    if columns:
        out = [
            piece
            for i, line in enumerate(out)
            for piece in ([line] if i in whole else wrap_line(line, columns))
        ]
    return "\n".join(out) + "\n"
