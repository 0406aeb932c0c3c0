"""`kvdrill plan` as text, and the few lines of it that `kvdrill stats` shows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from drill.study.screen import wrap_line


def _pct(fraction: float) -> str:
    return f"{100 * fraction:.0f} %"


def _count(value: float) -> str:
    return f"{value:.0f}" if abs(value - round(value)) < 0.05 else f"{value:.1f}"


def _topics_line(label: str, topics: Sequence[str]) -> list[str]:
    return [f"{label} ({len(topics)}): {', '.join(topics)}."] if topics else []


def summary_lines(plan: Mapping[str, Any]) -> list[str]:
    """What the plan says of the day, in a few lines (stats shows these)."""
    day = plan["by_the_day"]
    when = "the interview" if plan["interview"] else plan["target"]
    lines = [
        f"By {when} ({plan['days_left']} days) at {plan['settings']['new_per_day']} new a day:"
        f" {_count(day['seen'])} of {plan['questions']} questions seen,"
        f" {_count(day['unseen'])} never.",
        f"Predicted recall on the morning of {plan['target']}: {_pct(day['recall'])} of the"
        f" deck (unseen count as 0; {_pct(day['recall_seen'])} of those seen).",
    ]
    lines += _topics_line("Topics not started yet", plan["unseen_topics_now"])
    lines += _topics_line("Topics with questions still unseen on the day", day["unseen_topics"])
    return lines


def render_plan(plan: Mapping[str, Any], columns: int | None = None) -> str:
    """`kvdrill plan`'s text; with `columns`, its sentences wrapped between words at that
    width (the tables, indented, are kept whole), as stats wraps."""
    settings = plan["settings"]
    timing = (
        f"the median of your {settings['timed_answers']} timed answers"
        if settings["timed_answers"] >= 10
        else "a default until 10 answers are timed"
    )
    params = "your fitted FSRS parameters" if settings["parameters"] == "fitted" else (
        "FSRS's default parameters (`kvdrill optimize` fits yours)"
    )  # fmt: skip
    head = (
        f"Plan to the interview on {plan['target']}" if plan["interview"]
        else f"Plan for the {plan['days_left']} days to {plan['target']}"
    )  # fmt: skip
    lines = [
        f"{head}: {plan['questions']} questions, {plan['seen_now']} answered so far.",
        f"Simulated with {params}, {settings['new_per_day']} new a day, retention"
        f" {settings['retention']:.2f}, {settings['seconds_per_review']:g} s a review"
        f" ({timing}); mean of {plan['runs']} runs from seed {plan['seed']}.",
        "",
        "  day          reviews   new  minutes",
    ]
    for day in plan["days"]:
        lines.append(
            f"  {day['date']}  {day['reviews']:>7.1f}  {day['new']:>4.1f}  {day['minutes']:>7.1f}"
        )
    lines.append("")
    lines += summary_lines(plan)
    topics = plan["by_the_day"]["topics"]
    if topics:
        width = max(len("topic"), *(len(t["topic"]) for t in topics))
        lines += ["", f"  {'topic':<{width}}  questions  seen  recall"]
        lines += [
            f"  {t['topic']:<{width}}  {t['questions']:>9}  {_count(t['seen']):>4}"
            f"  {_pct(t['recall']):>6}"
            for t in topics
        ]
    suggestion = plan.get("suggestion")
    if suggestion is not None:
        lines += ["", _suggestion_line(suggestion)]
    if columns:
        lines = [
            piece
            for line in lines
            for piece in ([line] if line.startswith("  ") else wrap_line(line, columns))
        ]
    return "\n".join(lines) + "\n"


def _suggestion_line(s: Mapping[str, Any]) -> str:
    choice = f"{s['new_per_day']} new a day at retention {s['retention']:.2f}"
    busiest = f"busiest day {s['busiest_minutes']:g} minutes"
    if not s["within_budget"]:
        return (
            f"No plan tried fits {s['minutes']:g} minutes a day; the lightest that sees every"
            f" question is {choice} ({busiest}, predicted recall {_pct(s['recall'])})."
        )
    if not s["covers"]:
        return (
            f"Within {s['minutes']:g} minutes a day no plan tried sees every question; the"
            f" best is {choice}: {_count(s['unseen'])} never seen, {busiest}, predicted recall"
            f" {_pct(s['recall'])}."
        )
    return (
        f"Suggested for {s['minutes']:g} minutes a day: {choice} — every question seen by"
        f" {s['last_new_day']}, {busiest}, predicted recall {_pct(s['recall'])}"
        " (`kvdrill config new-per-day`, `kvdrill config retention`)."
    )
