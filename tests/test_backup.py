"""Backups: automatic (daily, before a migration), by hand, restore, and `kvdrill doctor`."""

import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner
from dbstates import damage, foreign, settled_db, sha, unmarked_v1

from drill.cli import cli
from drill.errors import StoreError
from drill.storage.backup import check_copy, list_backups
from drill.storage.database import APPLICATION_ID, SCHEMA_VERSION, open_db

BANK_DIR = Path(__file__).parent / "banks_quiz"


def run(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


def quiz_on(db: Path, day: int, hour: int = 9, answers: str = "2 MiB\n\nq\n"):
    now = datetime(2026, 11, day, hour, 0, tzinfo=timezone.utc).isoformat()
    result = run("quiz", "--db", db, "--bank", BANK_DIR, "--topic", "quiz-fixture",
                 "--now", now, "--no-fuzz", "--seed", str(day), input=answers)  # fmt: skip
    assert result.exit_code == 0, result.output
    return result


def reviews(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [row[0] for row in conn.execute("select reviewed_at from reviews order by 1")]
    finally:
        conn.close()


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_the_first_write_of_each_day_backs_up_what_was_there(tmp_path):
    db = tmp_path / "k.db"
    quiz_on(db, 20)  # creates the database: nothing to back up yet
    assert not (tmp_path / "backups").exists()
    quiz_on(db, 20, hour=10)  # first write to it today
    quiz_on(db, 20, hour=11)  # already backed up today
    quiz_on(db, 21, hour=8)
    assert names(tmp_path / "backups") == [
        "k.db-20261120-100000-daily.db",
        "k.db-20261121-080000-daily.db",
    ]
    # each copy holds what the database held before that write
    assert reviews(tmp_path / "backups" / "k.db-20261120-100000-daily.db") == [
        "2026-11-20T09:00:00.000000+00:00"
    ]
    assert len(reviews(tmp_path / "backups" / "k.db-20261121-080000-daily.db")) == 3
    assert check_copy(tmp_path / "backups" / "k.db-20261121-080000-daily.db").reviews == 3


def test_reading_commands_take_no_backup(tmp_path):
    db = tmp_path / "k.db"
    quiz_on(db, 20)
    assert run("stats", "--db", db, "--now", "2026-11-22T09:00:00+00:00").exit_code == 0
    exported = run("export", "--db", db)
    assert exported.exit_code == 0, exported.output
    assert not (tmp_path / "backups").exists()


def test_only_the_newest_backups_are_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("KVDRILL_BACKUP_KEEP", "2")
    db = tmp_path / "k.db"
    for day in (20, 21, 22, 23):
        quiz_on(db, day)
    assert names(tmp_path / "backups") == [
        "k.db-20261122-090000-daily.db",
        "k.db-20261123-090000-daily.db",
    ]


def test_automatic_backups_can_be_turned_off(tmp_path, monkeypatch):
    monkeypatch.setenv("KVDRILL_BACKUP_KEEP", "0")
    db = tmp_path / "k.db"
    quiz_on(db, 20)
    quiz_on(db, 21)
    assert not (tmp_path / "backups").exists()


def test_a_bad_keep_setting_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("KVDRILL_BACKUP_KEEP", "lots")
    db = tmp_path / "k.db"
    quiz_on(db, 20)  # a new database needs no backup, so the setting is not read yet
    result = run("quiz", "--db", db, "--now", "2026-11-21T09:00:00+00:00", input="q\n")
    assert result.exit_code == 1
    assert result.output == "Error: KVDRILL_BACKUP_KEEP must be a whole number from 0 to 10000, not 'lots'\n"


def test_a_migration_is_preceded_by_a_backup_of_the_old_schema(tmp_path):
    path = unmarked_v1(tmp_path / "k.db", 1)
    db = open_db(path, now=datetime(2026, 11, 20, 9, 0, tzinfo=timezone.utc))
    assert db.execute("pragma user_version").fetchone()[0] == SCHEMA_VERSION == 8
    assert db.execute("pragma application_id").fetchone()[0] == APPLICATION_ID
    db.conn.close()
    copy = tmp_path / "backups" / "k.db-20261120-090000-migration.db"
    assert names(tmp_path / "backups") == [copy.name]
    conn = sqlite3.connect(copy)
    assert conn.execute("pragma user_version").fetchone()[0] == 1
    assert conn.execute("pragma journal_mode").fetchone()[0] == "delete"
    assert conn.execute("select id from reviews").fetchall() == [("r1",)]
    conn.close()


def test_a_migration_is_made_even_with_automatic_backups_off(tmp_path, monkeypatch):
    monkeypatch.setenv("KVDRILL_BACKUP_KEEP", "0")
    path = unmarked_v1(tmp_path / "k.db", 1)
    open_db(path, now=datetime(2026, 11, 20, 9, 0, tzinfo=timezone.utc)).conn.close()
    assert names(tmp_path / "backups") == ["k.db-20261120-090000-migration.db"]


def test_backup_by_hand_into_the_folder_and_to_a_file(tmp_path):
    db = tmp_path / "k.db"
    quiz_on(db, 20)
    result = run("backup", "--db", db, "--now", "2026-11-20T12:00:00+00:00")
    assert result.exit_code == 0
    made = tmp_path / "backups" / "k.db-20261120-120000-manual.db"
    assert result.output == f"Backed up {db} to {made}.\n"
    out = tmp_path / "copy.db"
    result = run("backup", "--db", db, "-o", out)
    assert result.output == f"Backed up {db} to {out}.\n"
    assert check_copy(out).reviews == 1
    assert check_copy(made).cards == 1
    assert names(tmp_path) == ["backups", "copy.db", "k.db", "kvdrill-home"]


def test_backup_refuses_to_write_over_the_database(tmp_path):
    db = tmp_path / "k.db"
    quiz_on(db, 20)
    before = sha(db)
    result = run("backup", "--db", db, "-o", db)
    assert result.exit_code == 1
    assert result.output == f"Error: refusing to write over {db}: it is kvdrill's database\n"
    assert sha(db) == before


def test_restore_brings_back_a_backup_and_saves_the_current_state(tmp_path):
    db = tmp_path / "k.db"
    quiz_on(db, 20)
    quiz_on(db, 21)  # backs up the day-20 state, then adds a review
    day20 = tmp_path / "backups" / "k.db-20261121-090000-daily.db"
    result = run("restore", day20, "--db", db, "--now", "2026-11-22T09:00:00+00:00")
    assert result.exit_code == 0, result.output
    saved = tmp_path / "backups" / "k.db-20261122-090000-restore.db"
    assert result.output == (
        f"Restored {db} from {day20}: 1 reviews, 1 cards, last review 2026-11-20.\n"
        f"The database as it was is saved in {saved}.\n"
    )
    assert reviews(db) == ["2026-11-20T09:00:00.000000+00:00"]
    assert len(reviews(saved)) == 2
    conn = sqlite3.connect(db)
    assert conn.execute("pragma journal_mode").fetchone()[0] == "wal"
    assert conn.execute("pragma application_id").fetchone()[0] == APPLICATION_ID
    conn.close()
    # the restored database is used as usual
    quiz_on(db, 22, hour=10)
    assert len(reviews(db)) == 2


def test_restore_into_a_damaged_database(tmp_path):
    db = settled_db(tmp_path / "k.db")
    good = tmp_path / "good.db"
    assert run("backup", "--db", db, "-o", good).exit_code == 0
    damage(db, "truncated")
    damaged = db.read_bytes()
    result = run("restore", good, "--db", db, "--now", "2026-11-22T09:00:00+00:00")
    assert result.exit_code == 0, result.output
    assert run("stats", "--db", db).exit_code == 0
    kept = tmp_path / "backups" / "k.db-20261122-090000-restore.db"
    assert kept.read_bytes() == damaged  # kept as they were


def _bad_copies(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database at all\n" * 50)
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    theirs = foreign(tmp_path / "foreign.db", ["create table notes (body text)"])
    newer = foreign(tmp_path / "newer.db", [
        f"pragma application_id = {APPLICATION_ID}", f"pragma user_version = {SCHEMA_VERSION + 1}",
        "create table cards (question_id text)"])  # fmt: skip
    damaged = settled_db(tmp_path / "damaged.db")
    damage(damaged, "middle")
    return {
        "garbage": (garbage, f"{garbage} is not a kvdrill database (not SQLite, or corrupt); "
                             "left untouched"),
        "empty": (empty, f"{empty} is empty, not a kvdrill backup"),
        "foreign": (theirs, f"{theirs} is not a kvdrill database (tables notes); left "
                             "untouched. Use another --db path for kvdrill's own file."),
        "newer": (newer, f"{newer} was written by a newer kvdrill (schema 9, this one knows 8)"),
        "damaged": (damaged, f"{damaged} is damaged"),
        "missing": (tmp_path / "nope.db", f"no file at {tmp_path / 'nope.db'}"),
    }  # fmt: skip


@pytest.mark.parametrize("case", ["garbage", "empty", "foreign", "newer", "damaged", "missing"])
def test_restore_refuses_a_bad_copy_and_changes_nothing(tmp_path, case):
    db = tmp_path / "k.db"
    quiz_on(db, 20)
    before = sha(db)
    source, message = _bad_copies(tmp_path)[case]
    result = run("restore", source, "--db", db)
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {message}")
    assert len(result.output.splitlines()) == 1
    assert sha(db) == before
    assert not (tmp_path / "backups").exists()


def test_restore_refuses_the_database_itself_and_another_applications_target(tmp_path):
    db = tmp_path / "k.db"
    quiz_on(db, 20)
    result = run("restore", db, "--db", db)
    assert result.output == (
        f"Error: {db} is the database itself; restore one of the copies in "
        f"{tmp_path / 'backups'}\n"
    )
    theirs = foreign(tmp_path / "theirs.db", ["create table notes (body text)"])
    before = sha(theirs)
    result = run("restore", db, "--db", theirs)
    assert result.output == (
        f"Error: {theirs} is not a kvdrill database (tables notes); left untouched. "
        "Use another --db path for kvdrill's own file.\n"
    )
    assert sha(theirs) == before


def test_check_copy_summarises_a_sound_copy(tmp_path):
    db = tmp_path / "k.db"
    quiz_on(db, 20)
    summary = check_copy(db)
    assert (summary.schema_version, summary.cards, summary.reviews, summary.last_review) == (
        8, 1, 1, "2026-11-20T09:00:00.000000+00:00")  # fmt: skip
    with pytest.raises(StoreError, match="is empty, not a kvdrill backup"):
        (tmp_path / "e.db").write_bytes(b"")
        check_copy(tmp_path / "e.db")


def test_list_backups_ignores_other_files(tmp_path):
    folder = tmp_path / "backups"
    folder.mkdir()
    for name in ("k-20261120-090000-daily.db", "k-20261119-090000-manual-2.db", "notes.txt",
                 "k-2026-daily.db", "kk-20261120-090000-daily.db", ".k-20261120-090000-x.db.tmp"):
        (folder / name).write_bytes(b"")  # fmt: skip
    found = [(b.path.name, b.reason) for b in list_backups(tmp_path / "k.db")]
    assert found == [
        ("k-20261119-090000-manual-2.db", "manual"),
        ("k-20261120-090000-daily.db", "daily"),
    ]


# ------------------------------------------------------------------ doctor


def test_doctor_on_a_healthy_database(tmp_path):
    db = tmp_path / "k.db"
    quiz_on(db, 20)
    quiz_on(db, 21)
    result = run("doctor", "--db", db, "--now", "2026-11-21T12:00:00+00:00")
    assert result.exit_code == 0
    size = db.stat().st_size
    wal = (tmp_path / "k.db-wal").stat().st_size if (tmp_path / "k.db-wal").exists() else 0
    assert result.output.splitlines() == [
        f"Database  {db}",
        f"Size      {size:,} bytes (write-ahead log {wal:,})",
        "Kind      kvdrill, schema 8",
        "Integrity ok",
        "Holds     2 cards, 2 reviews, 2 sessions, 0 engine_runs",
        "Backups   1; newest k.db-20261121-090000-daily.db (today)",
        "All good.",
    ]


def test_doctor_repairs_a_session_left_open_and_a_missing_card(tmp_path):
    db = tmp_path / "k.db"
    quiz_on(db, 20)
    conn = sqlite3.connect(db)
    conn.execute("update sessions set ended_at = null")
    conn.execute("delete from cards")
    conn.commit()
    conn.close()
    now = "2026-11-20T12:00:00+00:00"
    result = run("doctor", "--db", db, "--now", now)
    assert result.exit_code == 0
    assert result.output.splitlines()[-2:] == [
        "Would     close 1 session(s) a stopped quiz left open  (kvdrill doctor --repair)",
        "Would     rebuild the card of 1 reviewed question(s) that have none, by replaying "
        "their history  (kvdrill doctor --repair)",
    ]
    result = run("doctor", "--db", db, "--now", now, "--repair")
    assert result.exit_code == 0
    assert result.stderr == (
        "Repaired: closed 1 session(s) left open.\n"
        "Repaired: rebuilt the card of 1 question(s) from their history.\n"
    )
    assert result.stdout.splitlines()[-1] == "All good."
    conn = sqlite3.connect(db)
    assert conn.execute("select ended_at from sessions").fetchall() == [
        ("2026-11-20T09:00:00.000000+00:00",)  # its last answer
    ]
    # the answer was right at once (rated easy): a review card, due in 8 days
    assert conn.execute("select question_id, reps, state, due from cards").fetchall() == [
        ("qf-kv-bytes", 1, 2, "2026-11-28T09:00:00.000000+00:00")
    ]
    conn.close()


def test_doctor_points_a_damaged_database_to_its_newest_sound_backup(tmp_path):
    db = settled_db(tmp_path / "k.db")
    result = run("backup", "--db", db, "--now", "2026-11-20T12:00:00+00:00")
    assert result.exit_code == 0
    damage(db, "middle")
    result = run("doctor", "--db", db, "--now", "2026-11-20T13:00:00+00:00", "--json")
    assert result.exit_code == 1
    import json

    report = json.loads(result.stdout)
    assert report["kind"] == "damaged"
    good = str(tmp_path / "backups" / "k.db-20261120-120000-manual.db")
    assert report["good_backup"] == good
    saved = tmp_path / "k.db-salvaged.jsonl"
    assert report["advice"] == [
        f"first save the reviews that can still be read: kvdrill export --salvage -o {saved}"
        f" --db {db}",
        f"restore the newest sound backup: kvdrill restore {good} --db {db}",
        f"then add back the reviews since that backup: kvdrill import {saved} --db {db}",
    ]
    assert result.stderr == f"Error: {db}: 1 problem(s) that --repair cannot fix; see above\n"
    assert sorted(report) == [
        "advice", "backups", "cardless_questions", "counts", "good_backup", "integrity", "kind",
        "open_sessions", "path", "problems", "repairs", "schema_version", "size_bytes",
        "wal_bytes",
    ]  # fmt: skip


def test_doctor_without_a_database(tmp_path):
    result = run("doctor", "--db", tmp_path / "none.db")
    assert result.exit_code == 1
    assert "Problem   no database at " in result.stdout
    assert not (tmp_path / "none.db").exists()
