"""Answers the database refuses: a busy write tried again, an answer still refused kept in
the unsaved-answers file beside the database (the session goes on), and that file merged
back by the next quiz or interview."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from drill.errors import HistoryError, KvdrillError, StoreError
from drill.storage.review_record import Review
from drill.storage.reviews import (
    CardChange,
    database_path,
    lock_file,
    record_answer,
    rescue_review,
    unsaved_path,
)
from drill.study.session_text import plural
from drill.study.signals import deferred_signals, signal_pending

T = TypeVar("T")


# attempts beyond the first at a write the database refuses as busy; each waits out
# SQLite's busy timeout (drill.storage.database.BUSY_TIMEOUT_MS, 10 s) for the lock
BUSY_RETRIES = 3
_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_READONLY, _SQLITE_FULL = 5, 6, 8, 13


def _sqlite_code(exc: BaseException) -> tuple[int | None, str]:
    """The primary SQLite result code behind a StoreError (None when unknown) and the
    SQLite message."""
    cause = exc.__context__
    if not isinstance(cause, sqlite3.Error):
        return None, ""
    code = getattr(cause, "sqlite_errorcode", None)  # Python 3.11+
    return (code & 0xFF if isinstance(code, int) else None), str(cause).lower()


def is_busy(exc: BaseException) -> bool:
    """Whether the database refused a write because another connection held its lock."""
    code, text = _sqlite_code(exc)
    if code is not None:
        return code in (_SQLITE_BUSY, _SQLITE_LOCKED)
    return "database is locked" in text or "database is busy" in text


def why_not_saved(exc: BaseException) -> str:
    """Why the database refused a write, in a few words."""
    code, text = _sqlite_code(exc)
    if is_busy(exc):
        return "the database stayed busy (another kvdrill was writing to it)"
    if code == _SQLITE_FULL or (code is None and "disk is full" in text):
        return "the disk is full"
    if code == _SQLITE_READONLY or (code is None and "readonly" in text):
        return "the database is read-only"
    return str(exc).rstrip(".")


@dataclass(frozen=True)
class Stored:
    """What became of one answer: `change` when the database took it; else the lines that
    say where it is kept, and `kept_in` the file (None: only printed)."""

    change: CardChange | None
    lines: tuple[str, ...] = ()
    kept_in: Path | None = None


@dataclass
class AnswerKeeper:
    """Writes a session's answers: a write the database refuses as busy is tried again
    (BUSY_RETRIES times, saying once that it waits); an answer it still refuses is
    appended to the unsaved-answers file beside it, or when even that fails, printed to
    keep. Either way the session goes on."""

    db: Any
    tell: Callable[[str], None]  # one line to show while waiting
    kept: int = 0  # answers in the unsaved-answers file
    kept_in: Path | None = None
    shown: int = 0  # answers only printed

    def write(self, action: Callable[[], T]) -> T:
        """`action()` (one write transaction), tried again while the database is busy;
        a signal that comes meanwhile waits for its end (and ends the waiting)."""
        attempt = 0
        while True:
            try:
                with deferred_signals():
                    return action()
            except StoreError as exc:
                if not is_busy(exc) or attempt >= BUSY_RETRIES or signal_pending():
                    raise
            if attempt == 0:
                try:
                    self.tell("The database is busy: another kvdrill is writing to it. Waiting...")
                except OSError:
                    pass  # the answer matters more than the news
            attempt += 1

    def record(
        self, review: Review, reschedule, *, counted_correct: bool, leech_threshold: int = 0,
        also: Callable[[], None] | None = None,
    ) -> Stored:  # fmt: skip
        """Store one answer (drill.storage.reviews.record_answer, `also` in its transaction),
        or keep it outside the database (the review alone)."""
        try:
            change = self.write(lambda: record_answer(
                self.db, review, reschedule, counted_correct=counted_correct,
                leech_threshold=leech_threshold, also=also,
            ))  # fmt: skip
        except StoreError as exc:
            with deferred_signals():
                return self.rescue(review, why_not_saved(exc))
        return Stored(change)

    def rescue(self, review: Review, why: str) -> Stored:
        try:
            path = rescue_review(self.db, review)
        except OSError:
            from drill.storage.review_record import ENCODER

            self.shown += 1
            return Stored(None, (
                "Your answer could not be saved, nor written beside the database. Keep this",
                "line in a file and add it later with `kvdrill import FILE`:",
                ENCODER.encode(review.record()),
            ))  # fmt: skip
        self.kept += 1
        self.kept_in = path
        return Stored(None, (
            f"Not saved to the database: {why}. Your answer is kept in {path}; the next "
            "`kvdrill quiz` adds it.",
        ), path)  # fmt: skip


def merge_unsaved(db, scheduler, say: Callable[[str], None], warn: Callable[[str], None]) -> int:
    """Merge the answers kept beside the database while it could not be written: its
    unsaved-answers file (drill.storage.reviews.unsaved_path) and, for a database named
    `STEM.db`, the older `STEM-unsaved.jsonl`. Each is imported by review id as
    `kvdrill import` does (importing twice adds nothing) and removed once the import has
    committed, under the lock the rescue writes under. A file that cannot be merged (a
    bad line, a database still busy) is left as it is, with a one-line warning. Returns
    the answers added."""
    where = database_path(db)
    if where is None:
        return 0
    files = [unsaved_path(where)]
    if where.suffix == ".db":
        files.append(where.with_name(f"{where.stem}-unsaved.jsonl"))
    added = 0
    for path in files:
        count = _merge_file(db, path, scheduler, warn)
        if count:
            say(f"Merged {plural(count, 'answer')} saved while the database could not be "
                f"written (from {path}).")  # fmt: skip
        added += count
    return added


def _placed(db, scheduler):
    """(scheduler, place) for a merge: a fuzzing scheduler's random fuzz replaced by the
    load balancer, so the merged answers' due dates are the ones the quiz would give."""
    if not scheduler.enable_fuzzing:
        return scheduler, None
    from drill.srs import make_scheduler
    from drill.study.load_balance import load_balancer
    from drill.study.settings import read_settings

    exact = make_scheduler(scheduler.desired_retention, fuzz=False, parameters=scheduler.parameters)
    settings = read_settings(db)
    return exact, load_balancer(settings.easy_days, settings.day_clock(), exact).place_rebuilt


def _merge_file(db, path: Path, scheduler, warn: Callable[[str], None]) -> int:
    if not path.is_file():  # none (the usual case); a folder or a device is no such file
        return 0
    try:
        handle = path.open("rb")
    except OSError as exc:
        warn(f"cannot read {path} ({exc.strerror}); the answers kept in it were not merged")
        return 0
    with handle:
        if not lock_file(handle, path):
            return 0  # another kvdrill merged it meanwhile
        from drill.storage.history_in import import_history

        scheduler, place = _placed(db, scheduler)
        try:
            # only its questions' cards: the others keep their due dates (fuzz, caps)
            result = import_history(
                db, path, scheduler, fmt="jsonl", only_its_questions=True, place=place
            )
        except HistoryError as exc:
            warn(f"{exc}; the answers kept in that file were not merged, and it is left as "
                 "it is (mend that line, then `kvdrill import` the file)")  # fmt: skip
            return 0
        except (KvdrillError, sqlite3.Error) as exc:
            warn(f"the answers kept in {path} were not merged yet: "
                 f"{_merge_failure(exc, database_path(db) or path)}; "
                 "they stay there")  # fmt: skip
            return 0
        try:
            path.unlink()
        except OSError as exc:
            warn(f"merged {path} but cannot remove it ({exc.strerror}); merging it again "
                 "adds nothing")  # fmt: skip
    return result.added


def _merge_failure(exc: BaseException, path: Path) -> str:
    if isinstance(exc, sqlite3.Error):
        from drill.storage.database import describe_sqlite_error

        return describe_sqlite_error(exc, path)
    return why_not_saved(exc)
