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

import bisect
import re
import shutil
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from drill.errors import StoreError
from drill.storage.review_record import ENCODER, FIELDS, RecordError, checked_values, record_of
from drill.storage.sqlite_pages import (
    INDEX_INTERIOR,
    INDEX_LEAF,
    TABLE_LEAF,
    Page,
    PageError,
    SqliteFile,
    Tree,
)

_Cell = tuple[int, int]  # (page number, offset) of a cell

CHUNK_ROWS = 1000  # rowids read per query while nothing fails
MAX_FAILED_READS = 100_000  # then the rest of the table is given up as unreadable
# what a query on a damaged file may raise: SQLite's error, or, where its message quotes
# the damaged bytes (a schema's), Python's failure to read that message as text
SQL_ERRORS = (sqlite3.Error, UnicodeDecodeError)
IDENTITY = ("id", "question_id", "reviewed_at")  # what an index entry says of its review
_DAY = re.compile(r"\d{4}-\d\d-\d\d")
_TIME = re.compile(r"\d{4}-\d\d-\d\dT")


@dataclass(frozen=True)
class LostRange:
    """Reviews the file lists that could not be saved: `count` of the rowids from `low`
    to `high` (the others there do not exist, or were saved), answered on the days from
    `first_day` to `last_day` as the index says (None where no index gives a time)."""

    low: int
    high: int
    count: int
    first_day: str | None = None
    last_day: str | None = None


@dataclass
class Salvage:
    saved: int = 0
    lost: list[LostRange] = field(default_factory=list)
    # rowid ranges whose reviews neither the table nor an index can name: at most
    # that many reviews were there
    unreadable: list[tuple[int, int]] = field(default_factory=list)
    failed_checks: int = 0  # reviews read that an import would refuse
    log_left_out: bool = False  # the write-ahead log could not be read with the file

    @property
    def lost_count(self) -> int:
        return sum(r.count for r in self.lost)

    @property
    def unreadable_rowids(self) -> int:
        """How many rowids lie in the unreadable ranges (at most that many reviews)."""
        return sum(high - low + 1 for low, high in self.unreadable)

    @property
    def complete(self) -> bool:
        """Every review the file references was saved (and nothing was left out)."""
        return not (self.lost or self.unreadable or self.failed_checks or self.log_left_out)


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
            schema = _schema(conn)
        except SQL_ERRORS as exc:
            raise StoreError(
                f"the reviews of {shown} cannot be read at all ({_message(exc)}); nothing was saved"
            ) from None
        raw = _raw_file(conn, path, fold_log)
        reading = _Reading(conn, raw, schema)
        result = reading.run()
        rows = sorted(reading.saved.values(), key=lambda v: (v[_AT], v[_ID]))
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


_AT, _ID = FIELDS.index("reviewed_at"), FIELDS.index("id")


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


# ------------------------------------------------------------------ the schema


@dataclass(frozen=True)
class _Index:
    name: str
    root: int
    columns: tuple[str, ...]  # its key columns; the rowid follows them


@dataclass(frozen=True)
class _Schema:
    root: int  # the reviews table's root page
    columns: tuple[str, ...]  # the table's columns, in the order its records hold them
    reals: frozenset[int]  # the positions of columns of REAL affinity
    indexes: tuple[_Index, ...]  # the indexes that list every review
    trees: tuple[tuple[int, bool], ...]  # (root page, is a table) of every b-tree


def _schema(conn: sqlite3.Connection) -> _Schema:
    info = conn.execute("pragma table_info(reviews)").fetchall()
    if not info:
        raise sqlite3.OperationalError("no such table: reviews")
    master = conn.execute(
        "select type, name, rootpage from sqlite_master where type in ('table', 'index')"
    ).fetchall()
    roots = {name: page for _, name, page in master if isinstance(page, int)}
    indexes = []
    for _, name, _unique, _origin, partial in conn.execute("pragma index_list(reviews)"):
        if partial or name not in roots:
            continue  # a partial index lists only some reviews
        xinfo = conn.execute(f"pragma index_xinfo({_quoted(name)})").fetchall()
        keys = tuple(row[2] for row in xinfo if row[5])
        if all(isinstance(key, str) for key in keys) and any(k in IDENTITY for k in keys):
            indexes.append(_Index(name, roots[name], keys))
    trees = [(1, True)] + [
        (page, kind == "table") for kind, _, page in master if isinstance(page, int) and page > 0
    ]
    return _Schema(
        root=roots.get("reviews", 0),
        columns=tuple(row[1] for row in info),
        reals=frozenset(i for i, row in enumerate(info) if _real_affinity(str(row[2] or ""))),
        indexes=tuple(indexes),
        trees=tuple(trees),
    )


def _quoted(name: str) -> str:
    """A name from the schema as SQL quotes it (a damaged schema may hold anything)."""
    return '"' + name.replace('"', '""') + '"'


def _real_affinity(declared: str) -> bool:
    """Whether a column declared so stores a whole number as an integer and reads it
    back as a float (SQLite's affinity rules)."""
    name = declared.upper()
    if "INT" in name or any(word in name for word in ("CHAR", "CLOB", "TEXT", "BLOB")):
        return False
    return any(word in name for word in ("REAL", "FLOA", "DOUB"))


# ------------------------------------------------------------------ the reading


class _Reading:
    """One salvage: what each source says, and what is saved, refused and lost."""

    def __init__(self, conn: sqlite3.Connection, raw: SqliteFile | None, schema: _Schema):
        self.conn, self.raw, self.schema = conn, raw, schema
        self.result = Salvage()
        # what the indexes say of each rowid they list: its id, question and time
        self.said: list[dict[int, Any]] = [{} for _ in IDENTITY]
        self.listed: set[int] = set()
        self.exact = False  # a source that lists every rowid read whole
        self.saved: dict[int, tuple] = {}  # rowid -> checked values
        self.refused: set[int] = set()  # rowids read whose every reading an import refuses
        self.ids: dict[str, int] = {}
        self.broken_indexes: list[_Index] = []  # indexes whose pages did not all read
        # table rowid ranges on damaged pages (None: from the first, or to the last)
        self.damaged: list[tuple[int | None, int | None]] = []
        self.tree: Tree | None = None
        self._orphans_found: tuple[list[tuple[int, int]], bool] | None = None
        self.live: dict[int, _Cell] = {}  # rowid -> where the table's own cell for it lies
        order = {name: i for i, name in enumerate(schema.columns)}
        # a row read from the pages is taken only in the table's own column order
        self.shaped = set(schema.columns) == set(FIELDS) and len(schema.columns) == len(FIELDS)
        self.order = tuple(order[name] for name in FIELDS) if self.shaped else ()

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
            failed = _merged(unreadable)
            lookups = [r for r in sorted(wanted) if not _within(failed, r)]
            for rowid, values in self._look_up(lookups):
                self._offer(rowid, values, trusted=True)
            self._from_pages(self._wanted())
        self._account(unreadable)
        return self.result

    # -------------------------------------------------------------- indexes

    def _read_index(self, index: _Index) -> None:
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

    def _index_sql(self, index: _Index) -> tuple[list[dict[int, Any]], bool]:
        """For each of id, question and time, what the index says by rowid (by SQL);
        whether it read to its end."""
        said: list[dict[int, Any]] = [{} for _ in IDENTITY]
        for i, name in enumerate(IDENTITY):
            if name not in index.columns:
                continue
            sql = f"select rowid, {_quoted(name)} from reviews indexed by {_quoted(index.name)}"
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
        self, index: _Index, pages: list[int], *, shape: bool
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

    def _identity(self, index: _Index, values, *, shape: bool) -> tuple | None:
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
                if shape and name == "reviewed_at" and not _TIME.match(value):
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
            self.damaged.append(_bounds(low, high))
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
                self.damaged.append(_bounds(reached.low, reached.high))
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
            for rowid, *values in _rows(self.conn, *bounds, unreadable):
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
        columns = ", ".join(FIELDS)
        one = f"select rowid, {columns} from reviews where rowid = ?"
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
        own = (values[_ID], values[FIELDS.index("question_id")], values[_AT])
        return all(k is None or k == v for k, v in zip(known, own, strict=True))

    def _offer(self, rowid: int, values: tuple, *, trusted: bool, judge: bool = True) -> bool:
        """Take a reading of `rowid` (column values in FIELDS order). `trusted`: the
        table's own b-tree gave it; otherwise an index must list it as this row. True
        when it is saved. A reading an import refuses is counted only with `judge`."""
        if rowid in self.saved:
            return False
        if not trusted and not self._matches(rowid, values):
            return False
        checked = _checked(values)
        if checked is None and not judge:
            return False
        if checked is None:
            # a review an import refuses; or, where it is not the one an index lists,
            # bytes of a damaged page that parse (when every rowid is known)
            matches = self._matches(rowid, values)
            if matches or (matches is None and not self.exact):
                self.refused.add(rowid)
            return False
        if checked[_ID] in self.ids:
            self.refused.add(rowid)  # the same id twice: an import would refuse the file
            return False
        self.saved[rowid] = checked
        self.ids[checked[_ID]] = rowid
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
        if len(values) != len(self.order) or any(type(v) is bytes for v in values):
            return None
        for i in self.schema.reals:
            if type(values[i]) is int:
                values[i] = float(values[i])
        return rowid, tuple(values[i] for i in self.order)

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
                self.damaged.append(_bounds(*_leaf_bounds(self.tree, number)))
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
        for low, high, members in _ranges(lost, known):
            days = [
                t[:10]
                for t in (self.said[2].get(r) for r in members)
                if isinstance(t, str) and _DAY.match(t)
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
        result.unreadable = list(_unnamed(_merged(spans), named))


def _checked(values: tuple) -> tuple | None:
    try:
        return checked_values(record_of(values))
    except (RecordError, ValueError, TypeError, RecursionError):
        return None


def _bounds(low: int | None, high: int | None) -> tuple[int | None, int | None]:
    """The rowids a damaged page of the table could hold: above `low`, up to `high`."""
    return (None if low is None else low + 1, high)


def _leaf_bounds(tree: Tree | None, number: int) -> tuple[int | None, int | None]:
    for reached in tree.leaves if tree is not None else ():
        if reached.number == number:
            return reached.low, reached.high
    return None, None


def _within(ranges: list[tuple[int, int]], rowid: int) -> bool:
    at = bisect.bisect_right(ranges, (rowid, float("inf"))) - 1
    return at >= 0 and ranges[at][0] <= rowid <= ranges[at][1]


def _ranges(rowids: list[int], known: list[int]) -> Iterator[tuple[int, int, list[int]]]:
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


def _unnamed(spans: list[tuple[int, int]], named: list[int]) -> Iterator[tuple[int, int]]:
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


def _rows(
    conn: sqlite3.Connection, low: int, high: int, unreadable: list[tuple[int, int]]
) -> Iterator[tuple]:
    """Every row that reads (its rowid first), chunk by chunk from `low` to `high`. A
    chunk that fails is halved down to single rowids, which are added to `unreadable`;
    after each chunk the next rowid that exists is looked up, so a gap in the rowids
    costs one query, not one per chunk. After MAX_FAILED_READS failed reads the rest is
    given up as unreadable."""
    columns = ", ".join(FIELDS)
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


def _merged(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(high, merged[-1][1]))
        else:
            merged.append((low, high))
    return merged


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
