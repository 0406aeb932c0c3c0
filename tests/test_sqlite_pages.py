"""drill.storage.sqlite_pages: SQLite's file format read directly, for salvage.

What it decodes must be what SQLite reads (every serial type, overflow chains, index
entries, the freelist), and bytes that are not what the format says must end in its
PageError: never another exception, never a loop without end, never a payload longer
than the file.
"""

import functools
import io
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drill.errors import StoreError
from drill.storage.sqlite_pages import PageError, SqliteFile, record

VALUES = [
    None, 0, 1, -1, 127, 128, -129, 32767, -32768, 2**23 - 1, -(2**23), 2**31 - 1, -(2**31),
    2**47 - 1, -(2**47), 2**63 - 1, -(2**63), 0.5, -1e300, 1e-300,
    "", "é∑ text", b"", b"\x00\xff blob", "x" * 3000, b"y" * 5000,
]  # fmt: skip


def small_file(path: Path, page_size: int = 512) -> Path:
    conn = sqlite3.connect(path)
    conn.execute(f"pragma page_size = {page_size}")
    conn.execute("create table t (a, b)")
    conn.execute("create index t_a on t (a)")
    conn.executemany(
        "insert into t (rowid, a, b) values (?, ?, ?)",
        [(i * 7 - 40, value, i) for i, value in enumerate(VALUES)],
    )
    conn.executemany(  # enough entries that the index has interior pages
        "insert into t (rowid, a, b) values (?, ?, ?)",
        [(1000 + i, f"filler {i:04d} " * 3, None) for i in range(200)],
    )
    conn.commit()
    conn.close()
    return path


def roots(path: Path) -> dict[str, int]:
    conn = sqlite3.connect(path)
    found = dict(conn.execute("select name, rootpage from sqlite_master"))
    conn.close()
    return found


def table_rows(file: SqliteFile, root: int) -> list[tuple]:
    tree = file.walk(root, table=True)
    assert tree.clean
    rows = []
    for reached in tree.leaves:
        page = file.btree_page(reached.number)
        assert len(page.cells) == reached.cells
        for offset in page.cells:
            rowid, payload = file.table_cell(page, offset)
            rows.append((rowid, *file.record(payload)))
    return rows


def test_every_serial_type_and_overflow_reads_as_sqlite_reads_it(tmp_path):
    db = small_file(tmp_path / "t.db")
    conn = sqlite3.connect(db)
    expected = conn.execute("select rowid, a, b from t order by rowid").fetchall()
    conn.close()
    file = SqliteFile.open(db)
    try:
        assert file.page_size == 512 and file.usable == 512
        assert table_rows(file, roots(db)["t"]) == expected
    finally:
        file.close()


def test_index_entries_read_as_sqlite_lists_them(tmp_path):
    db = small_file(tmp_path / "t.db")
    file = SqliteFile.from_bytes(db.read_bytes())
    tree = file.walk(roots(db)["t_a"], table=False)
    assert tree.clean and tree.interiors  # entries on interior pages too, long ones overflow
    entries = []
    for reached in tree.leaves + tree.interiors:
        page = file.btree_page(reached.number)
        for offset in page.cells:
            entries.append(tuple(file.record(file.index_cell(page, offset))))
    conn = sqlite3.connect(db)
    expected = conn.execute("select a, rowid from t").fetchall()
    conn.close()
    assert len(entries) == len(VALUES) + 200
    assert sorted(entries, key=repr) == sorted(expected, key=repr)


def test_the_freelist_is_read_whole_and_a_cycle_in_it_ends(tmp_path):
    db = small_file(tmp_path / "t.db")
    conn = sqlite3.connect(db)
    conn.execute("create table scratch (x)")
    conn.execute("insert into scratch values (zeroblob(100000))")
    pages = conn.execute("pragma page_count").fetchone()[0]
    conn.execute("drop table scratch")
    conn.commit()
    (count,) = conn.execute("pragma freelist_count").fetchone()
    conn.close()
    data = bytearray(db.read_bytes())
    free, whole = SqliteFile.from_bytes(bytes(data)).free_pages()
    assert whole and len(free) == count > 190
    assert max(free) <= pages and 1 not in free
    trunk = int.from_bytes(data[32:36], "big")
    at = (trunk - 1) * 512
    data[at : at + 4] = trunk.to_bytes(4, "big")  # the trunk names itself as the next
    data[at + 4 : at + 8] = (10**6).to_bytes(4, "big")  # and more leaves than fit
    free, whole = SqliteFile.from_bytes(bytes(data)).free_pages()
    assert not whole and trunk in free


def one_cell_leaf(cell: bytes) -> bytes:
    """A table leaf page of 512 bytes holding one cell, `cell`, right after its header."""
    page = bytearray(512)
    page[0] = 0x0D
    page[3:5] = (1).to_bytes(2, "big")
    page[8:10] = (10).to_bytes(2, "big")
    page[10 : 10 + len(cell)] = cell
    return bytes(page)


def test_an_overflow_chain_that_loops_is_a_page_error():
    # a payload of 2,000 bytes: 476 on the leaf (the format's formula for 512-byte
    # pages), the rest on overflow pages of 508 bytes each, the first of them page 3
    cell = bytes([0x8F, 0x50, 0x01]) + b"r" * 476 + (3).to_bytes(4, "big")
    looping = (3).to_bytes(4, "big") + b"o" * 508  # page 3 names itself as the next
    padding = bytes(3 * 512)  # a file long enough to hold the payload
    file = SqliteFile.from_bytes(small_header(6) + one_cell_leaf(cell) + looping + padding)
    leaf = file.btree_page(2)
    with pytest.raises(PageError, match="broken overflow chain"):
        file.table_cell(leaf, leaf.cells[0])
    ending = (4).to_bytes(4, "big") + b"o" * 508
    file = SqliteFile.from_bytes(
        small_header(5) + one_cell_leaf(cell) + ending + (5).to_bytes(4, "big") + b"p" * 508
        + bytes(4) + b"q" * 508
    )  # fmt: skip
    rowid, payload = file.table_cell(file.btree_page(2), 10)
    assert (rowid, payload) == (1, b"r" * 476 + b"o" * 508 + b"p" * 508 + b"q" * 508)


def test_a_payload_longer_than_the_file_is_refused_before_it_is_read():
    size = b"\xff" * 8 + b"\x7f"  # a payload size of about 2**64
    file = SqliteFile.from_bytes(small_header(2) + one_cell_leaf(size + b"\x01"))
    leaf = file.btree_page(2)
    with pytest.raises(PageError, match="longer than the file"):
        file.table_cell(leaf, leaf.cells[0])


def test_a_page_every_pointer_leads_to_is_walked_once():
    interior = bytearray(512)
    interior[0] = 0x05
    interior[3:5] = (100).to_bytes(2, "big")
    interior[8:12] = (3).to_bytes(4, "big")  # the right-most child: page 3
    for i in range(100):  # a hundred cells, all the one cell at 400: child 3, key 5
        interior[12 + 2 * i : 14 + 2 * i] = (400).to_bytes(2, "big")
    interior[400:405] = (3).to_bytes(4, "big") + b"\x05"
    leaf = bytearray(512)
    leaf[0] = 0x0D
    file = SqliteFile.from_bytes(small_header(3) + bytes(interior) + bytes(leaf))
    tree = file.walk(2, table=True)
    assert tree.pages == {2, 3} and [r.number for r in tree.leaves] == [3]
    assert [number for number, _, _ in tree.damaged] == [3]  # once, however many pointers


def small_header(pages: int, page_size: int = 512) -> bytes:
    """Page 1 of an empty database of `pages` pages of `page_size` bytes."""
    first = bytearray(page_size)
    first[:16] = b"SQLite format 3\x00"
    first[16:18] = (page_size if page_size < 65536 else 1).to_bytes(2, "big")
    first[18:20] = b"\x01\x01"
    first[21:24] = b"\x40\x20\x20"
    first[24:28] = first[92:96] = (1).to_bytes(4, "big")
    first[28:32] = pages.to_bytes(4, "big")
    first[44:48] = (4).to_bytes(4, "big")
    first[56:60] = (1).to_bytes(4, "big")
    first[100] = 0x0D  # the schema table, empty
    first[105:107] = page_size.to_bytes(2, "big") if page_size < 65536 else b"\x00\x00"
    return bytes(first)


def read_everything(file: SqliteFile) -> int:
    """Every decode the reader offers, on every page as whatever it claims to be; how
    many cells decoded. Only PageError may come out of any of them."""
    decoded = 0
    try:
        file.free_pages()
    except PageError:
        pass
    for number in range(1, file.page_count + 1):
        for table in (True, False):
            tree = file.walk(number, table=table)
            assert len(tree.pages) <= file.page_count + 1
            assert len(tree.damaged) <= len(tree.pages)
        try:
            page = file.btree_page(number)
        except PageError:
            continue
        for offset in page.cells + file.stray_cells(page):
            for decode in (file.table_cell, file.table_rowid, file.interior_cell, file.index_cell):
                try:
                    found = decode(page, offset)
                    if isinstance(found, tuple) and isinstance(found[1], bytes):
                        file.record(found[1])
                    elif isinstance(found, bytes):
                        file.record(found)
                    decoded += 1
                except PageError:
                    pass
    return decoded


@settings(max_examples=300, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(pages=st.lists(st.binary(min_size=512, max_size=512), min_size=1, max_size=4))
def test_arbitrary_bytes_as_pages_only_ever_raise_page_error(pages):
    file = SqliteFile.from_bytes(small_header(len(pages) + 1) + b"".join(pages))
    read_everything(file)


@settings(max_examples=300, deadline=2000)
@given(
    pages=st.lists(
        st.builds(
            lambda kind, count, rest: bytes([kind]) + b"\x00\x00" + count + rest,
            st.sampled_from([0x02, 0x05, 0x0A, 0x0D]),
            st.binary(min_size=2, max_size=2),
            st.binary(min_size=508, max_size=508),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_bytes_that_look_like_btree_pages_only_ever_raise_page_error(pages):
    # a real page kind first, so the decoders get past the first check
    file = SqliteFile.from_bytes(small_header(len(pages) + 1) + b"".join(pages))
    read_everything(file)


@settings(max_examples=500, deadline=1000)
@given(payload=st.binary(max_size=600))
def test_arbitrary_bytes_as_a_record_only_ever_raise_page_error(payload):
    try:
        values = record(payload)
    except PageError:
        return
    assert len(values) <= len(payload)


@settings(max_examples=300, deadline=1000)
@given(head=st.binary(min_size=0, max_size=200), tail=st.binary(max_size=2000))
def test_an_arbitrary_header_only_ever_raises_page_error(head, tail):
    data = b"SQLite format 3\x00" + head + tail
    try:
        file = SqliteFile.from_bytes(data)
    except PageError:
        return
    assert file.page_count * file.page_size <= len(data)
    read_everything(file)


@functools.cache
def sound_file() -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        return small_file(Path(folder) / "t.db").read_bytes()


@settings(max_examples=200, deadline=3000)
@given(flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=30))
def test_a_real_file_with_bytes_changed_only_ever_raises_page_error(flips):
    data = bytearray(sound_file())
    for at, byte in flips:
        data[100 + at % (len(data) - 100)] = byte
    read_everything(SqliteFile.from_bytes(bytes(data)))


@functools.cache
def kvdrill_file() -> bytes:
    from test_salvage import filled

    with tempfile.TemporaryDirectory() as folder:
        return filled(Path(folder) / "k.db", range(60)).read_bytes()


@settings(max_examples=60, deadline=None)
@given(
    flips=st.lists(
        st.tuples(st.integers(0, 10**7), st.binary(min_size=1, max_size=64)), min_size=1, max_size=8
    )
)
def test_salvage_of_a_file_with_bytes_changed_saves_or_says_why(flips):
    from drill.storage.salvage import salvage_history

    data = bytearray(kvdrill_file())
    for at, chunk in flips:
        at = 100 + at % (len(data) - 100 - len(chunk))
        data[at : at + len(chunk)] = chunk
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "k.db"
        db.write_bytes(bytes(data))
        out = io.BytesIO()
        try:
            result = salvage_history(db, out)
        except StoreError:
            return
    saved = out.getvalue().count(b"\n")
    assert saved == result.saved
    # every review the file held is saved, or counted lost, unreadable or left out
    assert saved + result.lost_count + result.unreadable_rowids + result.failed_checks >= 60
