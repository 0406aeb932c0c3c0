"""Quiz persistence: card rows, review rows and session rows in the kvdrill database.

Every write that belongs to one answer happens in one `BEGIN IMMEDIATE`
transaction: the review row, the card's new schedule (computed from the card
row as it is *inside* the transaction, so a second session answering the same
card at the same time is applied on top, not overwritten) and the session's
counters. IMMEDIATE takes the write lock up front; a deferred BEGIN that later
upgrades to a write can fail at once with "database is locked" instead of
waiting out the busy timeout.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from drill.errors import StoreError
from drill.review import FIELDS, Review

CARD_COLUMNS = (
    "question_id",
    "state",
    "step",
    "stability",
    "difficulty",
    "due",
    "last_review",
    "reps",
    "lapses",
)
@contextmanager
def write_transaction(db) -> Iterator[None]:
    """One write transaction holding the database's write lock from its first statement."""
    conn = db.conn
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        raise StoreError(f"the database is busy or read-only ({exc}); try again") from None
    try:
        yield
    except BaseException:
        # KeyboardInterrupt included: a half-written answer is not kept
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")


def _row(cursor: sqlite3.Cursor, values: tuple | None) -> dict[str, Any] | None:
    if values is None:
        return None
    return {col[0]: value for col, value in zip(cursor.description, values, strict=True)}


def load_cards(db) -> dict[str, dict[str, Any]]:
    """Every card row by question id (including questions no longer in any bank)."""
    return {row["question_id"]: row for row in db.query("select * from cards")}


def get_card(db, question_id: str) -> dict[str, Any] | None:
    cursor = db.execute("select * from cards where question_id = ?", [question_id])
    return _row(cursor, cursor.fetchone())


def new_cards_since(db, since_iso: str) -> int:
    """How many cards got their first scheduled (not cram) review at or after `since_iso`."""
    # Start from today's reviews (the unary + keeps SQLite on the time index) and
    # probe each one's earlier history: milliseconds at a million reviews, where
    # grouping every question's history took a quarter of a second.
    sql = (
        "select count(*) from (select distinct +question_id as question_id from reviews"
        " where reviewed_at >= :since and cram = 0) t"
        " where not exists (select 1 from reviews p where p.question_id = t.question_id"
        " and p.reviewed_at < :since and p.cram = 0)"
    )
    return db.execute(sql, {"since": since_iso}).fetchone()[0]


@dataclass(frozen=True)
class Performance:
    """A question's answer record: all reviews, cram included."""

    reviews: int
    wrong: int  # answers graded wrong or rated Again

    @property
    def wrong_ratio(self) -> float:
        return self.wrong / self.reviews if self.reviews else 0.0


def performance_by_question(db) -> dict[str, Performance]:
    sql = (
        "select question_id, count(*) as n, "
        "sum(case when correct = 0 or rating = 1 then 1 else 0 end) as wrong "
        "from reviews group by question_id"
    )
    return {row["question_id"]: Performance(row["n"], row["wrong"]) for row in db.query(sql)}


def start_session(db, session_id: str, started_at: str, mode: str) -> None:
    with write_transaction(db):
        db.execute(
            "insert into sessions (id, started_at, mode, answered, correct) values (?, ?, ?, 0, 0)",
            [session_id, started_at, mode],
        )


def end_session(db, session_id: str, ended_at: str) -> None:
    with write_transaction(db):
        db.execute("update sessions set ended_at = ? where id = ?", [ended_at, session_id])


def record_answer(
    db,
    review: Review,
    reschedule: Callable[[dict[str, Any] | None], dict[str, Any]] | None,
    *,
    counted_correct: bool,
) -> dict[str, Any] | None:
    """Store one answer and its consequences atomically; return the card's new row.

    `reschedule` gets the card row as stored now (None for a card never
    scheduled) and returns its new row; None (cram) leaves the schedule alone.
    The review's session row counts the answer, and `counted_correct` says
    whether it counts as right.
    """
    try:
        return _record_answer(db, review, reschedule, counted_correct)
    except sqlite3.Error as exc:  # a full disk, a file gone read-only or damaged
        from drill.store import describe_sqlite_error

        raise StoreError(describe_sqlite_error(exc, database_path(db))) from None


def _record_answer(db, review, reschedule, counted_correct: bool) -> dict[str, Any] | None:
    new_row = None
    with write_transaction(db):
        if reschedule is not None:
            new_row = reschedule(get_card(db, review.question_id))
            db.execute(
                f"insert or replace into cards ({', '.join(CARD_COLUMNS)}) "
                f"values ({', '.join('?' for _ in CARD_COLUMNS)})",
                [new_row[c] for c in CARD_COLUMNS],
            )
        db.execute(
            f"insert into reviews ({', '.join(FIELDS)}) "
            f"values ({', '.join('?' for _ in FIELDS)})",
            review.values(),
        )
        db.execute(
            "update sessions set answered = answered + 1, correct = correct + ? where id = ?",
            [1 if counted_correct else 0, review.session_id],
        )
    return new_row


def database_path(db) -> Path | None:
    """The file behind the connection (None for an in-memory database)."""
    for _seq, name, file in db.conn.execute("PRAGMA database_list"):
        if name == "main" and file:
            return Path(file)
    return None


def rescue_review(db, review: Review) -> Path:
    """Append a review the database would not take to `<db stem>-unsaved.jsonl` beside it.

    The line is an export record, so `kvdrill import FILE` adds it once the database
    can be written again. Raises OSError when that file cannot be written either.
    """
    from drill.review import ENCODER

    where = database_path(db)
    folder = where.parent if where is not None else Path.cwd()
    stem = where.stem if where is not None else "kvdrill"
    target = folder / f"{stem}-unsaved.jsonl"
    line = ENCODER.encode(review.record())
    with target.open("a", encoding="utf-8") as out:
        out.write(line + "\n")
        out.flush()
        os.fsync(out.fileno())
    return target
