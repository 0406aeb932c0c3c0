"""Spaced repetition: a thin wrapper over the `fsrs` package (FSRS-6).

The algorithm is fsrs's; this module only maps between fsrs.Card and the
`cards` table row, counts reps and lapses (fsrs does not), replays a review
history, and says when a lapse makes a card a leech (`becomes_leech`). Every function takes `now` (a UTC-aware datetime) instead of
reading the clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from fsrs import Card, Rating, Scheduler, State
from fsrs.scheduler import DEFAULT_PARAMETERS

DEFAULT_RETENTION = 0.9
_RATINGS = {int(rating): rating for rating in Rating}  # 1..4 -> Rating, without the enum call


def make_scheduler(
    desired_retention: float = DEFAULT_RETENTION,
    *,
    fuzz: bool = True,
    parameters: Sequence[float] | None = None,
) -> Scheduler:
    """An FSRS scheduler with `parameters` (None: fsrs's defaults). The user's own is
    `Settings.scheduler`, which passes their fitted parameters."""
    if not 0.7 <= desired_retention <= 0.99:
        raise ValueError("desired retention must be between 0.70 and 0.99")
    return Scheduler(
        parameters=DEFAULT_PARAMETERS if parameters is None else parameters,
        desired_retention=desired_retention,
        enable_fuzzing=fuzz,
    )


def iso(dt: datetime) -> str:
    """The one text form of a time in the database: ISO-8601 in UTC, microseconds."""
    if dt.tzinfo is None:
        raise ValueError("naive datetime: pass UTC-aware times")
    return dt.astimezone(timezone.utc).isoformat(timespec="microseconds")


def parse_iso(text: str) -> datetime:
    dt = datetime.fromisoformat(text)
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def new_card_row(question_id: str, now: datetime) -> dict[str, Any]:
    """The row of a card never reviewed: due now, in learning."""
    return {
        "question_id": question_id,
        "state": int(State.Learning),
        "step": 0,
        "stability": None,
        "difficulty": None,
        "due": iso(now),
        "last_review": None,
        "reps": 0,
        "lapses": 0,
    }


def row_to_card(row: Mapping[str, Any]) -> Card:
    return Card(
        card_id=0,  # pragma: no mutate (unused by a review; spares fsrs's clock id and its sleep)
        state=State(row["state"]),
        step=row["step"],
        stability=row["stability"],
        difficulty=row["difficulty"],
        due=parse_iso(row["due"]),
        last_review=parse_iso(row["last_review"]) if row["last_review"] else None,
    )


def _card_to_row(question_id: str, card: Card, reps: int, lapses: int) -> dict[str, Any]:
    return {
        "question_id": question_id,
        "state": int(card.state),
        "step": card.step,
        "stability": card.stability,
        "difficulty": card.difficulty,
        "due": iso(card.due),
        "last_review": iso(card.last_review) if card.last_review else None,
        "reps": reps,
        "lapses": lapses,
    }


def _review(scheduler: Scheduler, card: Card, rating: int, now: datetime) -> tuple[Card, bool]:
    """(the card after `rating` at `now`, whether it was a lapse)."""
    lapse = card.state == State.Review and rating == int(Rating.Again)
    card, _log = scheduler.review_card(card, _RATINGS[rating], now)
    return card, lapse


def review_row(
    scheduler: Scheduler, row: Mapping[str, Any], rating: int, now: datetime
) -> dict[str, Any]:
    """Apply one rating (1 again .. 4 easy) at `now`; return the new card row."""
    card, lapse = _review(scheduler, row_to_card(row), rating, now)
    return _card_to_row(row["question_id"], card, row["reps"] + 1, row["lapses"] + lapse)


def retrievability(scheduler: Scheduler, row: Mapping[str, Any], now: datetime) -> float:
    """Probability of recall now (0 for a card never reviewed).

    FSRS's forgetting curve with the time since the last review in fractional days:
    fsrs's own `get_card_retrievability` counts whole days only, which calls a card
    failed 14 hours ago "100 %". The curve's constants are the scheduler's.
    """
    if not row["last_review"] or row["stability"] is None:
        return 0.0
    elapsed_days = max(0.0, (now - parse_iso(row["last_review"])).total_seconds() / 86_400)
    factor, decay = scheduler._FACTOR, scheduler._DECAY
    return float((1 + factor * elapsed_days / row["stability"]) ** decay)


def _new_card(at: datetime) -> Card:
    """A card never reviewed, first reviewed at `at`. Neither field changes what a review
    of it gives (a first review schedules from the review's own time), so mutation testing
    leaves the line alone; card_id is given only because fsrs makes one from the clock and
    then sleeps 1 ms, a second per thousand cards in a replay."""
    return Card(card_id=0, due=at)  # pragma: no mutate


def lapse_flags(scheduler: Scheduler, reviews: Iterable[Mapping[str, Any]]) -> list[bool]:
    """Whether each of one card's scheduled reviews (time order) was a lapse: Again
    on the card in review. The card's states follow from the ratings alone."""
    card: Card | None = None
    flags = []
    for review in reviews:
        at = parse_iso(review["reviewed_at"])
        card, lapse = _review(scheduler, card or _new_card(at), int(review["rating"]), at)
        flags.append(lapse)
    return flags


def replay(
    scheduler: Scheduler, reviews: Iterable[Mapping[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Rebuild card rows from reviews given in time order (cram reviews skipped).

    Each review needs question_id, reviewed_at (ISO text), rating and cram.
    """
    return replay_rows(
        scheduler,
        (
            (review["question_id"], review["reviewed_at"], review["rating"])
            for review in reviews
            if not review.get("cram")
        ),
    )


class Replay:
    """Card rows rebuilt from non-cram reviews fed in time order, one at a time. Cards
    stay fsrs objects until the end: a million reviews replay in seconds."""

    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler
        self._cards: dict[str, list] = {}  # question_id -> [Card, reps, lapses]

    def add(self, question_id: str, reviewed_at: str, rating: int) -> None:
        """One review: its question, its time (ISO text) and its rating."""
        at = parse_iso(reviewed_at)
        entry = self._cards.get(question_id)
        if entry is None:
            entry = self._cards[question_id] = [_new_card(at), 0, 0]
        entry[0], lapse = _review(self.scheduler, entry[0], int(rating), at)
        entry[1] += 1
        entry[2] += lapse

    def add_all(
        self,
        question_ids: Iterable[str],
        times: Iterable[datetime],
        ratings: Iterable[int],
        crams: Iterable[int],
    ) -> None:
        """Reviews in time order, as `add` takes them one by one, the cram ones skipped;
        their times as datetimes in UTC. (An import replays a million reviews through
        this loop: it holds the least Python beside fsrs's own review_card.)"""
        cards, review, as_rating = self._cards, self.scheduler.review_card, _RATINGS
        in_review = State.Review
        for question_id, at, rating, cram in zip(question_ids, times, ratings, crams, strict=True):
            if cram:
                continue
            entry = cards.get(question_id)
            if entry is None:
                entry = cards[question_id] = [_new_card(at), 0, 0]
            card = entry[0]
            if rating == 1 and card.state == in_review:  # Again on a card in review: a lapse
                entry[2] += 1
            entry[0] = review(card, as_rating[rating], at)[0]
            entry[1] += 1

    def card_rows(self) -> dict[str, dict[str, Any]]:
        return {qid: _card_to_row(qid, *entry) for qid, entry in self._cards.items()}


def replay_rows(
    scheduler: Scheduler, rows: Iterable[tuple[str, str, int]]
) -> dict[str, dict[str, Any]]:
    """Rebuild card rows from (question_id, reviewed_at ISO text, rating) of the non-cram
    reviews in time order, as a database cursor gives them."""
    replay = Replay(scheduler)
    add = replay.add
    for question_id, reviewed_at, rating in rows:
        add(question_id, reviewed_at, rating)
    return replay.card_rows()


def becomes_leech(lapses_before: int, lapses_after: int, threshold: int) -> bool:
    """Whether going from `lapses_before` to `lapses_after` lapses makes the card a
    leech: at the threshold, then every half threshold (at least 1) beyond it.
    A threshold of 0 turns leeches off."""
    if threshold <= 0 or lapses_after <= lapses_before or lapses_after < threshold:
        return False
    return (lapses_after - threshold) % max(1, threshold // 2) == 0
