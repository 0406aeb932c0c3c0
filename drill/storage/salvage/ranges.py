"""Rowids in ranges: the table read by SQL a range at a time (a range that fails is halved
down to single rows), lost rowids grouped into ranges, ranges merged."""

from __future__ import annotations

import bisect
import sqlite3
from collections.abc import Iterable, Iterator

from drill.errors import SQLITE_READ_ERRORS as SQL_ERRORS
from drill.storage.review_record import FIELDS

CHUNK_ROWS = 1000  # rowids read per query while nothing fails
MAX_FAILED_READS = 100_000  # then the rest of the table is given up as unreadable


def lost_ranges(rowids: list[int], known: list[int]) -> Iterator[tuple[int, int, list[int]]]:
    """Sorted `rowids` as ranges, each running on over rowids that do not exist (that
    are not among the sorted `known`), broken where a known one lies between."""
    start = 0
    for i in range(1, len(rowids) + 1):
        if i < len(rowids):
            before = bisect.bisect_right(known, rowids[i - 1])
            if before == bisect.bisect_left(known, rowids[i]):
                continue
        members = rowids[start:i]
        yield members[0], members[-1], members
        start = i


def unnamed_spans(spans: list[tuple[int, int]], named: list[int]) -> Iterator[tuple[int, int]]:
    """The parts of the sorted `spans` that hold none of the sorted `named` rowids."""
    for low, high in spans:
        at = bisect.bisect_left(named, low)
        start = low
        while at < len(named) and named[at] <= high:
            if named[at] > start:
                yield start, named[at] - 1
            start = named[at] + 1
            at += 1
        if start <= high:
            yield start, high


def table_rows(
    conn: sqlite3.Connection,
    low: int,
    high: int,
    unreadable: list[tuple[int, int]],
    columns: str = ", ".join(FIELDS),
) -> Iterator[tuple]:
    """Every row that reads (its rowid first), chunk by chunk from `low` to `high`. A
    chunk that fails is halved down to single rowids, which are added to `unreadable`;
    after each chunk the next rowid that exists is looked up, so a gap in the rowids
    costs one query, not one per chunk. After MAX_FAILED_READS failed reads the rest is
    given up as unreadable. `columns`: the select list of the review's fields."""
    scan = f"select rowid, {columns} from reviews where rowid between ? and ?"
    # one rowid is looked up, not scanned: a scan steps on to the next row to see the
    # range is over, and that row may be on the damaged page
    one = f"select rowid, {columns} from reviews where rowid = ?"
    failed = 0
    start = low
    while start <= high:
        end = min(start + CHUNK_ROWS - 1, high)
        pending = [(start, end)]
        while pending:
            first, last = pending.pop()
            if failed >= MAX_FAILED_READS:
                unreadable.append((first, high))
                return
            try:
                if first == last:
                    rows = conn.execute(one, (first,)).fetchall()
                else:
                    rows = conn.execute(scan, (first, last)).fetchall()
            except SQL_ERRORS:
                failed += 1
                if first == last:
                    unreadable.append((first, last))
                else:
                    middle = (first + last) // 2
                    pending += [(middle + 1, last), (first, middle)]
                continue
            yield from rows
        try:
            following = conn.execute(
                "select min(rowid) from reviews where rowid > ?", (end,)
            ).fetchone()[0]
        except SQL_ERRORS:
            failed += 1
            following = end + 1  # damage on the way: go on chunk by chunk
        if following is None:
            return
        start = following


def merged(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(high, merged[-1][1]))
        else:
            merged.append((low, high))
    return merged
