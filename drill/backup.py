"""Copies of the kvdrill database: automatic ones, `kvdrill backup` and `kvdrill restore`.

Backups are whole-database copies made with SQLite's online backup API (a
consistent snapshot even while another kvdrill writes), in a `backups` folder
beside the database, named `<db stem>-YYYYMMDD-HHMMSS-<reason>.db` in UTC. Each is
written to a temporary file and renamed into place, so a half-written copy never
looks like a backup. One is taken before every migration and on the first write
of each UTC day; the newest KVDRILL_BACKUP_KEEP (default 10; 0 turns the automatic
ones off) are kept.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from drill.errors import StoreError

KEEP_ENV = "KVDRILL_BACKUP_KEEP"
DEFAULT_KEEP = 10
MAX_KEEP = 10_000
FOLDER_NAME = "backups"


def backups_dir(db_path: Path) -> Path:
    return db_path.parent / FOLDER_NAME


def backup_keep() -> int:
    """How many automatic backups to keep, from KVDRILL_BACKUP_KEEP (0: none are made)."""
    raw = os.environ.get(KEEP_ENV, "").strip()
    if not raw:
        return DEFAULT_KEEP
    if not raw.isdigit() or len(raw) > 6 or int(raw) > MAX_KEEP:
        raise StoreError(f"{KEEP_ENV} must be a whole number from 0 to {MAX_KEEP}, not {raw[:20]!r}")
    return int(raw)


def _name_pattern(db_path: Path) -> re.Pattern[str]:
    return re.compile(rf"{re.escape(db_path.stem)}-(\d{{8}}-\d{{6}})-([a-z]+(?:-[a-z]+)*)(?:-\d+)?\.db")


@dataclass(frozen=True)
class BackupFile:
    path: Path
    taken_at: datetime
    reason: str  # daily, migration, restore, manual


def list_backups(db_path: Path) -> list[BackupFile]:
    """The database's backups in its backups folder, oldest first."""
    pattern = _name_pattern(db_path)
    found = []
    try:
        entries = list(backups_dir(db_path).iterdir())
    except OSError:
        return []
    for entry in entries:
        match = pattern.fullmatch(entry.name)
        if match is None or not entry.is_file():
            continue
        try:
            taken = datetime.strptime(match[1], "%Y%m%d-%H%M%S").replace(tzinfo=timezone.utc)
        except ValueError:
            continue
        found.append(BackupFile(entry, taken, match[2]))
    found.sort(key=lambda b: (b.taken_at, b.path.name))
    return found


def copy_database(source: sqlite3.Connection, target: Path) -> None:
    """Write a consistent copy of `source` to `target`, atomically (temporary file + rename).

    The copy is a single self-contained file (rollback journal, not WAL).
    """
    temp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        copy = sqlite3.connect(str(temp), isolation_level=None)
        try:
            source.backup(copy)
            copy.execute("PRAGMA journal_mode = DELETE")
        finally:
            copy.close()
        with temp.open("rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def _unused_name(folder: Path, db_path: Path, now: datetime, reason: str) -> Path:
    stamp = now.astimezone(timezone.utc).strftime("%Y%m%d-%H%M%S")
    candidate = folder / f"{db_path.stem}-{stamp}-{reason}.db"
    number = 2
    while candidate.exists():
        candidate = folder / f"{db_path.stem}-{stamp}-{reason}-{number}.db"
        number += 1
    return candidate


def take_backup(source: sqlite3.Connection, db_path: Path, now: datetime, reason: str) -> Path:
    """Copy the open database into its backups folder; return the new file's path."""
    folder = backups_dir(db_path)
    folder.mkdir(parents=True, exist_ok=True)
    target = _unused_name(folder, db_path, now, reason)
    copy_database(source, target)
    return target


def prune_backups(db_path: Path, keep: int) -> list[Path]:
    """Delete all but the newest `keep` backups (at least the newest one stays)."""
    backups = list_backups(db_path)
    doomed = [b.path for b in backups[: max(0, len(backups) - max(keep, 1))]]
    from drill.store import CHECKED_SUFFIX

    for path in doomed:
        path.unlink(missing_ok=True)
        path.with_name(path.name + CHECKED_SUFFIX).unlink(missing_ok=True)
    return doomed


def backed_up_on(db_path: Path, now: datetime) -> bool:
    day = now.astimezone(timezone.utc).date()
    return any(b.taken_at.date() == day for b in list_backups(db_path))


def backup_before(
    conn: sqlite3.Connection,
    db_path: Path,
    now: datetime,
    reason: str,
    *,
    warn: Callable[[str], None] | None,
    always: bool,
) -> Path | None:
    """The automatic backup of a checked database before a write.

    Without `always` (the daily backup) nothing happens when automatic backups are
    off or one was already taken on `now`'s UTC day. A copy that cannot be made is
    fatal before a migration and a warning otherwise.
    """
    keep = backup_keep()
    if not always and (keep == 0 or backed_up_on(db_path, now)):
        return None
    try:
        target = take_backup(conn, db_path, now, reason)
        if keep:
            prune_backups(db_path, keep)
    except (OSError, sqlite3.Error) as exc:
        message = f"cannot back up {db_path} into {backups_dir(db_path)}: {_reason(exc)}"
        if always:
            raise StoreError(message + "; nothing was changed") from None
        if warn is not None:
            warn(message)
        return None
    return target


def _reason(exc: BaseException) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)


# ------------------------------------------------------------------ checking a copy


@dataclass(frozen=True)
class Summary:
    """What a database file holds, once it has passed every check."""

    schema_version: int
    cards: int
    reviews: int
    last_review: str | None


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that cannot change `path` (nor create files beside a rollback-journal one)."""
    uri = "file:" + _uri_path(path)
    try:
        conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, isolation_level=None)
        conn.execute("select count(*) from sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError:
        # a WAL-mode copy in a folder we may not write: read it as it lies on disk
        return sqlite3.connect(f"{uri}?immutable=1", uri=True, isolation_level=None)


def _uri_path(path: Path) -> str:
    from urllib.parse import quote

    return quote(str(path.resolve()))


def check_copy(path: Path) -> Summary:
    """Check that `path` is a sound kvdrill database this version can use; StoreError if not."""
    from drill.store import SCHEMA_VERSION, _kind_of, check_header

    if not path.exists():
        raise StoreError(f"no file at {path}")
    if check_header(path) == 0:
        raise StoreError(f"{path} is empty, not a kvdrill backup")
    try:
        conn = connect_read_only(path)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open {path}: {exc}") from None
    try:
        kind = _kind_of(conn, path)
        if kind == "blank":
            raise StoreError(f"{path} holds no kvdrill tables")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{path} was written by a newer kvdrill (schema {version}, this one knows "
                f"{SCHEMA_VERSION})"
            )
        problems = [row[0] for row in conn.execute("PRAGMA integrity_check(10)")]
        if problems != ["ok"]:
            raise StoreError(f"{path} is damaged: {problems[0]}")
        cards = conn.execute("select count(*) from cards").fetchone()[0]
        reviews, last = conn.execute("select count(*), max(reviewed_at) from reviews").fetchone()
        return Summary(version, cards, reviews, last)
    except sqlite3.Error as exc:
        raise StoreError(f"{path} is damaged or not a kvdrill database: {exc}") from None
    finally:
        conn.close()


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file (following links); False when either is missing."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return a.resolve() == b.resolve()


# ------------------------------------------------------------------ restoring


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
    from drill.store import (
        BUSY_TIMEOUT_MS,
        database_files,
        describe_sqlite_error,
        file_size,
        open_db,
    )

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
        prune_backups(db_path, keep)
    return RestoreResult(summary, saved)


def _replace_file(source: sqlite3.Connection, db_path: Path) -> None:
    """Put a copy of `source` at `db_path` by rename, dropping the old file's log."""
    from drill.store import database_files

    for companion in database_files(db_path)[1:]:
        companion.unlink(missing_ok=True)  # frames of the old file must not apply to the new
    copy_database(source, db_path)


def _check_restore_target(db_path: Path) -> None:
    """StoreError unless `db_path` is missing, empty, or kvdrill's own database (even damaged)."""
    from drill.store import APPLICATION_ID, SQLITE_MAGIC, _kind_of, file_size

    if not db_path.exists() or file_size(db_path) == 0:
        return
    if not db_path.is_file():
        raise StoreError(f"{db_path} is not a file")
    with db_path.open("rb") as fh:
        head = fh.read(100)
    if head.startswith(SQLITE_MAGIC) and int.from_bytes(head[68:72], "big") == APPLICATION_ID:
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
            _kind_of(conn, db_path)  # raises for another application's database
        finally:
            conn.close()
    except sqlite3.Error:
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
            f"cannot save the current database before restoring ({_reason(exc)}); "
            "nothing was changed"
        ) from None
    try:
        folder = backups_dir(db_path)
        folder.mkdir(parents=True, exist_ok=True)
        target = _unused_name(folder, db_path, now, "restore")
        temp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        shutil.copyfile(db_path, temp)
        os.replace(temp, target)
        return target
    except OSError as exc:
        raise StoreError(
            f"cannot save the current database before restoring ({_reason(exc)}); "
            "nothing was changed"
        ) from None
