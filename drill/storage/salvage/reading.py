"""Salvage's reading of a damaged file: the table by SQL, every index that lists the reviews
by SQL and from its pages, and the table's own pages where SQLite cannot reach them."""

from __future__ import annotations

import bisect
import re
import sqlite3
from collections.abc import Iterator
from typing import Any

from drill.errors import SQLITE_READ_ERRORS as SQL_ERRORS
from drill.storage.review_record import FIELDS, RecordError, checked_values, record_of
from drill.storage.salvage.ranges import (
    MAX_FAILED_READS,
    lost_ranges,
    merged,
    table_rows,
    unnamed_spans,
)
from drill.storage.salvage.result import LostRange, Salvage
from drill.storage.salvage.schema import IDENTITY, IndexInfo, Schema, quoted, select_list
from drill.storage.sqlite_pages import (
    INDEX_INTERIOR,
    INDEX_LEAF,
    TABLE_LEAF,
    Page,
    PageError,
    SqliteFile,
    Tree,
)

AT_FIELD, ID_FIELD = FIELDS.index("reviewed_at"), FIELDS.index("id")
Cell = tuple[int, int]  # (page number, offset) of a cell

DAY = re.compile(r"\d{4}-\d\d-\d\d")
TIME = re.compile(r"\d{4}-\d\d-\d\dT")


class Reading:
    """One salvage: what each source says, and what is saved, refused and lost."""

    def __init__(self, conn: sqlite3.Connection, raw: SqliteFile | None, schema: Schema):
        self.conn, self.raw, self.schema = conn, raw, schema
        self.result = Salvage()
        # what the indexes say of each rowid they list: its id, question and time
        self.said: list[dict[int, Any]] = [{} for _ in IDENTITY]
        self.listed: set[int] = set()
        self.exact = False  # a source that lists every rowid read whole
        self.saved: dict[int, tuple] = {}  # rowid -> checked values
        self.refused: set[int] = set()  # rowids read whose every reading an import refuses
        self.ids: dict[str, int] = {}
        self.broken_indexes: list[IndexInfo] = []  # indexes whose pages did not all read
        # table rowid ranges on damaged pages (None: from the first, or to the last)
        self.damaged: list[tuple[int | None, int | None]] = []
        self.tree: Tree | None = None
        self._orphans_found: tuple[list[tuple[int, int]], bool] | None = None
        self.live: dict[int, Cell] = {}  # rowid -> where the table's own cell for it lies
        order = {name: i for i, name in enumerate(schema.columns)}
        # a row read from the pages is taken only in the table's own column order; a field
        # the table lacks (a file from before the migration that added it) reads as null
        self.shaped = set(schema.columns) <= set(FIELDS) and set(IDENTITY) <= set(order)
        self.order = tuple(order.get(name) for name in FIELDS) if self.shaped else ()
        self.select = select_list(schema)

    def run(self) -> Salvage:
        # the indexes with the times first: an id is kept only where no time is known
        for index in sorted(self.schema.indexes, key=lambda i: "reviewed_at" not in i.columns):
            self._read_index(index)
        self._orphan_index_entries()
        table_clean = self._walk_table()
        sql_rowids, refused, unreadable = self._read_table()
        if table_clean is None:  # its pages read: do they hold what SQL read, and all?
            table_clean = self._table_cells(sql_rowids)
        self.exact = self.exact or table_clean
        for rowid, values in refused:  # now that it is known whether every rowid is
            self._offer(rowid, values, trusted=True)
        wanted = self._wanted()
        if wanted:
            failed = merged(unreadable)
            lookups = [r for r in sorted(wanted) if not within(failed, r)]
            for rowid, values in self._look_up(lookups):
                self._offer(rowid, values, trusted=True)
            self._from_pages(self._wanted())
        self._account(unreadable)
        return self.result

    # -------------------------------------------------------------- indexes

    def _read_index(self, index: IndexInfo) -> None:
        """What one index lists, by SQL and from its pages; whether it read whole."""
        said, sql_whole = self._index_sql(index)
        clean = sql_whole
        if self.raw is not None:
            tree = self.raw.walk(index.root, table=False)
            cells = sum(reached.cells for reached in tree.leaves + tree.interiors)
            listed = set().union(*said)
            clean = sql_whole and tree.clean and cells == len(listed)
            if not clean:
                pages = [reached.number for reached in tree.leaves + tree.interiors]
                entries, decoded = self._index_pages(index, pages, shape=False)
                self._list(entries)
                clean = tree.clean and decoded
            if not tree.clean:
                self.broken_indexes.append(index)
        self.exact = self.exact or clean
        for i, found in enumerate(said):
            self.listed.update(found)
            if i == 0 and self.said[2]:
                found = {r: v for r, v in found.items() if r not in self.said[2]}
            found.update(self.said[i])  # what was said first stands
            self.said[i] = found

    def _index_sql(self, index: IndexInfo) -> tuple[list[dict[int, Any]], bool]:
        """For each of id, question and time, what the index says by rowid (by SQL);
        whether it read to its end."""
        said: list[dict[int, Any]] = [{} for _ in IDENTITY]
        for i, name in enumerate(IDENTITY):
            if name not in index.columns:
                continue
            sql = f"select rowid, {quoted(name)} from reviews indexed by {quoted(index.name)}"
            try:
                cursor = self.conn.execute(sql)
                while True:
                    rows = cursor.fetchmany(10_000)
                    if not rows:
                        break
                    said[i].update(rows)
            except SQL_ERRORS:
                return said, False
        return said, True

    def _index_pages(
        self, index: IndexInfo, pages: list[int], *, shape: bool
    ) -> tuple[dict[int, tuple], bool]:
        """The entries on index pages read directly, and whether every cell decoded (and,
        with `shape`, had the shape of this index's entries: all or nothing)."""
        assert self.raw is not None
        entries: dict[int, tuple] = {}
        whole = True
        for number in pages:
            try:
                page = self.raw.btree_page(number)
            except PageError:
                whole = False
                continue
            for offset in page.cells:
                try:
                    values = self.raw.record(self.raw.index_cell(page, offset))
                except PageError:
                    whole = False
                    continue
                identity = self._identity(index, values, shape=shape)
                if identity is None:
                    whole = False
                    if shape:
                        return {}, False
                    continue
                entries[values[-1]] = identity
        return entries, whole

    def _identity(self, index: IndexInfo, values, *, shape: bool) -> tuple | None:
        """(id, question_id, reviewed_at) of an entry, None for those the index does not
        hold; None when the entry is not one of this index's. With `shape` (a page no
        walk reached), the time must look like one too."""
        if len(values) != len(index.columns) + 1 or type(values[-1]) is not int:
            return None
        found: list[Any] = [None, None, None]
        for name, value in zip(index.columns, values, strict=False):
            if name in IDENTITY:
                if not isinstance(value, str):
                    return None
                if shape and name == "reviewed_at" and not TIME.match(value):
                    return None
                found[IDENTITY.index(name)] = value
        if shape and found[2] is None:
            return None  # only an entry with its time is told apart from other indexes'
        return tuple(found)

    def _list(self, entries: dict[int, tuple]) -> None:
        """Add entries read from pages to what the indexes say (what was said first
        stands)."""
        for rowid, identity in entries.items():
            for i, value in enumerate(identity):
                if value is not None:
                    self.said[i].setdefault(rowid, value)
            self.listed.add(rowid)

    # -------------------------------------------------------------- the table

    def _walk_table(self) -> bool | None:
        """Walk the table's pages from its root. False when they cannot be read directly;
        None when they can, and whether they read whole is decided with SQL's rows."""
        if self.raw is None or not self.shaped:
            return False
        self.tree = self.raw.walk(self.schema.root, table=True)
        for _number, low, high in self.tree.damaged:
            self.damaged.append(span(low, high))
        return None

    def _table_cells(self, sql_rowids: set[int]) -> bool:
        """The rowids of the cells on the table's leaves; True when the table's pages
        read whole. Cells whose row SQL read are not decoded again."""
        if self.tree is None:
            return False
        assert self.raw is not None
        declared = sum(reached.cells for reached in self.tree.leaves)
        if self.tree.clean and declared == len(sql_rowids):
            # every cell SQL could have read, read: the cheap case of a sound table
            return True
        clean = self.tree.clean
        for reached in self.tree.leaves:
            page = self._page(reached.number)
            offsets = page.cells if page is not None else ()
            rowids = []
            for offset in offsets:
                assert page is not None  # no offsets without a page
                try:
                    rowids.append((self.raw.table_rowid(page, offset), offset))
                except PageError:
                    break
            if page is None or len(rowids) < len(offsets):
                clean = False  # a cell that does not read: its rows could be any there
                self.damaged.append(span(reached.low, reached.high))
            for rowid, offset in rowids:
                self.live.setdefault(rowid, (reached.number, offset))
        return clean

    def _read_table(self) -> tuple[set[int], list[tuple[int, tuple]], list[tuple[int, int]]]:
        """The table by SQL: each row an import takes is saved as it is read. The rowids
        read, the rows an import refuses (to be judged once it is known whether every
        rowid is known), and the rowid ranges that did not read."""
        bounds = self._bounds()
        read: set[int] = set()
        refused: list[tuple[int, tuple]] = []
        unreadable: list[tuple[int, int]] = []
        if bounds is not None:
            for rowid, *values in table_rows(self.conn, *bounds, unreadable, self.select):
                if rowid in read:
                    continue
                read.add(rowid)
                if not self._offer(rowid, tuple(values), trusted=True, judge=False):
                    refused.append((rowid, tuple(values)))
        return read, refused, unreadable

    def _bounds(self) -> tuple[int, int] | None:
        """The smallest and largest rowid the table or an index gives; None for a
        table without rows."""
        known: list[int] = []
        try:
            low, high = self.conn.execute("select min(rowid), max(rowid) from reviews").fetchone()
            known += [v for v in (low, high) if v is not None]
        except SQL_ERRORS:
            pass  # the table's first or last pages are damaged: the indexes tell
        if self.listed:
            known += [min(self.listed), max(self.listed)]
        if self.tree is not None:
            keys = [k for r in self.tree.leaves for k in (r.low, r.high) if k is not None]
            known += keys
        return (min(known), max(known)) if known else None

    def _look_up(self, rowids: list[int]) -> Iterator[tuple]:
        """The rows of these rowids that read, one lookup each (a range scan may have
        stepped past them silently on a damaged page)."""
        one = f"select rowid, {self.select} from reviews where rowid = ?"
        for rowid in rowids[:MAX_FAILED_READS]:
            try:
                found = self.conn.execute(one, (rowid,)).fetchone()
            except SQL_ERRORS:
                continue
            if found is not None:
                yield found[0], tuple(found[1:])

    # -------------------------------------------------------------- rows found

    def _matches(self, rowid: int, values: tuple) -> bool | None:
        """Whether an index lists `rowid` as this row (the same id, question and time as
        far as it says them); None when no index lists it."""
        if rowid not in self.listed:
            return None
        known = tuple(said.get(rowid) for said in self.said)
        if known[0] is None and known[2] is None:
            return False
        own = (values[ID_FIELD], values[FIELDS.index("question_id")], values[AT_FIELD])
        return all(k is None or k == v for k, v in zip(known, own, strict=True))

    def _offer(self, rowid: int, values: tuple, *, trusted: bool, judge: bool = True) -> bool:
        """Take a reading of `rowid` (column values in FIELDS order). `trusted`: the
        table's own b-tree gave it; otherwise an index must list it as this row. True
        when it is saved. A reading an import refuses is counted only with `judge`."""
        if rowid in self.saved:
            return False
        if not trusted and not self._matches(rowid, values):
            return False
        checked = checked_row(values)
        if checked is None and not judge:
            return False
        if checked is None:
            # a review an import refuses; or, where it is not the one an index lists,
            # bytes of a damaged page that parse (when every rowid is known)
            matches = self._matches(rowid, values)
            if matches or (matches is None and not self.exact):
                self.refused.add(rowid)
            return False
        if checked[ID_FIELD] in self.ids:
            self.refused.add(rowid)  # the same id twice: an import would refuse the file
            return False
        self.saved[rowid] = checked
        self.ids[checked[ID_FIELD]] = rowid
        self.refused.discard(rowid)
        return True

    def _wanted(self) -> set[int]:
        """The rowids referenced but neither saved nor read as a row an import refuses."""
        referenced = self.listed | set(self.live)
        return referenced - set(self.saved) - self.refused

    def _decode_row(self, page: Page | int, offset: int) -> tuple[int, tuple] | None:
        """(rowid, values in FIELDS order) of the table cell at `offset` on `page` (a page
        or its number), or None when it is not a row of this table."""
        assert self.raw is not None
        try:
            if isinstance(page, int):
                page = self.raw.btree_page(page)
            rowid, payload = self.raw.table_cell(page, offset)
            values = self.raw.record(payload)
        except PageError:
            return None
        width = len(self.schema.columns)
        if not self.order or len(values) > width or any(type(v) is bytes for v in values):
            return None
        # a record written before a column was added holds fewer values: the rest are null
        values = list(values) + [None] * (width - len(values))
        for i in self.schema.reals:
            if type(values[i]) is int:
                values[i] = float(values[i])
        return rowid, tuple(None if i is None else values[i] for i in self.order)

    def _from_pages(self, wanted: set[int]) -> None:
        """Rows of `wanted` rowids read from the table's pages directly: its own cells
        first, then what only the pages hold (cells a damaged count hides, leaves no
        walk reaches), each of those only as an index lists it."""
        if self.raw is None or not self.shaped or not wanted:
            return
        for rowid in sorted(wanted & set(self.live)):
            number, offset = self.live[rowid]
            found = self._decode_row(number, offset)
            if found is None:
                self.damaged.append(span(*leaf_bounds(self.tree, number)))
                continue
            self._offer(*found, trusted=True)
        wanted -= set(self.saved)
        raw = self.raw
        for page, offset in self._stray_cells():
            if not wanted:
                return
            try:
                if raw.table_rowid(page, offset) not in wanted:
                    continue
            except PageError:
                continue
            found = self._decode_row(page, offset)
            if found is not None and self._offer(*found, trusted=False):
                wanted.discard(found[0])

    def _stray_cells(self) -> Iterator[tuple[Page, int]]:
        """Table cells no walk of the table reaches: past a leaf's declared count, and
        on the leaves of no tree that are not free. Free pages are never read."""
        assert self.raw is not None
        leaves = [r.number for r in self.tree.leaves] if self.tree is not None else []
        for number in leaves:
            page = self._page(number)
            if page is not None:
                for offset in self.raw.stray_cells(page):
                    yield page, offset
        for number, kind in self._orphans()[0]:
            page = self._page(number) if kind == TABLE_LEAF else None
            if page is not None:
                for offset in page.cells + self.raw.stray_cells(page):
                    yield page, offset

    def _page(self, number: int) -> Page | None:
        assert self.raw is not None
        try:
            return self.raw.btree_page(number)
        except PageError:
            return None

    def _orphans(self) -> tuple[list[tuple[int, int]], bool]:
        """The b-tree pages no walk from a root reaches and that are not free; whether
        the freelist read whole."""
        assert self.raw is not None
        if self._orphans_found is not None:
            return self._orphans_found
        claimed: set[int] = set()  # pages a walk took as its tree's (not those it refused)
        for root, table in self.schema.trees:
            tree = self.raw.walk(root, table=table)
            claimed.update(reached.number for reached in tree.leaves + tree.interiors)
        free, sound = self.raw.free_pages()
        numbers = (
            n for n in range(1, self.raw.page_count + 1) if n not in claimed and n not in free
        )
        found = (list(self.raw.btree_kinds(numbers)), sound)
        self._orphans_found = found
        return found

    def _orphan_index_entries(self) -> None:
        """Entries on index pages no walk reaches, for an index whose walk broke: a page
        is taken as that index's when every entry on it has that index's shape."""
        if self.raw is None or not self.broken_indexes:
            return
        orphans, sound_freelist = self._orphans()
        if not sound_freelist:
            return  # free pages may be among them: their entries would be stale
        for number, kind in orphans:
            if kind not in (INDEX_LEAF, INDEX_INTERIOR):
                continue
            fits = []
            for index in self.broken_indexes:
                entries, whole = self._index_pages(index, [number], shape=True)
                if whole and entries:
                    fits.append(entries)
            if len(fits) == 1:
                self._list(fits[0])

    # -------------------------------------------------------------- the account

    def _account(self, unreadable: list[tuple[int, int]]) -> None:
        result = self.result
        missing = self.listed - set(self.saved) - self.refused
        known = sorted(set(self.saved) | self.refused)
        lost = sorted(missing)
        for low, high, members in lost_ranges(lost, known):
            days = [
                t[:10]
                for t in (self.said[2].get(r) for r in members)
                if isinstance(t, str) and DAY.match(t)
            ]
            result.lost.append(
                LostRange(low, high, len(members), min(days, default=None), max(days, default=None))
            )
        result.failed_checks = len(self.refused)
        if self.exact:
            return
        # where no source lists every rowid, the damaged ranges may hold rows no one names
        named = sorted(set(self.saved) | self.refused | missing)
        lowest, highest = (named[0], named[-1]) if named else (None, None)
        spans = []
        for first, last in unreadable + self.damaged:
            start = lowest if first is None else first
            end = highest if last is None else last
            if start is not None and end is not None and start <= end:
                spans.append((start, end))
        result.unreadable = list(unnamed_spans(merged(spans), named))


def checked_row(values: tuple) -> tuple | None:
    try:
        return checked_values(record_of(values))
    except (RecordError, ValueError, TypeError, RecursionError):
        return None


def span(low: int | None, high: int | None) -> tuple[int | None, int | None]:
    """The rowids a damaged page of the table could hold: above `low`, up to `high`."""
    return (None if low is None else low + 1, high)


def leaf_bounds(tree: Tree | None, number: int) -> tuple[int | None, int | None]:
    for reached in tree.leaves if tree is not None else ():
        if reached.number == number:
            return reached.low, reached.high
    return None, None


def within(ranges: list[tuple[int, int]], rowid: int) -> bool:
    at = bisect.bisect_right(ranges, (rowid, float("inf"))) - 1
    return at >= 0 and ranges[at][0] <= rowid <= ranges[at][1]
