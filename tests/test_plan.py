"""What a session plans and the order its queue gives, at the edges: a card due or a bury
ending at this very moment, ties, held cards among the others, a drill's questions."""

import random
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from drill.srs import iso, make_scheduler, new_card_row
from drill.storage.reviews import Performance
from drill.study.plan import (
    Learning,
    PlanItem,
    Queue,
    is_held,
    learning_later,
    next_item,
    plan_cram,
    plan_drill,
    plan_due,
    refresh_learning,
)

T0 = datetime(2026, 11, 2, 8, 0, tzinfo=timezone.utc)
MIN = timedelta(minutes=1)
AHEAD = timedelta(minutes=20)


@dataclass(frozen=True)
class Q:
    id: str
    difficulty: int = 2


def card(qid, state, due, **extra):
    row = new_card_row(qid, due)
    row.update(state=state, **extra)
    return row


def test_a_bury_that_ends_now_holds_the_card_no_longer():
    assert is_held({"buried_until": iso(T0)}, T0) is False
    assert is_held({"buried_until": iso(T0 + MIN)}, T0) is True
    assert is_held({"suspended_at": iso(T0 - MIN)}, T0) is True
    assert is_held({}, T0) is False


def test_a_card_due_at_this_very_moment_is_due():
    cards = {"now": card("now", 2, T0), "soon": card("soon", 2, T0 + MIN)}
    assert plan_due([Q("now"), Q("soon")], cards, T0) == [PlanItem("now", "due")]


def test_cards_due_at_the_same_moment_keep_bank_order():
    questions = [Q("zeta"), Q("alpha"), Q("mid")]
    cards = {q.id: card(q.id, 2, T0 - timedelta(hours=1)) for q in questions}
    assert [i.question_id for i in plan_due(questions, cards, T0)] == ["zeta", "alpha", "mid"]


def test_cram_leaves_out_a_suspended_card_and_plans_the_ones_after_it():
    s = make_scheduler(fuzz=False)
    questions = [Q("held"), Q("a"), Q("b")]
    cards = {"held": card("held", 2, T0, suspended_at=iso(T0 - MIN))}
    performance = {"b": Performance(reviews=2, wrong=1)}
    plan = plan_cram(
        questions, cards, performance, T0, scheduler=s, rng=random.Random(1), max_items=10
    )
    assert plan == [PlanItem("b", "cram"), PlanItem("a", "cram")]


def test_a_drill_asks_its_questions_in_the_order_given_up_to_the_limit():
    questions = [Q("c"), Q("a"), Q("b")]
    assert plan_drill(questions, 2) == [PlanItem("c", "drill"), PlanItem("a", "drill")]
    assert plan_drill(questions, 10) == [
        PlanItem("c", "drill"), PlanItem("a", "drill"), PlanItem("b", "drill"),
    ]  # fmt: skip


def test_learning_cards_not_due_yet_are_labelled_by_their_last_rating():
    questions = [Q("failed"), Q("passed"), Q("unrated")]
    cards = {q.id: card(q.id, 1, T0 + 5 * MIN) for q in questions}
    assert learning_later(questions, cards, T0, {"failed": 1, "passed": 3}) == (
        Learning("failed", T0 + 5 * MIN, "again"),
        Learning("passed", T0 + 5 * MIN, "learning"),
        Learning("unrated", T0 + 5 * MIN, "learning"),
    )
    assert learning_later(questions[:1], cards, T0) == (
        Learning("failed", T0 + 5 * MIN, "learning"),
    )


def test_only_unheld_learning_cards_due_after_now_are_learning_later():
    questions = [Q("review"), Q("suspended"), Q("due-now"), Q("later")]
    cards = {
        "review": card("review", 2, T0 + 5 * MIN),
        "suspended": card("suspended", 3, T0 + 5 * MIN, suspended_at=iso(T0 - MIN)),
        "due-now": card("due-now", 1, T0),
        "later": card("later", 3, T0 + 5 * MIN),
    }
    assert learning_later(questions, cards, T0) == (Learning("later", T0 + 5 * MIN, "learning"),)


def test_a_learning_card_due_at_this_very_moment_comes_before_the_planned_ones():
    queue = Queue((PlanItem("p", "due"),), (Learning("l", T0, "again"),))
    assert next_item(queue, T0, AHEAD) == (PlanItem("l", "again"), Queue((PlanItem("p", "due"),)))


def test_refreshing_the_queue_drops_a_card_gone_from_learning_and_keeps_the_rest():
    queue = Queue((), (Learning("gone", T0 + MIN, "again"), Learning("kept", T0 + MIN, "again")))
    rows = {"gone": card("gone", 2, T0 + timedelta(days=3)), "kept": card("kept", 1, T0 + 2 * MIN)}
    assert refresh_learning(queue, rows, T0) == Queue((), (Learning("kept", T0 + 2 * MIN, "again"),))
