"""SQLite state through sqlite-utils: one `open_db()`, append-only migrations.

Tables
- cards:    FSRS state per question id (one row per question ever scheduled).
- reviews:  one row per answer, never updated; the history the schedule replays from.
- sessions: one row per quiz session.
- engine_runs: stored `kvdrill engine run` results (JSON).

Times are ISO-8601 strings in UTC (`2026-11-29T21:30:00.000000+00:00`), so they
sort as text and SQLite's date functions read them.

A database is refused untouched when it is not SQLite at all, or when its
`user_version` is newer than this code knows (written by a newer kvdrill).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

from drill.errors import StoreError
from drill.paths import default_db_path

# Bump with every migration appended below; it is written to PRAGMA user_version.
SCHEMA_VERSION = 2
BUSY_TIMEOUT_MS = 10_000
_SQLITE_MAGIC = b"SQLite format 3\x00"

migrations = Migrations("kvdrill")


@migrations()
def m001_initial(db: Database) -> None:
    db["cards"].create(
        {
            "question_id": str,
            "state": int,  # fsrs.State: 1 learning, 2 review, 3 relearning
            "step": int,
            "stability": float,
            "difficulty": float,
            "due": str,
            "last_review": str,
            "reps": int,
            "lapses": int,
        },
        pk="question_id",
        not_null={"question_id", "state", "due", "reps", "lapses"},
        if_not_exists=True,
    )
    db["reviews"].create(
        {
            "id": str,  # uuid4
            "question_id": str,
            "reviewed_at": str,
            "rating": int,  # 1 again, 2 hard, 3 good, 4 easy
            "correct": int,  # 1/0, NULL for self-rated concept answers
            "answer": str,
            "seed": int,
            "params": str,  # JSON of the drawn params
            "expected": float,
            "unit": str,
            "misconception": str,
            "duration_ms": int,
            "session_id": str,
            "cram": int,  # 1: practice only, did not change the schedule
        },
        pk="id",
        not_null={"id", "question_id", "reviewed_at", "rating"},
        if_not_exists=True,
    )
    db["sessions"].create(
        {
            "id": str,
            "started_at": str,
            "ended_at": str,
            "mode": str,  # "review" or "cram"
            "answered": int,
            "correct": int,
        },
        pk="id",
        not_null={"id", "started_at"},
        if_not_exists=True,
    )
    db["engine_runs"].create(
        {
            "id": int,
            "created_at": str,
            "device": str,
            "torch_version": str,
            "config": str,  # JSON
            "result": str,  # JSON, the same object `engine run --json` prints
        },
        pk="id",
        not_null={"created_at", "result"},
        if_not_exists=True,
    )
    db["reviews"].create_index(["reviewed_at"], if_not_exists=True)
    db["reviews"].create_index(["question_id", "reviewed_at"], if_not_exists=True)
    db["cards"].create_index(["due"], if_not_exists=True)


@migrations()
def m002_covering_review_indexes(db: Database) -> None:
    """Indexes that answer the history queries without touching the table rows.

    With a million reviews, `kvdrill stats`, true retention and the quiz's per-question
    counts read only these: the time-ordered one for day ranges (and the replay's time
    order), the per-question one for per-question counts and "was it reviewed before"
    probes. They replace m001's two narrower indexes, which are
    their prefixes. The partial index counts misconceptions (a few percent of rows).
    """
    db.execute("drop index if exists idx_reviews_reviewed_at")
    db.execute("drop index if exists idx_reviews_question_id_reviewed_at")
    db["reviews"].create_index(
        ["reviewed_at", "question_id", "rating", "correct", "cram"],
        index_name="idx_reviews_time_cover",
        if_not_exists=True,
    )
    db["reviews"].create_index(
        ["question_id", "reviewed_at", "rating", "correct", "cram"],
        index_name="idx_reviews_question_cover",
        if_not_exists=True,
    )
    db.execute(
        "create index if not exists idx_reviews_misconception"
        " on reviews (misconception, reviewed_at) where misconception is not null"
    )


def _check_header(path: Path) -> None:
    try:
        with path.open("rb") as fh:
            head = fh.read(len(_SQLITE_MAGIC))
    except OSError as exc:
        raise StoreError(f"cannot read database {path}: {exc.strerror}") from None
    if head and head != _SQLITE_MAGIC:
        raise StoreError(f"{path} is not a kvdrill database (not SQLite, or corrupt); left untouched")


def open_db(path: Path | str | None = None) -> Database:
    """Open (creating if needed) the kvdrill database and bring its schema up to date.

    Raises StoreError for a file that is not SQLite or comes from a newer kvdrill;
    such files are not modified.
    """
    path = Path(path) if path is not None else default_db_path()
    if path.exists():
        _check_header(path)
    else:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create folder for database {path}: {exc.strerror}") from None
    try:
        conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            conn.close()
            raise StoreError(
                f"{path} was written by a newer kvdrill (schema {version}, this one knows "
                f"{SCHEMA_VERSION}); upgrade kvdrill. The file was left untouched."
            )
        db = Database(conn)
        if version < SCHEMA_VERSION:
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                db.enable_wal()
            # BEGIN IMMEDIATE takes the write lock first, so two processes
            # opening a new database do not both apply the same migration.
            conn.execute("BEGIN IMMEDIATE")
            try:
                migrations.apply(db)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return db
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"cannot open database {path}: {exc}") from None
