"""No file kvdrill writes replaces a database, and backups stay with their database.

Each case is a failure an adversarial review found, reproduced, with the victim's bytes
or review count compared before and after:

- `backup --db A -o B` replaced B, a live kvdrill database (with or without answers
  still in its write-ahead log), a backup of another database, another application's
  file;
- every output (-o, --key, --html, --report, bank export) replaced a kvdrill database
  from before the mark, a new database whose mark is still in its log alone, and
  another database's -wal;
- `work.db` and `work.sqlite` shared their backups, a backup taken under a wrong clock
  was recommended over sound ones, keep=1 deleted the copy it had just taken;
- a backup into a missing folder blamed the source database; restore took a backup
  whose rows the quiz cannot read, and replaced a database of a newer kvdrill; doctor
  said "Size 0 bytes" of a foreign file; a killed write left its temporary file;
  doctor, salvage and restore left an empty -wal and -shm beside a foreign file.
"""

import gc
import os
import sqlite3
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from dbstates import NOW, QUIZ, foreign, kvdrill_db, run, sha, unmarked_v1

from drill.storage.backup import COPY_TABLE, list_backups
from drill.storage.outfile import STALE_TEMP_S, write_text

LATER = "2026-11-21T09:00:00+00:00"


def one_line_error(result) -> str:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    lines = result.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    return lines[0]


def review_count(path: Path) -> int:
    """The reviews in the database (its log folded in when this is the last connection)."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute("select count(*) from reviews").fetchone()[0]
    finally:
        conn.close()


def quiz(db: Path, now: str = NOW, answers: str = "2 MiB\n\nq\n"):
    """A quiz session on `db`, over as a process's would be: its log folded in, gone."""
    args = [a if a != NOW else now for a in QUIZ]
    result = run("quiz", "--db", db, *args, input=answers)
    assert result.exit_code == 0, result.output
    gc.collect()  # the command's connection, as its process's end would close it
    sqlite3.connect(db).close()  # the last connection to close folds the log in
    assert not db.with_name(db.name + "-wal").exists()
    return result


def killed_mid_session(db: Path) -> None:
    """A second process commits one answer into the log and is killed before it closes:
    the answer lives in `db`-wal alone."""
    code = (
        "import os, sqlite3, sys\n"
        "conn = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "conn.execute('pragma wal_autocheckpoint = 0')\n"
        "conn.execute(\"insert into reviews (id, question_id, reviewed_at, rating, cram)"
        " values ('killed', 'qf-kv-bytes', '2026-11-20T10:00:00.000000+00:00', 3, 0)\")\n"
        "os.kill(os.getpid(), 9)\n"
    )
    subprocess.run([sys.executable, "-c", code, str(db)], check=False)
    assert db.with_name(db.name + "-wal").stat().st_size > 0


# ------------------------------------------------------------------ backup -o


def backup_refusal(target: Path, db: Path, why: str) -> str:
    return (
        f"Error: refusing to write the backup to {target}: {why}. `kvdrill backup -o` writes a "
        f"new file or renews its own earlier copy of {db}; choose another name"
    )


def test_backup_o_never_replaces_another_live_database(tmp_path):
    a = kvdrill_db(tmp_path / "A.db")
    b = kvdrill_db(tmp_path / "B.db")
    quiz(b, LATER)
    assert review_count(b) == 2
    before = sha(b)
    line = one_line_error(run("backup", "--db", a, "-o", b))
    assert line == backup_refusal(b, a, "it is a kvdrill database")
    assert sha(b) == before and review_count(b) == 2


def test_backup_o_leaves_a_database_whose_last_answers_are_in_its_log(tmp_path):
    a = kvdrill_db(tmp_path / "A.db")
    b = kvdrill_db(tmp_path / "B.db")
    killed_mid_session(b)
    files_before = {p.name: sha(p) for p in tmp_path.iterdir() if p.name.startswith("B.db")}
    line = one_line_error(run("backup", "--db", a, "-o", b))
    assert line == backup_refusal(b, a, "B.db-wal lies beside it, so it is or may be a database")
    assert {p.name: sha(p) for p in tmp_path.iterdir() if p.name.startswith("B.db")} == files_before
    conn = sqlite3.connect(b)
    assert conn.execute("pragma integrity_check").fetchone()[0] == "ok"
    assert conn.execute("select count(*) from reviews").fetchone()[0] == 2  # the killed one too
    conn.close()


def test_backup_o_never_replaces_another_databases_copy_nor_a_foreign_file(tmp_path):
    a = kvdrill_db(tmp_path / "A.db")
    b = kvdrill_db(tmp_path / "B.db")
    copy_of_b = tmp_path / "b-copy.db"
    assert run("backup", "--db", b, "-o", copy_of_b).exit_code == 0
    other_app = foreign(tmp_path / "app.sqlite", ["create table notes (body text)"])
    notes = tmp_path / "notes.txt"
    notes.write_text("mine\n")
    cases = {
        copy_of_b: f"it is a copy of another database, {b}",
        other_app: "it is a SQLite database (another application's, or a kvdrill one from "
        "before its mark)",
        notes: "it exists and is not a copy that kvdrill backup made",
    }
    for target, why in cases.items():
        before = sha(target)
        assert one_line_error(run("backup", "--db", a, "-o", target)) == backup_refusal(
            target, a, why
        )
        assert sha(target) == before


def test_backup_o_renews_its_own_copy_until_that_copy_becomes_a_database(tmp_path):
    a = kvdrill_db(tmp_path / "A.db")
    copy = tmp_path / "copy.db"
    assert run("backup", "--db", a, "-o", copy).output == f"Backed up {a} to {copy}.\n"
    assert review_count(copy) == 1
    quiz(a, LATER)
    assert run("backup", "--db", a, "-o", copy).exit_code == 0  # renewed
    assert review_count(copy) == 2
    conn = sqlite3.connect(copy)
    assert conn.execute(f"select database from {COPY_TABLE}").fetchone()[0] == str(a.resolve())
    conn.close()
    quiz(copy, "2026-11-22T09:00:00+00:00")  # the copy is used as a database of its own
    assert review_count(copy) == 3
    before = sha(copy)
    line = one_line_error(run("backup", "--db", a, "-o", copy))
    assert line == backup_refusal(copy, a, "it is a kvdrill database")
    assert sha(copy) == before


def test_a_restored_database_is_no_copy(tmp_path):
    a = kvdrill_db(tmp_path / "A.db")
    copy = tmp_path / "copy.db"
    assert run("backup", "--db", a, "-o", copy).exit_code == 0
    b = tmp_path / "B.db"
    assert run("restore", copy, "--db", b, "--now", LATER).exit_code == 0
    conn = sqlite3.connect(b)
    tables = {row[0] for row in conn.execute("select name from sqlite_master where type='table'")}
    conn.close()
    assert COPY_TABLE not in tables
    before = sha(b)
    line = one_line_error(run("backup", "--db", a, "-o", b))
    assert line == backup_refusal(b, a, "it is a kvdrill database")
    assert sha(b) == before


def test_backup_o_into_a_missing_folder_names_the_target(tmp_path):
    a = kvdrill_db(tmp_path / "A.db")
    target = tmp_path / "missing" / "copy.db"
    line = one_line_error(run("backup", "--db", a, "-o", target))
    assert line == (
        f"Error: cannot write the backup to {target}: there is no folder {tmp_path / 'missing'}"
    )


def test_backup_o_that_fails_while_writing_names_the_target(tmp_path, monkeypatch):
    import drill.storage.backup

    a = kvdrill_db(tmp_path / "A.db")
    target = tmp_path / "copy.db"

    def full(*_args, **_kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(drill.storage.backup, "copy_database", full)
    before = sha(a)
    line = one_line_error(run("backup", "--db", a, "-o", target))
    assert line == (
        f"Error: cannot write the backup to {target}: database or disk is full; {a} was left "
        "as it was"
    )
    assert sha(a) == before and not target.exists()


# ------------------------------------------------------------------ every other writer


def writers(db: Path, target: Path, tmp_path: Path) -> list[list]:
    """Each command that writes a file, writing `target`."""
    return [
        ["export", "--db", db, "-o", target],
        ["export", "--salvage", "--db", db, "-o", target],
        ["sheet", "--seed", "1", "-o", target],
        ["sheet", "--seed", "1", "-o", tmp_path / "s.md", "--key", target],
        ["stats", "--db", db, "--html", target, "--now", NOW],
        ["engine", "show", "--db", db, "--html", target],
        ["interview", "--db", db, "--seed", "1", "--report", target, "--now", NOW],
        ["bank", "export", "--format", "gift", "-o", target],
        ["bank", "export", "--format", "moodle", "-o", target],
    ]


def assert_every_writer_refuses(db: Path, target: Path, tmp_path: Path, why: str) -> None:
    watched = [p for p in tmp_path.iterdir() if p.is_file()]
    before = {p: sha(p) for p in watched}
    for args in writers(db, target, tmp_path):
        line = one_line_error(run(*args, input="q\n"))
        assert line == f"Error: refusing to write over {target}: {why}", args
    assert {p: sha(p) for p in watched} == before
    assert not (tmp_path / "s.md").exists()  # the sheet waits for its key's check


def test_no_writer_replaces_a_database_from_before_the_mark(tmp_path):
    db = kvdrill_db(tmp_path / "k.db")
    old = unmarked_v1(tmp_path / "old.db", 5)
    assert_every_writer_refuses(
        db, old, tmp_path,
        "it is a SQLite database (another application's, or a kvdrill one from before its mark)",
    )  # fmt: skip
    assert review_count(old) == 1


def test_no_writer_replaces_a_new_database_whose_mark_is_in_its_log_alone(tmp_path):
    db = kvdrill_db(tmp_path / "k.db")
    new = tmp_path / "new.db"
    holder = sqlite3.connect(new, isolation_level=None)  # its first session, still running
    try:
        holder.execute("pragma journal_mode = wal")
        holder.execute("pragma wal_autocheckpoint = 0")
        holder.execute("pragma application_id = 1803969650")
        holder.execute("create table reviews (id text primary key)")
        holder.execute("insert into reviews values ('answered')")
        assert_every_writer_refuses(
            db, new, tmp_path, "new.db-wal lies beside it, so it is or may be a database"
        )
    finally:
        holder.close()
    assert review_count(new) == 1


def test_a_zero_byte_file_with_a_log_beside_it_is_left_alone(tmp_path):
    db = kvdrill_db(tmp_path / "k.db")
    target = tmp_path / "fresh.db"
    target.write_bytes(b"")
    (tmp_path / "fresh.db-journal").write_bytes(b"\xd9\xd5\x05\xf9\x20\xa1\x63\xd7")
    assert_every_writer_refuses(
        db, target, tmp_path, "fresh.db-journal lies beside it, so it is or may be a database"
    )


def test_no_writer_replaces_another_databases_companions(tmp_path):
    db = kvdrill_db(tmp_path / "k.db")
    other = kvdrill_db(tmp_path / "other.db")
    killed_mid_session(other)
    for suffix in ("-wal", "-shm", "-unsaved.jsonl"):
        companion = tmp_path / f"other.db{suffix}"
        if not companion.exists():
            companion.write_text('{"id": "waiting"}\n')
        before = sha(companion)
        for args in writers(db, companion, tmp_path)[:4]:
            line = one_line_error(run(*args))
            assert line == (
                f"Error: refusing to write over {companion}: it belongs to the database {other}"
            ), args
        assert sha(companion) == before
    assert review_count(other) == 2


def test_a_sheet_whose_key_cannot_be_written_writes_neither(tmp_path):
    sheet = tmp_path / "s.md"
    key = tmp_path / "missing" / "k.md"
    line = one_line_error(run("sheet", "--seed", "1", "-o", sheet, "--key", key))
    assert line == f"Error: cannot write {key}: there is no folder {tmp_path / 'missing'}"
    assert not sheet.exists()


# ------------------------------------------------------------------ backup bookkeeping


def test_two_databases_with_one_stem_keep_their_own_backups(tmp_path, monkeypatch):
    monkeypatch.setenv("KVDRILL_BACKUP_KEEP", "1")
    work_db, work_sqlite = tmp_path / "work.db", tmp_path / "work.sqlite"
    quiz(work_db)
    quiz(work_sqlite)
    quiz(work_db, LATER)  # the first write of the 21st: one daily backup each
    quiz(work_sqlite, LATER)
    folder = tmp_path / "backups"
    assert sorted(p.name for p in folder.iterdir()) == [
        "work.db-20261121-090000-daily.db",
        "work.sqlite-20261121-090000-daily.db",
    ]
    assert [b.path.name for b in list_backups(work_db)] == ["work.db-20261121-090000-daily.db"]
    assert [b.path.name for b in list_backups(work_sqlite)] == [
        "work.sqlite-20261121-090000-daily.db"
    ]


def test_backups_named_before_the_full_name_still_count_for_a_db_file(tmp_path):
    folder = tmp_path / "backups"
    folder.mkdir()
    for name in ("work-20261119-090000-daily.db", "work.db-20261120-090000-daily.db",
                 "work.sqlite-20261120-090000-daily.db", "x.db-20261120-090000-daily.db"):
        (folder / name).write_bytes(b"")  # fmt: skip
    assert [b.path.name for b in list_backups(tmp_path / "work.db")] == [
        "work-20261119-090000-daily.db",
        "work.db-20261120-090000-daily.db",
    ]
    assert [b.path.name for b in list_backups(tmp_path / "work.sqlite")] == [
        "work.sqlite-20261120-090000-daily.db"
    ]
    assert list_backups(tmp_path / "x.db.db") == []  # the old form is by stem: x.db's own


def test_a_backup_under_a_wrong_clock_is_not_trusted_over_a_sound_one(tmp_path):
    db = tmp_path / "k.db"
    quiz(db)
    quiz(db, LATER)  # daily backup of the 21st
    quiz(db, "2035-01-01T09:00:00+00:00")  # a clock set ahead: a backup dated 2035
    names = sorted(p.name for p in (tmp_path / "backups").iterdir())
    assert names == ["k.db-20261121-090000-daily.db", "k.db-20350101-090000-daily.db"]
    data = bytearray(db.read_bytes())  # then the database is damaged
    data[len(data) // 2 : len(data) // 2 + 4096] = b"\xa5" * 4096
    db.write_bytes(bytes(data))
    for wal in (tmp_path / "k.db-wal", tmp_path / "k.db-shm"):
        wal.unlink(missing_ok=True)
    result = run("doctor", "--db", db, "--now", "2026-11-22T09:00:00+00:00")
    assert result.exit_code == 1
    good = tmp_path / "backups" / "k.db-20261121-090000-daily.db"
    assert f"Advice    restore the newest sound backup: kvdrill restore {good} --db {db}" in (
        result.output
    )
    assert "Backups   2; newest k.db-20261121-090000-daily.db (1 days ago)" in result.output


def test_keeping_one_backup_keeps_the_one_just_taken(tmp_path, monkeypatch):
    db = tmp_path / "k.db"
    quiz(db)
    quiz(db, "2035-01-01T09:00:00+00:00")  # a copy dated 2035 under a wrong clock
    monkeypatch.setenv("KVDRILL_BACKUP_KEEP", "1")
    quiz(db, LATER)
    assert sorted(p.name for p in (tmp_path / "backups").iterdir()) == [
        "k.db-20261121-090000-daily.db"
    ]
    assert review_count(tmp_path / "backups" / "k.db-20261121-090000-daily.db") == 2


# ------------------------------------------------------------------ restore and doctor


def test_restore_refuses_a_backup_whose_rows_the_quiz_cannot_read(tmp_path):
    db = kvdrill_db(tmp_path / "k.db")
    copy = tmp_path / "copy.db"
    assert run("backup", "--db", db, "-o", copy).exit_code == 0
    conn = sqlite3.connect(copy)
    conn.execute("update cards set due = 'garbage'")
    conn.commit()
    conn.close()
    target = tmp_path / "new.db"
    line = one_line_error(run("restore", copy, "--db", target))
    assert line == (
        f"Error: {copy} holds a row kvdrill cannot use: cards row 'qf-kv-bytes': due 'garbage'"
    )
    assert not target.exists()


@pytest.mark.parametrize(
    ("column", "value", "shown"),
    [("rating", 7, "rating 7"), ("reviewed_at", "now", "reviewed_at 'now'"),
     ("question_id", "", "question_id ''"), ("cram", 2, "cram 2")],
)  # fmt: skip
def test_restore_refuses_reviews_the_quiz_cannot_read(tmp_path, column, value, shown):
    db = kvdrill_db(tmp_path / "k.db")
    copy = tmp_path / "copy.db"
    assert run("backup", "--db", db, "-o", copy).exit_code == 0
    conn = sqlite3.connect(copy)
    (review_id,) = conn.execute("select id from reviews").fetchone()
    conn.execute(f"update reviews set {column} = ?", [value])
    conn.commit()
    conn.close()
    line = one_line_error(run("restore", copy, "--db", tmp_path / "new.db"))
    assert line == f"Error: {copy} holds a row kvdrill cannot use: reviews row {review_id!r}: {shown}"


def test_restore_leaves_a_database_of_a_newer_kvdrill(tmp_path):
    db = kvdrill_db(tmp_path / "k.db")
    copy = tmp_path / "copy.db"
    assert run("backup", "--db", db, "-o", copy).exit_code == 0
    conn = sqlite3.connect(db)
    conn.execute("pragma user_version = 9")
    conn.close()
    before = sha(db)
    line = one_line_error(run("restore", copy, "--db", db))
    assert line == (
        f"Error: {db} was written by a newer kvdrill (schema 9, this one knows 8); left "
        "untouched. Restore with that kvdrill, or move the file away first"
    )
    assert sha(db) == before


def test_doctor_gives_a_foreign_files_size(tmp_path):
    path = tmp_path / "notes.db"
    path.write_bytes(b"not a database at all\n" * 190 + b"end")
    result = run("doctor", "--db", path)
    assert result.exit_code == 1
    assert "Size      4,183 bytes (write-ahead log 0)" in result.output


@pytest.mark.parametrize("kind", ["foreign-wal", "garbage"])
def test_reading_a_file_that_is_not_kvdrills_leaves_nothing_beside_it(tmp_path, kind):
    path = tmp_path / "x.db"
    if kind == "foreign-wal":
        conn = sqlite3.connect(path)
        conn.execute("pragma journal_mode = wal")
        conn.execute("create table notes (body text)")
        conn.commit()
        conn.close()
    else:
        path.write_bytes(bytes(range(256)) * 32)
    before = sha(path)
    for args in (["doctor", "--db", path], ["export", "--salvage", "--db", path],
                 ["restore", path, "--db", tmp_path / "new.db"]):  # fmt: skip
        assert run(*args).exit_code == 1, args
        assert sorted(p.name for p in tmp_path.iterdir() if p.name != "kvdrill-home") == [
            "x.db"
        ], args
    assert sha(path) == before


# ------------------------------------------------------------------ temporary files


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_killed_writes_temporary_file_goes_with_the_next_write(tmp_path):
    target = tmp_path / "out.md"
    stale = tmp_path / f".out.md.{dead_pid()}.k3j_x9a2.tmp"
    stale_journal = tmp_path / f".out.md.{dead_pid()}.tmp-journal"  # an older kvdrill's copy
    fresh = tmp_path / f".out.md.{dead_pid()}.fresh123.tmp"  # too recent to tell
    living = tmp_path / f".out.md.{os.getppid()}.alive999.tmp"  # its writer still runs
    other = tmp_path / f".notes.md.{dead_pid()}.abcdefgh.tmp"  # another target's
    long_ago = time.time() - STALE_TEMP_S - 5
    for path in (stale, stale_journal, fresh, living, other):
        path.write_text("half\n")
        if path is not fresh:
            os.utime(path, (long_ago, long_ago))
    write_text(target, "done\n")
    assert target.read_text() == "done\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["out.md", fresh.name, living.name, other.name]
    )


def test_a_write_in_progress_elsewhere_is_not_swept(tmp_path):
    target = tmp_path / "out.md"
    mine = tmp_path / f".out.md.{os.getpid()}.inflight.tmp"
    mine.write_text("half\n")
    long_ago = time.time() - STALE_TEMP_S - 5
    os.utime(mine, (long_ago, long_ago))
    write_text(target, "done\n")
    assert mine.exists()


def test_backups_still_sort_by_when_they_were_taken(tmp_path):
    db = tmp_path / "k.db"
    quiz(db)
    for day in (21, 22, 23):
        assert run("backup", "--db", db, "--now", f"2026-11-{day}T12:00:00+00:00").exit_code == 0
    taken = [b.taken_at for b in list_backups(db)]
    assert taken == [datetime(2026, 11, d, 12, 0, tzinfo=timezone.utc) for d in (21, 22, 23)]


# ------------------------------------------------------------------ a schema SQLite cannot say


def undecodable_schema(path: Path) -> Path:
    """A kvdrill database whose schema no longer parses, where SQLite's own message quotes
    bytes that are not UTF-8 (Python raises that as UnicodeDecodeError)."""
    kvdrill_db(path)
    conn = sqlite3.connect(path)
    conn.execute("pragma journal_mode = delete")
    conn.close()
    data = path.read_bytes()
    at = data.index(b"CREATE INDEX")
    path.write_bytes(data[:at] + b"CREATE I\x94DEX" + data[at + 12 :])
    return path


def test_a_schema_sqlite_cannot_quote_is_damage_in_one_line(tmp_path):
    path = undecodable_schema(tmp_path / "k.db")
    before = sha(path)
    for args in (["stats", "--db", path, "--now", NOW], ["quiz", "--db", path, *QUIZ]):
        line = one_line_error(run(*args, input="q\n"))
        assert line.startswith(f"Error: {path} is damaged or unreadable ('utf-8' codec"), args
    result = run("doctor", "--json", "--db", path, "--now", NOW)
    assert result.exit_code == 1
    report = __import__("json").loads(result.stdout)
    assert report["kind"] == "damaged"
    assert report["problems"][0].startswith("reading it failed: 'utf-8' codec can't decode")
    line = one_line_error(run("restore", path, "--db", tmp_path / "new.db"))
    assert line.startswith(f"Error: cannot open {path}: 'utf-8' codec can't decode byte 0x94")
    assert sha(path) == before
