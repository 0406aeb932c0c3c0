"""The report of a stored interview (`kvdrill interview report ID`): the rows its answers
were reported with, read back (drill.storage.interviews), into the same report a live
interview builds (drill.interview.report.assemble_report)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from drill.interview.report import QuestionRow, Report, assemble_report
from drill.srs import parse_iso


def stored_report(interview: Mapping[str, Any], answers: Sequence[Mapping[str, Any]]) -> Report:
    """`interview` and `answers` as drill.storage.interviews.stored_interview reads them.
    An interview whose end was not saved (its process was killed) ends "cut" after its
    last answer."""
    rows = [_row(answer) for answer in answers]
    elapsed_s = interview["elapsed_s"]
    if elapsed_s is None:
        start = parse_iso(interview["started_at"])
        last = max((parse_iso(a["reviewed_at"]) for a in answers), default=start)
        elapsed_s = (last - start).total_seconds()
    return assemble_report(
        interview["seed"],
        interview["minutes"],
        interview["planned"],
        interview["ended_by"] or "cut",
        elapsed_s,
        rows,
    )


def _row(answer: Mapping[str, Any]) -> QuestionRow:
    return QuestionRow(
        number=answer["number"],
        question_id=answer["question_id"],
        topic=answer["topic"],
        kind=answer["kind"],
        follow_up_of=answer["follow_up_of"],
        asked=answer["asked"],
        answer=answer["answer"],
        verdict=answer["verdict"],
        expected=answer["expected"],
        mistake=answer["mistake"],
        missed=tuple(answer["missed"]),
        duration_ms=answer["duration_ms"] or 0,
        points=float(answer["points"]),
        rating=answer["rating"],
        details=tuple(answer["details"]),
        mistake_id=answer["misconception"] if answer["correct"] == 0 else None,
    )
