"""SQLite state through sqlite-utils: one `open_db()`, append-only migrations.

Tables
- cards:    FSRS state per question id (one row per question ever scheduled).
- reviews:  one row per answer, never updated; the history the schedule replays from.
- sessions: one row per quiz session.
- engine_runs: stored `kvdrill engine run` results (JSON).
- settings: `kvdrill config` values that differ from their defaults.
- question_counts: per question, how many reviews and how many right, kept by a
  trigger on every insert into reviews (drill.review_counts), and on the delete
  of a review the quiz's undo takes back.

Times are ISO-8601 strings in UTC (`2026-11-29T21:30:00.000000+00:00`), so they
sort as text and SQLite's date functions read them.

A kvdrill database carries `PRAGMA application_id` = APPLICATION_ID. Databases
made before that mark existed are recognised by their migration log and get the
mark on their next write. Any other file is refused untouched: not SQLite, another
application's database, one written by a newer kvdrill, or one shorter than its
header says. Commands that only read refuse a missing or empty file rather than
create one; only a command that writes initialises a new database.

Every open, a reader's as much as a writer's, checks each page with `PRAGMA
quick_check` first (about 1.4 ms per MiB of database: 15 ms at 50,000 reviews): a
damaged database is neither read nor written, and no command prints a count read
from one. A file's size and time say nothing of damage from a failing disk, so no
earlier check is trusted. quick_check does not compare indexes with their table;
`kvdrill doctor` runs the full integrity_check, which does (a flipped byte inside a
record). A command that only reads refuses a file of an older schema rather than
upgrade it; a command that writes upgrades it after a backup.

Before a migration, and on the first write of each UTC day, the database is copied
into the backups folder beside it (see drill.storage.backup).
"""

from __future__ import annotations

import os
import sqlite3
import sys
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from drill.errors import SQLITE_READ_ERRORS as READ_ERRORS
from drill.errors import StoreError
from drill.paths import default_db_path

# sqlite-utils imports pandas whenever it is installed (the optimize extra installs it
# for fsrs's optimizer), about 0.2 s on every command that opens the database;
# kvdrill never hands it a DataFrame, so it loads with pandas hidden. The other modules
# take Database from here.
_HIDE_PANDAS = "pandas" not in sys.modules
if _HIDE_PANDAS:
    sys.modules["pandas"] = None  # type: ignore[assignment]  # import pandas: ImportError
try:
    from sqlite_utils import Database
    from sqlite_utils.migrations import Migrations
finally:
    if _HIDE_PANDAS:
        del sys.modules["pandas"]

# Bump with every migration appended below; it is written to PRAGMA user_version.
SCHEMA_VERSION = 5
# PRAGMA application_id of every kvdrill database: "kvdr" in ASCII.
APPLICATION_ID = 0x6B766472
BUSY_TIMEOUT_MS = 10_000
SQLITE_MAGIC = b"SQLite format 3\x00"
HEADER_SIZE = 100
# files kept beside a database, by the suffix of its full name: SQLite's log, shared
# memory and journal, and the quiz's answers waiting to be merged (drill.storage.reviews)
COMPANION_SUFFIXES = ("-wal", "-shm", "-journal", "-unsaved.jsonl")

migrations = Migrations("kvdrill")


@migrations()
def m001_initial(db: Database) -> None:
    db.table("cards").create(
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
    db.table("reviews").create(
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
    db.table("sessions").create(
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
    db.table("engine_runs").create(
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
    db.table("reviews").create_index(["reviewed_at"], if_not_exists=True)
    db.table("reviews").create_index(["question_id", "reviewed_at"], if_not_exists=True)
    db.table("cards").create_index(["due"], if_not_exists=True)


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
    db.table("reviews").create_index(
        ["reviewed_at", "question_id", "rating", "correct", "cram"],
        index_name="idx_reviews_time_cover",
        if_not_exists=True,
    )
    db.table("reviews").create_index(
        ["question_id", "reviewed_at", "rating", "correct", "cram"],
        index_name="idx_reviews_question_cover",
        if_not_exists=True,
    )
    db.execute(
        "create index if not exists idx_reviews_misconception"
        " on reviews (misconception, reviewed_at) where misconception is not null"
    )



@migrations()
def m003_settings(db: Database) -> None:
    """Settings that persist (`kvdrill config`): one row per setting changed from its
    default, the value as text (drill.study.settings reads it back)."""
    db.table("settings").create(
        {"key": str, "value": str}, pk="key", not_null={"value"}, if_not_exists=True
    )


@migrations()
def m004_question_counts(db: Database) -> None:
    """Per-question review counters, so progress figures read one row per question
    instead of every review: `reviews` (cram included) and `answered_right` (the grader's
    verdict, else a self-rating above Again). A trigger counts each review inserted; the
    rows are filled from the reviews already there. Reviews are never updated or deleted."""
    db.execute(
        "create table if not exists question_counts (question_id text primary key,"
        " reviews integer not null, answered_right integer not null)"
    )
    db.execute(
        "create trigger if not exists count_review after insert on reviews begin"
        " insert into question_counts (question_id, reviews, answered_right)"
        " values (new.question_id, 1, coalesce(new.correct, new.rating > 1))"
        " on conflict (question_id) do update"
        " set reviews = reviews + 1, answered_right = answered_right + excluded.answered_right;"
        " end"
    )
    db.execute(
        "insert or replace into question_counts (question_id, reviews, answered_right)"
        " select question_id, count(*), coalesce(sum(coalesce(correct, rating > 1)), 0)"
        " from reviews group by question_id"
    )


@migrations()
def m005_card_holds_and_undo(db: Database) -> None:
    """Cards the user holds back, and counters that follow an undone answer.

    Three columns on `cards`, each a time in UTC or null:
    - suspended_at: when the card was suspended (`!` in the quiz, or as a leech); a
      suspended card is never planned until `kvdrill unsuspend`;
    - buried_until: when a bury (`-` in the quiz) ends, the start of the user's next day;
    - leech_at: when its lapses reached the leech threshold.
    A question suspended or buried before its first answer gets a card row with
    reps 0. The quiz's undo deletes the review it takes back: a trigger uncounts it
    in question_counts (m004) and drops a counter that reaches no reviews."""
    have = {row[1] for row in db.execute("pragma table_info(cards)").fetchall()}
    for column in ("suspended_at", "buried_until", "leech_at"):
        if column not in have:
            db.execute(f"alter table cards add column {column} text")
    db.execute(
        "create trigger if not exists uncount_review after delete on reviews begin"
        " update question_counts set reviews = reviews - 1,"
        " answered_right = answered_right - coalesce(old.correct, old.rating > 1)"
        " where question_id = old.question_id;"
        " delete from question_counts where question_id = old.question_id and reviews <= 0;"
        " end"
    )


# ------------------------------------------------------------------ recognising a file

# the paths opened in this process, newest last: the CLI names the database in
# the message it prints for a SQLite error raised anywhere
opened_paths: list[Path] = []


def database_files(path: Path) -> list[Path]:
    """The database file and its companions (COMPANION_SUFFIXES); no command writes over these."""
    return [path] + [path.with_name(path.name + suffix) for suffix in COMPANION_SUFFIXES]


def file_size(path: Path) -> int:
    """The size of the file at `path` in bytes; 0 when it is missing or cannot be read."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


def check_header(path: Path) -> int:
    """Check the 100-byte header of an existing file; return the file's size in bytes.

    Raises StoreError for a file that is not SQLite, or one shorter than the page
    count its header records (lost or truncated pages). A zero-length file passes.
    """
    if not path.is_file():
        raise StoreError(f"{path} is not a file")
    try:
        with path.open("rb") as fh:
            head = fh.read(HEADER_SIZE)
    except OSError as exc:
        raise StoreError(f"cannot read database {path}: {exc.strerror}") from None
    if not head:
        return 0
    if len(head) < HEADER_SIZE or not head.startswith(SQLITE_MAGIC):
        raise StoreError(f"{path} is not a kvdrill database (not SQLite, or corrupt); left untouched")
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    change_counter, page_count = head[24:28], int.from_bytes(head[28:32], "big")
    size = file_size(path)
    # The header's page count is valid when its version-valid-for equals the change
    # counter. While a write-ahead log holds frames, the file may legitimately lag
    # behind (a checkpoint cut short), so the count is compared only without one.
    wal_frames = file_size(path.with_name(path.name + "-wal")) > 32
    if head[92:96] == change_counter and not wal_frames and size < page_count * page_size:
        raise StoreError(
            f"{path} is damaged: its header records {page_count} pages of {page_size} bytes but "
            f"the file holds {size} bytes. {recovery_hint(path)}"
        )
    return size


def recovery_hint(path: Path) -> str:
    return (
        f"`kvdrill doctor --db {path}` checks it; `kvdrill restore BACKUP --db {path}` brings "
        f"back a copy from {backups_folder(path)}{os.sep}"
    )


def backups_folder(path: Path) -> Path:
    from drill.storage.backup import backups_dir

    return backups_dir(path)


def _kind_of(conn: sqlite3.Connection, path: Path) -> str:
    """'kvdrill', 'unmarked' (a kvdrill database from before the application id) or 'blank'.

    Raises StoreError, without writing anything, for another application's database.
    """
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    names = [row[0] for row in conn.execute("select name from sqlite_master where type = 'table'")]
    if app_id == APPLICATION_ID:
        return "kvdrill"
    if app_id == 0 and version >= 1 and Migrations.migrations_table in names:
        logged = conn.execute(
            f"select 1 from {Migrations.migrations_table}"
            " where migration_set = ? and name = 'm001_initial'",
            [migrations.name],
        ).fetchone()
        if logged:
            return "unmarked"
    if app_id == 0 and version == 0 and not names:
        return "blank"
    detail = f"application id {app_id:#x}" if app_id else ""
    if names:
        shown = ", ".join(sorted(names)[:5]) + (", ..." if len(names) > 5 else "")
        detail = (detail + "; " if detail else "") + f"tables {shown}"
    if not detail:
        detail = f"user_version {version}"
    raise StoreError(
        f"{path} is not a kvdrill database ({detail}); left untouched. "
        "Use another --db path for kvdrill's own file."
    )


def quick_check(conn: sqlite3.Connection) -> list[str]:
    """SQLite's quick_check: [] when the file is sound, else its first messages (one line each)."""
    rows = [" ".join(str(row[0]).split()) for row in conn.execute("PRAGMA quick_check(10)")]
    return [] if rows == ["ok"] else rows


def _check_pages(conn: sqlite3.Connection, path: Path) -> None:
    """Every page of the database (quick_check); StoreError naming the damage, nothing
    written, when the check fails."""
    problems = quick_check(conn)
    if problems:
        raise StoreError(
            f"{path} is damaged ({problems[0]}); nothing was written. {recovery_hint(path)}"
        )


# ------------------------------------------------------------------ opening


def open_db(
    path: Path | str | None = None,
    *,
    write: bool = True,
    now: datetime | None = None,
    warn: Callable[[str], None] | None = None,
    older_schema: bool = False,
) -> Database:
    """Open the kvdrill database at `path` (default: the user folder's) for a command.

    Every page is checked first (quick_check), on every open. `write=False` is for
    commands that only read: a missing or empty file is refused rather than created,
    a file in a read-only place is opened read-only, and a file of an older schema is
    refused unless `older_schema` (a reader that takes the file as it is, such as a
    copy by `kvdrill backup`): a reader never upgrades it. A command that writes refuses a
    read-only file, creates the file when needed, marks it as kvdrill's, and on the
    first write of the UTC day of `now` (and before any migration) backs it up into
    the backups folder beside it; `warn` hears about a backup that could not be
    made. Raises StoreError for a file that is not kvdrill's, is damaged, or comes
    from a newer kvdrill; such files are not modified.
    """
    path = Path(path) if path is not None else default_db_path()
    now = now or datetime.now(timezone.utc)
    size = check_header(path) if path.exists() else None
    if size is None and not write:
        raise StoreError(
            f"no database at {path}; `kvdrill quiz` or `kvdrill import` creates one"
        )
    if size == 0 and not write:
        raise StoreError(f"{path} is empty, not a kvdrill database yet; left untouched")
    if size is None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create folder for database {path}: {exc.strerror}") from None
    writable = os.access(path.parent, os.W_OK) and (size is None or os.access(path, os.W_OK))
    if write and not writable:
        raise StoreError(
            f"{path} is read-only (the file or its folder cannot be written); nothing was written"
        )
    try:
        if writable:
            conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        else:  # SQLite cannot make its -shm file here: read the file as it lies
            from drill.storage.backup import connect_read_only

            conn = connect_read_only(path)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open database {path}: {exc}") from None
    try:
        db = _prepare(conn, path, write=write, now=now, warn=warn, older_schema=older_schema)
    except BaseException as exc:
        conn.close()
        if isinstance(exc, READ_ERRORS):
            raise StoreError(describe_sqlite_error(exc, path)) from None
        raise
    opened_paths.append(path)
    return db


def _prepare(
    conn, path: Path, *, write: bool, now: datetime, warn, older_schema: bool
) -> Database:
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    kind = _kind_of(conn, path)
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path} was written by a newer kvdrill (schema {version}, this one knows "
            f"{SCHEMA_VERSION}); upgrade kvdrill. The file was left untouched."
        )
    if kind == "blank" and not write:
        raise StoreError(f"{path} is empty, not a kvdrill database yet; left untouched")
    db = Database(conn)
    if kind != "blank":
        _check_pages(conn, path)
    if not write:
        if version < SCHEMA_VERSION and not older_schema:
            raise StoreError(
                f"{path} has schema {version}, older than this kvdrill's {SCHEMA_VERSION}; "
                "a command that only reads leaves it as it is. `kvdrill doctor --repair "
                f"--db {path}` upgrades it (after a backup)"
            )
        return db  # an unmarked file is marked by the next command that writes
    if kind != "blank":
        from drill.storage.backup import backup_before

        migrating = version < SCHEMA_VERSION
        backup_before(
            conn, path, now, "migration" if migrating else "daily", warn=warn, always=migrating
        )
    from drill.storage.backup import COPY_TABLE

    # a copy by `kvdrill backup` that a command writes to is a database of its own now
    copy_mark = conn.execute(
        "select 1 from sqlite_master where type = 'table' and name = ?", [COPY_TABLE]
    ).fetchone()
    if kind == "kvdrill" and version == SCHEMA_VERSION and copy_mark is None:
        return db
    if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        db.enable_wal()
    # BEGIN IMMEDIATE takes the write lock first, so two processes
    # opening a new database do not both apply the same migration.
    conn.execute("BEGIN IMMEDIATE")
    try:
        if _kind_of(conn, path) != "kvdrill":
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        migrations.apply(db)
        conn.execute(f"drop table if exists {COPY_TABLE}")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return db


def describe_sqlite_error(exc: BaseException, path: Path | None = None) -> str:
    """One line for a SQLite error: what happened to which file, and what to do."""
    if path is None:
        path = opened_paths[-1] if opened_paths else default_db_path()
    text = str(exc)
    lowered = text.lower()
    if "readonly" in lowered or "read-only" in lowered:
        return f"{path} is read-only ({text}); nothing was written"
    if "disk is full" in lowered or "database or disk is full" in lowered:
        return f"no space left to write {path} ({text}); free some space and try again"
    if "locked" in lowered or "busy" in lowered:
        return f"{path} is busy: another kvdrill is writing to it ({text}); try again"
    if "unable to open" in lowered:
        return f"cannot open database {path} ({text})"
    if "disk i/o error" in lowered:  # a full disk while the WAL grows reads the same
        return (
            f"cannot read or write {path} ({text}): the disk may be full or failing; free "
            f"some space and try again. {recovery_hint(path)}"
        )
    return f"{path} is damaged or unreadable ({text}). {recovery_hint(path)}"
