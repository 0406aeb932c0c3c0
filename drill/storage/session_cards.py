"""The cards a quiz session plans from and sums up, read in SQL for its own questions only.

A database holds the card of every question ever scheduled, those of decks not loaded
today and of questions since removed included. A session reads only what it uses, and
only for its questions (passed as one JSON array, walked in bank order, each id looked
up by the cards' primary key): the due cards it can take, ordered and limited in SQL;
the cards in learning that come back later; the questions without a card; and for the
summary, counts and the next due time as aggregates. So its start costs the same at a
thousand cards as at a hundred thousand.

Times compare as text: the database holds one text form of a time (drill.srs.iso: UTC,
microseconds), whose order is the order of the times. A card is held when it is
suspended or buried until after now (drill.study.plan.is_held).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# the session's questions, in bank order (key: the position), each with its card; the
# cross join keeps SQLite walking the list and probing cards, never scanning all cards
_CARDS_OF_IDS = "from json_each(:ids) j cross join cards c on c.question_id = j.value"
_NOT_HELD = (
    "(c.suspended_at is null or c.suspended_at = '') and coalesce(c.buried_until, '') <= :now"
)
_LEARNING = "c.state in (1, 3)"  # fsrs's Learning and Relearning (drill.study.plan)


def _ids(question_ids: Sequence[str]) -> str:
    return json.dumps(list(question_ids))


def _rows(db, sql: str, params: dict[str, Any]) -> dict[str, dict[str, Any]]:
    cursor = db.execute(sql, params)
    names = [column[0] for column in cursor.description]
    return {row[0]: dict(zip(names, row, strict=True)) for row in cursor}


def due_cards(
    db, question_ids: Sequence[str], now_iso: str, limit: int
) -> dict[str, dict[str, Any]]:
    """The card rows (question id, state, due) of at most `limit` of `question_ids` due by
    `now_iso` and not held, in the order a session takes them: learning and relearning
    first, then the most overdue, then bank order."""
    sql = (
        f"select c.question_id, c.state, c.due {_CARDS_OF_IDS}"
        f" where c.due <= :now and {_NOT_HELD}"
        f" order by not {_LEARNING}, c.due, j.key limit :limit"
    )
    return _rows(db, sql, {"ids": _ids(question_ids), "now": now_iso, "limit": limit})


def learning_cards_later(
    db, question_ids: Sequence[str], now_iso: str
) -> dict[str, dict[str, Any]]:
    """The card rows (question id, state, due) of `question_ids` in learning or relearning,
    not held, due after `now_iso`: they join the session when due."""
    sql = (
        f"select c.question_id, c.state, c.due {_CARDS_OF_IDS}"
        f" where {_LEARNING} and c.due > :now and {_NOT_HELD} order by j.key"
    )
    return _rows(db, sql, {"ids": _ids(question_ids), "now": now_iso})


def without_card(db, question_ids: Sequence[str]) -> set[str]:
    """The questions of `question_ids` that have no card: never scheduled."""
    sql = (
        "select j.value from json_each(:ids) j"
        " where not exists (select 1 from cards c where c.question_id = j.value)"
    )
    return {qid for (qid,) in db.execute(sql, {"ids": _ids(question_ids)})}


def cards_of(db, question_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The whole card rows of `question_ids` (those that have one), by question id."""
    return _rows(db, f"select c.* {_CARDS_OF_IDS} order by j.key", {"ids": _ids(question_ids)})


@dataclass(frozen=True)
class CardsLeft:
    """What a session's questions hold at a moment: the summary's figures."""

    due_now: int  # cards due by then, not held
    next_due: str | None  # the earliest due time after then, of a card not held
    due_within_day: int  # cards due after then and within a day of it, not held
    without_card: int  # questions never scheduled
    learning: tuple[tuple[str, str], ...]  # (due, question id) of each card in learning


def cards_left(
    db, question_ids: Sequence[str], now_iso: str, day_later_iso: str
) -> CardsLeft:
    """The summary's figures for `question_ids` at `now_iso` (`day_later_iso`: a day on)."""
    params = {"ids": _ids(question_ids), "now": now_iso, "day": day_later_iso}
    due_now, next_due, within_day = db.execute(
        "select coalesce(sum(c.due <= :now), 0), min(case when c.due > :now then c.due end),"
        f" coalesce(sum(c.due > :now and c.due <= :day), 0) {_CARDS_OF_IDS}"
        f" where {_NOT_HELD}",
        params,
    ).fetchone()
    learning = db.execute(
        f"select c.due, c.question_id {_CARDS_OF_IDS} where {_LEARNING} and {_NOT_HELD}"
        " order by c.due, c.question_id",
        params,
    ).fetchall()
    return CardsLeft(
        due_now, next_due, within_day, len(without_card(db, question_ids)), tuple(learning)
    )
