"""The quiz reads only its own questions' cards, in SQL: the plan and the summary it builds
from them are exactly those the whole card table gave, on a database that also holds
cards of questions outside the bank, held cards, ties and cards due at this very moment."""

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import pytest

from drill.srs import iso
from drill.storage.database import open_db
from drill.storage.reviews import Performance, load_cards, performance_by_question
from drill.storage.session_cards import (
    CardsLeft,
    cards_left,
    cards_of,
    due_cards,
    learning_cards_later,
    without_card,
)
from drill.study.plan import Learning, PlanItem, learning_later, plan_review
from drill.study.session_text import SessionResult, fill_summary

T0 = datetime(2026, 11, 2, 8, 0, tzinfo=timezone.utc)
MIN = timedelta(minutes=1)
DAY = timedelta(days=1)
LEARNING, REVIEW, RELEARNING = 1, 2, 3


@dataclass(frozen=True)
class Q:
    id: str
    difficulty: int = 2


# bank order; n, o and p have no card
BANK = [
    Q("z-overdue"), Q("a-relearning-due"), Q("m-due-tie"), Q("b-due-tie"), Q("c-suspended"),
    Q("d-buried"), Q("e-bury-ended-due-now"), Q("f-learning-later"), Q("g-review-later"),
    Q("h-learning-suspended"), Q("n-new", 3), Q("o-new", 1), Q("p-new", 2),
]  # fmt: skip
IDS = [q.id for q in BANK]

# (question id, state, due, suspended_at, buried_until); the "other-" cards belong to
# questions outside the bank, due or in learning, and must change nothing
CARDS = [
    ("z-overdue", REVIEW, T0 - 5 * DAY, None, None),
    ("a-relearning-due", RELEARNING, T0 - 10 * MIN, None, None),
    ("m-due-tie", REVIEW, T0 - DAY, None, None),
    ("b-due-tie", REVIEW, T0 - DAY, None, None),
    ("c-suspended", REVIEW, T0 - 2 * DAY, T0 - DAY, None),
    ("d-buried", REVIEW, T0 - 2 * DAY, None, T0 + 6 * 60 * MIN),
    ("e-bury-ended-due-now", REVIEW, T0, None, T0),
    ("f-learning-later", LEARNING, T0 + 5 * MIN, None, None),
    ("g-review-later", REVIEW, T0 + 3 * 60 * MIN, None, None),
    ("h-learning-suspended", LEARNING, T0 + 2 * MIN, T0 - MIN, None),
    ("other-overdue", REVIEW, T0 - 9 * DAY, None, None),
    ("other-learning-due", LEARNING, T0 - MIN, None, None),
    ("other-learning-later", LEARNING, T0 + MIN, None, None),
]


@pytest.fixture
def db(tmp_path):
    database = open_db(tmp_path / "k.db", now=T0)
    database.conn.executemany(
        "insert into cards (question_id, state, step, stability, difficulty, due, last_review,"
        " reps, lapses, suspended_at, buried_until) values (?, ?, 0, 3.0, 5.0, ?, ?, 2, 0, ?, ?)",
        [
            (qid, state, iso(due), iso(T0 - 3 * DAY), held and iso(held), bury and iso(bury))
            for qid, state, due, held, bury in CARDS
        ],
    )
    return database


def test_due_cards_come_learning_first_then_most_overdue_then_bank_order(db):
    due = due_cards(db, IDS, iso(T0), 20)
    assert list(due) == [
        "a-relearning-due", "z-overdue", "m-due-tie", "b-due-tie", "e-bury-ended-due-now",
    ]  # fmt: skip
    assert due["a-relearning-due"] == {
        "question_id": "a-relearning-due", "state": 3, "due": "2026-11-02T07:50:00.000000+00:00",
    }  # fmt: skip
    assert list(due_cards(db, IDS, iso(T0), 3)) == ["a-relearning-due", "z-overdue", "m-due-tie"]


def test_the_learning_cards_to_come_and_the_questions_without_a_card(db):
    assert list(learning_cards_later(db, IDS, iso(T0))) == ["f-learning-later"]
    assert without_card(db, IDS) == {"n-new", "o-new", "p-new"}
    assert without_card(db, ["other-overdue", "never-seen"]) == {"never-seen"}


@pytest.mark.parametrize("max_items", [20, 4])
def test_the_plan_from_the_sql_reads_is_the_plan_from_every_card(db, max_items):
    expected = [
        PlanItem("a-relearning-due", "again"), PlanItem("z-overdue", "due"),
        PlanItem("m-due-tie", "due"), PlanItem("b-due-tie", "due"),
        PlanItem("e-bury-ended-due-now", "due"), PlanItem("o-new", "new"),
        PlanItem("p-new", "new"),
    ][:max_items]  # fmt: skip
    ratings = {"a-relearning-due": 1}
    every_card = plan_review(
        BANK, load_cards(db), T0, new_today=1, new_limit=3, max_items=max_items,
        last_ratings=ratings,
    )  # fmt: skip
    from_sql = plan_review(
        BANK, due_cards(db, IDS, iso(T0), max_items), T0, new_today=1, new_limit=3,
        max_items=max_items, last_ratings=ratings, unseen=without_card(db, IDS),
    )  # fmt: skip
    assert every_card == expected
    assert from_sql == expected


def test_the_learning_queue_from_the_sql_read_is_the_one_from_every_card(db):
    expected = (Learning("f-learning-later", T0 + 5 * MIN, "learning"),)
    assert learning_later(BANK, load_cards(db), T0) == expected
    assert learning_later(BANK, learning_cards_later(db, IDS, iso(T0)), T0) == expected


def test_the_summary_counts_only_the_bank_and_leaves_held_cards_out(db):
    left = cards_left(db, IDS, iso(T0), iso(T0 + DAY))
    assert left == CardsLeft(
        due_now=5,
        next_due="2026-11-02T08:05:00.000000+00:00",
        due_within_day=2,
        without_card=3,
        learning=(
            ("2026-11-02T07:50:00.000000+00:00", "a-relearning-due"),
            ("2026-11-02T08:05:00.000000+00:00", "f-learning-later"),
        ),
    )
    result = SessionResult("s", "review", 0, T0 - 30 * MIN, ended_at=T0)
    fill_summary(result, left, new_allowance=2)
    assert (result.due_now, result.next_due, result.due_within_day, result.new_waiting) == (
        5, T0 + 5 * MIN, 2, 2,
    )  # fmt: skip
    assert result.learning_left == [
        (T0 - 10 * MIN, "a-relearning-due"), (T0 + 5 * MIN, "f-learning-later"),
    ]  # fmt: skip


def test_the_summary_of_a_bank_whose_cards_are_all_held_or_absent(db):
    left = cards_left(db, ["c-suspended", "d-buried", "n-new"], iso(T0), iso(T0 + DAY))
    assert left == CardsLeft(0, None, 0, 1, ())
    result = SessionResult("s", "cram", 0, T0, ended_at=T0)
    fill_summary(result, left, new_allowance=0)
    assert (result.due_now, result.next_due, result.new_waiting, result.learning_left) == (
        0, None, 0, [],
    )  # fmt: skip


def test_cram_reads_the_whole_rows_and_the_record_of_the_bank_only(db):
    db.conn.executemany(
        "insert into reviews (id, question_id, reviewed_at, rating, correct, cram)"
        " values (?, ?, ?, ?, ?, 0)",
        [
            ("r1", "z-overdue", iso(T0 - 9 * DAY), 3, 1),
            ("r2", "z-overdue", iso(T0 - 5 * DAY), 1, None),
            ("r3", "b-due-tie", iso(T0 - 4 * DAY), 3, 0),
            ("r4", "other-overdue", iso(T0 - 20 * DAY), 1, 0),
        ],
    )
    rows = cards_of(db, ["b-due-tie", "n-new", "z-overdue"])
    assert list(rows) == ["b-due-tie", "z-overdue"]
    assert rows["z-overdue"] == load_cards(db)["z-overdue"]
    assert performance_by_question(db, IDS) == {
        "b-due-tie": Performance(1, 1), "z-overdue": Performance(2, 1),
    }  # fmt: skip
    assert performance_by_question(db)["other-overdue"] == Performance(1, 1)


def test_cards_of_questions_outside_the_bank_change_nothing_in_a_quiz(tmp_path):
    """End to end: the same session, word for word, with or without 2,000 cards of another
    deck (due, in learning, buried) in the database."""
    from pathlib import Path

    from click.testing import CliRunner

    from drill.cli import cli

    bank = Path(__file__).parent / "banks_quiz"
    outputs = []
    for name, others in (("plain.db", 0), ("crowded.db", 2000)):
        path = tmp_path / name
        database = open_db(path, now=T0)
        database.conn.executemany(
            "insert into cards (question_id, state, step, stability, difficulty, due, reps,"
            " lapses, buried_until) values (?, ?, 0, 3.0, 5.0, ?, 1, 0, ?)",
            [
                (f"other-deck-{n}", (LEARNING, REVIEW)[n % 2], iso(T0 - (n % 7 - 3) * DAY),
                 iso(T0 + DAY) if n % 11 == 0 else None)
                for n in range(others)
            ],
        )  # fmt: skip
        database.conn.close()
        args = ["quiz", "--db", str(path), "--bank", str(bank), "--topic", "quiz-fixture",
                "--now", iso(T0), "--no-fuzz", "--seed", "1", "--max", "2"]  # fmt: skip
        result = CliRunner().invoke(cli, args, input="2 MiB\n\ns\n")
        assert result.exit_code == 0, result.output
        outputs.append(result.output)
    assert outputs[0] == outputs[1]
    assert outputs[0].splitlines()[0].startswith("2 questions: 0 due, 2 new.")
    assert outputs[0].splitlines()[-3:] == [
        "1 answered: 1 right, 0 wrong, 1 skipped; 0 s.",
        "Next due: in 8 days.",
        "New questions left for today: 2.",
    ]
