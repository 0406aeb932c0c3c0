"""`kvdrill restore`: a database's contents replaced by a checked copy, the old ones kept."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from drill.errors import SQLITE_READ_ERRORS as READ_ERRORS
from drill.errors import StoreError, reason_of
from drill.storage.backup import (
    COPY_TABLE,
    Summary,
    backup_keep,
    check_copy,
    copy_database,
    prune_backups,
    same_file,
    take_backup,
    unused_backup_name,
)
from drill.storage.database import BUSY_TIMEOUT_MS, describe_sqlite_error, open_db
from drill.storage.files import (
    APPLICATION_ID,
    HEADER_SIZE,
    SQLITE_MAGIC,
    backups_dir,
    connect_read_only,
    database_files,
    file_size,
)
from drill.storage.migrations import SCHEMA_VERSION, database_kind
from drill.storage.outfile import temporary_beside


@dataclass(frozen=True)
class RestoreResult:
    summary: Summary  # what the restored copy holds
    saved_as: Path | None  # the backup of the database as it was before, if it held anything


def restore_database(
    db_path: Path, source: Path, now: datetime, *, warn: Callable[[str], None] | None = None
) -> RestoreResult:
    """Replace the database's contents by the checked copy at `source`.

    The copy must pass `check_copy` first. The database as it was (damaged ones
    included: that is what restoring is for) is saved in the backups folder, reason
    `restore`, before anything changes, so a restore can be undone. Another
    application's file at `db_path` is refused untouched.
    """
    if any(same_file(source, own) for own in database_files(db_path)):
        raise StoreError(
            f"{source} is the database itself; restore one of the copies in {backups_dir(db_path)}"
        )
    summary = check_copy(source)
    _check_restore_target(db_path)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(db_path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    saved = None
    try:
        if file_size(db_path) > 0:
            saved = _save_before_restore(conn, db_path, now)
        copy = connect_read_only(source)
        try:
            try:
                copy.backup(conn)
                conn.execute(f"drop table if exists {COPY_TABLE}")  # a database again
            except sqlite3.DatabaseError:
                # too damaged to be written page by page: replace the file whole
                conn.close()
                _replace_file(copy, db_path)
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(describe_sqlite_error(exc, db_path)) from None
        finally:
            copy.close()
    finally:
        conn.close()
    # mark, migrate and return to WAL what came from the copy
    open_db(db_path, write=True, now=now, warn=warn).conn.close()
    keep = backup_keep()
    if keep:
        prune_backups(db_path, keep, now, spare=saved)
    return RestoreResult(summary, saved)


def _replace_file(source: sqlite3.Connection, db_path: Path) -> None:
    """Put a copy of `source` at `db_path` by rename, dropping the old file's log."""
    for companion in database_files(db_path)[1:]:
        companion.unlink(missing_ok=True)  # frames of the old file must not apply to the new
    copy_database(source, db_path, copy_of=None)


def _check_restore_target(db_path: Path) -> None:
    """StoreError unless `db_path` is missing, empty, or kvdrill's own database (even
    damaged) of a schema this kvdrill knows."""
    if not db_path.exists() or file_size(db_path) == 0:
        return
    if not db_path.is_file():
        raise StoreError(f"{db_path} is not a file")
    with db_path.open("rb") as fh:
        head = fh.read(HEADER_SIZE)
    if head.startswith(SQLITE_MAGIC) and int.from_bytes(head[68:72], "big") == APPLICATION_ID:
        version = max(int.from_bytes(head[60:64], "big"), _user_version(db_path))
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{db_path} was written by a newer kvdrill (schema {version}, this one knows "
                f"{SCHEMA_VERSION}); left untouched. Restore with that kvdrill, or move the "
                "file away first"
            )
        return  # marked as ours in its header, whatever the state of its pages
    refusal = (
        f"{db_path} is not a database kvdrill can recognise as its own; left untouched. "
        "Move it away first if it is kvdrill's"
    )
    if not head.startswith(SQLITE_MAGIC):
        raise StoreError(refusal)
    try:
        conn = connect_read_only(db_path)
        try:
            database_kind(conn, db_path)  # raises for another application's database
        finally:
            conn.close()
    except READ_ERRORS:
        raise StoreError(refusal) from None


def _save_before_restore(conn: sqlite3.Connection, db_path: Path, now: datetime) -> Path:
    """Keep the database as it is before a restore overwrites it; a damaged one as raw bytes."""
    import shutil

    try:
        return take_backup(conn, db_path, now, "restore")
    except sqlite3.Error:
        pass  # too damaged for the backup API: keep its bytes as they are
    except OSError as exc:
        raise StoreError(
            f"cannot save the current database before restoring ({reason_of(exc)}); "
            "nothing was changed"
        ) from None
    try:
        folder = backups_dir(db_path)
        folder.mkdir(parents=True, exist_ok=True)
        target = unused_backup_name(folder, db_path, now, "restore")
        temp = temporary_beside(target)
        try:
            shutil.copyfile(db_path, temp)
            os.replace(temp, target)
        finally:
            temp.unlink(missing_ok=True)
        return target
    except OSError as exc:
        raise StoreError(
            f"cannot save the current database before restoring ({reason_of(exc)}); "
            "nothing was changed"
        ) from None


def _user_version(path: Path) -> int:
    """PRAGMA user_version as SQLite reads it (its log included); 0 when it cannot."""
    try:
        conn = connect_read_only(path)
        try:
            return int(conn.execute("PRAGMA user_version").fetchone()[0])
        finally:
            conn.close()
    except READ_ERRORS:
        return 0
