"""The page check on open is skipped only for a file exactly as a passed check left it.

Each case names the failure it guards against: damage trusted because a stamp was
stale, torn or too young to tell a change apart, or a stamp written where kvdrill
may not write.
"""

import json
import os
import sqlite3
import time
from pathlib import Path

import pytest
from dbstates import NOW, damage, run, settled_db, sha

import drill.store
from drill.errors import StoreError
from drill.store import describe_sqlite_error, open_db

HOUR_AGO = time.time() - 3600


@pytest.fixture
def checks(monkeypatch):
    """Count the page checks open_db runs."""
    calls = []
    real = drill.store.quick_check

    def counted(conn):
        calls.append(1)
        return real(conn)

    monkeypatch.setattr(drill.store, "quick_check", counted)
    return calls


def settled_an_hour_ago(path: Path) -> Path:
    settled_db(path)
    os.utime(path, (HOUR_AGO, HOUR_AGO))
    return path


def stamp_of(path: Path) -> Path:
    return path.with_name(path.name + "-checked")


def test_a_checked_file_is_not_checked_again_until_it_changes(tmp_path, checks):
    path = settled_an_hour_ago(tmp_path / "k.db")
    open_db(path, write=False).conn.close()
    assert len(checks) == 1
    stamp = json.loads(stamp_of(path).read_text())
    st = path.stat()
    assert stamp["db"] == [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]
    assert stamp["wal"] is None
    open_db(path, write=False).conn.close()
    open_db(path, write=False).conn.close()
    assert len(checks) == 1
    os.utime(path, (HOUR_AGO + 1, HOUR_AGO + 1))  # any change of the file's time
    open_db(path, write=False).conn.close()
    assert len(checks) == 2


def test_damage_after_the_check_is_found_by_the_next_open(tmp_path):
    path = settled_an_hour_ago(tmp_path / "k.db")
    open_db(path, write=False).conn.close()
    assert stamp_of(path).exists()
    damage(path, "middle")  # same size; the file's time moves on
    before = sha(path)
    with pytest.raises(StoreError, match="is damaged"):
        open_db(path, write=False)
    result = run("stats", "--db", path, "--now", NOW)
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {path} is damaged")
    assert sha(path) == before


def test_a_file_changed_just_before_its_check_is_not_stamped(tmp_path, checks):
    path = settled_db(tmp_path / "k.db")  # written a moment ago
    open_db(path, write=False).conn.close()
    assert not stamp_of(path).exists()
    open_db(path, write=False).conn.close()
    assert len(checks) == 2


def test_a_write_asks_for_a_new_check(tmp_path, checks):
    path = settled_an_hour_ago(tmp_path / "k.db")
    run("stats", "--db", path, "--now", NOW)
    assert stamp_of(path).exists()
    assert run("config", "new-per-day", "7", "--db", path).exit_code == 0
    checks.clear()
    open_db(path, write=False).conn.close()
    assert len(checks) == 1


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not json",
        "[1, 2]",
        '{"db": null}',
        "\xff\xfe",
        "[" * 100_000,
        '{"db": [1], "wal": null, "checked": "soon"}',
        '{"db": [1], "wal": null, "checked": 1' + "0" * 400 + "}",
    ],
)
def test_a_torn_or_foreign_stamp_means_a_check(tmp_path, checks, text):
    path = settled_an_hour_ago(tmp_path / "k.db")
    stamp_of(path).write_text(text, encoding="utf-8", errors="surrogateescape")
    open_db(path, write=False).conn.close()
    assert len(checks) == 1
    assert json.loads(stamp_of(path).read_text())["wal"] is None  # stamped afresh


@pytest.mark.parametrize("age", [86_400 + 60, -3600])
def test_a_stamp_older_than_a_day_or_from_the_future_means_a_check(tmp_path, checks, age):
    path = settled_an_hour_ago(tmp_path / "k.db")
    open_db(path, write=False).conn.close()
    stamp = json.loads(stamp_of(path).read_text())
    stamp_of(path).write_text(json.dumps({**stamp, "checked": time.time() - age}))
    open_db(path, write=False).conn.close()
    assert len(checks) == 2


def test_no_stamp_is_written_where_kvdrill_may_not_write(tmp_path, checks, monkeypatch):
    path = settled_an_hour_ago(tmp_path / "k.db")
    monkeypatch.setattr(drill.store.os, "access", lambda p, mode: mode != os.W_OK)
    open_db(path, write=False).conn.close()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "kvdrill-home") == ["k.db"]


def test_no_output_is_written_over_the_stamp(tmp_path):
    path = settled_an_hour_ago(tmp_path / "k.db")
    run("stats", "--db", path, "--now", NOW)
    result = run("export", "--db", path, "-o", stamp_of(path))
    assert result.exit_code == 1
    assert result.output == (
        f"Error: refusing to write over {stamp_of(path)}: it is kvdrill's database\n"
    )


def test_a_command_that_writes_checks_whatever_the_stamp_says(tmp_path, checks):
    path = settled_an_hour_ago(tmp_path / "k.db")
    open_db(path, write=False).conn.close()
    assert stamp_of(path).exists()
    open_db(path, write=True).conn.close()
    assert len(checks) == 2


def test_damage_that_keeps_the_files_time_is_refused_by_a_writer(tmp_path):
    """A failing disk changes bytes but not the file's time: the stamp still matches,
    so a reader may trust it, but nothing is written into the file."""
    path = settled_an_hour_ago(tmp_path / "k.db")
    open_db(path, write=False).conn.close()
    damage(path, "middle")
    os.utime(path, (HOUR_AGO, HOUR_AGO))
    before = sha(path)
    result = run("config", "new-per-day", "7", "--db", path)
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {path} is damaged")
    assert sha(path) == before
    assert not stamp_of(path).exists()  # the next reader checks too
    assert run("stats", "--db", path, "--now", NOW).exit_code == 1


def test_doctor_finding_damage_drops_the_stamp(tmp_path):
    path = settled_an_hour_ago(tmp_path / "k.db")
    open_db(path, write=False).conn.close()
    damage(path, "middle")
    os.utime(path, (HOUR_AGO, HOUR_AGO))
    assert stamp_of(path).exists()
    assert run("doctor", "--db", path).exit_code == 1
    assert not stamp_of(path).exists()
    result = run("stats", "--db", path, "--now", NOW)
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {path} is damaged")


def test_a_reader_that_meets_damage_drops_the_stamp(tmp_path):
    path = settled_an_hour_ago(tmp_path / "k.db")
    open_db(path, write=False).conn.close()
    line = describe_sqlite_error(sqlite3.DatabaseError("database disk image is malformed"), path)
    assert line.startswith(f"{path} is damaged or unreadable (database disk image is malformed)")
    assert not stamp_of(path).exists()


def test_a_change_to_the_write_ahead_log_alone_means_a_check(tmp_path, checks):
    """Another program holding the database open writes to its log, not to the file."""
    path = settled_an_hour_ago(tmp_path / "k.db")
    wal = path.with_name("k.db-wal")
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute("pragma journal_mode = wal")
        other.execute("create table scratch (x)")
        for name in (path, wal):
            os.utime(name, (HOUR_AGO, HOUR_AGO))
        open_db(path, write=False).conn.close()
        assert json.loads(stamp_of(path).read_text())["wal"][2] == wal.stat().st_size
        open_db(path, write=False).conn.close()
        assert len(checks) == 1
        other.execute("insert into scratch values (1)")  # the file itself is not touched
        os.utime(path, (HOUR_AGO, HOUR_AGO))
        open_db(path, write=False).conn.close()
        assert len(checks) == 2
    finally:
        other.close()


def test_a_file_changed_during_its_check_is_not_stamped(tmp_path, monkeypatch):
    path = settled_an_hour_ago(tmp_path / "k.db")
    real = drill.store.quick_check

    def changing(conn):
        problems = real(conn)
        os.utime(path, (HOUR_AGO + 5, HOUR_AGO + 5))  # a write while the pages were read
        return problems

    monkeypatch.setattr(drill.store, "quick_check", changing)
    open_db(path, write=False).conn.close()
    assert not stamp_of(path).exists()
