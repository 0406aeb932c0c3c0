"""Reading the review history out of a damaged database (`kvdrill export --salvage`).

Every other command refuses a damaged file. When the newest sound backup is a day
old, the answers since then are still in the damaged file, most of them on pages that
read fine. Salvage reads the reviews table by rowid ranges, without the page check:
a range that fails is halved until the rows around the damage have been read one by
one, and what still fails is reported as unreadable rowid ranges. Each row read must
pass the same checks an import makes (drill.review); a row that does not (damage that
still parses) is left out and counted. The rest are written as JSON Lines in the
export's order and form, so that after `kvdrill restore BACKUP`, `kvdrill import FILE`
adds back exactly the reviews the backup lacks (an import merges by id).

Only reviews are saved: cards are rebuilt from them by the import's replay, and a
question suspended, buried or flagged since the backup is so no longer.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from drill.errors import StoreError
from drill.review import ENCODER, FIELDS, RecordError, checked_values, record_of

CHUNK_ROWS = 1000  # rowids read per query while nothing fails
MAX_FAILED_READS = 100_000  # then the rest of the table is given up as unreadable


@dataclass
class Salvage:
    saved: int = 0
    unreadable: list[tuple[int, int]] = field(default_factory=list)  # rowid ranges
    failed_checks: int = 0  # rows read that an import would refuse
    log_left_out: bool = False  # the write-ahead log could not be read with the file

    @property
    def unreadable_rowids(self) -> int:
        """How many rowids lie in the unreadable ranges (at most that many reviews)."""
        return sum(high - low + 1 for low, high in self.unreadable)


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
                return _salvage(_copy(path, wal, Path(folder) / "with-log"), path, out, sqlite3.connect)
            except StoreError:
                pass
            # a log that does not belong to the file (another database's, say): without it
            result = _salvage(_copy(path, None, Path(folder) / "alone"), path, out, sqlite3.connect)
            result.log_left_out = True
            return result
    from drill.backup import connect_read_only

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


def _salvage(path: Path, shown: Path, out: IO[bytes], connect) -> Salvage:
    from drill.store import _kind_of

    conn = None
    try:
        try:
            conn = connect(path)
            if _kind_of(conn, shown) == "blank":
                raise StoreError(f"{shown} holds no kvdrill tables; nothing to save")
            bounds = _rowid_bounds(conn)
        except sqlite3.Error as exc:
            raise StoreError(
                f"the reviews of {shown} cannot be read at all ({exc}); nothing was saved"
            ) from None
        result = Salvage()
        if bounds is None:
            return result  # no reviews at all
        rows = []
        for values in _rows(conn, *bounds, result):
            try:
                rows.append(checked_values(record_of(values)))
            except (RecordError, ValueError, TypeError):
                result.failed_checks += 1
        result.unreadable = _merged(result.unreadable)
        if not rows and result.unreadable:
            raise StoreError(
                f"not one review of {shown} could be read (rowids {bounds[0]:,} to "
                f"{bounds[1]:,} are damaged); nothing was saved"
            )
        rows.sort(key=lambda v: (v[_AT], v[_ID]))
        for values in rows:
            out.write(ENCODER.encode(record_of(values)).encode("utf-8") + b"\n")
        result.saved = len(rows)
        return result
    finally:
        if conn is not None:
            conn.close()


_AT, _ID = FIELDS.index("reviewed_at"), FIELDS.index("id")


def _rowid_bounds(conn: sqlite3.Connection) -> tuple[int, int] | None:
    """The smallest and largest rowid of reviews (from the table, else from an index);
    None for a table without rows."""
    try:
        low, high = conn.execute("select min(rowid), max(rowid) from reviews").fetchone()
    except sqlite3.DatabaseError:
        # the table's first or last pages are damaged: an index holds every rowid too
        low, high = conn.execute(
            "select min(rowid), max(rowid) from reviews indexed by idx_reviews_time_cover"
            " where reviewed_at is not null"
        ).fetchone()
    return None if low is None else (low, high)


def _rows(conn: sqlite3.Connection, low: int, high: int, result: Salvage) -> Iterator[tuple]:
    """Every row that reads, chunk by chunk from `low` to `high`. A chunk that fails is
    halved down to single rowids; after each chunk the next rowid that exists is looked
    up, so a gap in the rowids costs one query, not one per chunk. After
    MAX_FAILED_READS failed reads the rest is given up as unreadable."""
    columns = ", ".join(FIELDS)
    scan = f"select {columns} from reviews where rowid between ? and ?"
    # one rowid is looked up, not scanned: a scan steps on to the next row to see the
    # range is over, and that row may be on the damaged page
    one = f"select {columns} from reviews where rowid = ?"
    failed = 0
    start = low
    while start <= high:
        end = min(start + CHUNK_ROWS - 1, high)
        pending = [(start, end)]
        while pending:
            first, last = pending.pop()
            if failed >= MAX_FAILED_READS:
                result.unreadable.append((first, high))
                return
            try:
                if first == last:
                    rows = conn.execute(one, (first,)).fetchall()
                else:
                    rows = conn.execute(scan, (first, last)).fetchall()
            except sqlite3.DatabaseError:
                failed += 1
                if first == last:
                    result.unreadable.append((first, last))
                else:
                    middle = (first + last) // 2
                    pending += [(middle + 1, last), (first, middle)]
                continue
            yield from rows
        try:
            following = conn.execute(
                "select min(rowid) from reviews where rowid > ?", (end,)
            ).fetchone()[0]
        except sqlite3.DatabaseError:
            failed += 1
            following = end + 1  # damage on the way: go on chunk by chunk
        if following is None:
            return
        start = following


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(high, merged[-1][1]))
        else:
            merged.append((low, high))
    return merged
