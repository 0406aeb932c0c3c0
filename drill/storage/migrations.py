"""The kvdrill schema: append-only migrations, and what kind of file a connection holds.

Tables
- cards:    FSRS state per question id (one row per question ever scheduled).
- reviews:  one row per answer, never updated; the history the schedule replays from.
- sessions: one row per quiz session.
- engine_runs: stored `kvdrill engine run` results (JSON).
- settings: `kvdrill config` values that differ from their defaults.
- interviews, interview_answers: what a mock interview's report needs beyond its
  session and reviews (migration m007).
- probe_runs: stored `kvdrill engine probe` results (JSON), beside engine_runs (m008).
- question_counts: per question, how many reviews and how many right, kept by a
  trigger on every insert into reviews, and on the delete of a review the quiz's undo
  takes back.

Times are ISO-8601 strings in UTC (`2026-11-29T21:30:00.000000+00:00`), so they
sort as text and SQLite's date functions read them. A migration is only ever
appended, never edited; SCHEMA_VERSION counts them and is written to PRAGMA
user_version.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from drill.errors import StoreError
from drill.storage.files import APPLICATION_ID
from drill.storage.sqlite_library import Database, Migrations

# Bump with every migration appended below; it is written to PRAGMA user_version.
SCHEMA_VERSION = 8

migrations = Migrations("kvdrill")


@migrations()
def m001_initial(db: Database) -> None:
    db.table("cards").create(
        {
            "question_id": str,
            "state": int,  # fsrs.State: 1 learning, 2 review, 3 relearning
            "step": int,
            "stability": float,
            "difficulty": float,
            "due": str,
            "last_review": str,
            "reps": int,
            "lapses": int,
        },
        pk="question_id",
        not_null={"question_id", "state", "due", "reps", "lapses"},
        if_not_exists=True,
    )
    db.table("reviews").create(
        {
            "id": str,  # uuid4
            "question_id": str,
            "reviewed_at": str,
            "rating": int,  # 1 again, 2 hard, 3 good, 4 easy
            "correct": int,  # 1/0, NULL for self-rated concept answers
            "answer": str,
            "seed": int,
            "params": str,  # JSON of the drawn params
            "expected": float,
            "unit": str,
            "misconception": str,
            "duration_ms": int,
            "session_id": str,
            "cram": int,  # 1: practice only, did not change the schedule
        },
        pk="id",
        not_null={"id", "question_id", "reviewed_at", "rating"},
        if_not_exists=True,
    )
    db.table("sessions").create(
        {
            "id": str,
            "started_at": str,
            "ended_at": str,
            "mode": str,  # "review" or "cram"
            "answered": int,
            "correct": int,
        },
        pk="id",
        not_null={"id", "started_at"},
        if_not_exists=True,
    )
    db.table("engine_runs").create(
        {
            "id": int,
            "created_at": str,
            "device": str,
            "torch_version": str,
            "config": str,  # JSON
            "result": str,  # JSON, the same object `engine run --json` prints
        },
        pk="id",
        not_null={"created_at", "result"},
        if_not_exists=True,
    )
    db.table("reviews").create_index(["reviewed_at"], if_not_exists=True)
    db.table("reviews").create_index(["question_id", "reviewed_at"], if_not_exists=True)
    db.table("cards").create_index(["due"], if_not_exists=True)


@migrations()
def m002_covering_review_indexes(db: Database) -> None:
    """Indexes that answer the history queries without touching the table rows.

    With a million reviews, `kvdrill stats`, true retention and the quiz's per-question
    counts read only these: the time-ordered one for day ranges (and the replay's time
    order), the per-question one for per-question counts and "was it reviewed before"
    probes. They replace m001's two narrower indexes, which are
    their prefixes. The partial index counts misconceptions (a few percent of rows).
    """
    db.execute("drop index if exists idx_reviews_reviewed_at")
    db.execute("drop index if exists idx_reviews_question_id_reviewed_at")
    db.table("reviews").create_index(
        ["reviewed_at", "question_id", "rating", "correct", "cram"],
        index_name="idx_reviews_time_cover",
        if_not_exists=True,
    )
    db.table("reviews").create_index(
        ["question_id", "reviewed_at", "rating", "correct", "cram"],
        index_name="idx_reviews_question_cover",
        if_not_exists=True,
    )
    db.execute(
        "create index if not exists idx_reviews_misconception"
        " on reviews (misconception, reviewed_at) where misconception is not null"
    )



@migrations()
def m003_settings(db: Database) -> None:
    """Settings that persist (`kvdrill config`): one row per setting changed from its
    default, the value as text (drill.study.settings reads it back)."""
    db.table("settings").create(
        {"key": str, "value": str}, pk="key", not_null={"value"}, if_not_exists=True
    )


@migrations()
def m004_question_counts(db: Database) -> None:
    """Per-question review counters, so progress figures read one row per question
    instead of every review: `reviews` (cram included) and `answered_right` (the grader's
    verdict, else a self-rating above Again). A trigger counts each review inserted; the
    rows are filled from the reviews already there. Reviews are never updated or deleted."""
    db.execute(
        "create table if not exists question_counts (question_id text primary key,"
        " reviews integer not null, answered_right integer not null)"
    )
    db.execute(
        "create trigger if not exists count_review after insert on reviews begin"
        " insert into question_counts (question_id, reviews, answered_right)"
        " values (new.question_id, 1, coalesce(new.correct, new.rating > 1))"
        " on conflict (question_id) do update"
        " set reviews = reviews + 1, answered_right = answered_right + excluded.answered_right;"
        " end"
    )
    db.execute(
        "insert or replace into question_counts (question_id, reviews, answered_right)"
        " select question_id, count(*), coalesce(sum(coalesce(correct, rating > 1)), 0)"
        " from reviews group by question_id"
    )


@migrations()
def m005_card_holds_and_undo(db: Database) -> None:
    """Cards the user holds back, and counters that follow an undone answer.

    Three columns on `cards`, each a time in UTC or null:
    - suspended_at: when the card was suspended (`!` in the quiz, or as a leech); a
      suspended card is never planned until `kvdrill unsuspend`;
    - buried_until: when a bury (`-` in the quiz) ends, the start of the user's next day;
    - leech_at: when its lapses reached the leech threshold.
    A question suspended or buried before its first answer gets a card row with
    reps 0. The quiz's undo deletes the review it takes back: a trigger uncounts it
    in question_counts (m004) and drops a counter that reaches no reviews."""
    have = {row[1] for row in db.execute("pragma table_info(cards)").fetchall()}
    for column in ("suspended_at", "buried_until", "leech_at"):
        if column not in have:
            db.execute(f"alter table cards add column {column} text")
    db.execute(
        "create trigger if not exists uncount_review after delete on reviews begin"
        " update question_counts set reviews = reviews - 1,"
        " answered_right = answered_right - coalesce(old.correct, old.rating > 1)"
        " where question_id = old.question_id;"
        " delete from question_counts where question_id = old.question_id and reviews <= 0;"
        " end"
    )


@migrations()
def m006_review_ticks(db: Database) -> None:
    """The key points a concept answer was ticked for, as the user left them (the grader
    ticks, the user may toggle): text of one character per key point in the question's
    order, 1 ticked and 0 not; null for every other review. Rows stored before keep null.
    Salvage and import read files without the column."""
    have = {row[1] for row in db.execute("pragma table_info(reviews)").fetchall()}
    if "ticks" not in have:
        db.execute("alter table reviews add column ticks text")
    # the key points missed most (drill.reports.stats) read the ticked reviews alone
    db.execute(
        "create index if not exists idx_reviews_ticks"
        " on reviews (question_id, ticks, reviewed_at) where ticks is not null"
    )



@migrations()
def m007_interview_reports(db: Database) -> None:
    """What re-renders a mock interview's report (`kvdrill interview report ID`) beside
    its session and reviews: per interview its seed, length, questions planned, topic and
    focus, and at its end how it ended and the seconds it took; per answer (keyed by its
    review, written in the review's transaction) its number, the problem it follows up,
    the words it was asked in, and the verdict as the report showed it. Interviews held
    before keep their reviews and scores, without a report to render again."""
    db.execute(
        "create table if not exists interviews (session_id text primary key, seed integer"
        " not null, minutes real not null, planned integer not null, topic text, focus text,"
        " ended_by text, elapsed_s real)"
    )
    db.execute(
        "create table if not exists interview_answers (review_id text primary key,"
        " session_id text not null, number integer not null, follow_up_of integer,"
        " topic text not null, kind text not null, asked text not null, verdict text not null,"
        " expected text not null, mistake text, missed text not null, points real not null,"
        " details text not null)"
    )
    db.execute(
        "create index if not exists idx_interview_answers_session"
        " on interview_answers (session_id, number)"
    )


@migrations()
def m008_probe_runs(db: Database) -> None:
    """Stored `kvdrill engine probe` runs: a serving endpoint measured from outside (TTFT,
    TPOT, ITL, throughput, goodput). Kept apart from engine_runs, which the calculator and
    the quiz read as this machine's own measurement. The URL is kept without credentials
    or query; the API key never reaches the database."""
    db.execute(
        "create table if not exists probe_runs (id integer primary key, created_at text"
        " not null, url text not null, model text, result text not null)"
    )


def database_kind(conn: sqlite3.Connection, path: Path) -> str:
    """'kvdrill', 'unmarked' (a kvdrill database from before the application id) or 'blank'.

    Raises StoreError, without writing anything, for another application's database.
    """
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    names = [row[0] for row in conn.execute("select name from sqlite_master where type = 'table'")]
    if app_id == APPLICATION_ID:
        return "kvdrill"
    if app_id == 0 and version >= 1 and Migrations.migrations_table in names:
        logged = conn.execute(
            f"select 1 from {Migrations.migrations_table}"
            " where migration_set = ? and name = 'm001_initial'",
            [migrations.name],
        ).fetchone()
        if logged:
            return "unmarked"
    if app_id == 0 and version == 0 and not names:
        return "blank"
    detail = f"application id {app_id:#x}" if app_id else ""
    if names:
        shown = ", ".join(sorted(names)[:5]) + (", ..." if len(names) > 5 else "")
        detail = (detail + "; " if detail else "") + f"tables {shown}"
    if not detail:
        detail = f"user_version {version}"
    raise StoreError(
        f"{path} is not a kvdrill database ({detail}); left untouched. "
        "Use another --db path for kvdrill's own file."
    )
