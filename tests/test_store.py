import sqlite3

import pytest

from drill.errors import StoreError
from drill.storage.database import APPLICATION_ID, SCHEMA_VERSION, migrations, open_db


def test_new_database_has_tables_wal_and_version(tmp_path):
    db = open_db(tmp_path / "k.db")
    assert {"cards", "reviews", "sessions", "engine_runs"} <= set(db.table_names())
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_reopening_applies_nothing_twice(tmp_path):
    open_db(tmp_path / "k.db").conn.close()
    db = open_db(tmp_path / "k.db")
    names = [r["name"] for r in db.query("select name from _sqlite_migrations")]
    assert names[0] == "m001_initial"
    assert len(names) == len(set(names)) == SCHEMA_VERSION
    assert migrations.pending(db) == []


def test_corrupt_file_is_refused_untouched(tmp_path):
    path = tmp_path / "k.db"
    garbage = b"this is not a database\n" * 100
    path.write_bytes(garbage)
    with pytest.raises(StoreError, match="not a kvdrill database"):
        open_db(path)
    assert path.read_bytes() == garbage


def test_newer_schema_is_refused_untouched(tmp_path):
    path = tmp_path / "k.db"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="newer kvdrill"):
        open_db(path)
    assert path.read_bytes() == before


def test_the_reviews_table_has_the_review_records_fields_in_order(tmp_path):
    from drill.storage.review_record import FIELDS

    db = open_db(tmp_path / "k.db")
    columns = [row[1] for row in db.execute("pragma table_info(reviews)")]
    assert columns == [
        "id", "question_id", "reviewed_at", "rating", "correct", "answer", "seed", "params",
        "expected", "unit", "misconception", "duration_ms", "session_id", "cram", "ticks",
    ]  # fmt: skip
    # the record lists duration_ms after answer; the insert names every column
    assert FIELDS == (
        "id", "question_id", "reviewed_at", "rating", "correct", "answer", "duration_ms",
        "seed", "params", "expected", "unit", "misconception", "session_id", "cram", "ticks",
    )  # fmt: skip
    assert set(columns) == set(FIELDS)
