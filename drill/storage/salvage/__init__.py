"""Reading the review history out of a damaged database (`kvdrill export --salvage`).

Every other command refuses a damaged file. When the newest sound backup is a day
old, the answers since then are still in the damaged file, most of them on pages that
read fine. Salvage saves every review it can read, and accounts for every review the
file still lists: each is either saved or reported lost.

Where the reviews are read, best first:
- the table, by SQL, in rowid ranges without the page check: a range that fails is
  halved until the rows around the damage have been read one by one;
- every index that lists every review (the two covering indexes and the id's), by SQL
  and from its pages (drill.storage.sqlite_pages): these say which rowids exist, with the id,
  question and time of each, even where the table's pages cannot be reached;
- the table's pages read directly: the leaves below a damaged interior page, cells a
  damaged cell count hides. A row found only there is saved only when an index still
  lists its rowid with the same id, question and time, so that a review the quiz's undo
  deleted, whose bytes may linger, never comes back. Free pages are not read.

The rowids the table yields or an index lists are the reviews the file references;
those not saved are reported lost, by rowid range, with the days the index gives them.
Only where neither the table nor an index can tell which rowids a damaged range held is
it reported as at most that many reviews. A row read that an import would refuse (damage
that still parses) is left out and counted. The rest are written as JSON Lines in the
export's order and form, so that after `kvdrill restore BACKUP`, `kvdrill import FILE`
adds back exactly the reviews the backup lacks (an import merges by id).

Only reviews are saved: cards are rebuilt from them by the import's replay, and a
question suspended, buried or flagged since the backup is so no longer.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import IO

from drill.errors import SQLITE_READ_ERRORS as SQL_ERRORS
from drill.errors import StoreError
from drill.storage.review_record import ENCODER, record_of
from drill.storage.salvage.reading import AT_FIELD, ID_FIELD, Reading
from drill.storage.salvage.result import LostRange, Salvage
from drill.storage.salvage.schema import read_schema
from drill.storage.sqlite_pages import (
    PageError,
    SqliteFile,
)


def salvage_history(path: Path, out: IO[bytes]) -> Salvage:
    """Write every review of the (possibly damaged) database at `path` that can be read
    and passes an import's checks to `out`, as export's JSON Lines; what was lost is in
    the result. StoreError when the reviews table cannot be found or read at all, or
    when not one review could be read from it. The file is never written."""
    if not path.is_file():
        raise StoreError(f"no database at {path}")
    wal = path.with_name(path.name + "-wal")
    if wal.is_file() and wal.stat().st_size > 0:
        # the newest answers may be in the log alone: read a copy of both, where SQLite
        # may fold the log in (a read-only place would have it read the file without)
        with tempfile.TemporaryDirectory(prefix="kvdrill-salvage-") as folder:
            try:
                copy = _copy(path, wal, Path(folder) / "with-log")
                return _salvage(copy, path, out, sqlite3.connect, fold_log=True)
            except StoreError as exc:
                if str(exc).startswith("cannot copy "):
                    raise
            # a log that does not belong to the file (another database's, say): without it
            copy = _copy(path, None, Path(folder) / "alone")
            result = _salvage(copy, path, out, sqlite3.connect)
            result.log_left_out = True
            return result
    from drill.storage.files import connect_read_only

    return _salvage(path, path, out, connect_read_only)


def _copy(path: Path, wal: Path | None, folder: Path) -> Path:
    """A copy of the database (and of its log) in `folder`, to be read there."""
    copy = folder / "copy.db"
    try:
        folder.mkdir()
        shutil.copyfile(path, copy)
        if wal is not None:
            shutil.copyfile(wal, folder / "copy.db-wal")
    except OSError as exc:
        raise StoreError(
            f"cannot copy {path} and its write-ahead log into {folder.parent} to read them "
            f"({exc.strerror}); make room there, or point TMPDIR at a folder with room"
        ) from None
    return copy


def _salvage(
    path: Path, shown: Path, out: IO[bytes], connect, *, fold_log: bool = False
) -> Salvage:
    from drill.storage.migrations import database_kind

    conn = None
    raw = None
    try:
        try:
            conn = connect(path)
            if database_kind(conn, shown) == "blank":
                raise StoreError(f"{shown} holds no kvdrill tables; nothing to save")
            schema = read_schema(conn)
        except SQL_ERRORS as exc:
            raise StoreError(
                f"the reviews of {shown} cannot be read at all ({_message(exc)}); nothing was saved"
            ) from None
        raw = _raw_file(conn, path, fold_log)
        reading = Reading(conn, raw, schema)
        result = reading.run()
        rows = sorted(reading.saved.values(), key=lambda v: (v[AT_FIELD], v[ID_FIELD]))
        if not rows and (result.lost or result.unreadable):
            raise StoreError(
                f"not one review of {shown} could be read ({describe_missing(result)});"
                " nothing was saved"
            )
        for values in rows:
            out.write(ENCODER.encode(record_of(values)).encode("utf-8") + b"\n")
        result.saved = len(rows)
        return result
    finally:
        if raw is not None:
            raw.close()
        if conn is not None:
            conn.close()




def _message(exc: Exception) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "SQLite's message about it is not text"
    return str(exc)


def _raw_file(conn: sqlite3.Connection, path: Path, fold_log: bool) -> SqliteFile | None:
    """The file's pages to read directly; with a log (a copy of the file and its log),
    after the log is folded into the copy. None where they cannot be read so."""
    if fold_log:
        try:
            busy = conn.execute("pragma wal_checkpoint(TRUNCATE)").fetchone()[0]
        except SQL_ERRORS:
            return None
        if busy:
            return None
    try:
        return SqliteFile.open(path)
    except (OSError, PageError):
        return None


# ------------------------------------------------------------------ words


def _span(low: int, high: int) -> str:
    return f"{low:,}" if low == high else f"{low:,}-{high:,}"


def describe_lost(lost: list[LostRange], most: int = 5) -> str:
    """'rowids 1,021-1,054, answered 2026-10-01 to 2026-10-02; rowids 1,600-1,610 (6 of
    them), answered 2026-10-02'"""
    parts = []
    for r in lost[:most]:
        text = f"rowids {_span(r.low, r.high)}"
        if r.count != r.high - r.low + 1:
            text += f" ({r.count:,} of them)"
        if r.first_day is None:
            text += ", date unknown"
        elif r.first_day == r.last_day:
            text += f", answered {r.first_day}"
        else:
            text += f", answered {r.first_day} to {r.last_day}"
        parts.append(text)
    return "; ".join(parts) + ("; ..." if len(lost) > most else "")


def describe_unreadable(ranges: list[tuple[int, int]], most: int = 5) -> str:
    """'rowids 5-9, 12 (at most 6 reviews)'"""
    shown = ", ".join(_span(low, high) for low, high in ranges[:most])
    more = ", ..." if len(ranges) > most else ""
    total = sum(high - low + 1 for low, high in ranges)
    return f"rowids {shown}{more} (at most {total:,} review{'' if total == 1 else 's'})"


def describe_missing(result: Salvage) -> str:
    """What was lost, in a few words, for an error message."""
    parts = []
    if result.lost:
        parts.append(f"lost: {describe_lost(result.lost)}")
    if result.unreadable:
        parts.append(f"unreadable: {describe_unreadable(result.unreadable)}")
    return "; ".join(parts)
