"""What a quiz session asks, and in which order: pure functions of the cards and the time.

The `plan_*` functions choose the questions a session starts with. A review session
keeps them in a `Queue`, with the cards in learning that are not due yet, and updates
it after each answer (`after_answer`). `next_item` says what comes next:

1. a learning card whose step has passed (due by now), the earliest first;
2. else the next planned card: due ones (learning first, then most overdue), then new;
3. else, when nothing else is left, the learning card due soonest, shown at once if it
   is due within the learn-ahead limit (Anki's rule: 20 minutes unless changed);
4. else nothing: the session ends, and says which learning cards are left.

A card failed (Again) waits for RELEARN_GAP other questions before it comes back, even
once its step has passed, so its model answer is not still on the screen when it is
asked again; when fewer others are left, it waits for all of them (3. takes the cards
that are not waiting first).

Suspended cards, and buried ones until their bury ends, are never planned.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from drill.srs import iso, parse_iso, retrievability
from drill.storage.reviews import Performance

LEARNING_STATES = (1, 3)  # fsrs.State.Learning, fsrs.State.Relearning
AGAIN = 1
RELEARN_GAP = 3  # other questions shown between a failure and its return


@dataclass(frozen=True)
class PlanItem:
    question_id: str
    # "learning" (in learning, not failed last time), "again" (after an Again),
    # "due", "new", "cram" or "drill"
    why: str


@dataclass(frozen=True)
class Learning:
    """A card in learning that comes back in this session once `due` (or learn-ahead)."""

    question_id: str
    due: datetime
    why: str  # "learning" or "again"
    wait: int = 0  # other questions still to be shown before it comes back


@dataclass(frozen=True)
class Queue:
    planned: tuple[PlanItem, ...] = ()
    learning: tuple[Learning, ...] = ()


def item_seed(session_seed: int, position: int) -> int:
    """The seed of the item at `position` (1-based): stable across runs and platforms."""
    return random.Random(f"kvdrill:{session_seed}:{position}").getrandbits(31)


def is_held(row: Mapping[str, Any], now: datetime) -> bool:
    """Suspended, or buried until after `now`."""
    return bool(row.get("suspended_at")) or (row.get("buried_until") or "") > iso(now)


def learning_why(rating: int | None) -> str:
    """How the session labels a card in learning: "again" only after an Again."""
    return "again" if rating == AGAIN else "learning"


# --------------------------------------------------------------------------- planning


def plan_due(
    questions: Sequence[Any],
    cards: Mapping[str, Mapping[str, Any]],
    now: datetime,
    last_ratings: Mapping[str, int] | None = None,
) -> list[PlanItem]:
    """Cards due now: learning and relearning first, then review; most overdue first.

    `last_ratings` (question id -> the rating of its latest review) labels a learning
    card "again" when that rating was Again, else "learning"."""
    last_ratings = last_ratings or {}
    due = []
    for q in questions:
        row = cards.get(q.id)
        if row is None or is_held(row, now):
            continue
        due_at = parse_iso(row["due"])
        if due_at <= now:
            learning = row["state"] in LEARNING_STATES
            why = learning_why(last_ratings.get(q.id)) if learning else "due"
            due.append((not learning, due_at, q.id, why))  # learning cards first
    due.sort(key=lambda t: (t[0], t[1]))
    return [PlanItem(qid, why) for _, _, qid, why in due]


def plan_new(
    questions: Sequence[Any],
    cards: Mapping[str, Any],
    allowance: int,
    unseen: Collection[str] | None = None,
) -> list[PlanItem]:
    """Up to `allowance` questions never scheduled (`unseen`; default: those without a
    row in `cards`): easier first, then bank order."""
    fresh = [q for q in questions if (q.id in unseen if unseen is not None else q.id not in cards)]
    fresh.sort(key=lambda q: q.difficulty)  # stable: bank order within a difficulty
    return [PlanItem(q.id, "new") for q in fresh[: max(0, allowance)]]


def plan_review(
    questions: Sequence[Any],
    cards: Mapping[str, Mapping[str, Any]],
    now: datetime,
    *,
    new_today: int,
    new_limit: int,
    max_items: int,
    last_ratings: Mapping[str, int] | None = None,
    unseen: Collection[str] | None = None,
) -> list[PlanItem]:
    """Due cards, then new ones within today's allowance; at most `max_items`.

    `cards` holds every card's row, or, with `unseen` naming the questions without a
    card, only the rows of the cards due (as the quiz reads them: the first `max_items`
    in plan order, drill.storage.session_cards.due_cards): the plan is the same."""
    items = plan_due(questions, cards, now, last_ratings)
    items += plan_new(questions, cards, new_limit - new_today, unseen)
    return items[:max_items]


def plan_cram(
    questions: Sequence[Any],
    cards: Mapping[str, Mapping[str, Any]],
    performance: Mapping[str, Performance],
    now: datetime,
    *,
    scheduler,
    rng: random.Random,
    max_items: int,
) -> list[PlanItem]:
    """Weakest first: most often wrong, then least likely recalled; ties at random.
    Suspended and buried cards are left out."""
    keyed = []
    for q in questions:
        row = cards.get(q.id)
        if row is not None and is_held(row, now):
            continue
        record = performance.get(q.id)  # none: never answered
        wrong_ratio = record.wrong_ratio if record else 0.0
        recall = retrievability(scheduler, row, now) if row else 0.0
        keyed.append((-wrong_ratio, recall, rng.random(), q.id))
    keyed.sort()
    return [PlanItem(qid, "cram") for *_, qid in keyed[:max_items]]


def plan_drill(questions: Sequence[Any], max_items: int) -> list[PlanItem]:
    """The questions that test one misconception, in the order given (drill.study.leech
    chooses them), suspended ones included: a drill is how a leech is worked on."""
    return [PlanItem(q.id, "drill") for q in questions[:max_items]]


def learning_later(
    questions: Sequence[Any],
    cards: Mapping[str, Mapping[str, Any]],
    now: datetime,
    last_ratings: Mapping[str, int] | None = None,
) -> tuple[Learning, ...]:
    """Cards in learning that are not due yet: they join the session when due."""
    last_ratings = last_ratings or {}
    found = []
    for q in questions:
        row = cards.get(q.id)
        if row is None or row["state"] not in LEARNING_STATES or is_held(row, now):
            continue
        due_at = parse_iso(row["due"])
        if due_at > now:
            found.append(Learning(q.id, due_at, learning_why(last_ratings.get(q.id))))
    return tuple(found)


# --------------------------------------------------------------------------- the queue


def _soonest(learning: Sequence[Learning]) -> Learning | None:
    """The card that comes back first: one not waiting for other questions before one
    that is, then the earliest due."""
    return min(
        learning, key=lambda item: (item.wait > 0, item.due, item.question_id), default=None
    )


def next_item(
    queue: Queue, now: datetime, learn_ahead: timedelta
) -> tuple[PlanItem | None, Queue]:
    """The item to show next and the queue without it (None: the session is done)."""
    ready = _soonest([item for item in queue.learning if item.due <= now and not item.wait])
    if ready is not None:
        return _take(queue, ready)
    if queue.planned:
        return queue.planned[0], _one_shown(replace(queue, planned=queue.planned[1:]))
    soon = _soonest([item for item in queue.learning if item.due <= now + learn_ahead])
    if soon is not None:
        return _take(queue, soon)
    return None, queue


def _take(queue: Queue, item: Learning) -> tuple[PlanItem, Queue]:
    rest = tuple(other for other in queue.learning if other is not item)
    return PlanItem(item.question_id, item.why), _one_shown(replace(queue, learning=rest))


def _one_shown(queue: Queue) -> Queue:
    """The queue once one more question is shown: each failed card waits for one fewer."""
    if not any(item.wait for item in queue.learning):
        return queue
    learning = tuple(replace(item, wait=max(0, item.wait - 1)) for item in queue.learning)
    return replace(queue, learning=learning)


def drop(queue: Queue, question_id: str) -> Queue:
    """The queue without `question_id` (skipped, suspended or buried)."""
    return Queue(
        tuple(item for item in queue.planned if item.question_id != question_id),
        tuple(item for item in queue.learning if item.question_id != question_id),
    )


def after_answer(
    queue: Queue, question_id: str, row: Mapping[str, Any] | None, rating: int
) -> Queue:
    """The queue once `question_id` was answered with `rating` and its card row is
    `row` (None: the schedule was not changed, as in cram): a card still in learning,
    and not suspended as a leech, comes back when its step has passed; after an Again,
    not before RELEARN_GAP other questions (or all those left, when fewer)."""
    rest = drop(queue, question_id)
    if row is None or row["state"] not in LEARNING_STATES or row.get("suspended_at"):
        return rest
    wait = RELEARN_GAP if rating == AGAIN else 0
    back = Learning(question_id, parse_iso(row["due"]), learning_why(rating), wait)
    return replace(rest, learning=(*rest.learning, back))


def refresh_learning(
    queue: Queue, rows: Mapping[str, Mapping[str, Any] | None], now: datetime
) -> Queue:
    """The learning cards as the database holds them now (`rows` by question id): one
    that another session answered out of learning, or that was suspended or buried,
    leaves the queue; one whose due time moved follows it."""
    kept = []
    for item in queue.learning:
        row = rows.get(item.question_id)
        if row is None or row["state"] not in LEARNING_STATES or is_held(row, now):
            continue
        kept.append(replace(item, due=parse_iso(row["due"])))
    return replace(queue, learning=tuple(kept))


def coming(queue: Queue, now: datetime, learn_ahead: timedelta) -> int:
    """How many more items the session shows as things stand: the planned ones and the
    learning cards due within the learn-ahead limit."""
    soon = sum(1 for item in queue.learning if item.due <= now + learn_ahead)
    return len(queue.planned) + soon
