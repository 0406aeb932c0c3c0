"""Will I be ready? A day-by-day simulation of the quiz up to a day, and the recall it
predicts on that day's morning.

`simulate` plays the user's days from today to the target day as kvdrill's quiz would
schedule them: every card due on a day is reviewed that day (one session at the day's
start plus SESSION_HOUR hours, today at `now`), then up to new-per-day new questions in
the order the quiz introduces them; learning steps come back the same day. The state
updates are the fsrs package's own Scheduler (the user's parameters, no fuzz), due days
placed by the load balancer (drill.study.load_balance, easy days included) and, toward
an interview date, the retention ramp and the last-week spread of drill.study.deadline.

The simulated user's answers are drawn with a seeded RNG from the recall their FSRS
parameters predict (fsrs's whole-day forgetting curve, so a same-day learning step is
recalled): recalled is Good, forgotten is Again; a new question's first answer is Good
with probability `first_good` (the user's own share when known). Each figure is the mean
over `runs` such draws (seeds seed, seed + 1, ...), so one seed gives one answer.

Recall on the day is the expected value: each card's FSRS retrievability at the start of
the target day (fractional days), and 0 for a question never seen by then; a topic's and
the deck's recall is the mean over all their questions, unseen included.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from fsrs import Card, Rating, Scheduler, State

from drill.srs import iso, make_scheduler, parse_iso, retrievability, row_to_card
from drill.study.days import DayClock
from drill.study.deadline import capped_due, retention_toward
from drill.study.load_balance import NORMAL_DAYS, LoadBalancer, easy_day_loads

SESSION_HOUR = 6  # a simulated day's session: this many hours after the day begins
DEFAULT_SECONDS_PER_REVIEW = 30.0  # when fewer than MIN_TIMED answers carry a duration
MIN_TIMED = 10
DEFAULT_FIRST_GOOD = 0.75  # a new question's first answer, when the history has too few
RUNS = 8
RETENTIONS = (0.80, 0.85, 0.90, 0.95)  # the grid a suggestion is chosen from
MAX_STEPS_A_DAY = 20  # learning steps of one card in one simulated day, at most


@dataclass(frozen=True)
class Deck:
    """The questions in the order the quiz introduces new ones, with their topics."""

    order: tuple[str, ...]
    topics: Mapping[str, str]


@dataclass(frozen=True)
class Policy:
    """How the user studies: what the simulation varies."""

    new_per_day: int
    retention: float


@dataclass(frozen=True)
class Setup:
    """What does not vary between simulations of one user."""

    parameters: tuple[float, ...] | None  # None: fsrs's defaults
    days: DayClock
    target: date  # the day whose morning recall is predicted
    interview: date | None = None  # the quiz's interview date (ramp and last-week spread)
    easy_days: tuple[float, ...] = NORMAL_DAYS
    seconds_per_review: float = DEFAULT_SECONDS_PER_REVIEW
    first_good: float = DEFAULT_FIRST_GOOD
    new_today: int = 0  # new questions already introduced today


@dataclass
class DayFigures:
    day: date
    reviews: float = 0.0
    new: float = 0.0

    def minutes(self, seconds_per_review: float) -> float:
        return self.reviews * seconds_per_review / 60


@dataclass
class Forecast:
    """The mean of `runs` simulations."""

    policy: Policy
    days: list[DayFigures]
    seen: float  # questions seen by the target day
    unseen: float
    recall: float  # the deck's, unseen as 0
    recall_seen: float  # over the questions seen by then
    topics: list[dict[str, Any]] = field(default_factory=list)
    # {topic, questions, seen, recall}
    seconds_per_review: float = DEFAULT_SECONDS_PER_REVIEW

    @property
    def busiest_minutes(self) -> float:
        return max((d.minutes(self.seconds_per_review) for d in self.days), default=0.0)

    @property
    def last_new_day(self) -> date | None:
        days = [d.day for d in self.days if d.new > 0]
        return days[-1] if days else None


def _session_time(day: date, now: datetime, days: DayClock) -> datetime:
    at = days.start_of(day) + timedelta(hours=SESSION_HOUR)
    return max(at, now) if days.day_of(now) == day else at


def _recall(scheduler: Scheduler, card: Card, at: datetime) -> float:
    if card.last_review is None:
        return 1.0  # a card in its first steps, reviewed again today: still in mind
    return scheduler.get_card_retrievability(card, at)


class _Run:
    """One simulated path (a seed)."""

    def __init__(self, setup: Setup, policy: Policy, cards: Mapping[str, Card], seed: int):
        self.setup = setup
        self.policy = policy
        self.cards = dict(cards)
        self.rng = random.Random(seed)
        self.balancer = LoadBalancer(setup.days, setup.easy_days)
        self.load: dict[date, int] = {}
        for card in self.cards.values():
            self._count(card, 1)

    def _count(self, card: Card, step: int) -> None:
        day = self.setup.days.day_of(card.due)
        self.load[day] = self.load.get(day, 0) + step

    def scheduler_on(self, at: datetime) -> Scheduler:
        retention = self.policy.retention
        if self.setup.interview is not None:
            retention = retention_toward(retention, self.setup.interview, at, self.setup.days)
        return make_scheduler(min(retention, 0.99), fuzz=False, parameters=self.setup.parameters)

    def review(self, scheduler: Scheduler, qid: str, at: datetime) -> None:
        card = self.cards[qid]
        if card.last_review is None:
            good = self.rng.random() < self.setup.first_good
        else:
            good = self.rng.random() < _recall(scheduler, card, at)
        self._count(card, -1)
        card, _log = scheduler.review_card(card, Rating.Good if good else Rating.Again, at)
        if card.state == State.Review:
            row = {"question_id": qid, "state": int(card.state), "due": iso(card.due)}
            due = parse_iso(self.balancer.place(row, at, self.load)["due"])
            if self.setup.interview is not None:
                due = capped_due(due, qid, at, at, self.setup.interview, self.setup.days)
            card.due = due
        self.cards[qid] = card
        self._count(card, 1)

    def day(self, day: date, now: datetime, waiting: list[str]) -> DayFigures:
        figures = DayFigures(day)
        days = self.setup.days
        at = _session_time(day, now, days)
        end = days.start_of(day + timedelta(days=1))
        scheduler = self.scheduler_on(at)
        due = sorted((card.due, qid) for qid, card in self.cards.items() if card.due < end)
        today = days.day_of(now) == day
        allowance = self.policy.new_per_day - (self.setup.new_today if today else 0)
        for qid in waiting[: max(0, allowance)]:
            self.cards[qid] = Card(card_id=0, due=at)  # pragma: no mutate (id unused)
            self._count(self.cards[qid], 1)
            due.append((at, qid))
            figures.new += 1
        del waiting[: max(0, allowance)]
        steps: dict[str, int] = {}
        seconds = timedelta(seconds=self.setup.seconds_per_review)
        while due:
            due.sort()
            when, qid = due.pop(0)
            at = max(at, when)
            self.review(scheduler, qid, at)
            figures.reviews += 1
            at += seconds
            steps[qid] = steps.get(qid, 0) + 1
            card = self.cards[qid]
            if card.due < end and steps[qid] < MAX_STEPS_A_DAY:
                due.append((card.due, qid))
        return figures


def simulate(
    deck: Deck,
    cards: Mapping[str, Mapping[str, Any]],
    setup: Setup,
    policy: Policy,
    now: datetime,
    *,
    seed: int = 0,
    runs: int = RUNS,
) -> Forecast:
    """The mean of `runs` seeded simulations from `now` to the target day's morning.
    `cards` are the stored card rows (suspended ones are left as they are)."""
    days = setup.days
    today = days.day_of(now)
    held = {qid for qid, row in cards.items() if row.get("suspended_at")}
    start = {qid: row_to_card(row) for qid, row in cards.items() if qid not in held}
    morning = days.start_of(setup.target)
    truth = make_scheduler(fuzz=False, parameters=setup.parameters)  # the curve
    day_list = [today + timedelta(days=n) for n in range(max(0, (setup.target - today).days))]
    totals = [DayFigures(day) for day in day_list]
    recall = dict.fromkeys(deck.order, 0.0)
    seen = dict.fromkeys(deck.order, 0.0)
    for run_index in range(runs):
        run = _Run(setup, policy, start, seed + run_index)
        waiting = [qid for qid in deck.order if qid not in cards]
        for total, day in zip(totals, day_list, strict=True):
            figures = run.day(day, now, waiting)
            total.reviews += figures.reviews / runs
            total.new += figures.new / runs
        for qid in deck.order:
            card = run.cards.get(qid)
            if qid in held:
                row = cards[qid]
                if row["last_review"]:
                    seen[qid] += 1 / runs
                    recall[qid] += retrievability(truth, row, morning) / runs
            elif card is not None and card.last_review is not None:
                seen[qid] += 1 / runs
                row = {"last_review": iso(card.last_review), "stability": card.stability}
                recall[qid] += retrievability(truth, row, morning) / runs
    return _forecast(deck, policy, totals, seen, recall, setup.seconds_per_review)


def _forecast(deck, policy, totals, seen, recall, seconds_per_review) -> Forecast:
    count = len(deck.order) or 1
    seen_total = sum(seen.values())
    by_topic: dict[str, list[str]] = {}
    for qid in deck.order:
        by_topic.setdefault(deck.topics[qid], []).append(qid)
    topics = [
        {
            "topic": topic,
            "questions": len(ids),
            "seen": round(sum(seen[q] for q in ids), 1),
            "recall": sum(recall[q] for q in ids) / len(ids),
        }
        for topic, ids in sorted(by_topic.items())
    ]
    return Forecast(
        policy=policy,
        days=totals,
        seen=seen_total,
        unseen=len(deck.order) - seen_total,
        recall=sum(recall.values()) / count,
        recall_seen=sum(recall.values()) / seen_total if seen_total else 0.0,
        topics=topics,
        seconds_per_review=seconds_per_review,
    )


@dataclass(frozen=True)
class Suggestion:
    forecast: Forecast
    covers: bool  # every question seen by the target day
    within_budget: bool  # the busiest day fits the minutes


def suggest(
    deck: Deck,
    cards: Mapping[str, Mapping[str, Any]],
    setup: Setup,
    now: datetime,
    minutes: float,
    *,
    seed: int = 0,
    runs: int = RUNS,
    retentions: Sequence[float] = RETENTIONS,
) -> Suggestion:
    """The new-per-day and retention with the highest recall on the day among those that
    see every question in time with the busiest day within `minutes`: new-per-day the
    fewest that covers the deck by the day before the target and one more, each
    retention of `retentions`. When none fits, the highest recall within the minutes
    (covers False); when nothing fits the minutes, the lightest that covers the deck
    (within_budget False)."""
    today = setup.days.day_of(now)
    new_days = max(1, (setup.target - today).days)  # today up to the day before the target
    unseen = sum(1 for qid in deck.order if qid not in cards)
    fewest = math.ceil((unseen + setup.new_today) / new_days) if unseen else 0
    tried = []
    for new_per_day in sorted({fewest, fewest + 1}):
        for retention in retentions:
            forecast = simulate(
                deck, cards, setup, Policy(new_per_day, retention), now, seed=seed, runs=runs
            )
            fits = forecast.busiest_minutes <= minutes
            covers = forecast.unseen < 0.5
            tried.append(Suggestion(forecast, covers, fits))
    fitting = [s for s in tried if s.within_budget]
    if not fitting:  # the lightest of those that see every question
        return min(tried, key=lambda s: (not s.covers, s.forecast.busiest_minutes))
    return max(
        fitting,
        key=lambda s: (s.covers, round(s.forecast.recall, 3), -s.forecast.busiest_minutes),
    )


def seconds_per_review(db) -> tuple[float, int]:
    """(the median seconds of the user's timed answers, how many there are); the
    default DEFAULT_SECONDS_PER_REVIEW when fewer than MIN_TIMED (answers over ten
    minutes, a user gone away, are left out)."""
    rows = [
        r[0]
        for r in db.execute(
            "select duration_ms from reviews where duration_ms > 0 and duration_ms <= 600000"
            " order by duration_ms"
        )
    ]
    if len(rows) < MIN_TIMED:
        return DEFAULT_SECONDS_PER_REVIEW, len(rows)
    middle = len(rows) // 2
    median_ms = rows[middle] if len(rows) % 2 else (rows[middle - 1] + rows[middle]) / 2
    return median_ms / 1000, len(rows)


def first_good_share(db) -> tuple[float, int]:
    """(the share of first answers to a question rated above Again, how many first
    answers); DEFAULT_FIRST_GOOD with fewer than MIN_TIMED of them."""
    ratings = [
        r[0]
        for r in db.execute(
            "select rating from reviews r where cram = 0 and not exists (select 1 from"
            " reviews p where p.question_id = r.question_id and p.cram = 0"
            " and p.reviewed_at < r.reviewed_at)"
        )
    ]
    if len(ratings) < MIN_TIMED:
        return DEFAULT_FIRST_GOOD, len(ratings)
    return sum(1 for r in ratings if r > 1) / len(ratings), len(ratings)


def _days_json(forecast: Forecast) -> list[dict[str, Any]]:
    return [
        {
            "date": d.day.isoformat(),
            "reviews": round(d.reviews, 1),
            "new": round(d.new, 1),
            "minutes": round(d.minutes(forecast.seconds_per_review), 1),
        }
        for d in forecast.days
    ]


def by_the_day(forecast: Forecast) -> dict[str, Any]:
    """What a forecast says of the target day, JSON-ready."""
    return {
        "seen": round(forecast.seen, 1),
        "unseen": round(forecast.unseen, 1),
        "recall": round(forecast.recall, 4),
        "recall_seen": round(forecast.recall_seen, 4),
        "topics": [{**t, "recall": round(t["recall"], 4)} for t in forecast.topics],
        # topics with a question most runs leave unseen
        "unseen_topics": [t["topic"] for t in forecast.topics if t["seen"] <= t["questions"] - 0.5],
    }


def plan_figures(
    db,
    deck: Deck,
    settings,
    days: DayClock,
    now: datetime,
    target: date,
    *,
    minutes: float | None = None,
    seed: int = 0,
    runs: int = RUNS,
) -> dict[str, Any]:
    """Everything `kvdrill plan` shows, as one JSON-ready object (keys in its help);
    `db` None: a user with no history. Without `minutes`, no suggestion."""
    from drill.storage.reviews import load_cards, new_cards_since

    cards = load_cards(db) if db is not None else {}
    cards = {qid: row for qid, row in cards.items() if qid in deck.topics}
    seconds, timed = seconds_per_review(db) if db is not None else (DEFAULT_SECONDS_PER_REVIEW, 0)
    first_good, firsts = first_good_share(db) if db is not None else (DEFAULT_FIRST_GOOD, 0)
    new_today = new_cards_since(db, iso(days.day_start(now))) if db is not None else 0
    setup = Setup(
        parameters=settings.fsrs_parameters,
        days=days,
        target=target,
        # the quiz schedules toward a date ahead whatever day is planned to (plan --days N)
        interview=ahead if (ahead := settings.interview_date) and ahead > days.day_of(now) else None,
        easy_days=easy_day_loads(settings.easy_days),
        seconds_per_review=seconds,
        first_good=first_good,
        new_today=new_today,
    )
    policy = Policy(settings.new_per_day, settings.retention)
    forecast = simulate(deck, cards, setup, policy, now, seed=seed, runs=runs)
    started = {deck.topics[qid] for qid, row in cards.items() if row["last_review"]}
    figures: dict[str, Any] = {
        "now": iso(now),
        "target": target.isoformat(),
        "interview": setup.interview is not None and setup.interview == target,
        "days_left": (target - days.day_of(now)).days,
        "questions": len(deck.order),
        "seen_now": sum(1 for row in cards.values() if row["last_review"]),
        "unseen_topics_now": sorted(set(deck.topics.values()) - started),
        "settings": {
            "new_per_day": policy.new_per_day,
            "retention": policy.retention,
            "parameters": "fitted" if settings.fsrs_parameters else "default",
            "easy_days": settings.easy_days or None,
            "seconds_per_review": round(seconds, 1),
            "timed_answers": timed,
            "first_good": round(first_good, 4),
            "first_answers": firsts,
        },
        "seed": seed,
        "runs": runs,
        "days": _days_json(forecast),
        "by_the_day": by_the_day(forecast),
    }
    if minutes is not None:
        chosen = suggest(deck, cards, setup, now, minutes, seed=seed, runs=runs)
        best = chosen.forecast
        figures["suggestion"] = {
            "minutes": minutes,
            "new_per_day": best.policy.new_per_day,
            "retention": best.policy.retention,
            "covers": chosen.covers,
            "within_budget": chosen.within_budget,
            "busiest_minutes": round(best.busiest_minutes, 1),
            "last_new_day": best.last_new_day.isoformat() if best.last_new_day else None,
            **{k: v for k, v in by_the_day(best).items() if k in ("seen", "unseen", "recall")},
        }
    return figures
