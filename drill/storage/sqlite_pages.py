"""Reading a SQLite file's pages directly, for salvage (drill.storage.salvage).

SQLite refuses a page it finds damaged, and can then no longer reach the pages below
it, though they may be intact. This reads the file format itself (sqlite.org's "Database
File Format"): the header, the freelist, and the cells of b-tree pages, with their
records and overflow chains. Nothing here trusts the bytes: every offset, length, count
and page number is checked before it is used, overflow and freelist chains are checked
for cycles, and a payload can be no longer than the file. Bytes that do not decode raise
PageError, and nothing else: the caller counts them as damage.

Only reading: the file is opened read-only and never written.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import IO, Any, NamedTuple

MAGIC = b"SQLite format 3\x00"
HEADER_SIZE = 100
TABLE_LEAF, TABLE_INTERIOR, INDEX_LEAF, INDEX_INTERIOR = 0x0D, 0x05, 0x0A, 0x02
LEAVES = (TABLE_LEAF, INDEX_LEAF)
MAX_DEPTH = 64  # SQLite's own cursors stop at 20 levels
_ENCODINGS = {1: "utf-8", 2: "utf-16-le", 3: "utf-16-be"}
_DOUBLE = struct.Struct(">d")


class PageError(Exception):
    """Bytes that do not decode as the file format says."""


def varint(data: bytes, pos: int, end: int) -> tuple[int, int]:
    """The varint at `pos` (it must end before `end`) and the position after it."""
    value = 0
    for _ in range(8):
        if pos >= end:
            raise PageError("varint runs past its end")
        byte = data[pos]
        pos += 1
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, pos
    if pos >= end:
        raise PageError("varint runs past its end")
    return (value << 8) | data[pos], pos + 1


def signed64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def record(payload: bytes, encoding: str = "utf-8") -> list[Any]:
    """The values of a record (a row, or an index entry): None, int, float, str, bytes."""
    end = len(payload)
    size, pos = varint(payload, 0, end)
    if size < pos or size > end:
        raise PageError("record header size out of bounds")
    types = []
    while pos < size:
        kind, pos = varint(payload, pos, size)
        types.append(kind)
    if pos != size:
        raise PageError("record header overruns its size")
    values: list[Any] = []
    body = size
    for kind in types:
        if kind == 0:
            values.append(None)
            continue
        if kind in (8, 9):
            values.append(kind - 8)
            continue
        if kind in (10, 11):
            raise PageError("reserved serial type")
        width = (1, 2, 3, 4, 6, 8, 8)[kind - 1] if kind < 8 else (kind - 12) // 2
        if body + width > end:
            raise PageError("record value runs past the payload")
        chunk = payload[body : body + width]
        body += width
        if kind < 7:
            values.append(int.from_bytes(chunk, "big", signed=True))
        elif kind == 7:
            values.append(_DOUBLE.unpack(chunk)[0])
        elif kind % 2 == 0:
            values.append(bytes(chunk))
        else:
            try:
                values.append(bytes(chunk).decode(encoding))
            except UnicodeDecodeError:
                raise PageError("text that is not valid in the database's encoding") from None
    return values


@dataclass(frozen=True)
class Page:
    """One b-tree page: its kind, and where its cells are."""

    number: int
    data: bytes  # the whole page (usable bytes and reserved tail)
    kind: int
    header: int  # offset of the b-tree page header: 100 on page 1, else 0
    cells: tuple[int, ...]  # offsets of the cells the page declares, in key order
    right: int  # the right-most child of an interior page; 0 on a leaf

    @property
    def leaf(self) -> bool:
        return self.kind in LEAVES

    @property
    def table(self) -> bool:
        return self.kind in (TABLE_LEAF, TABLE_INTERIOR)


class Reached(NamedTuple):
    """A page a walk reached: its number, how many cells it declares, and for a table
    the rowids its cells may hold (above `low`, up to `high`; None: no bound). Only the
    number is kept, not the page: a walk of a large file would hold all of it."""

    number: int
    cells: int
    low: int | None = None
    high: int | None = None


@dataclass
class Tree:
    """What a walk from a b-tree's root page reached."""

    pages: set[int] = field(default_factory=set)  # every page reached, the damaged too
    leaves: list[Reached] = field(default_factory=list)
    interiors: list[Reached] = field(default_factory=list)
    # pages a pointer led to that are not a sound page of this tree; for a table, the
    # rowids its cells would have held: above low (None: no bound) up to high
    damaged: list[tuple[int, int | None, int | None]] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.damaged


class SqliteFile:
    """A SQLite database file, read page by page.

    `read(offset, size)` gives bytes of the file (fewer at its end). PageError when
    the header is not SQLite's."""

    def __init__(self, read: Callable[[int, int], bytes], size: int):
        self._read = read
        self._handle: IO[bytes] | None = None  # the file `open` read from
        head = read(0, HEADER_SIZE)
        if len(head) < HEADER_SIZE or not head.startswith(MAGIC):
            raise PageError("not a SQLite file")
        page_size = int.from_bytes(head[16:18], "big")
        page_size = 65536 if page_size == 1 else page_size
        if page_size < 512 or page_size & (page_size - 1):
            raise PageError("page size is not a power of two from 512 to 65536")
        self.page_size = page_size
        self.usable = page_size - head[20]
        if self.usable < 480:
            raise PageError("too many reserved bytes per page")
        counted = int.from_bytes(head[28:32], "big")
        valid = counted and head[24:28] == head[92:96]
        present = size // page_size
        self.page_count = min(counted, present) if valid else present
        encoding = int.from_bytes(head[56:60], "big")
        self.encoding = _ENCODINGS.get(encoding, "utf-8")
        self._first_trunk = int.from_bytes(head[32:36], "big")
        self._free_count = int.from_bytes(head[36:40], "big")
        self.special = self._special_pages(autovacuum=int.from_bytes(head[52:56], "big") != 0)
        self.page = lru_cache(maxsize=512)(self._page)  # type: ignore[method-assign]

    @classmethod
    def from_bytes(cls, data: bytes) -> SqliteFile:
        return cls(lambda offset, size: data[offset : offset + size], len(data))

    @classmethod
    def open(cls, path: Path) -> SqliteFile:
        """The file at `path`, read as it is (opened read-only, its handle kept)."""
        handle = open(path, "rb")  # kept for the reads; closed by close()
        fd = handle.fileno()
        try:
            result = cls(lambda offset, size: os.pread(fd, size, offset), os.fstat(fd).st_size)
        except BaseException:
            handle.close()
            raise
        result._handle = handle
        return result

    def close(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle is not None:
            handle.close()

    def _special_pages(self, *, autovacuum: bool) -> frozenset[int]:
        """The lock-byte page, and the pointer-map pages of an auto-vacuum file: never
        b-tree pages."""
        special = {1073741824 // self.page_size + 1}
        if autovacuum:
            step = self.usable // 5 + 1
            special.update(range(2, self.page_count + 1, step))
        return frozenset(special)

    def _page(self, number: int) -> bytes:
        if not 1 <= number <= self.page_count:
            raise PageError(f"page {number} is outside the file")
        data = self._read((number - 1) * self.page_size, self.page_size)
        if len(data) != self.page_size:
            raise PageError(f"page {number} is cut short")
        return bytes(data)

    # ------------------------------------------------------------------ the freelist

    def free_pages(self) -> tuple[set[int], bool]:
        """The pages on the freelist, and whether the list read whole (every trunk
        sound, as many pages as the header counts)."""
        free: set[int] = set()
        complete = True
        trunk, seen = self._first_trunk, set()
        most = self.usable // 4 - 2
        while trunk:
            if trunk in seen or not 1 < trunk <= self.page_count:
                complete = False
                break
            seen.add(trunk)
            free.add(trunk)
            data = self.page(trunk)
            count = int.from_bytes(data[4:8], "big")
            if count > most:
                complete, count = False, most
            for at in range(8, 8 + 4 * count, 4):
                leaf = int.from_bytes(data[at : at + 4], "big")
                if 1 < leaf <= self.page_count:
                    free.add(leaf)
                else:
                    complete = False
            trunk = int.from_bytes(data[0:4], "big")
        return free, complete and len(free) == self._free_count

    # ------------------------------------------------------------------ b-tree pages

    def btree_page(self, number: int) -> Page:
        """Page `number` as a b-tree page; PageError when it is not one."""
        data = self.page(number)
        header = HEADER_SIZE if number == 1 else 0
        kind = data[header]
        if kind not in (TABLE_LEAF, TABLE_INTERIOR, INDEX_LEAF, INDEX_INTERIOR):
            raise PageError(f"page {number} is not a b-tree page")
        size = 8 if kind in LEAVES else 12
        count = int.from_bytes(data[header + 3 : header + 5], "big")
        array = header + size
        end = array + 2 * count
        if end > self.usable:
            raise PageError(f"page {number} declares more cells than fit")
        cells = tuple(int.from_bytes(data[at : at + 2], "big") for at in range(array, end, 2))
        for offset in cells:
            if not end <= offset < self.usable:
                raise PageError(f"page {number} has a cell outside its content area")
        right = 0 if kind in LEAVES else int.from_bytes(data[header + 8 : header + 12], "big")
        return Page(number, data, kind, header, cells, right)

    def stray_cells(self, page: Page) -> tuple[int, ...]:
        """Cell offsets past the page's declared count: the pointer array's old slots,
        read on while each points into the page's content area. A count cut short by
        damage leaves its cells there; so may a deleted one (stale: check what they hold)."""
        array = page.header + (8 if page.leaf else 12) + 2 * len(page.cells)
        found: list[int] = []
        at = array
        while at + 2 <= self.usable:
            offset = int.from_bytes(page.data[at : at + 2], "big")
            if not array + 2 * (len(found) + 1) <= offset < self.usable:
                break
            found.append(offset)
            at += 2
        return tuple(found)

    def _payload(self, page: Page, pos: int, size: int, index: bool) -> bytes:
        """The payload of `size` bytes starting at `pos` on `page`, its overflow chain
        followed."""
        usable = self.usable
        if size > self.page_count * usable:
            raise PageError("payload longer than the file")
        most = (usable - 12) * 64 // 255 - 23 if index else usable - 35
        if size <= most:
            if pos + size > usable:
                raise PageError("cell runs past its page")
            return page.data[pos : pos + size]
        least = (usable - 12) * 32 // 255 - 23
        local = least + (size - least) % (usable - 4)
        if local > most:
            local = least
        if pos + local + 4 > usable:
            raise PageError("cell runs past its page")
        parts = [page.data[pos : pos + local]]
        need = size - local
        number = int.from_bytes(page.data[pos + local : pos + local + 4], "big")
        seen: set[int] = set()
        while need > 0:
            if number in seen or number < 2:
                raise PageError("broken overflow chain")
            seen.add(number)
            data = self.page(number)
            take = min(need, usable - 4)
            parts.append(data[4 : 4 + take])
            need -= take
            number = int.from_bytes(data[0:4], "big")
        return b"".join(parts)

    def table_cell(self, page: Page, offset: int) -> tuple[int, bytes]:
        """(rowid, payload) of the table leaf cell at `offset`."""
        size, pos = varint(page.data, offset, self.usable)
        rowid, pos = varint(page.data, pos, self.usable)
        return signed64(rowid), self._payload(page, pos, size, index=False)

    def table_rowid(self, page: Page, offset: int) -> int:
        """The rowid of the table leaf cell at `offset`, its payload not read."""
        _, pos = varint(page.data, offset, self.usable)
        return signed64(varint(page.data, pos, self.usable)[0])

    def interior_cell(self, page: Page, offset: int) -> tuple[int, int | None]:
        """(left child, key) of an interior cell; the key is the rowid of a table's
        cell, None for an index's (its record is read by index_cell)."""
        if offset + 4 > self.usable:
            raise PageError("cell runs past its page")
        child = int.from_bytes(page.data[offset : offset + 4], "big")
        if page.kind == INDEX_INTERIOR:
            return child, None
        return child, signed64(varint(page.data, offset + 4, self.usable)[0])

    def index_cell(self, page: Page, offset: int) -> bytes:
        """The payload (the entry's record) of an index cell, leaf or interior."""
        pos = offset + (4 if page.kind == INDEX_INTERIOR else 0)
        size, pos = varint(page.data, pos, self.usable)
        return self._payload(page, pos, size, index=True)

    def record(self, payload: bytes) -> list[Any]:
        return record(payload, self.encoding)

    # ------------------------------------------------------------------ walks

    def walk(self, root: int, *, table: bool) -> Tree:
        """Every page of the b-tree at `root` that its pointers reach. A page that is
        not a sound page of such a tree (another kind, outside the file, reached twice,
        too deep, a child pointer that does not read) is recorded as damaged, once, with
        the rowid bounds its parent gives it in a table; the walk goes on around it. Each
        page is queued once, so what a walk holds is bounded by the file's page count."""
        tree = Tree()
        kinds = (TABLE_LEAF, TABLE_INTERIOR) if table else (INDEX_LEAF, INDEX_INTERIOR)
        marked: set[int] = set()

        def damaged(number: int, low: int | None, high: int | None) -> None:
            if number not in marked:
                marked.add(number)
                tree.damaged.append((number, low, high))

        queued = {root}
        stack: list[tuple[int, int | None, int | None, int]] = [(root, None, None, 0)]
        while stack:
            number, low, high, depth = stack.pop()
            tree.pages.add(number)
            try:
                if number in self.special or depth > MAX_DEPTH:
                    raise PageError(f"page {number} cannot be in a tree here")
                page = self.btree_page(number)
                if page.kind not in kinds:
                    raise PageError(f"page {number} belongs to another kind of tree")
            except PageError:
                damaged(number, low, high)
                continue
            if page.leaf:
                tree.leaves.append(Reached(number, len(page.cells), low, high))
                continue
            tree.interiors.append(Reached(number, len(page.cells), low, high))
            children: list[tuple[int, int | None, int | None]] = []
            below = low
            for offset in page.cells:
                try:
                    child, key = self.interior_cell(page, offset)
                except PageError:
                    # the child and the keys it held are unknown: the next sibling's
                    # range starts where this one's would have
                    damaged(number, below, high)
                    continue
                children.append((child, below, key))
                below = key if key is not None else below
            children.append((page.right, below, high))
            for child, child_low, child_high in reversed(children):
                if child in queued:
                    damaged(child, child_low, child_high)  # a second pointer to one page
                    continue
                queued.add(child)
                stack.append((child, child_low, child_high, depth + 1))
        return tree

    def btree_kinds(self, numbers: Iterator[int] | range) -> Iterator[tuple[int, int]]:
        """(number, kind) of the pages among `numbers` that read as b-tree pages."""
        for number in numbers:
            if number in self.special:
                continue
            try:
                yield number, self.btree_page(number).kind
            except PageError:
                continue
