"""The files of a kvdrill database, read as files: SQLite's header and kvdrill's mark in it,
the companions kept beside the database, its backups folder, a connection that cannot
change it, and SQLite's page check. Nothing here imports sqlite-utils, so a command that
only writes an output file never loads it.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

from drill.errors import StoreError

SQLITE_MAGIC = b"SQLite format 3\x00"
HEADER_SIZE = 100
# PRAGMA application_id of every kvdrill database: "kvdr" in ASCII.
APPLICATION_ID = 0x6B766472
# files kept beside a database, by the suffix of its full name: SQLite's log, shared
# memory and journal, and the quiz's answers waiting to be merged (drill.storage.reviews)
COMPANION_SUFFIXES = ("-wal", "-shm", "-journal", "-unsaved.jsonl")
BACKUPS_FOLDER = "backups"


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
        f"back a copy from {backups_dir(path)}{os.sep}"
    )


def backups_dir(db_path: Path) -> Path:
    """The folder the database's backups go into (drill.storage.backup names them)."""
    return db_path.parent / BACKUPS_FOLDER


def file_head(path: Path) -> bytes:
    """The first 100 bytes of a regular file; b"" for anything else or when unreadable."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return b""  # a pipe or a terminal: reading it could block
        with open(path, "rb") as file:
            return file.read(HEADER_SIZE)
    except OSError:
        return b""


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that cannot change `path`. A file not marked as kvdrill's, with no log
    beside it, is read as it lies (immutable): SQLite would otherwise leave an empty log
    and shared memory beside another application's WAL-mode file."""
    uri = "file:" + _uri_path(path)
    head = file_head(path)
    ours = len(head) >= 72 and int.from_bytes(head[68:72], "big") == APPLICATION_ID
    if not ours and not os.path.lexists(path.with_name(path.name + "-wal")):
        return sqlite3.connect(f"{uri}?immutable=1", uri=True, isolation_level=None)
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


def quick_check(conn: sqlite3.Connection) -> list[str]:
    """SQLite's quick_check: [] when the file is sound, else its first messages (one line each)."""
    rows = [" ".join(str(row[0]).split()) for row in conn.execute("PRAGMA quick_check(10)")]
    return [] if rows == ["ok"] else rows
