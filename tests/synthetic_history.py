"""A review history from a simulated user whose memory follows known FSRS parameters.

The quiz schedules as kvdrill does before any fit (fsrs's default parameters, retention
0.9, no fuzz); whether each review is recalled is drawn, with a seeded RNG, from the
retrievability of a second scheduler made from the user's true parameters. A day has
one session at a random hour (a fifth of the days are skipped): the new questions of the
day, every card due, and learning steps shown again once they are due (learn-ahead 20
minutes). Same-day steps are always recalled, as FSRS's whole-day curve says.
"""

from __future__ import annotations

import random
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

from fsrs import Card, Rating, Scheduler
from fsrs.scheduler import DEFAULT_PARAMETERS

from drill.srs import iso, make_scheduler, replay_rows
from drill.storage.database import open_db

START = datetime(2025, 1, 6, tzinfo=timezone.utc)
# a user who forgets faster than FSRS's defaults assume: lower first stabilities (w0-w3),
# smaller gains on recall (w8) and a steeper forgetting curve (w20)
TRUE_PARAMETERS = (
    0.1, 0.5, 1.0, 4.0, *DEFAULT_PARAMETERS[4:8], 1.0, *DEFAULT_PARAMETERS[9:20], 0.35,
)  # fmt: skip
FIRST_RATINGS = {1: 25, 2: 10, 3: 55, 4: 10}  # a new question's first answer, in percent
RECALLED_RATINGS = {2: 15, 3: 75, 4: 10}  # Hard, Good, Easy when recalled
SKIPPED_DAYS = 0.2
LEARN_AHEAD = timedelta(minutes=20)


def simulate(
    true_parameters: tuple[float, ...],
    *,
    questions: int,
    days: int,
    new_per_day: int,
    seed: int,
) -> list[tuple[str, datetime, int]]:
    """(question id, time, rating) of every review, in time order."""
    rng = random.Random(seed)
    truth = Scheduler(true_parameters, enable_fuzzing=False)
    quiz = make_scheduler(fuzz=False)
    waiting = [f"q{n:04d}" for n in range(questions)]
    cards: dict[str, tuple[Card, Card]] = {}  # id -> (the quiz's card, the true card)
    reviews = []
    for day in range(days):
        if rng.random() < SKIPPED_DAYS:
            continue
        now = START + timedelta(days=day, hours=8, minutes=rng.uniform(0, 240))
        for _ in range(min(new_per_day, len(waiting))):
            question = waiting.pop(0)
            cards[question] = (Card(card_id=0, due=now), Card(card_id=0, due=now))
        while True:
            due = [(shown.due, qid) for qid, (shown, _) in cards.items() if shown.due <= now]
            if not due:
                soonest = min(shown.due for shown, _ in cards.values())
                if soonest - now > LEARN_AHEAD:
                    break
                now = soonest
                continue
            _, question = min(due)
            shown, true = cards[question]
            if true.last_review is None:
                rating = rng.choices(list(FIRST_RATINGS), weights=FIRST_RATINGS.values())[0]
            elif rng.random() < truth.get_card_retrievability(true, now):
                rating = rng.choices(list(RECALLED_RATINGS), weights=RECALLED_RATINGS.values())[0]
            else:
                rating = 1
            cards[question] = (
                quiz.review_card(shown, Rating(rating), now)[0],
                truth.review_card(true, Rating(rating), now)[0],
            )
            reviews.append((question, now, rating))
            now += timedelta(seconds=rng.uniform(20, 90))
    return reviews


def write_history(path: Path, reviews: list[tuple[str, datetime, int]]) -> Path:
    """A kvdrill database holding `reviews` and the cards the quiz made from them."""
    db = open_db(path)
    rows = [
        (str(uuid.UUID(int=n, version=4)), question, iso(at), rating, 0)
        for n, (question, at, rating) in enumerate(reviews)
    ]
    cards = replay_rows(make_scheduler(fuzz=False), (row[1:4] for row in rows))
    with db.conn:
        db.conn.executemany(
            "insert into reviews (id, question_id, reviewed_at, rating, cram)"
            " values (?, ?, ?, ?, ?)",
            rows,
        )
        db.table("cards").insert_all(cards.values())
    db.conn.close()
    return path
