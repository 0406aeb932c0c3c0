"""Opening the kvdrill database for a command: one `open_db()`, checked every time.

A kvdrill database carries `PRAGMA application_id` = APPLICATION_ID
(drill.storage.files). Databases made before that mark existed are recognised by their
migration log and get the mark on their next write. Any other file is refused
untouched: not SQLite, another application's database, one written by a newer kvdrill,
or one shorter than its header says. Commands that only read refuse a missing or empty
file rather than create one; only a command that writes initialises a new database.

Every open, a reader's as much as a writer's, checks each page with `PRAGMA
quick_check` first (about 1.4 ms per MiB of database: 15 ms at 50,000 reviews): a
damaged database is neither read nor written, and no command prints a count read
from one. A file's size and time say nothing of damage from a failing disk, so no
earlier check is trusted. quick_check does not compare indexes with their table;
`kvdrill doctor` runs the full integrity_check, which does (a flipped byte inside a
record). A command that only reads refuses a file of an older schema rather than
upgrade it (drill.storage.migrations); a command that writes upgrades it after a backup.

Before a migration, and on the first write of each UTC day, the database is copied
into the backups folder beside it (see drill.storage.backup).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from drill.errors import SQLITE_READ_ERRORS as READ_ERRORS
from drill.errors import StoreError
from drill.paths import default_db_path
from drill.storage.backup import COPY_TABLE, backup_before
from drill.storage.files import (
    APPLICATION_ID,
    check_header,
    connect_read_only,
    quick_check,
    recovery_hint,
)
from drill.storage.migrations import SCHEMA_VERSION, database_kind, migrations
from drill.storage.sqlite_library import Database

BUSY_TIMEOUT_MS = 10_000


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
    return db


def _prepare(
    conn, path: Path, *, write: bool, now: datetime, warn, older_schema: bool
) -> Database:
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    kind = database_kind(conn, path)
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path} was written by a newer kvdrill (schema {version}, this one knows "
            f"{SCHEMA_VERSION}); upgrade kvdrill. The file was left untouched."
        )
    if kind == "blank" and not write:
        raise StoreError(f"{path} is empty, not a kvdrill database yet; left untouched")
    # sqlite-utils plugins installed for other tools never run on kvdrill's connection; finding
    # them would also scan every installed package's metadata on each start
    db = Database(conn, execute_plugins=False)
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
        migrating = version < SCHEMA_VERSION
        backup_before(
            conn, path, now, "migration" if migrating else "daily", warn=warn, always=migrating
        )
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
        if database_kind(conn, path) != "kvdrill":
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


def describe_sqlite_error(exc: BaseException, path: Path) -> str:
    """One line for a SQLite error: what happened to the database at `path`, and what to do."""
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
