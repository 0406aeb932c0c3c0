"""`kvdrill stats --html`: the progress report as one self-contained web page.

The page holds the headline figures as text, four charts inlined as SVG
(`drill.reports.stats_charts`: reviews per day, true retention per week, the next 30 days'
due cards, recall and accuracy per topic) and two tables (the weakest questions,
the most frequent mistakes). It loads nothing and runs nothing: inline CSS, the
Content-Security-Policy of `drill.reports.html_page`, print rules. Every string from the
database or the bank (question ids, topics, mistake names) passes through
`drill.text.printable` and `html.escape`.

`render_report` is a pure function of `collect_report`'s object: the same database
and `now` give a byte-identical page.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any

from drill.reports.html_page import REPORT_CSS, page_head
from drill.reports.stats import (
    HEATMAP_WEEKS,
    MATURE_DAYS,
    collect_stats,
    forecast,
    weekly_retention,
)
from drill.reports.stats_text import counted, percent, reviews_due_before
from drill.storage.sqlite_library import Database
from drill.study.days import UTC_DAYS, DayClock
from drill.text import printable

TITLE = "kvdrill progress"
REPORT_FORECAST_DAYS = 30
_NO_REVIEWS = '<p class="note">No reviews yet: <code>kvdrill quiz</code> starts one.</p>'

_CSS = REPORT_CSS + """
.tiles { display: grid; grid-template-columns: repeat(auto-fit, minmax(9em, 1fr)); gap: .7em;
         margin: 1.2em 0 .4em; }
.tile { border: 1px solid #ddd; border-radius: 6px; padding: .6em .8em; }
.tile .big { display: block; font-size: 1.9em; font-weight: bold; line-height: 1.15; }
.tile .what { display: block; font-weight: bold; color: #444; }
.tile .sub { display: block; font-size: .85em; color: #666; }
td.id { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: .9em; }
@media print {
  body { max-width: none; margin: 0; padding: 0; font-size: 9.5pt; }
  .tile { border-color: #999; }
}
"""


def collect_report(
    db: Database,
    now: datetime,
    *,
    topics: Mapping[str, str] | None = None,
    misconception_names: Mapping[str, str] | None = None,
    key_points: Mapping[str, Sequence[str]] | None = None,
    days: DayClock = UTC_DAYS,
    target_retention: float | None = None,
    interview: date | None = None,
) -> dict[str, Any]:
    """`drill.reports.stats.collect_stats`'s figures and what only the report shows: the due
    forecast for REPORT_FORECAST_DAYS days, true retention per week, the target
    retention and `now` on the user's clock. With an `interview` date, its readiness
    (`drill.reports.stats.interview_readiness`) too."""
    figures = collect_stats(
        db, now, topics=topics, misconception_names=misconception_names, key_points=key_points,
        days=days, interview=interview,
    )  # fmt: skip
    active_ids = sorted(topics) if topics is not None else None
    return {
        **figures,
        "forecast": forecast(db, now, active_ids, count=REPORT_FORECAST_DAYS, days=days),
        "weekly_retention": weekly_retention(db, now, days=days),
        "target_retention": target_retention,
        "local_now": f"{now.astimezone(days.tz):%Y-%m-%d %H:%M}",
    }


def _esc(text: str | None) -> str:
    return html.escape(printable(text or "-"))


def _tile(big: str, what: str, sub: str) -> str:
    return (
        f'<div class="tile"><span class="big">{big}</span>'
        f'<span class="what">{what}</span><span class="sub">{sub}</span></div>'
    )


def _rate(share: Mapping[str, Any]) -> str:
    return "-" if share["rate"] is None else f"{100 * share['rate']:.1f}%"


def headline(report: Mapping[str, Any]) -> str:
    """Due now, streak, true retention and totals as tiles of text."""
    due, st, ret, totals = report["due"], report["streak"], report["retention"], report["totals"]
    if st["days"]:
        streak_note = "reviewed today" if st["reviewed_today"] else "review today to extend it"
    else:
        streak_note = "a review today starts one"
    if ret["reviews"]:
        split = [f"{age} {_rate(ret[age])}" for age in ("young", "mature") if ret[age]["reviews"]]
        ret_note = f"{ret['passed']:,} of {ret['reviews']:,} in {ret['window_days']} days"
        ret_note += "; " + ", ".join(split)
    else:
        ret_note = f"none counted in {ret['window_days']} days yet"
    week = sum(d["due"] for d in report["forecast"][:7])
    return "\n".join(
        [
            '<section class="tiles">',
            _tile(f"{due['now']:,}", "due now", f"{due['later_today']:,} more later today"),
            _tile(f"{week:,}", "due this week", "the next 7 days, today included"),
            _tile(f"{st['days']:,} day{'' if st['days'] == 1 else 's'}", "streak", streak_note),
            _tile(_rate(ret), "true retention", ret_note),
            _tile(
                f"{totals['reviews']:,}", "reviews", counted(totals["cards"], "card") + " scheduled"
            ),
            "</section>",
        ]
    )


def _table(header: Sequence[tuple[str, str]], rows: Sequence[Sequence[str]]) -> str:
    """`header` is (class, title) per column; cells are escaped HTML already."""
    head = "".join(f'<th class="{cls}">{title}</th>' for cls, title in header)
    body = [
        "<tr>"
        + "".join(
            f'<td class="{cls}">{cell}</td>' for (cls, _), cell in zip(header, row, strict=True)
        )
        + "</tr>"
        for row in rows
    ]
    return "\n".join(
        ["<table>", f"<thead><tr>{head}</tr></thead>", "<tbody>", *body, "</tbody>", "</table>"]
    )


def weakest_table(weakest: Sequence[Mapping[str, Any]]) -> str:
    header = [
        ("text id", "question"),
        ("text", "topic"),
        ("num", "recall now"),
        ("num", "accuracy"),
        ("num", "reviews"),
        ("num", "lapses"),
    ]
    rows = [
        [
            _esc(w["question_id"]),
            _esc(w["topic"]),
            percent(w["retrievability"]) + ("*" if w.get("learning") else ""),
            percent(w["accuracy"]),
            f"{w['reviews']:,}",
            f"{w['lapses']:,}",
        ]
        for w in weakest
    ]
    return _table(header, rows)


def mistakes_table(mistakes: Sequence[Mapping[str, Any]]) -> str:
    header = [("num", "times"), ("text", "mistake"), ("text id", "id")]
    rows = [[f"{m['count']:,}", _esc(m["name"]), _esc(m["id"])] for m in mistakes]
    return _table(header, rows)


def missed_points_table(points: Sequence[Mapping[str, Any]]) -> str:
    header = [("num", "missed"), ("num", "of"), ("text id", "question"), ("text", "key point")]
    rows = [
        [f"{p['missed']:,}", f"{p['reviews']:,}", _esc(p["question_id"]),
         f"{p['point']}. {_esc(p['text'])}"]
        for p in points
    ]  # fmt: skip
    return _table(header, rows)


def mock_interviews_table(trend: Sequence[Mapping[str, Any]]) -> str:
    header = [("text", "date"), ("num", "score"), ("num", "answered"), ("num", "minutes")]
    rows = [
        [_esc(m["date"]), percent(m["score"]), f"{m['answered']:,}",
         "-" if m["minutes"] is None else f"{m['minutes']:g}"]
        for m in trend
    ]  # fmt: skip
    return _table(header, rows)


def _section(title: str, body: str, note: str = "") -> str:
    parts = ["<section>", f"<h2>{title}</h2>", body]
    if note:
        parts.append(f'<p class="note">{note}</p>')
    return "\n".join([*parts, "</section>"])


def chart_sections(report: Mapping[str, Any]) -> list[str]:
    """The four charts, each with a line saying how to read it."""
    from drill.reports.charts import to_svg
    from drill.reports.stats_charts import draw_calendar, draw_forecast, draw_retention, draw_topics

    per_day, target = report["heatmap"], report["target_retention"]
    busy_days = sum(1 for d in per_day if d["reviews"])
    in_window = sum(d["reviews"] for d in per_day)
    target_note = (
        f" The dashed line is the retention FSRS aims for ({target:.0%})." if target else ""
    )
    weekly, coming = report["weekly_retention"], report["forecast"]
    return [
        _section(
            f"Reviews per day, last {HEATMAP_WEEKS} weeks",
            to_svg(draw_calendar, "calendar", "reviews per day as a calendar", per_day),
            f"{counted(in_window, 'review')} on {busy_days:,} of {len(per_day):,} days, cram"
            " included; the darker the square, the busier the day.",
        ),
        _section(
            "True retention per week",
            to_svg(draw_retention, "retention", "true retention per week", weekly, target),
            "The first review of a question each day, when its previous review was on an"
            " earlier day; Again fails, Hard, Good and Easy pass; cram is left out. Mature:"
            f" the previous review was at least {MATURE_DAYS} days before.{target_note}",
        ),
        _section(
            f"Due in the next {len(coming)} days",
            to_svg(draw_forecast, "forecast", "cards due on each coming day", coming),
            "Today's bar holds every card due by the end of today, overdue ones included.",
        ),
        _section(
            "Mastery by topic",
            to_svg(draw_topics, "topics", "recall now and accuracy per topic", report["topics"]),
            "Recall now: the mean chance FSRS gives of remembering each question now."
            " Accuracy: the share of answers that were right. Questions reviewed, in brackets.",
        ),
    ]


def interview_section(figures: Mapping[str, Any]) -> str:
    """The interview date: the reviews due each day before it, and per topic the recall
    predicted for its morning without further reviews."""
    from drill.reports.charts import to_svg
    from drill.reports.stats_charts import draw_forecast

    left = figures["days_left"]
    when = "today" if left == 0 else "passed" if left < 0 else f"in {left} day{'s' * (left != 1)}"
    parts = []
    workload = figures["workload"]
    if workload:
        busiest = max(workload, key=lambda d: d["due"])
        parts.append(
            to_svg(draw_forecast, "interview-workload", "cards due each day before the interview",
                   workload)
        )  # fmt: skip
        parts.append(
            f'<p class="note">{reviews_due_before(figures["reviews_before"])}; the busiest'
            f" day {_esc(busiest['date'])} ({busiest['due']:,}).</p>"
        )
    if figures["topics"]:
        header = [("text", "topic"), ("num", "questions"), ("num", "recall on the day")]
        rows = [
            [_esc(t["topic"]), f"{t['questions']:,}", percent(t["recall"])]
            for t in figures["topics"]
        ]
        parts.append(_table(header, rows))
    if "plan" in figures:  # the days to it simulated (`kvdrill plan`)
        from drill.reports.plan_text import summary_lines

        parts += [f'<p class="note">{_esc(line)}</p>' for line in summary_lines(figures["plan"])]
    return _section(
        f"Interview on {_esc(figures['date'])}, {when}",
        "\n".join(parts),
        "Recall on the day: the mean chance FSRS gives of remembering each question of the"
        " topic that morning if you stopped reviewing now; the reviews due before it raise it.",
    )


def table_sections(report: Mapping[str, Any]) -> list[str]:
    """The weakest questions, the most frequent mistakes and the key points missed most,
    where there are any."""
    sections = []
    if report["weakest"]:
        note = "Weakest first, by the mean of recall now and accuracy."
        if any(w.get("learning") for w in report["weakest"]):
            note += (" * Still learning (failed, or new): recall a day after its last answer,"
                     " since right after one it is near 100%.")  # fmt: skip
        sections.append(_section("Weakest questions", weakest_table(report["weakest"]), note))
    if report["misconceptions"]:
        table = mistakes_table(report["misconceptions"])
        sections.append(_section("Most frequent mistakes", table))
    if report.get("missed_points"):
        note = "In how many of the ticked answers to that question the point was left unticked."
        table = missed_points_table(report["missed_points"])
        sections.append(_section("Key points missed most", table, note))
    if report.get("mock_interviews"):
        note = "The latest, oldest first; <code>kvdrill interview list</code> lists them all."
        table = mock_interviews_table(report["mock_interviews"])
        sections.append(_section("Mock interviews", table, note))
    return sections


def render_report(report: Mapping[str, Any]) -> str:
    """The page for `collect_report`'s object."""
    days = report["days"]
    empty = "" if report["totals"]["reviews"] else _NO_REVIEWS
    out = [
        *page_head(TITLE, _CSS),
        f"<header><h1>{TITLE}</h1>",
        f'<p class="meta">As of {report["local_now"]} ({_esc(str(days["zone"]))});'
        f" days begin at {days['rollover_hour']:02d}:00.</p></header>",
        headline(report),
        *([empty] if empty else []),
        *([interview_section(report["interview"])] if report.get("interview") else []),
        *chart_sections(report),
        *table_sections(report),
        "</body>",
        "</html>",
    ]
    return "\n".join(out) + "\n"
