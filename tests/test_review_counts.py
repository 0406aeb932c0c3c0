"""Per-question review counters (migration m004): kept by a trigger, filled on upgrade."""

import sqlite3
import uuid

from drill.storage.database import open_db

GROUP_BY = (
    "select question_id, count(*), sum(coalesce(correct, rating > 1)) from reviews"
    " group by question_id order by question_id"
)
COUNTS = "select question_id, reviews, answered_right from question_counts order by question_id"


def insert(db, n, qid, rating, correct, cram=0):
    db.execute(
        "insert into reviews (id, question_id, reviewed_at, rating, correct, cram)"
        " values (?, ?, ?, ?, ?, ?)",
        [str(uuid.UUID(int=n)), qid, f"2026-11-0{n % 9 + 1}T08:00:00.000000+00:00", rating,
         correct, cram],
    )  # fmt: skip


def test_every_insert_is_counted_graded_or_self_rated_cram_included(tmp_path):
    db = open_db(tmp_path / "k.db")
    insert(db, 1, "a", 3, 1)
    insert(db, 2, "a", 1, 0)
    insert(db, 3, "a", 1, None)  # self-rated Again: not right
    insert(db, 4, "b", 2, None, cram=1)  # self-rated Hard, cram: counted, right
    insert(db, 5, "b", 4, 0)  # the grader said wrong, whatever the rating
    db.execute(
        "insert or ignore into reviews (id, question_id, reviewed_at, rating)"
        " values (?, 'a', '2026-11-09T08:00:00.000000+00:00', 3)",
        [str(uuid.UUID(int=1))],
    )  # ignored: its id is there already, so nothing is counted
    assert db.execute(COUNTS).fetchall() == [("a", 3, 1), ("b", 2, 1)]
    assert db.execute(COUNTS).fetchall() == db.execute(GROUP_BY).fetchall()


def test_the_upgrade_fills_the_counters_from_the_reviews_already_there(tmp_path):
    path = tmp_path / "k.db"
    db = open_db(path)
    for n, (qid, rating, correct) in enumerate([("x", 3, None), ("x", 1, None), ("y", 4, 1)]):
        insert(db, n, qid, rating, correct)
    db.conn.close()
    # the database as schema 3 left it: no counters, m004 not yet applied
    conn = sqlite3.connect(path)
    conn.execute("drop trigger count_review")
    conn.execute("drop table question_counts")
    conn.execute("delete from _sqlite_migrations where name = 'm004_question_counts'")
    conn.execute("pragma user_version = 3")
    conn.commit()
    conn.close()
    db = open_db(path)
    assert db.execute(COUNTS).fetchall() == [("x", 2, 1), ("y", 1, 1)]
    insert(db, 9, "y", 1, 0)
    assert db.execute(COUNTS).fetchall() == [("x", 2, 1), ("y", 2, 1)]
