"""Cards in learning come back within the session: the queue's rules, and whole sessions
with a fixed clock whose questions come in an exact order."""

import re
from dataclasses import replace
from datetime import timedelta

from test_session import FIXTURE, T0, Q, card, reviews, run  # noqa: I001

from drill.srs import iso
from drill.storage.database import open_db
from drill.storage.reviews import get_card
from drill.study.plan import (
    Learning,
    PlanItem,
    Queue,
    after_answer,
    coming,
    drop,
    learning_later,
    next_item,
    plan_due,
    refresh_learning,
)

AHEAD = timedelta(minutes=20)
MIN = timedelta(minutes=1)


# --------------------------------------------------------------------------- the rules


def test_a_learning_card_whose_step_has_passed_comes_before_the_planned_ones():
    queue = Queue(
        (PlanItem("p1", "due"), PlanItem("p2", "new")),
        (Learning("late", T0 + MIN, "again"), Learning("ready", T0 - MIN, "learning")),
    )
    item, rest = next_item(queue, T0, AHEAD)
    assert item == PlanItem("ready", "learning")
    item, rest = next_item(rest, T0, AHEAD)
    assert item == PlanItem("p1", "due")
    assert rest == Queue((PlanItem("p2", "new"),), (Learning("late", T0 + MIN, "again"),))


def test_with_nothing_else_left_the_soonest_learning_card_is_shown_within_the_learn_ahead():
    queue = Queue((), (Learning("b", T0 + 15 * MIN, "learning"), Learning("a", T0 + 5 * MIN,
                                                                           "again")))
    item, rest = next_item(queue, T0, AHEAD)
    assert item == PlanItem("a", "again")
    item, rest = next_item(rest, T0, AHEAD)
    assert item == PlanItem("b", "learning")
    assert next_item(rest, T0, AHEAD) == (None, Queue())


def test_a_learning_card_beyond_the_learn_ahead_limit_ends_the_session():
    queue = Queue((), (Learning("a", T0 + 21 * MIN, "again"),))
    assert next_item(queue, T0, AHEAD) == (None, queue)
    assert next_item(queue, T0, timedelta(0)) == (None, queue)
    assert next_item(queue, T0 + MIN, AHEAD)[0] == PlanItem("a", "again")


def test_after_an_answer_a_card_in_learning_joins_the_queue_and_a_graduated_one_leaves():
    queue = Queue((PlanItem("b", "new"),), (Learning("a", T0, "again"),))
    learning = card("a", 1, T0 + 10 * MIN)
    assert after_answer(queue, "a", learning, 3) == Queue(
        (PlanItem("b", "new"),), (Learning("a", T0 + 10 * MIN, "learning"),)
    )
    # after an Again it waits for three other questions
    assert after_answer(queue, "a", learning, 1).learning == (Learning("a", T0 + 10 * MIN,
                                                                       "again", 3),)
    graduated = card("a", 2, T0 + timedelta(days=3))
    assert after_answer(queue, "a", graduated, 3) == Queue((PlanItem("b", "new"),), ())
    leech = card("a", 3, T0 + 10 * MIN, suspended_at=iso(T0))
    assert after_answer(queue, "a", leech, 1).learning == ()
    assert after_answer(queue, "a", None, 1).learning == ()  # cram: the schedule is not changed
    assert drop(queue, "b") == Queue((), queue.learning)


def test_a_failed_card_waits_for_three_other_questions_even_once_its_step_has_passed():
    planned = tuple(PlanItem(f"p{i}", "new") for i in range(1, 6))
    queue = after_answer(Queue(planned), "failed", card("failed", 3, T0 + MIN), 1)
    assert queue.learning == (Learning("failed", T0 + MIN, "again", 3),)
    later = T0 + 5 * MIN  # its one-minute step has long passed
    shown = []
    for _ in range(6):
        item, queue = next_item(queue, later, AHEAD)
        shown.append(item.question_id)
    assert shown == ["p1", "p2", "p3", "failed", "p4", "p5"]
    assert next_item(queue, later, AHEAD) == (None, Queue())


def test_with_fewer_other_questions_left_a_failed_card_waits_for_all_of_them():
    # one planned question and one learning card due later: both come first
    queue = Queue((PlanItem("p1", "due"),), (Learning("good", T0 + 10 * MIN, "learning"),))
    queue = after_answer(queue, "failed", card("failed", 3, T0 + MIN), 1)
    shown = []
    for _ in range(3):
        item, queue = next_item(queue, T0 + 2 * MIN, AHEAD)
        shown.append((item.question_id, item.why))
    assert shown == [("p1", "due"), ("good", "learning"), ("failed", "again")]
    # alone in the session, it comes back at once, within the learn-ahead
    alone = after_answer(Queue(), "failed", card("failed", 3, T0 + MIN), 1)
    assert next_item(alone, T0, AHEAD) == (PlanItem("failed", "again"), Queue())
    # past the learn-ahead limit the session ends, whether it waits or not
    assert next_item(alone, T0, timedelta(0)) == (None, alone)


def test_refresh_follows_the_database_another_session_may_have_changed():
    queue = Queue((), (Learning("moved", T0, "again"), Learning("graduated", T0, "again"),
                       Learning("gone", T0, "again"), Learning("buried", T0, "learning")))
    rows = {
        "moved": card("moved", 3, T0 + 5 * MIN),
        "graduated": card("graduated", 2, T0 + timedelta(days=2)),
        "gone": None,
        "buried": card("buried", 1, T0, buried_until=iso(T0 + timedelta(hours=20))),
    }
    assert refresh_learning(queue, rows, T0) == Queue((), (Learning("moved", T0 + 5 * MIN,
                                                                     "again"),))


def test_coming_counts_the_planned_and_the_learning_due_within_the_learn_ahead():
    queue = Queue((PlanItem("p", "new"),), (Learning("a", T0 + 19 * MIN, "again"),
                                           Learning("b", T0 + 21 * MIN, "again")))
    assert coming(queue, T0, AHEAD) == 2
    assert coming(queue, T0 + MIN, AHEAD) == 3


def test_suspended_and_buried_cards_are_not_planned_and_learning_ones_wait_for_their_step():
    questions = [Q("a"), Q("b"), Q("c"), Q("d"), Q("e")]
    cards = {
        "a": card("a", 2, T0 - MIN, suspended_at=iso(T0 - timedelta(days=1))),
        "b": card("b", 2, T0 - MIN, buried_until=iso(T0 + timedelta(hours=20))),
        "c": card("c", 2, T0 - MIN, buried_until=iso(T0 - MIN)),  # its bury has ended
        "d": card("d", 1, T0 + 5 * MIN),
        "e": card("e", 3, T0 - MIN),
    }
    assert plan_due(questions, cards, T0, {"e": 1}) == [PlanItem("e", "again"),
                                                        PlanItem("c", "due")]
    assert learning_later(questions, cards, T0, {"d": 3}) == (Learning("d", T0 + 5 * MIN,
                                                                      "learning"),)


# --------------------------------------------------------------------------- whole sessions

# Every line read moves the clock 40 s. qf-kv-bytes answered wrong is due again a
# minute after its answer; the others, rated Good once, ten minutes after theirs. A
# concept answer's ticks are kept with Enter, one more line.
SCRIPT = [
    "1 MiB", "",  # [1] qf-kv-bytes: wrong, Again, at 80 s; due at 140 s, after 3 others
    "weights", "", "3",  # [2] qf-decode-bound: Good at 200 s; back at 800 s
    "1", "3",  # [3] qf-choice (qf-kv-bytes waits): Good at 280 s; back at 880 s
    # nothing planned is left; qf-kv-bytes has seen two others and waits for the last one
    "weights", "", "3",  # [4] qf-decode-bound, learn-ahead: Good at 400 s; graduates
    "2 MiB", "3",  # [5] qf-kv-bytes again: Good at 480 s; back at 1,080 s
    "1", "3",  # [6] qf-choice; graduates
    "2 MiB", "3",  # [7] qf-kv-bytes; graduates
]  # fmt: skip


def headers(text):
    return re.findall(r"^\[\d+ done, \d+ left\] .*$", text, re.M)


def test_a_failed_card_comes_back_after_the_others_and_learning_ones_at_the_end(tmp_path):
    db = open_db(tmp_path / "k.db")
    result, term = run(db, SCRIPT, tick_s=40)
    assert [r["question_id"] for r in reviews(db)] == [
        "qf-kv-bytes", "qf-decode-bound", "qf-choice", "qf-decode-bound",
        "qf-kv-bytes", "qf-choice", "qf-kv-bytes",
    ]  # fmt: skip
    assert headers(term.text) == [
        "[0 done, 3 left] quiz-fixture · new",
        "[1 done, 3 left] quiz-fixture · new",  # the failed card will be back: one more
        "[2 done, 3 left] quiz-fixture · new",
        "[3 done, 3 left] quiz-fixture · learning",
        "[4 done, 2 left] quiz-fixture · again",
        "[5 done, 2 left] quiz-fixture · learning",
        "[6 done, 1 left] quiz-fixture · learning",
    ]
    assert [r["reviewed_at"] for r in reviews(db)] == [
        iso(T0 + timedelta(seconds=s)) for s in (80, 200, 280, 400, 480, 560, 640)
    ]
    assert {get_card(db, q)["state"] for q in ("qf-kv-bytes", "qf-decode-bound", "qf-choice")} == {
        2
    }
    # nothing left: the last answer can still be taken back, then the summary
    assert "Done. u takes back the last answer; Enter ends the session: \n" in term.text
    assert (result.ended_by, result.answered) == ("done", 7)
    assert "Still learning" not in term.text


def test_without_learn_ahead_the_session_ends_and_says_which_learning_cards_are_left(tmp_path):
    db = open_db(tmp_path / "k.db")
    options = replace(FIXTURE, learn_ahead=timedelta(0))
    script = [*SCRIPT[:7], "2 MiB", "3", ""]  # qf-kv-bytes after both others, then Enter
    result, term = run(db, script, options=options, tick_s=40)
    assert [r["question_id"] for r in reviews(db)] == [
        "qf-kv-bytes", "qf-decode-bound", "qf-choice", "qf-kv-bytes",
    ]
    assert headers(term.text) == [
        "[0 done, 3 left] quiz-fixture · new",
        "[1 done, 2 left] quiz-fixture · new",  # no learning card is counted before it is due
        "[2 done, 2 left] quiz-fixture · new",
        "[3 done, 1 left] quiz-fixture · again",
    ]
    # the session ended at 400 s (the Enter at "Done"); qf-decode-bound is back at 800 s
    assert result.ended_by == "done"
    assert result.learning_left == [
        (T0 + timedelta(seconds=800), "qf-decode-bound"),
        (T0 + timedelta(seconds=880), "qf-choice"),
        (T0 + timedelta(seconds=960), "qf-kv-bytes"),
    ]
    assert term.text[term.text.index("── summary ──"):] == (
        "── summary ──\n"
        "4 answered: 2 right, 2 wrong; 6 min 40 s.\n"
        "Mistakes this session: 1; practise each with its drill:\n"
        "  1x forgot the K+V factor of 2: kvdrill quiz --drill forgot-kv-factor\n"
        "Still learning: 3; `kvdrill quiz` shows each once it is back:\n"
        "  qf-decode-bound  back in 6 min 40 s\n"
        "  qf-choice        back in 8 min\n"
        "  qf-kv-bytes      back in 9 min 20 s\n"
        "Next due: in 6 min 40 s; 3 due within a day.\n"
    )


def test_a_session_quit_early_names_its_mistakes_and_the_learning_cards_left(tmp_path):
    db = open_db(tmp_path / "k.db")
    # qf-kv-bytes wrong (Again at 80 s, back at 140 s); the concept rated Again at 200 s
    # (back at 260 s); q at the third question, at 240 s
    _, term = run(db, ["1 MiB", "", "weights", "", "1", "q"], tick_s=40)
    assert term.text[term.text.index("── summary ──"):] == (
        "── summary ──\n"
        "2 answered: 0 right, 2 wrong; 4 min.\n"
        "Mistakes this session: 1; practise each with its drill:\n"
        "  1x forgot the K+V factor of 2: kvdrill quiz --drill forgot-kv-factor\n"
        "Still learning: 2; `kvdrill quiz` shows each once it is back:\n"
        "  qf-kv-bytes      back now\n"
        "  qf-decode-bound  back in 20 s\n"
        "Due now: 1 (run kvdrill quiz again).\n"
        "Next due: in 20 s; 1 due within a day.\n"
        "New questions left for today: 1.\n"
    )


def test_a_learning_card_is_labelled_again_only_after_an_again(tmp_path):
    db = open_db(tmp_path / "k.db")
    run(db, ["2 MiB", "", "weights", "", "1", "q"])  # qf-kv-bytes Good, qf-decode-bound Again
    _, term = run(db, ["s", "s", "q"], start=T0 + timedelta(hours=2))
    assert "[0 done, 3 left] quiz-fixture · again\nWhy is the decode phase" in term.text
    assert "[1 done, 2 left] quiz-fixture · learning\nA model has 2 layers" in term.text


def test_a_later_session_shows_a_learning_card_within_the_learn_ahead(tmp_path):
    db = open_db(tmp_path / "k.db")
    run(db, ["2 MiB", "", "q"])  # Good: back in ten minutes
    result, term = run(db, ["s", "s", "q"], start=T0 + timedelta(minutes=2))
    assert term.text.startswith("3 questions: 0 due, 2 new, 1 learning.")
    assert headers(term.text) == [
        "[0 done, 3 left] quiz-fixture · new",
        "[1 done, 2 left] quiz-fixture · new",
        "[2 done, 1 left] quiz-fixture · learning",
    ]
    assert result.planned == 2
