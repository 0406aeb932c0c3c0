"""`kvdrill export --salvage`: the reviews a damaged database still holds, saved.

Each case names the failure it guards against: a damaged page taking the whole history
with it, reviews the backup lacks lost in a restore, damage that still parses carried
into an import, a salvage of a sound database that differs from its export.

Which reviews a damaged page held is read from the file's bytes, not from the code
under test: every answer carries a numbered marker, and the markers on the page that
is overwritten are the reviews that cannot come back.
"""

import json
import random
import re
import sqlite3
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from dbstates import run, sha

from drill.storage.database import open_db

T0 = datetime(2026, 10, 1, 9, 0, tzinfo=timezone.utc)
PAGE = 4096
MARKER = re.compile(rb"answer-(\d{5})-")


def review(n: int) -> dict:
    return {
        "id": str(uuid.UUID(int=n + 1)),
        "question_id": f"q-{n % 7}",
        "reviewed_at": (T0 + timedelta(minutes=n)).isoformat(timespec="microseconds"),
        "rating": 1 + n % 4,
        "correct": n % 2,
        "answer": f"answer-{n:05d}-" + "x" * 150,
        "cram": 0,
    }


def filled(path: Path, numbers: range) -> Path:
    db = open_db(path, now=T0)
    db["reviews"].insert_all(review(n) for n in numbers)
    db.conn.close()
    return settle(path)


def settle(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("pragma wal_checkpoint(truncate)")
    conn.execute("pragma journal_mode = delete")  # one file: the damage is all there is
    conn.close()
    return path


def damage_page_of(path: Path, n: int) -> set[int]:
    """Overwrite the page that holds review `n`'s answer; the reviews it held."""
    data = bytearray(path.read_bytes())
    page = data.index(f"answer-{n:05d}-".encode()) // PAGE
    held = {int(m) for m in MARKER.findall(bytes(data[page * PAGE : (page + 1) * PAGE]))}
    data[page * PAGE : (page + 1) * PAGE] = b"\xa5" * PAGE
    path.write_bytes(bytes(data))
    return held


def markers(path: Path) -> list[int]:
    return [int(m) for m in MARKER.findall(path.read_bytes())]


def test_a_damaged_page_loses_only_the_reviews_it_held(tmp_path):
    db = filled(tmp_path / "k.db", range(3000))
    lost = damage_page_of(db, 1500)
    assert 10 <= len(lost) <= 30 and 1500 in lost
    assert run("stats", "--db", db).exit_code == 1  # every other command refuses the file
    result = run("export", "--salvage", "-o", tmp_path / "saved.jsonl", "--db", db)
    assert result.exit_code == 1, result.output  # the file is written, but not whole
    saved = tmp_path / "saved.jsonl"
    assert markers(saved) == [n for n in range(3000) if n not in lost]  # in time order
    first, last = min(lost) + 1, max(lost) + 1  # rowid = n + 1
    assert sorted(lost) == list(range(min(lost), max(lost) + 1))
    assert {review(n)["reviewed_at"][:10] for n in lost} == {"2026-10-02"}
    assert result.stderr == (
        f"Error: not every review of {db} was saved ({len(lost)} lost). "
        f"Saved {3000 - len(lost):,} reviews from {db} to {saved}. Lost {len(lost)} reviews the"
        f" file still lists: rowids {first:,}-{last:,}, answered 2026-10-02. To put them back:"
        f" kvdrill restore BACKUP, then kvdrill import {saved} (it adds only the reviews the"
        " backup lacks).\n"
    )


def test_a_restore_then_the_import_brings_back_what_the_backup_lacked(tmp_path):
    db = filled(tmp_path / "k.db", range(1000))
    assert run("backup", "--db", db, "--now", "2026-11-20T12:00:00+00:00").exit_code == 0
    conn = sqlite3.connect(db)
    conn.executemany(
        "insert into reviews (id, question_id, reviewed_at, rating, correct, answer, cram)"
        " values (:id, :question_id, :reviewed_at, :rating, :correct, :answer, :cram)",
        [review(n) for n in range(1000, 2000)],
    )
    conn.commit()
    conn.close()
    lost = damage_page_of(settle(db), 1500)
    saved = tmp_path / "saved.jsonl"
    assert run("export", "--salvage", "-o", saved, "--db", db).exit_code == 1  # some are lost
    backup = tmp_path / "backups" / "k.db-20261120-120000-manual.db"
    assert run("restore", backup, "--db", db, "--now", "2026-11-20T13:00:00+00:00").exit_code == 0
    result = run("import", saved, "--db", db)
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"Imported {1000 - len(lost)} new reviews from {saved} ({1000} already present); "
        "rebuilt 7 cards.\n"
    )
    conn = sqlite3.connect(db)
    answers = [a for (a,) in conn.execute("select answer from reviews order by reviewed_at")]
    conn.close()
    assert [int(a[7:12]) for a in answers] == [n for n in range(2000) if n not in lost]


def test_a_sound_database_salvages_to_its_export(tmp_path):
    db = filled(tmp_path / "k.db", range(50))
    conn = sqlite3.connect(db)
    conn.execute(
        "update reviews set params = ?, expected = 0.1, unit = 'GiB', answer = ?"
        " where rowid = 3",
        [json.dumps({"b": 1e16, "a": "\u00e9"}), "a\x00b\n"],
    )
    conn.commit()
    conn.close()
    exported = run("export", "--db", db).stdout_bytes
    salvaged = run("export", "--salvage", "--db", db)
    assert salvaged.exit_code == 0
    assert salvaged.stdout_bytes == exported
    assert salvaged.stderr == f"Saved 50 reviews from {db} to standard output.\n"


def test_a_row_that_reads_but_an_import_would_refuse_is_left_out(tmp_path):
    db = filled(tmp_path / "k.db", range(20))
    conn = sqlite3.connect(db)
    conn.execute("update reviews set rating = 9 where rowid = 5")
    conn.execute("update reviews set reviewed_at = 'yesterday' where rowid = 6")
    conn.commit()
    conn.close()
    saved = tmp_path / "s.jsonl"
    result = run("export", "--salvage", "-o", saved, "--db", db)
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: not every review of {db} was saved (2 left out). "
        f"Saved 18 reviews from {db} to {saved}. Left out, as an import would refuse them: 2."
        f" To put them back: kvdrill restore BACKUP, then kvdrill import {saved} (it adds only"
        " the reviews the backup lacks).\n"
    )
    assert markers(saved) == [n for n in range(20) if n not in (4, 5)]


def test_what_salvage_cannot_do_is_one_line(tmp_path):
    csv = run("export", "--salvage", "--format", "csv", "--db", tmp_path / "k.db")
    assert csv.exit_code == 2
    assert csv.stderr.splitlines()[-1].startswith(
        "Error: --salvage writes JSON Lines only; leave out --format csv (see "
    )
    missing = run("export", "--salvage", "--db", tmp_path / "none.db")
    assert (missing.exit_code, missing.stderr) == (1, f"Error: no database at {tmp_path / 'none.db'}\n")
    db = filled(tmp_path / "k.db", range(20))
    data = bytearray(db.read_bytes())
    data[100:PAGE] = b"\xa5" * (PAGE - 100)  # the schema page: no table can be found
    db.write_bytes(bytes(data))
    broken = run("export", "--salvage", "-o", tmp_path / "s.jsonl", "--db", db)
    assert broken.exit_code == 1
    assert broken.stderr.startswith(f"Error: the reviews of {db} cannot be read at all (")
    assert broken.stderr.endswith("); nothing was saved\n")
    assert not (tmp_path / "s.jsonl").exists()
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("create table notes (x)").connection.close()
    refused = run("export", "--salvage", "--db", other)
    assert refused.exit_code == 1
    assert refused.stderr.startswith(f"Error: {other} is not a kvdrill database (tables notes)")


def test_reviews_still_in_the_write_ahead_log_are_saved_and_the_files_left_alone(
    tmp_path, monkeypatch
):
    import drill.storage.backup

    def as_on_a_read_only_mount(path):
        # what a read-only connection falls back to where it cannot make the -shm file:
        # the file as it lies, without its log
        return sqlite3.connect(f"file:{path}?immutable=1", uri=True, isolation_level=None)

    monkeypatch.setattr(drill.storage.backup, "connect_read_only", as_on_a_read_only_mount)
    db = filled(tmp_path / "k.db", range(20))
    writer = sqlite3.connect(db, isolation_level=None)
    try:
        writer.execute("pragma journal_mode = wal")
        writer.execute("pragma wal_autocheckpoint = 0")
        writer.executemany(
            "insert into reviews (id, question_id, reviewed_at, rating, correct, answer, cram)"
            " values (:id, :question_id, :reviewed_at, :rating, :correct, :answer, :cram)",
            [review(n) for n in range(20, 40)],
        )  # in the log only, while this connection stays open
        wal = db.with_name("k.db-wal")
        before = (sha(db), sha(wal))
        result = run("export", "--salvage", "-o", tmp_path / "s.jsonl", "--db", db)
        assert result.exit_code == 0, result.output
        assert markers(tmp_path / "s.jsonl") == list(range(40))
        assert (sha(db), sha(wal)) == before
    finally:
        writer.close()


def test_a_gap_in_the_rowids_costs_nothing(tmp_path):
    db = filled(tmp_path / "k.db", range(5))
    conn = sqlite3.connect(db)
    row = review(5)
    conn.execute(
        "insert into reviews (rowid, id, question_id, reviewed_at, rating, answer, cram)"
        " values (?, ?, ?, ?, ?, ?, 0)",
        [2**62, row["id"], row["question_id"], row["reviewed_at"], row["rating"], row["answer"]],
    )
    conn.commit()
    conn.close()
    result = run("export", "--salvage", "-o", tmp_path / "s.jsonl", "--db", db)
    assert result.exit_code == 0, result.output
    assert markers(tmp_path / "s.jsonl") == [0, 1, 2, 3, 4, 5]


def test_a_table_of_which_nothing_reads_is_an_error_and_no_file(tmp_path):
    db = filled(tmp_path / "k.db", range(3))  # one page holds every review
    damage_page_of(db, 1)
    result = run("export", "--salvage", "-o", tmp_path / "s.jsonl", "--db", db)
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: not one review of {db} could be read (lost: rowids 1-3, answered 2026-10-01);"
        " nothing was saved\n"
    )
    assert not (tmp_path / "s.jsonl").exists()


def test_doctor_advises_salvage_only_for_a_damaged_sqlite_file(tmp_path):
    db = tmp_path / "k.db"
    db.write_bytes(b"not a database at all" * 300)
    result = run("doctor", "--db", db, "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["advice"] == ["no sound backup found"]


def test_a_log_that_is_not_the_files_own_is_left_out_and_said(tmp_path):
    db = filled(tmp_path / "k.db", range(20))
    sqlite3.connect(db).execute("pragma journal_mode = wal").connection.close()
    other = sqlite3.connect(tmp_path / "other.db", isolation_level=None)
    try:
        other.execute("pragma journal_mode = wal")
        other.execute("pragma wal_autocheckpoint = 0")
        other.execute("create table t (x)")
        other.execute("insert into t values (1)")
        db.with_name("k.db-wal").write_bytes((tmp_path / "other.db-wal").read_bytes())
    finally:
        other.close()
    saved = tmp_path / "s.jsonl"
    result = run("export", "--salvage", "-o", saved, "--db", db)
    assert result.exit_code == 1, result.output  # what the log held cannot be accounted for
    assert markers(saved) == list(range(20))
    assert result.stderr == (
        f"Error: not every review of {db} was saved (its write-ahead log left out). "
        f"Saved 20 reviews from {db} to {saved}. Its write-ahead log could not be read with it"
        f" and was left out. To put them back: kvdrill restore BACKUP, then kvdrill import"
        f" {saved} (it adds only the reviews the backup lacks).\n"
    )


def test_no_room_to_copy_the_log_is_said_as_such(tmp_path, monkeypatch):
    import errno
    import shutil

    db = filled(tmp_path / "k.db", range(5))
    db.with_name("k.db-wal").write_bytes(b"\0" * 64)

    def full(*_args):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(shutil, "copyfile", full)
    result = run("export", "--salvage", "-o", tmp_path / "s.jsonl", "--db", db)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: cannot copy {db} and its write-ahead log into ")
    assert result.stderr.endswith(
        " to read them (No space left on device); make room there, or point TMPDIR at a"
        " folder with room\n"
    )
    assert not (tmp_path / "s.jsonl").exists()


def test_a_path_that_says_damaged_does_not_make_garbage_salvageable(tmp_path):
    db = tmp_path / "damaged" / "k.db"
    db.parent.mkdir()
    db.write_bytes(b"not a database at all" * 300)
    result = run("doctor", "--db", db, "--json")
    assert json.loads(result.stdout)["advice"] == ["no sound backup found"]


def test_a_database_without_reviews_saves_none(tmp_path):
    db = tmp_path / "k.db"
    open_db(db, now=T0).conn.close()
    result = run("export", "--salvage", "--db", db)
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr == f"Saved 0 reviews from {db} to standard output.\n"


# ------------------------------------------------------------------ planted damage
#
# Each case damages a file of 2,000 reviews as a failing disk or a stray write would,
# and compares what salvage saved and what it reported lost with the truth: the reviews
# on the damaged page, read from the file's bytes before the damage, and the export of
# the sound file (a saved review is byte for byte the line the export wrote).

TABLE_LEAF, TABLE_INTERIOR, INDEX_LEAF = 0x0D, 0x05, 0x0A
PUT_BACK = "To put them back: kvdrill restore BACKUP, then kvdrill import {} (it adds only the reviews the backup lacks)."


def sample(tmp_path: Path, count: int = 2000) -> tuple[Path, list[bytes]]:
    """A settled file of `count` reviews, and its export's lines (made while it is sound)."""
    db = filled(tmp_path / "k.db", range(count))
    export = run("export", "--db", db)
    assert export.exit_code == 0
    lines = export.stdout_bytes.splitlines(keepends=True)
    assert len(lines) == count
    return db, lines


def page_of(data: bytes | bytearray, n: int) -> int:
    """The number (from 1) of the page holding review `n`'s answer."""
    return data.index(f"answer-{n:05d}-".encode()) // PAGE + 1


def page_bytes(data: bytes | bytearray, number: int) -> bytes:
    return bytes(data[(number - 1) * PAGE : number * PAGE])


def put_page(data: bytearray, number: int, content: bytes) -> None:
    assert len(content) == PAGE
    data[(number - 1) * PAGE : number * PAGE] = content


def held_on(data: bytes | bytearray, number: int) -> set[int]:
    return {int(m) for m in MARKER.findall(page_bytes(data, number))}


def root_page(db: Path, name: str) -> int:
    conn = sqlite3.connect(db)
    (root,) = conn.execute("select rootpage from sqlite_master where name = ?", [name]).fetchone()
    conn.close()
    return root


def salvaged(tmp_path: Path, db: Path):
    out = tmp_path / "saved.jsonl"
    result = run("export", "--salvage", "-o", out, "--db", db)
    return result, out


def saved_lines(out: Path) -> list[bytes]:
    return out.read_bytes().splitlines(keepends=True)


def days_of(numbers) -> str:
    days = sorted({review(n)["reviewed_at"][:10] for n in numbers})
    return days[0] if len(days) == 1 else f"{days[0]} to {days[-1]}"


def lost_text(db: Path, out: Path, saved: int, groups: list[list[int]], rowid=None) -> str:
    """The summary and error lines for reviews `groups` (each a run of review numbers;
    rowid = number + 1 unless `rowid` says) lost from a file where `saved` were saved."""
    rowid = rowid or (lambda n: n + 1)
    total = sum(len(g) for g in groups)
    spans = [(rowid(min(g)), rowid(max(g))) for g in groups]
    ranges = "; ".join(
        f"rowids {low:,}{'' if low == high else f'-{high:,}'}, answered {days_of(g)}"
        for (low, high), g in zip(spans, groups, strict=True)
    )
    return (
        f"Error: not every review of {db} was saved ({total} lost). "
        f"Saved {saved:,} reviews from {db} to {out}. Lost {total} reviews the file still lists:"
        f" {ranges}. {PUT_BACK.format(out)}\n"
    )


@pytest.mark.parametrize("seed, n", [(1, 300), (2, 777), (3, 1234), (4, 1999)])
def test_random_garbage_on_a_table_leaf_loses_exactly_its_reviews(tmp_path, seed, n):
    db, lines = sample(tmp_path)
    data = bytearray(db.read_bytes())
    number = page_of(data, n)
    held = sorted(held_on(data, number))
    assert page_bytes(data, number)[0] == TABLE_LEAF and 5 <= len(held) <= 40
    assert held == list(range(held[0], held[-1] + 1))
    put_page(data, number, random.Random(seed).randbytes(PAGE))
    db.write_bytes(bytes(data))
    result, out = salvaged(tmp_path, db)
    assert result.exit_code == 1
    assert saved_lines(out) == [line for i, line in enumerate(lines) if i not in held]
    assert result.stderr == lost_text(db, out, 2000 - len(held), [held])


def test_two_damaged_leaves_are_two_lost_ranges(tmp_path):
    db, lines = sample(tmp_path)
    data = bytearray(db.read_bytes())
    groups = []
    for n in (300, 1500):
        number = page_of(data, n)
        groups.append(sorted(held_on(data, number)))
        put_page(data, number, b"\xa5" * PAGE)
    db.write_bytes(bytes(data))
    result, out = salvaged(tmp_path, db)
    lost = set(groups[0]) | set(groups[1])
    assert result.exit_code == 1
    assert saved_lines(out) == [line for i, line in enumerate(lines) if i not in lost]
    assert result.stderr == lost_text(db, out, 2000 - len(lost), groups)


def test_a_halved_cell_count_hides_no_review(tmp_path):
    db, lines = sample(tmp_path)
    data = bytearray(db.read_bytes())
    number = page_of(data, 1000)
    at = (number - 1) * PAGE
    count = int.from_bytes(data[at + 3 : at + 5], "big")
    data[at + 3 : at + 5] = (count // 2).to_bytes(2, "big")
    db.write_bytes(bytes(data))
    conn = sqlite3.connect(db)
    # SQLite itself reads the hidden rows as never there, without an error
    hidden = count - count // 2
    assert conn.execute("select count(*) from reviews not indexed").fetchone() == (2000 - hidden,)
    conn.close()
    result, out = salvaged(tmp_path, db)
    assert result.exit_code == 0, result.output
    assert saved_lines(out) == lines
    assert result.stderr == f"Saved 2,000 reviews from {db} to {out}. {PUT_BACK.format(out)}\n"


def test_a_halved_cell_count_with_its_pointers_gone_is_reported_lost(tmp_path):
    db, lines = sample(tmp_path)
    data = bytearray(db.read_bytes())
    number = page_of(data, 1000)
    page = page_bytes(data, number)
    count = int.from_bytes(page[3:5], "big")
    hidden = []
    for slot in range(count // 2, count):
        offset = int.from_bytes(page[8 + 2 * slot : 10 + 2 * slot], "big")
        hidden.append(int(MARKER.search(page, offset)[1]))
    assert hidden == list(range(hidden[0], hidden[0] + len(hidden)))
    at = (number - 1) * PAGE
    data[at + 3 : at + 5] = (count // 2).to_bytes(2, "big")
    data[at + 8 + count // 2 * 2 : at + 8 + count * 2] = bytes((count - count // 2) * 2)
    db.write_bytes(bytes(data))
    result, out = salvaged(tmp_path, db)
    assert result.exit_code == 1
    assert saved_lines(out) == [line for i, line in enumerate(lines) if i not in hidden]
    assert result.stderr == lost_text(db, out, 2000 - len(hidden), [hidden])


def test_a_zeroed_root_page_of_the_table_loses_nothing(tmp_path):
    db, lines = sample(tmp_path)
    root = root_page(db, "reviews")
    data = bytearray(db.read_bytes())
    assert page_bytes(data, root)[0] == TABLE_INTERIOR  # the leaves lie below it, intact
    put_page(data, root, bytes(PAGE))
    db.write_bytes(bytes(data))
    conn = sqlite3.connect(db)
    with pytest.raises(sqlite3.DatabaseError):
        conn.execute("select count(*) from reviews not indexed").fetchone()
    conn.close()
    result, out = salvaged(tmp_path, db)
    assert result.exit_code == 0, result.output
    assert saved_lines(out) == lines
    assert result.stderr == f"Saved 2,000 reviews from {db} to {out}. {PUT_BACK.format(out)}\n"


def index_pages(data: bytes | bytearray, *needles: bytes) -> list[int]:
    """Index pages holding any of `needles` (reviews' times, ids), not table pages."""
    found = []
    for number in range(1, len(data) // PAGE + 1):
        page = page_bytes(data, number)
        kind = page[100 if number == 1 else 0]
        if kind in (INDEX_LEAF, 0x02) and any(needle in page for needle in needles):
            found.append(number)
    return found


def test_garbage_on_an_index_page_loses_nothing_as_the_table_reads(tmp_path):
    db, lines = sample(tmp_path)
    data = bytearray(db.read_bytes())
    number = index_pages(data, review(1000)["reviewed_at"].encode())[0]
    assert page_bytes(data, number)[0] == INDEX_LEAF
    put_page(data, number, random.Random(5).randbytes(PAGE))
    db.write_bytes(bytes(data))
    conn = sqlite3.connect(db)
    assert conn.execute("pragma quick_check").fetchone() != ("ok",)
    conn.close()
    result, out = salvaged(tmp_path, db)
    assert result.exit_code == 0, result.output
    assert saved_lines(out) == lines
    assert result.stderr == f"Saved 2,000 reviews from {db} to {out}. {PUT_BACK.format(out)}\n"


def test_a_leaf_lost_where_only_the_id_index_reads_is_named_without_its_days(tmp_path):
    db, lines = sample(tmp_path)
    data = bytearray(db.read_bytes())
    number = page_of(data, 700)
    held = sorted(held_on(data, number))
    put_page(data, number, b"\xa5" * PAGE)
    for page in index_pages(data, b"2026-"):  # both indexes that hold the times
        put_page(data, page, b"\xa5" * PAGE)
    db.write_bytes(bytes(data))
    result, out = salvaged(tmp_path, db)
    assert result.exit_code == 1
    assert saved_lines(out) == [line for i, line in enumerate(lines) if i not in held]
    first, last = held[0] + 1, held[-1] + 1
    assert result.stderr == (
        f"Error: not every review of {db} was saved ({len(held)} lost). "
        f"Saved {2000 - len(held):,} reviews from {db} to {out}. Lost {len(held)} reviews the"
        f" file still lists: rowids {first}-{last}, date unknown. {PUT_BACK.format(out)}\n"
    )


def test_where_no_index_reads_a_damaged_range_is_at_most_its_width(tmp_path):
    db, lines = sample(tmp_path)
    data = bytearray(db.read_bytes())
    number = page_of(data, 700)
    held = sorted(held_on(data, number))
    put_page(data, number, b"\xa5" * PAGE)
    for page in index_pages(data, b"2026-", b"00000000-0000-"):  # every index of reviews
        put_page(data, page, b"\xa5" * PAGE)
    db.write_bytes(bytes(data))
    result, out = salvaged(tmp_path, db)
    assert result.exit_code == 1
    assert saved_lines(out) == [line for i, line in enumerate(lines) if i not in held]
    first, last = held[0] + 1, held[-1] + 1
    assert result.stderr == (
        f"Error: not every review of {db} was saved (at most {len(held)} unreadable). "
        f"Saved {2000 - len(held):,} reviews from {db} to {out}. Unreadable: rowids"
        f" {first}-{last} (at most {len(held)} reviews). {PUT_BACK.format(out)}\n"
    )


def free_leaf_pages(data: bytes | bytearray) -> list[int]:
    """The leaf pages of the file's freelist, read from its first trunk page."""
    trunk = int.from_bytes(data[32:36], "big")
    assert trunk
    page = page_bytes(data, trunk)
    count = int.from_bytes(page[4:8], "big")
    return [int.from_bytes(page[8 + 4 * i : 12 + 4 * i], "big") for i in range(count)]


def undone_and_answered_again(tmp_path: Path) -> tuple[Path, list[bytes], bytes]:
    """2,000 reviews; the last undone (its row deleted, as the quiz's undo does) and a
    newer answer given, which takes the undone one's rowid; then a table made and
    dropped, so the file has free pages. With the export made then, and the bytes the
    last page held before the undo."""
    db, _ = sample(tmp_path)
    old = page_bytes(db.read_bytes(), page_of(db.read_bytes(), 1999))
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("delete from reviews where id = ?", [review(1999)["id"]])
    newer = review(2000)
    conn.execute(
        "insert into reviews (id, question_id, reviewed_at, rating, correct, answer, cram)"
        " values (:id, :question_id, :reviewed_at, :rating, :correct, :answer, :cram)",
        newer,
    )
    (rowid,) = conn.execute("select rowid from reviews where id = ?", [newer["id"]]).fetchone()
    conn.execute("create table scratch (x)")
    conn.execute("insert into scratch values (zeroblob(20000))")
    conn.execute("drop table scratch")
    conn.close()
    assert rowid == 2000 and b"answer-01999-" in old
    export = run("export", "--db", db).stdout_bytes.splitlines(keepends=True)
    return db, export, old


def test_an_undone_review_on_a_freed_page_is_not_read(tmp_path):
    db, lines, old = undone_and_answered_again(tmp_path)
    data = bytearray(db.read_bytes())
    last = page_of(data, 2000)
    held = sorted(held_on(data, last) - {1999})  # the undone one's bytes may linger there
    assert held[-1] == 2000 and held[:-1] == list(range(held[0], 1999))
    assert set(held) & held_on(old, 1)  # the old page holds copies of some of them
    put_page(data, free_leaf_pages(data)[0], old)  # the old bytes, on a page now free
    put_page(data, last, b"\xa5" * PAGE)
    db.write_bytes(bytes(data))
    result, out = salvaged(tmp_path, db)
    assert result.exit_code == 1
    assert 1999 not in markers(out)
    assert saved_lines(out) == lines[: held[0]]  # a free page is not read, even for copies
    assert result.stderr == (
        f"Error: not every review of {db} was saved ({len(held)} lost). "
        f"Saved {held[0]:,} reviews from {db} to {out}. Lost {len(held)} reviews the file"
        f" still lists: rowids {held[0] + 1:,}-2,000, answered 2026-10-02."
        f" {PUT_BACK.format(out)}\n"
    )


def test_an_undone_review_on_a_page_no_tree_reaches_is_not_brought_back(tmp_path):
    db, lines, old = undone_and_answered_again(tmp_path)
    data = bytearray(db.read_bytes())
    last = page_of(data, 2000)
    held = sorted(held_on(data, last) - {1999})
    copies = held_on(old, 1) - {1999}
    lost = [n for n in held if n not in copies]
    groups = [[n for n in lost if n < 1999], [2000]]
    assert groups[0] == list(range(held[0], min(copies))) and max(copies) == 1998
    put_page(data, last, b"\xa5" * PAGE)
    count = int.from_bytes(data[28:32], "big")
    data[28:32] = (count + 1).to_bytes(4, "big")
    data += old  # the old bytes, on a page neither free nor in a tree
    db.write_bytes(bytes(data))
    result, out = salvaged(tmp_path, db)
    assert result.exit_code == 1
    # the copies there of reviews that still exist are saved (an index lists each as
    # it is); the undone review, whose rowid the newer one has, is not
    assert 1999 not in markers(out)
    assert saved_lines(out) == [line for i, line in enumerate(lines[:1999]) if i not in lost]
    assert result.stderr == lost_text(
        db, out, 2000 - len(lost), groups, rowid=lambda n: 2000 if n == 2000 else n + 1
    )


def test_long_answers_on_overflow_pages_are_saved_whole(tmp_path):
    db = open_db(tmp_path / "k.db", now=T0)
    rows = [review(n) for n in range(300)]
    for row in rows[::10]:  # ~9,000 characters, some of two and three bytes in UTF-8
        row["answer"] = row["answer"][:13] + ("é∑x" * 3000)[:8987]
    db["reviews"].insert_all(rows)
    db.conn.close()
    db = settle(tmp_path / "k.db")
    expected = run("export", "--db", db).stdout_bytes
    assert expected.count("é∑x".encode()) > 30 * 2900
    root = root_page(db, "reviews")
    data = bytearray(db.read_bytes())
    assert page_bytes(data, root)[0] == TABLE_INTERIOR
    put_page(data, root, bytes(PAGE))
    db.write_bytes(bytes(data))
    result, out = salvaged(tmp_path, db)
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == expected
    assert result.stderr == f"Saved 300 reviews from {db} to {out}. {PUT_BACK.format(out)}\n"


def test_damage_in_a_file_with_a_log_is_counted_with_the_logs_reviews(tmp_path):
    db, lines = sample(tmp_path)
    writer = sqlite3.connect(db, isolation_level=None)
    try:
        writer.execute("pragma journal_mode = wal")
        writer.execute("pragma wal_autocheckpoint = 0")
        writer.executemany(
            "insert into reviews (id, question_id, reviewed_at, rating, correct, answer, cram)"
            " values (:id, :question_id, :reviewed_at, :rating, :correct, :answer, :cram)",
            [review(n) for n in range(2000, 2020)],
        )  # in the log only, while this connection stays open
        data = bytearray(db.read_bytes())
        number = page_of(data, 100)
        held = sorted(held_on(data, number))
        put_page(data, number, b"\xa5" * PAGE)
        db.write_bytes(bytes(data))
        wal = db.with_name("k.db-wal")
        before = (sha(db), sha(wal))
        result, out = salvaged(tmp_path, db)
        assert (sha(db), sha(wal)) == before
    finally:
        writer.close()
    assert result.exit_code == 1
    assert markers(out) == [n for n in range(2020) if n not in held]
    assert result.stderr == lost_text(db, out, 2020 - len(held), [held])


def test_a_rowid_no_review_has_inside_a_damaged_page_is_not_counted(tmp_path):
    db, lines = sample(tmp_path)
    data = db.read_bytes()
    around = sorted(held_on(data, page_of(data, 1000)))
    gone = around[len(around) // 2]  # an answer undone after another session's answer
    conn = sqlite3.connect(db)
    conn.execute("delete from reviews where id = ?", [review(gone)["id"]])
    conn.commit()
    conn.close()
    data = bytearray(db.read_bytes())
    number = page_of(data, around[0])
    held = sorted(held_on(data, number) - {gone})  # its bytes may linger on the page
    assert held == [n for n in around if n != gone]
    put_page(data, number, b"\xa5" * PAGE)
    db.write_bytes(bytes(data))
    result, out = salvaged(tmp_path, db)
    assert result.exit_code == 1
    assert saved_lines(out) == [line for i, line in enumerate(lines) if i not in around]
    assert result.stderr == (
        f"Error: not every review of {db} was saved ({len(held)} lost). "
        f"Saved {2000 - len(around):,} reviews from {db} to {out}. Lost {len(held)} reviews the"
        f" file still lists: rowids {around[0] + 1:,}-{around[-1] + 1:,} ({len(held)} of them),"
        f" answered {days_of(held)}. {PUT_BACK.format(out)}\n"
    )


# ------------------------------------------------------------------ files of an older schema


def schema_5_file(path: Path, numbers: range) -> Path:
    """A kvdrill database as kvdrill left it before migration m006 added `ticks`."""
    from sqlite_utils import Database

    from drill.storage.files import APPLICATION_ID
    from drill.storage.migrations import migrations

    db = Database(path)
    migrations.apply(db, stop_before="m006_review_ticks")
    db.execute("pragma user_version = 5")
    db.execute(f"pragma application_id = {APPLICATION_ID}")
    db["reviews"].insert_all(review(n) for n in numbers)
    db.conn.commit()
    db.conn.close()
    return settle(path)


def test_a_damaged_file_from_before_ticks_is_salvaged_whole(tmp_path):
    """Its table has no `ticks` column: the SQL reads and the pages both read it as null."""
    db = schema_5_file(tmp_path / "k.db", range(300))
    data = bytearray(db.read_bytes())
    put_page(data, root_page(db, "reviews"), bytes(PAGE))  # the table's root page zeroed
    db.write_bytes(bytes(data))
    result, out = salvaged(tmp_path, db)
    assert result.exit_code == 0, result.output
    assert markers(out) == list(range(300))
    first = json.loads(saved_lines(out)[0])
    assert (first["id"], first["ticks"], len(first)) == (str(uuid.UUID(int=1)), None, 15)


def test_rows_from_before_and_after_ticks_are_read_from_the_pages(tmp_path):
    """Rows written before `alter table ... add column` keep 14 values in their records;
    the reader takes the missing last one as null, as SQLite does."""
    db = schema_5_file(tmp_path / "k.db", range(200))
    open_db(db).conn.close()  # a command that writes: migrated to the schema with ticks
    conn = sqlite3.connect(db)
    later = [dict(review(n), ticks="101") for n in range(200, 400)]
    conn.executemany(
        "insert into reviews (id, question_id, reviewed_at, rating, correct, answer, cram, ticks)"
        " values (:id, :question_id, :reviewed_at, :rating, :correct, :answer, :cram, :ticks)",
        later,
    )
    conn.commit()
    conn.close()
    settle(db)
    data = bytearray(db.read_bytes())
    put_page(data, root_page(db, "reviews"), bytes(PAGE))
    db.write_bytes(bytes(data))
    result, out = salvaged(tmp_path, db)
    assert result.exit_code == 0, result.output
    assert markers(out) == list(range(400))
    ticks = [json.loads(line)["ticks"] for line in saved_lines(out)]
    assert ticks == [None] * 200 + ["101"] * 200
