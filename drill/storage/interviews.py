"""Mock interviews on disk: what re-renders a report, and the scores of every interview.

An interview is a session of mode "interview" (drill.storage.reviews) whose answers are
reviews; migration m007 added what a report needs beyond them: a row in `interviews`
(seed, length, questions planned, topic, focus; how it ended and the seconds it took,
once it has) and per answer a row in `interview_answers`, written in the transaction of
its review, keyed by the review's id.

A score is worked out from the reviews alone, as the report scores (drill.interview.report):
a right numeric answer 1, an explanation the share of its key points ticked, a pass or a
wrong answer 0. So interviews held before m007 have scores too, but no report to render
again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from drill.errors import StoreError
from drill.storage.reviews import write_transaction

# per review, the points the report gives it: ticks "101" -> 2/3, else the grader's verdict
POINTS_SQL = (
    "case when r.ticks is not null then"
    " (length(r.ticks) - length(replace(r.ticks, '1', ''))) * 1.0 / length(r.ticks)"
    " else coalesce(r.correct, 0) end"
)

ANSWER_COLUMNS = (
    "review_id", "session_id", "number", "follow_up_of", "topic", "kind", "asked", "verdict",
    "expected", "mistake", "missed", "points", "details",
)  # fmt: skip


def start_interview(
    db, session_id: str, *, seed: int, minutes: float, planned: int, topic: str | None,
    focus: str | None,
) -> None:  # fmt: skip
    """The interview's own row, beside the session row it belongs to."""
    with write_transaction(db):
        db.execute(
            "insert into interviews (session_id, seed, minutes, planned, topic, focus)"
            " values (?, ?, ?, ?, ?, ?)",
            [session_id, seed, minutes, planned, topic, focus],
        )


def insert_answer(db, row: Mapping[str, Any]) -> None:
    """One answer's report row (ANSWER_COLUMNS; `missed` and `details` lists), inside the
    caller's transaction: the one that stores its review."""
    values = dict(
        row, missed=json.dumps(list(row["missed"])), details=json.dumps(list(row["details"]))
    )
    db.execute(
        f"insert into interview_answers ({', '.join(ANSWER_COLUMNS)})"
        f" values ({', '.join('?' for _ in ANSWER_COLUMNS)})",
        [values[c] for c in ANSWER_COLUMNS],
    )


def end_interview(db, session_id: str, ended_by: str, elapsed_s: float) -> None:
    with write_transaction(db):
        db.execute(
            "update interviews set ended_by = ?, elapsed_s = ? where session_id = ?",
            [ended_by, elapsed_s, session_id],
        )


def interview_scores(
    db, limit: int | None = None, before: str | None = None
) -> list[dict[str, Any]]:
    """Every interview (begun by `before`, an ISO time), the newest first (the `limit`
    newest): {id, started_at, ended_at,
    answered, points, planned, minutes, seed, elapsed_s, ended_by, report}; `planned`,
    `minutes`, `seed` and `ended_by` are null for an interview held before they were kept,
    `report` says whether its report can be shown again."""
    rows = db.execute(
        "select s.id, s.started_at, s.ended_at,"
        " (select count(*) from reviews r where r.session_id = s.id),"
        f" (select coalesce(sum({POINTS_SQL}), 0) from reviews r where r.session_id = s.id),"
        " i.planned, i.minutes, i.seed, i.elapsed_s, i.ended_by, i.session_id is not null"
        " from sessions s left join interviews i on i.session_id = s.id"
        " where s.mode = 'interview' and s.started_at <= coalesce(?, s.started_at)"
        " order by s.started_at desc, s.id" + (" limit ?" if limit is not None else ""),
        [before, *([limit] if limit is not None else [])],
    ).fetchall()
    keys = ("id", "started_at", "ended_at", "answered", "points", "planned", "minutes", "seed",
            "elapsed_s", "ended_by", "report")  # fmt: skip
    found = [dict(zip(keys, row, strict=True)) for row in rows]
    for item in found:
        item["points"] = round(float(item["points"]), 4)
        item["report"] = bool(item["report"])
    return found


def find_interview(db, prefix: str) -> str:
    """The full id of the interview whose id starts with `prefix` (as `interview list`
    shows it); StoreError for none, or for more than one."""
    text = prefix.strip().lower()
    if not text:
        raise StoreError("no interview id given; `kvdrill interview list` shows them")
    ids = [
        row[0]
        for row in db.execute(
            "select id from sessions where mode = 'interview' and substr(id, 1, ?) = ?"
            " order by started_at",
            [len(text), text],
        )
    ]
    if not ids:
        raise StoreError(f"no interview {prefix!r}; `kvdrill interview list` shows them")
    if len(ids) > 1:
        shown = ", ".join(i[:12] for i in ids[:4])
        raise StoreError(f"{prefix!r} names {len(ids)} interviews ({shown}); give more of the id")
    return ids[0]


def stored_interview(db, session_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The interview's row (with its session's started_at and ended_at) and its answers in
    the order asked, each with its review's question_id, answer, duration_ms, rating,
    misconception and correct; StoreError when its report was not kept."""
    head = db.execute(
        "select i.seed, i.minutes, i.planned, i.topic, i.focus, i.ended_by, i.elapsed_s,"
        " s.started_at, s.ended_at from interviews i join sessions s on s.id = i.session_id"
        " where i.session_id = ?",
        [session_id],
    ).fetchone()
    if head is None:
        raise StoreError(
            f"interview {session_id[:8]} was held before reports were kept; its answers are"
            " in the history (`kvdrill export`), its report cannot be shown again"
        )
    keys = ("seed", "minutes", "planned", "topic", "focus", "ended_by", "elapsed_s",
            "started_at", "ended_at")  # fmt: skip
    interview = dict(zip(keys, head, strict=True))
    cursor = db.execute(
        "select a.number, a.follow_up_of, a.topic, a.kind, a.asked, a.verdict, a.expected,"
        " a.mistake, a.missed, a.points, a.details, r.question_id, r.answer, r.duration_ms,"
        " r.rating, r.misconception, r.correct, r.reviewed_at"
        " from interview_answers a join reviews r on r.id = a.review_id"
        " where a.session_id = ? order by a.number, r.reviewed_at",
        [session_id],
    )
    names = [c[0] for c in cursor.description]
    answers = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    for answer in answers:
        answer["missed"] = _text_list(answer["missed"])
        answer["details"] = _text_list(answer["details"])
    return interview, answers


def _text_list(text: str) -> Sequence[str]:
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        value = None
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise StoreError("an interview answer's stored lines are not a list of text")
    return tuple(value)
