"""The database is never lost or adopted by mistake: every refusal leaves the file as it was.

Each case names the failure it guards against: a command writing over the
database, another application's SQLite file adopted, a read-only command creating
an empty database, damage past the header going unnoticed.
"""

import os
import sqlite3
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from dbstates import (
    NOW,
    QUIZ,
    damage,
    foreign,
    kvdrill_db,
    run,
    settled_db,
    sha,
    unmarked_v1,
)

from drill.errors import KvdrillError, StoreError
from drill.storage.backup import check_copy
from drill.storage.database import APPLICATION_ID, describe_sqlite_error, open_db
from drill.storage.outfile import atomic_output, write_text

REPO = Path(__file__).resolve().parent.parent
LATER = "2026-11-21T09:00:00+00:00"


def one_line_error(result) -> str:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    lines = result.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    return lines[0]


# ------------------------------------------------------------------ writing over the database


def test_export_onto_its_own_database_is_refused_and_the_database_kept(tmp_path):
    db = kvdrill_db(tmp_path / "x.db")
    before = sha(db)
    for target in (db, tmp_path / "x.db-wal", tmp_path / "x.db-shm"):
        line = one_line_error(run("export", "--db", db, "-o", target))
        assert line == f"Error: refusing to write over {target}: it is kvdrill's database"
    line = one_line_error(run("export", "--db", db, "-o", tmp_path / "sub" / ".." / "x.db"))
    assert line == f"Error: refusing to write over {db}: it is kvdrill's database"
    assert sha(db) == before


def test_sheet_and_key_onto_the_database_are_refused(tmp_path, _isolated_home):
    db = kvdrill_db(_isolated_home / "kvdrill.db")  # the default database
    before = sha(db)
    line = one_line_error(run("sheet", "--seed", "1", "-o", db))
    assert line == f"Error: refusing to write over {db}: it is kvdrill's database"
    line = one_line_error(run("sheet", "--seed", "1", "-o", tmp_path / "s.md", "--key", db))
    assert line == f"Error: refusing to write over {db}: it is kvdrill's database"
    other = kvdrill_db(tmp_path / "other.db")
    line = one_line_error(run("sheet", "--db", other, "--seed", "1", "-o", other))
    assert line == f"Error: refusing to write over {other}: it is kvdrill's database"
    assert sha(db) == before
    assert not (tmp_path / "s.md").exists()  # refused before anything was written


def test_no_output_is_written_over_another_kvdrill_database(tmp_path):
    db = kvdrill_db(tmp_path / "x.db")
    other = kvdrill_db(tmp_path / "other.db")  # a second profile, a copy, a backup
    before = sha(other)
    for args in (["export", "--db", db, "-o"], ["sheet", "--seed", "1", "-o"],
                 ["bank", "export", "--format", "gift", "-o"], ["stats", "--db", db, "--html"]):
        line = one_line_error(run(*args, other))
        assert line == f"Error: refusing to write over {other}: it is a kvdrill database"
    line = one_line_error(run("sheet", "--seed", "1", "-o", tmp_path / "s.md", "--key", other))
    assert line == f"Error: refusing to write over {other}: it is a kvdrill database"
    assert sha(other) == before
    assert not (tmp_path / "s.md").exists()
    # nor does a backup replace a live database: only its own earlier copy
    line = one_line_error(run("backup", "--db", db, "-o", other))
    assert line == (
        f"Error: refusing to write the backup to {other}: it is a kvdrill database. "
        f"`kvdrill backup -o` writes a new file or renews its own earlier copy of {db}; "
        "choose another name"
    )
    assert sha(other) == before


def test_sheet_and_key_cannot_share_a_file(tmp_path):
    out = tmp_path / "s.md"
    line = one_line_error(run("sheet", "--seed", "1", "-o", out, "--key", out))
    assert line == f"Error: the sheet and its key would both be written to {out}"


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old contents\n")
    with pytest.raises(RuntimeError):
        with atomic_output(target) as out:
            out.write("half of the new")
            raise RuntimeError("disk went away")
    assert target.read_text() == "old contents\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_an_output_file_keeps_its_permissions(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old\n")
    os.chmod(target, 0o640)
    write_text(target, "new\n")
    assert target.read_text() == "new\n"
    assert oct(target.stat().st_mode & 0o777) == "0o640"


def test_writing_to_a_folder_is_one_error(tmp_path):
    with pytest.raises(KvdrillError, match=r"^cannot write .*: it is a folder$"):
        write_text(tmp_path, "x")


@pytest.mark.parametrize("command", ["export", "sheet"])
def test_a_full_standard_output_is_one_line(tmp_path, command):
    kvdrill_db(tmp_path / "k.db")
    args = [sys.executable, "-m", "drill", command, "--db", str(tmp_path / "k.db")]
    if command == "sheet":
        args += ["--seed", "1"]
    with open("/dev/full", "w") as full:
        done = subprocess.run(args, stdout=full, stderr=subprocess.PIPE, text=True, cwd=REPO,
                              env={**os.environ, "KVDRILL_HOME": str(tmp_path)})  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        "Error: cannot write to standard output: No space left on device"
    )
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["--version"],
        ["kv", "--preset", "llama-3-8b", "--seq", "8"],
        ["export", "--db", "DB"],  # the history goes out as bytes
        ["export", "--salvage", "--db", "DB"],
    ],
)
def test_a_closed_standard_output_is_one_line(tmp_path, args):
    db = kvdrill_db(tmp_path / "k.db")
    args = [str(db) if a == "DB" else a for a in args]
    command = " ".join([sys.executable, "-m", "drill", *args]) + " >&-"
    env = {**os.environ, "KVDRILL_HOME": str(tmp_path)}
    done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, cwd=REPO, env=env)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == "Error: cannot write to standard output: standard output is closed\n"


def test_a_quiz_without_standard_input_ends_as_at_the_end_of_input(tmp_path):
    command = f"{sys.executable} -m drill quiz --db {tmp_path / 'k.db'} <&-"
    env = {**os.environ, "KVDRILL_HOME": str(tmp_path), "NO_COLOR": "1"}
    done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, cwd=REPO, env=env)
    assert done.returncode == 0, done.stderr
    assert "No answers this time." in done.stdout
    assert done.stderr == ""


@pytest.mark.parametrize("args", [[], ["--help"], ["--version"], ["bank"], ["engine"]])
def test_help_and_version_on_a_full_standard_output_are_one_line(tmp_path, args):
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "drill", *args], stdout=full,
                              stderr=subprocess.PIPE, text=True, cwd=REPO,
                              env={**os.environ, "KVDRILL_HOME": str(tmp_path)})  # fmt: skip
    assert done.returncode == 1
    assert done.stderr == "Error: cannot write to standard output: No space left on device\n"


def test_a_disk_io_error_names_a_full_disk_before_damage(tmp_path):
    # SQLite reports a WAL index it cannot extend on a full disk as "disk I/O error"
    path = tmp_path / "k.db"
    message = describe_sqlite_error(sqlite3.OperationalError("disk I/O error"), path)
    assert message == (
        f"cannot read or write {path} (disk I/O error): the disk may be full or failing; "
        f"free some space and try again. `kvdrill doctor --db {path}` checks it; "
        f"`kvdrill restore BACKUP --db {path}` brings back a copy from {tmp_path / 'backups'}/"
    )


# ------------------------------------------------------------------ files that are not ours


FOREIGN = {
    "own-tables-v0": (["create table notes (id integer primary key, body text)"],
                      "tables notes"),
    "own-tables-v1": (["create table notes (body text)", "pragma user_version = 1"],
                      "tables notes"),
    "own-tables-v2": (["create table notes (body text)", "pragma user_version = 2"],
                      "tables notes"),
    "a-cards-table": (["create table cards (question_id text, due text)",
                       "pragma user_version = 2"], "tables cards"),
    "other-app-id": ([f"pragma application_id = {0x12345678}"], "application id 0x12345678"),
    "only-a-version": (["pragma user_version = 7"], "user_version 7"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(FOREIGN))
@pytest.mark.parametrize(
    "command",
    [
        ["quiz", "--new", "1"],
        ["stats"],
        ["export"],
        ["engine", "show"],
        ["sheet", "--focus", "weak", "--seed", "1"],
        ["backup"],
        ["doctor", "--repair"],
        ["import", "HISTORY"],
    ],
)
def test_another_applications_database_is_refused_untouched(tmp_path, name, command):
    statements, detail = FOREIGN[name]
    path = foreign(tmp_path / "theirs.db", statements)
    before = sha(path)
    history = tmp_path / "h.jsonl"
    history.write_text("")
    args = [history if a == "HISTORY" else a for a in command]
    result = run(*args, "--db", path, input="s\n")
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert result.output.splitlines()[-1] == (
        f"Error: {path} is not a kvdrill database ({detail}); left untouched. "
        "Use another --db path for kvdrill's own file."
    ) or command[0] == "doctor"
    assert sha(path) == before
    # nothing beside it either (the home folder holds the deck cache)
    left = sorted(p.name for p in tmp_path.iterdir() if p.name != "kvdrill-home")
    assert left == ["h.jsonl", "theirs.db"]


def test_doctor_names_another_applications_database(tmp_path):
    path = foreign(tmp_path / "theirs.db", FOREIGN["a-cards-table"][0])
    result = run("doctor", "--db", path)
    assert result.exit_code == 1
    assert result.stdout.splitlines()[2] == "Kind      foreign"
    assert result.stderr == f"Error: {path}: 1 problem(s) that --repair cannot fix; see above\n"


def test_an_empty_file_is_refused_by_readers_and_initialised_by_a_writer(tmp_path):
    path = tmp_path / "k.db"
    path.write_bytes(b"")
    for command in (["stats"], ["export"], ["engine", "show"]):
        line = one_line_error(run(*command, "--db", path))
        assert line == f"Error: {path} is empty, not a kvdrill database yet; left untouched"
        assert path.read_bytes() == b""
    result = run("quiz", "--db", path, *QUIZ, input="q\n")
    assert result.exit_code == 0, result.output
    conn = sqlite3.connect(path)
    assert conn.execute("pragma application_id").fetchone()[0] == 0x6B766472
    conn.close()


@pytest.mark.parametrize(
    "command",
    [["stats"], ["export"], ["engine", "show"], ["sheet", "--focus", "weak", "--seed", "1"],
     ["backup"]],
)  # fmt: skip
def test_a_reader_given_a_missing_database_creates_nothing(tmp_path, command):
    path = tmp_path / "new" / "k.db"
    line = one_line_error(run(*command, "--db", path))
    assert line == f"Error: no database at {path}; `kvdrill quiz` or `kvdrill import` creates one"
    assert [p.name for p in tmp_path.iterdir() if p.name != "kvdrill-home"] == []


def test_a_new_database_is_marked_as_kvdrills(tmp_path):
    db = open_db(tmp_path / "k.db")
    assert db.execute("pragma application_id").fetchone()[0] == APPLICATION_ID == 0x6B766472
    db.conn.close()


def test_a_database_from_before_the_mark_is_upgraded_and_marked_after_a_backup(tmp_path):
    path = unmarked_v1(tmp_path / "k.db", 2)
    before = sha(path)
    # a command that only reads does not upgrade it
    line = one_line_error(run("stats", "--db", path, "--now", NOW))
    assert line == (
        f"Error: {path} has schema 2, older than this kvdrill's 8; a command that only reads "
        f"leaves it as it is. `kvdrill doctor --repair --db {path}` upgrades it (after a backup)"
    )
    assert sha(path) == before and not (tmp_path / "backups").exists()
    assert run("doctor", "--repair", "--db", path, "--now", NOW).exit_code == 0
    conn = sqlite3.connect(path)
    assert conn.execute("pragma application_id").fetchone()[0] == APPLICATION_ID
    assert conn.execute("pragma user_version").fetchone()[0] == 8
    assert conn.execute("select id from reviews").fetchall() == [("r1",)]
    conn.close()
    (copy,) = (tmp_path / "backups").iterdir()
    assert copy.name.endswith("-migration.db")
    assert check_copy(copy).schema_version == 2
    # once upgraded, a command that only reads leaves the file as it is
    before = sha(path)
    assert run("export", "--db", path).exit_code == 0
    assert sha(path) == before


# ------------------------------------------------------------------ damage past the header


@pytest.mark.parametrize("where", ["schema", "middle", "last", "truncated"])
@pytest.mark.parametrize(
    "command",
    [["stats"], ["export"], ["quiz"], ["import", "HISTORY"], ["engine", "show"], ["backup"]],
)
def test_a_damaged_database_is_refused_untouched(tmp_path, where, command):
    path = settled_db(tmp_path / "k.db")
    damage(path, where)
    before = sha(path)
    history = tmp_path / "h.jsonl"
    history.write_text("")
    args = [history if a == "HISTORY" else a for a in command]
    line = one_line_error(run(*args, "--db", path, input="s\n"))
    assert line.startswith(f"Error: {path} is damaged")
    assert line.endswith(
        f"`kvdrill doctor --db {path}` checks it; `kvdrill restore BACKUP --db {path}` "
        f"brings back a copy from {tmp_path / 'backups'}/"
    )
    assert sha(path) == before


def test_the_truncation_message_gives_the_page_arithmetic(tmp_path):
    path = settled_db(tmp_path / "k.db")
    pages = path.stat().st_size // 4096
    damage(path, "truncated")
    with pytest.raises(StoreError) as caught:
        open_db(path, write=False)
    assert str(caught.value).startswith(
        f"{path} is damaged: its header records {pages} pages of 4096 bytes but the file "
        f"holds {(pages - 2) * 4096} bytes."
    )


def test_a_sqlite_error_inside_a_command_is_one_line(tmp_path, monkeypatch):
    import drill.reports.stats

    def malformed(*args, **kwargs):
        raise sqlite3.DatabaseError("database disk image is malformed")

    path = kvdrill_db(tmp_path / "k.db")
    monkeypatch.setattr(drill.reports.stats, "collect_stats", malformed)
    line = one_line_error(run("stats", "--db", path))
    assert line.startswith(f"Error: {path} is damaged or unreadable (database disk image is")


def test_an_unexpected_error_is_one_line_that_asks_for_a_report(tmp_path, monkeypatch):
    import drill.reports.stats

    def broken(*args, **kwargs):
        raise ZeroDivisionError("division by zero")

    path = kvdrill_db(tmp_path / "k.db")
    monkeypatch.setattr(drill.reports.stats, "collect_stats", broken)
    line = one_line_error(run("stats", "--db", path))
    assert line == (
        "Error: internal error (ZeroDivisionError: division by zero); please report it with "
        "the command that caused it (KVDRILL_DEBUG=1 shows the traceback)"
    )


def test_open_db_takes_its_time_from_the_caller(tmp_path):
    path = kvdrill_db(tmp_path / "k.db")
    open_db(path, now=datetime(2026, 11, 21, 7, 30, tzinfo=timezone.utc)).conn.close()
    # the quiz created the file (nothing to back up); this is the next day's first write
    assert sorted(p.name for p in (tmp_path / "backups").iterdir()) == [
        "k.db-20261121-073000-daily.db"
    ]


# ------------------------------------------------------------------ read-only places


@pytest.fixture
def read_only_place(monkeypatch):
    """Make every file and folder look unwritable, as on a read-only mount."""
    import drill.storage.database

    monkeypatch.setattr(drill.storage.database.os, "access", lambda path, mode: mode != os.W_OK)


def test_readers_read_a_database_in_a_read_only_place(tmp_path, request):
    path = settled_db(tmp_path / "k.db")
    before = sha(path)
    request.getfixturevalue("read_only_place")
    assert run("stats", "--db", path, "--now", NOW).exit_code == 0
    exported = run("export", "--db", path)
    assert exported.exit_code == 0
    assert exported.stdout.count("\n") == 1
    assert sha(path) == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "kvdrill-home") == ["k.db"]


@pytest.mark.parametrize(
    "command",
    [["quiz", "--now", NOW], ["import", "HISTORY"], ["doctor", "--repair", "--now", LATER]],
)
def test_writers_refuse_a_read_only_database_in_one_line(tmp_path, request, command):
    path = settled_db(tmp_path / "k.db")
    with sqlite3.connect(path) as conn:
        conn.execute("update sessions set ended_at = null")  # something for --repair to do
    before = sha(path)
    history = tmp_path / "h.jsonl"
    history.write_text("")
    request.getfixturevalue("read_only_place")
    args = [history if a == "HISTORY" else a for a in command]
    result = run(*args, "--db", path, input="q\n")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        f"Error: {path} is read-only (the file or its folder cannot be written); "
        "nothing was written"
    )
    assert sha(path) == before


@pytest.mark.skipif(os.geteuid() == 0, reason="file modes do not bind root")
def test_a_read_only_file_is_refused_by_a_writer(tmp_path):
    path = settled_db(tmp_path / "k.db")
    os.chmod(path, 0o444)
    line = one_line_error(run("quiz", "--db", path, input="q\n"))
    assert line.endswith("is read-only (the file or its folder cannot be written); nothing was written")
