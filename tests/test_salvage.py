"""`kvdrill export --salvage`: the reviews a damaged database still holds, saved.

Each case names the failure it guards against: a damaged page taking the whole history
with it, reviews the backup lacks lost in a restore, damage that still parses carried
into an import, a salvage of a sound database that differs from its export.

Which reviews a damaged page held is read from the file's bytes, not from the code
under test: every answer carries a numbered marker, and the markers on the page that
is overwritten are the reviews that cannot come back.
"""

import json
import re
import sqlite3
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

from dbstates import run, sha

from drill.store import open_db

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
        f"Saved {3000 - len(lost):,} reviews from {db} to {saved}. Lost {len(lost)} reviews the"
        f" file still lists: rowids {first:,}-{last:,}, answered 2026-10-02. To put them back:"
        f" kvdrill restore BACKUP, then kvdrill import {saved} (it adds only the reviews the"
        f" backup lacks).\nError: not every review of {db} was saved ({len(lost)} lost)\n"
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
        f"Saved 18 reviews from {db} to {saved}. Left out, as an import would refuse them: 2."
        f" To put them back: kvdrill restore BACKUP, then kvdrill import {saved} (it adds only"
        f" the reviews the backup lacks).\nError: not every review of {db} was saved (2 left"
        " out)\n"
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
    import drill.backup

    def as_on_a_read_only_mount(path):
        # what a read-only connection falls back to where it cannot make the -shm file:
        # the file as it lies, without its log
        return sqlite3.connect(f"file:{path}?immutable=1", uri=True, isolation_level=None)

    monkeypatch.setattr(drill.backup, "connect_read_only", as_on_a_read_only_mount)
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
        f"Saved 20 reviews from {db} to {saved}. Its write-ahead log could not be read with it"
        f" and was left out. To put them back: kvdrill restore BACKUP, then kvdrill import"
        f" {saved} (it adds only the reviews the backup lacks).\nError: not every review of"
        f" {db} was saved (its write-ahead log left out)\n"
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
