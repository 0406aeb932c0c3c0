"""`u` takes the last answer back: the review row goes, the card row is exactly as it was,
the session's counters drop it, and the question is asked again."""

from dataclasses import replace
from datetime import timedelta

import pytest
from test_session import BANK_DIR, FIXTURE, T0, Terminal, no_evidence, reviews, run  # noqa: I001

from drill.bank.loader import load_bank
from drill.errors import CardError
from drill.storage.database import open_db
from drill.storage.reviews import CardChange, get_card, undo
from drill.study.days import UTC_DAYS
from drill.study.session import run_session

NEXT_DAY = T0 + timedelta(days=1)


def session_row(db, session_id):
    return db.execute(
        "select answered, correct from sessions where id = ?", [session_id]
    ).fetchone()


def counters(db):
    return db.execute("select question_id, reviews, answered_right from question_counts").fetchall()


def question_shown(text, after=0):
    """The header and question text of the first question shown after `after`."""
    begin = text.index("[0 done, ", after)
    return text[begin:text.index("\n> ", begin)]


def test_undo_at_the_next_question_puts_back_the_exact_card_row_and_the_counters(tmp_path):
    db = open_db(tmp_path / "k.db")
    run(db, ["1 MiB", "", "q"])  # day 1: qf-kv-bytes wrong, in learning
    before = get_card(db, "qf-kv-bytes")
    counts_before = counters(db)
    # day 2: right (the card graduates), then u at the next question
    result, term = run(db, ["2 MiB", "", "u", "q"], start=NEXT_DAY)
    assert "Saved: good." in term.text and "Undone: qf-kv-bytes is asked again." in term.text
    assert get_card(db, "qf-kv-bytes") == before
    assert [r["answer"] for r in reviews(db)] == ["1 MiB"]
    assert counters(db) == counts_before == [("qf-kv-bytes", 1, 0)]
    assert session_row(db, result.session_id) == (0, 0)
    assert (result.answered, result.right, result.wrong, result.undone) == (0, 0, 0, 1)
    assert result.review_ids == []
    assert "Undone: 1 answer." in term.text


def test_the_undone_question_is_asked_again_with_the_same_draw_and_answered_anew(tmp_path):
    db = open_db(tmp_path / "k.db")
    run(db, ["1 MiB", "", "q"])
    result, term = run(db, ["2 MiB", "", "u", "1 MiB", "", "q"], start=NEXT_DAY)
    undone_at = term.text.index("Undone:")
    assert question_shown(term.text) == question_shown(term.text, undone_at)
    assert question_shown(term.text).startswith("[0 done, 3 left] quiz-fixture · again\nA model has")
    stored = reviews(db)
    assert [(r["answer"], r["rating"]) for r in stored] == [("1 MiB", 1), ("1 MiB", 1)]
    assert result.review_ids == [stored[1]["id"]]
    assert (result.answered, result.right, result.wrong, result.undone) == (1, 0, 1, 1)
    assert session_row(db, result.session_id) == (1, 0)
    assert counters(db) == [("qf-kv-bytes", 2, 0)]


def test_undo_of_a_first_answer_deletes_the_card(tmp_path):
    db = open_db(tmp_path / "k.db")
    result, term = run(db, ["2 MiB", "", "u", "q"])
    assert get_card(db, "qf-kv-bytes") is None
    assert reviews(db) == []
    assert counters(db) == []
    assert session_row(db, result.session_id) == (0, 0)
    assert term.text.count("[0 done, 3 left] quiz-fixture · new") == 2
    assert (result.answered, result.right, result.undone) == (0, 0, 1)


def test_undo_when_nothing_is_left_and_with_nothing_to_undo(tmp_path):
    db = open_db(tmp_path / "k.db")
    one = replace(FIXTURE, max_items=1, learn_ahead=timedelta(0))
    result, term = run(db, ["u", "2 MiB", "", "u", "2 MiB", "4", ""], options=one)
    assert "Nothing to undo in this session." in term.text
    assert term.text.count("Done. u takes back the last answer") == 2
    assert [r["rating"] for r in reviews(db)] == [4]
    assert (result.answered, result.undone, result.ended_by) == (1, 1, "done")


def test_undo_is_refused_when_another_session_changed_the_card(tmp_path):
    db = open_db(tmp_path / "k.db")

    class Meddling(Terminal):
        """Another session answers qf-kv-bytes just before `u` is read."""

        def read_line(self):
            if self.lines and self.lines[0] == "u":
                db.execute("update cards set reps = reps + 1 where question_id = 'qf-kv-bytes'")
            return super().read_line()

    term = Meddling(["2 MiB", "", "u", "q"])
    result = run_session(db, load_bank([BANK_DIR]), FIXTURE, term.io(), days=UTC_DAYS,
                         evidence_lines=no_evidence)
    assert (
        "Cannot undo: qf-kv-bytes has changed since (answered in another session?); "
        "nothing was undone." in term.text
    )
    assert len(reviews(db)) == 1 and result.answered == 1


def test_undo_takes_back_a_suspend(tmp_path):
    db = open_db(tmp_path / "k.db")
    result, term = run(db, ["!", "u", "q"])
    assert "Suspended until `kvdrill unsuspend qf-kv-bytes`." in term.text
    assert get_card(db, "qf-kv-bytes") is None
    assert term.text.count("[0 done, 3 left] quiz-fixture · new") == 2
    assert (result.suspended, result.undone) == (0, 1)


def test_undo_refuses_a_review_already_gone(tmp_path):
    db = open_db(tmp_path / "k.db")
    with pytest.raises(CardError, match="no longer in the database"):
        undo(db, CardChange("a", None, None, review_id="missing", session_id="s"))
