"""Quiz persistence: card rows, review rows and session rows in the kvdrill database.

Every write that belongs to one answer happens in one `BEGIN IMMEDIATE`
transaction: the review row, the card's new schedule (computed from the card
row as it is *inside* the transaction, so a second session answering the same
card at the same time is applied on top, not overwritten) and the session's
counters. IMMEDIATE takes the write lock up front; a deferred BEGIN that later
upgrades to a write can fail at once with "database is locked" instead of
waiting out the busy timeout.

Each quiz action that changes the database (an answer, a suspend, a bury)
returns a `CardChange` holding the card row exactly as it was before; `undo`
takes the action back in one transaction, and refuses when another session
has changed the card since.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from drill.errors import CardError, StoreError
from drill.storage.review_record import FIELDS, Review

# the schedule: what FSRS sets and a replay of the history rebuilds
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
# what holds a card back, set by the user or the leech rule (migration m005); an
# answer leaves these as they are
HOLD_COLUMNS = ("suspended_at", "buried_until", "leech_at")


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


def refresh_memory_states(db, scheduler) -> int:
    """Recompute every reviewed card's stability and difficulty by replaying its non-cram
    history with `scheduler`'s parameters; returns the cards updated. State, due date
    and counts stay as they are (as Anki keeps due dates when FSRS's parameters
    change): the next review schedules from the new memory state. Runs inside the
    caller's transaction."""
    from drill.srs import replay_rows

    history = db.execute(
        "select question_id, reviewed_at, rating from reviews"
        " where not coalesce(cram, 0) order by reviewed_at, id"
    )
    cards = replay_rows(scheduler, history)
    db.conn.executemany(
        "update cards set stability = ?, difficulty = ? where question_id = ?",
        [(card["stability"], card["difficulty"], qid) for qid, card in cards.items()],
    )
    return len(cards)


def load_cards(db) -> dict[str, dict[str, Any]]:
    """Every card row by question id (including questions no longer in any bank)."""
    return {row["question_id"]: row for row in db.query("select * from cards")}


def due_counts(db, bounds: Sequence[str], exclude: str) -> list[int]:
    """Cards due in each span [bounds[i], bounds[i + 1]) (ISO times in order), suspended
    cards and `exclude` not counted; one query over the due index."""
    from bisect import bisect_right

    counts = [0] * (len(bounds) - 1)
    rows = db.execute(
        "select due from cards where due >= ? and due < ? and suspended_at is null"
        " and question_id != ?",
        [bounds[0], bounds[-1], exclude],
    )
    for (due,) in rows:
        counts[bisect_right(bounds, due) - 1] += 1
    return counts


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


def performance_by_question(
    db, question_ids: Sequence[str] | None = None
) -> dict[str, Performance]:
    """Each answered question's record; of `question_ids` only when given (their reviews
    found through the question index, the others' never read)."""
    wrong = "sum(case when correct = 0 or rating = 1 then 1 else 0 end)"
    if question_ids is None:
        rows = db.execute(f"select question_id, count(*), {wrong} from reviews group by 1")
    else:
        rows = db.execute(
            f"select j.value, count(*), {wrong} from json_each(?) j"
            " cross join reviews r on r.question_id = j.value group by 1",
            [json.dumps(list(question_ids))],
        )
    return {qid: Performance(count, wrong_count) for qid, count, wrong_count in rows}


def start_session(db, session_id: str, started_at: str, mode: str) -> None:
    """Open the session row; burials that have ended by `started_at` are lifted, and a
    question buried before its first answer is new again (its placeholder row goes)."""
    with write_transaction(db):
        db.execute(
            "insert into sessions (id, started_at, mode, answered, correct) values (?, ?, ?, 0, 0)",
            [session_id, started_at, mode],
        )
        # one pass over the cards (no index holds burials), then writes by key, if any
        ended = db.execute(
            "select question_id from cards where buried_until <= ?", [started_at]
        ).fetchall()
        if not ended:
            return
        ids = json.dumps([qid for (qid,) in ended])
        db.execute(
            "delete from cards where question_id in (select value from json_each(?))"
            " and reps = 0 and suspended_at is null",
            [ids],
        )
        db.execute(
            "update cards set buried_until = null"
            " where question_id in (select value from json_each(?))",
            [ids],
        )


def end_session(db, session_id: str, ended_at: str) -> None:
    with write_transaction(db):
        db.execute("update sessions set ended_at = ? where id = ?", [ended_at, session_id])


@dataclass(frozen=True)
class CardChange:
    """What one quiz action did, kept so that `undo` can take it back exactly."""

    question_id: str
    before: dict[str, Any] | None  # the card row as it was; None: the question had none
    after: dict[str, Any] | None  # the row as the action left it; None: card not touched
    review_id: str | None = None  # the review the action stored
    session_id: str | None = None
    counted_correct: bool = False  # how the session row counted that review
    leech: bool = False  # the answer made the card a leech, and suspended it


def record_answer(
    db,
    review: Review,
    reschedule: Callable[[dict[str, Any] | None], dict[str, Any]] | None,
    *,
    counted_correct: bool,
    leech_threshold: int = 0,
    also: Callable[[], None] | None = None,
) -> CardChange:
    """Store one answer and its consequences atomically; return what changed.

    `reschedule` gets the card row as stored now (None for a card never
    scheduled) and returns its new schedule (CARD_COLUMNS); None (cram) leaves
    the card alone. With a `leech_threshold`, a lapse that brings the card's
    lapses to it (drill.srs.becomes_leech) flags the card a leech and suspends
    it. The review's session row counts the answer, and `counted_correct` says
    whether it counts as right. `also` writes what else belongs to the answer (an
    interview's report row), in the same transaction.
    """
    try:
        return _record_answer(db, review, reschedule, counted_correct, leech_threshold, also)
    except sqlite3.Error as exc:  # a full disk, a file gone read-only or damaged
        raise _store_error(db, exc) from None


def _store_error(db, exc: sqlite3.Error) -> StoreError:
    from drill.storage.database import describe_sqlite_error

    return StoreError(describe_sqlite_error(exc, database_path(db) or Path(":memory:")))


def _record_answer(db, review, reschedule, counted_correct: bool, leech_threshold: int, also):
    from drill.srs import becomes_leech

    qid = review.question_id
    after = None
    leech = False
    with write_transaction(db):
        before = get_card(db, qid)
        if reschedule is not None:
            schedule = reschedule(before)
            updates = ", ".join(f"{c} = excluded.{c}" for c in CARD_COLUMNS[1:])
            db.execute(
                f"insert into cards ({', '.join(CARD_COLUMNS)}) "
                f"values ({', '.join('?' for _ in CARD_COLUMNS)}) "
                f"on conflict (question_id) do update set {updates}",
                [schedule[c] for c in CARD_COLUMNS],
            )
            lapses_before = before["lapses"] if before else 0
            if becomes_leech(lapses_before, schedule["lapses"], leech_threshold):
                db.execute(
                    "update cards set leech_at = ?, suspended_at = coalesce(suspended_at, ?)"
                    " where question_id = ?",
                    [review.reviewed_at, review.reviewed_at, qid],
                )
                leech = True
            after = get_card(db, qid)
        db.execute(
            f"insert into reviews ({', '.join(FIELDS)}) "
            f"values ({', '.join('?' for _ in FIELDS)})",
            review.values(),
        )
        db.execute(
            "update sessions set answered = answered + 1, correct = correct + ? where id = ?",
            [1 if counted_correct else 0, review.session_id],
        )
        if also is not None:
            also()
    return CardChange(qid, before, after, review.id, review.session_id, counted_correct, leech)


def hold_card(
    db, question_id: str, now: datetime, *, suspend: bool = False, bury_until: datetime | None = None
) -> CardChange:
    """Suspend the card, or bury it until `bury_until`; return what changed.

    A question never answered gets a placeholder card row (reps 0) to carry the hold.
    """
    from drill.srs import iso, new_card_row

    try:
        with write_transaction(db):
            before = get_card(db, question_id)
            if before is None:
                _put_row(db, {**new_card_row(question_id, now), **dict.fromkeys(HOLD_COLUMNS)})
            if suspend:
                db.execute(
                    "update cards set suspended_at = coalesce(suspended_at, ?) where question_id = ?",
                    [iso(now), question_id],
                )
            if bury_until is not None:
                db.execute(
                    "update cards set buried_until = ? where question_id = ?",
                    [iso(bury_until), question_id],
                )
            after = get_card(db, question_id)
    except sqlite3.Error as exc:
        raise _store_error(db, exc) from None
    return CardChange(question_id, before, after)


def undo(db, change: CardChange) -> None:
    """Take back one action in one transaction: the review row it stored goes, the
    card row is put back exactly as it was (deleted if there was none), and the
    session's counters drop the answer.

    Raises CardError, changing nothing, when the card is no longer as the action
    left it (another session answered it since) or its review is already gone.
    """
    try:
        with write_transaction(db):
            if change.after is not None:
                if get_card(db, change.question_id) != change.after:
                    raise CardError(
                        f"{change.question_id} has changed since (answered in another "
                        "session?); nothing was undone"
                    )
                if change.before is None:
                    db.execute("delete from cards where question_id = ?", [change.question_id])
                else:
                    _put_row(db, change.before)
            if change.review_id is not None:
                gone = db.execute("delete from reviews where id = ?", [change.review_id])
                if gone.rowcount != 1:
                    raise CardError("that answer is no longer in the database; nothing was undone")
                db.execute(
                    "update sessions set answered = answered - 1, correct = correct - ?"
                    " where id = ?",
                    [1 if change.counted_correct else 0, change.session_id],
                )
    except sqlite3.Error as exc:
        raise _store_error(db, exc) from None


def _put_row(db, row: dict[str, Any]) -> None:
    """Write a whole card row as given, replacing the stored one."""
    columns = list(row)
    db.execute(
        f"insert or replace into cards ({', '.join(columns)}) "
        f"values ({', '.join('?' for _ in columns)})",
        [row[c] for c in columns],
    )


def held_cards(db, now_iso: str) -> list[dict[str, Any]]:
    """Cards suspended, or buried past `now_iso`, by question id."""
    return list(
        db.query(
            "select * from cards where suspended_at is not null or buried_until > ?"
            " order by question_id",
            [now_iso],
        )
    )


def release_cards(db, question_ids: list[str], now_iso: str) -> list[dict[str, Any]]:
    """Unsuspend and unbury these cards in one transaction; return their rows as they
    were. A question never answered is new again (its placeholder row goes). Raises
    CardError, changing nothing, when one of them is neither suspended nor buried."""
    with write_transaction(db):
        rows = []
        for qid in question_ids:
            row = get_card(db, qid)
            if row is None or not (
                row["suspended_at"] or (row["buried_until"] or "") > now_iso
            ):
                raise CardError(f"{qid} is neither suspended nor buried; nothing was changed")
            rows.append(row)
        for row in rows:
            if row["reps"] == 0:
                db.execute("delete from cards where question_id = ?", [row["question_id"]])
            else:
                db.execute(
                    "update cards set suspended_at = null, buried_until = null"
                    " where question_id = ?",
                    [row["question_id"]],
                )
    return rows


def last_ratings(db, question_ids: list[str]) -> dict[str, int]:
    """The rating of each question's latest scheduled (not cram) review."""
    import json

    sql = (
        "select question_id, (select rating from reviews r where r.question_id = q.value"
        " and r.cram = 0 order by r.reviewed_at desc, r.rowid desc limit 1)"
        " from (select value, value as question_id from json_each(?)) q"
    )
    rows = db.execute(sql, [json.dumps(question_ids)]).fetchall()
    return {qid: rating for qid, rating in rows if rating is not None}


def database_path(db) -> Path | None:
    """The file behind the connection (None for an in-memory database)."""
    for _seq, name, file in db.conn.execute("PRAGMA database_list"):
        if name == "main" and file:
            return Path(file)
    return None


def unsaved_path(database: Path | None) -> Path:
    """The unsaved-answers file of the database at `database`: `NAME-unsaved.jsonl` beside
    it, keyed by its whole file name, so `work.db` and `work.sqlite` never share one (an
    in-memory database: `kvdrill.db-unsaved.jsonl` in the working folder)."""
    if database is None:
        return Path.cwd() / "kvdrill.db-unsaved.jsonl"
    return database.with_name(f"{database.name}-unsaved.jsonl")


def rescue_review(db, review: Review) -> Path:
    """Append a review the database would not take to its unsaved-answers file
    (`unsaved_path`); return that file.

    The line is an export record, so `kvdrill import FILE` adds it once the database
    can be written again (the quiz and the interview merge the file when they start).
    The line is appended under an exclusive lock on the file, which a merge holds until
    it has removed the file: a line is never written into a file already merged and
    removed. Raises OSError when that file cannot be written either.
    """
    from drill.storage.review_record import ENCODER

    target = unsaved_path(database_path(db))
    line = ENCODER.encode(review.record())
    for _attempt in range(10):
        with target.open("a", encoding="utf-8") as out:
            if not lock_file(out, target):
                continue  # merged and removed while we waited: write a new one
            out.write(line + "\n")
            out.flush()
            os.fsync(out.fileno())
        return target
    raise OSError(f"{target} was removed each time it was opened")


def lock_file(handle, path: Path) -> bool:
    """Lock the open file `handle` (held until it is closed); False when `path` no longer
    names that file (removed or replaced while we waited for the lock). Without file locks
    (Windows, a file system that has none) it only checks."""
    try:
        import fcntl
    except ImportError:
        fcntl = None  # type: ignore[assignment]
    if fcntl is not None:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        except OSError:
            pass  # no locks here: the answer matters more than the lock
    held = os.fstat(handle.fileno())
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return False
    return held.st_nlink > 0 and (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino)


def move_dues(db, new_due: Callable[[str, datetime, datetime | None], datetime]) -> int:
    """Set every card's due to `new_due(question_id, due, last_review)` in one transaction;
    returns how many changed."""
    from drill.srs import iso, parse_iso

    with write_transaction(db):
        rows = db.execute("select question_id, due, last_review from cards").fetchall()
        changes = []
        for qid, due_text, last_text in rows:
            due = parse_iso(due_text)
            moved = new_due(qid, due, parse_iso(last_text) if last_text else None)
            if moved != due:
                changes.append((iso(moved), qid))
        db.conn.executemany("update cards set due = ? where question_id = ?", changes)
    return len(changes)
