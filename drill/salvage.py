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

import sqlite3
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

    @property
    def unreadable_rowids(self) -> int:
        """How many rowids lie in the unreadable ranges (at most that many reviews)."""
        return sum(high - low + 1 for low, high in self.unreadable)


def salvage_history(path: Path, out: IO[bytes]) -> Salvage:
    """Write every review of the (possibly damaged) database at `path` that can be read
    and passes an import's checks to `out`, as export's JSON Lines; what was lost is in
    the result. StoreError when the reviews table cannot be found or read at all."""
    from drill.backup import connect_read_only
    from drill.store import _kind_of

    if not path.is_file():
        raise StoreError(f"no database at {path}")
    conn = None
    try:
        try:
            conn = connect_read_only(path)
            kind = _kind_of(conn, path)
            low, high = _rowid_bounds(conn) if kind != "blank" else (0, -1)
        except sqlite3.Error as exc:
            raise StoreError(
                f"the reviews of {path} cannot be read at all ({exc}); nothing was saved"
            ) from None
        if kind == "blank":
            raise StoreError(f"{path} holds no kvdrill tables; nothing to save")
        result = Salvage()
        rows = []
        for values in _rows(conn, low, high, result):
            try:
                rows.append(checked_values(record_of(values)))
            except (RecordError, ValueError, TypeError):
                result.failed_checks += 1
        rows.sort(key=lambda v: (v[FIELDS.index("reviewed_at")], v[FIELDS.index("id")]))
        for values in rows:
            out.write(ENCODER.encode(record_of(values)).encode("utf-8") + b"\n")
        result.saved = len(rows)
        result.unreadable = _merged(result.unreadable)
        return result
    finally:
        if conn is not None:
            conn.close()


def _rowid_bounds(conn: sqlite3.Connection) -> tuple[int, int]:
    """The smallest and largest rowid of reviews: from the table, else from an index."""
    try:
        low, high = conn.execute("select min(rowid), max(rowid) from reviews").fetchone()
    except sqlite3.DatabaseError:
        # the table's first or last pages are damaged: an index holds every rowid too
        low, high = conn.execute(
            "select min(rowid), max(rowid) from reviews indexed by idx_reviews_time_cover"
            " where reviewed_at is not null"
        ).fetchone()
    return (0, -1) if low is None else (low, high)


def _rows(conn: sqlite3.Connection, low: int, high: int, result: Salvage) -> Iterator[tuple]:
    sql = f"select {', '.join(FIELDS)} from reviews where rowid between ? and ?"
    # one rowid is looked up, not scanned: a scan steps on to the next row to see the
    # range is over, and that row may be on the damaged page
    one = f"select {', '.join(FIELDS)} from reviews where rowid = ?"
    failed = 0
    pending = [(start, min(start + CHUNK_ROWS - 1, high)) for start in range(low, high + 1, CHUNK_ROWS)]
    pending.reverse()  # a stack, lowest range on top
    while pending:
        start, end = pending.pop()
        if failed >= MAX_FAILED_READS:
            result.unreadable.append((start, end))
            continue
        try:
            if start == end:
                rows = conn.execute(one, (start,)).fetchall()
            else:
                rows = conn.execute(sql, (start, end)).fetchall()
        except sqlite3.DatabaseError:
            failed += 1
            if start == end:
                result.unreadable.append((start, end))
            else:
                middle = (start + end) // 2
                pending += [(middle + 1, end), (start, middle)]
            continue
        yield from rows


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(high, merged[-1][1]))
        else:
            merged.append((low, high))
    return merged
