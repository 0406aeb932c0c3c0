"""Load balancing and easy days: where in its fuzz range a review card's next due day falls.

FSRS gives a card an interval in whole days; fsrs's fuzz then moves it at random within
a range around it (about ±5 % for long intervals), so cards answered together do not
stay together. As Anki 24.11 does, kvdrill chooses within that same range, fsrs's own
(`fuzz_bounds`), toward the lighter days: each candidate day gets the weight

    weight = (1 / cards due that day)**2 * (1 / interval)     (1 for a day with none)

times its easy-day factor, and the day is drawn with those weights. The draw is not
random: its number comes from a hash of the question id and the review's time
(`seeded_fraction`), so one history always gives the same due dates (a replay, an
import, a test), while two cards answered together still spread.

Easy days (`kvdrill config easy-days sat,sun` or `sun:0.5`) are days of the week with a
reduced load: a day at 0 is avoided whenever the range holds another day; a day at a
fraction f is avoided once its count, divided by f, exceeds the average of the other
days in the range weighted by their own load (Anki's rule for "reduced", for any f).
Anki leaves an empty easy day at full weight; here an easy day's factor applies even
when no card is due on it, so a free weekend stays free.

Intervals over MAX_BALANCED_INTERVAL days are not balanced (the need is small), only
placed by the same seeded draw, uniformly. Everything here is pure; the quiz reads the
day counts with one query (`drill.storage.reviews.due_counts`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from fsrs import State
from fsrs.scheduler import FUZZ_RANGES

from drill.srs import iso, parse_iso
from drill.study.days import DayClock

if TYPE_CHECKING:
    from fsrs import Scheduler

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")  # date.weekday() order
NORMAL_DAYS = (1.0,) * 7
MAX_BALANCED_INTERVAL = 90  # Anki's: beyond it, cards are only spread, not balanced
MINIMUM_LOAD = 0.0001  # an easy day at 0: almost never chosen, but never a zero weight
_DAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def parse_easy_days(text: str) -> str:
    """The canonical form of an easy-days setting ("sat,sun:0.5"; "" for none):
    comma-separated days of the week, each alone (no reviews) or with the fraction
    of a normal load it takes. ValueError saying what it must be."""
    need = "days of the week such as sat,sun or sun:0.5 (a load from 0 to 1), or none"
    text = text.strip().lower()
    if text in ("", "none", "off"):
        return ""
    loads = list(NORMAL_DAYS)
    for part in text.split(","):
        name, _, fraction = part.strip().partition(":")
        name = name.strip()
        if name not in WEEKDAYS and name not in _DAY_NAMES:
            raise ValueError(need)
        name = name[:3]
        try:
            load = float(fraction) if fraction.strip() else 0.0
        except ValueError:
            raise ValueError(need) from None
        if not 0.0 <= load <= 1.0:  # nan fails both
            raise ValueError(need)
        loads[WEEKDAYS.index(name)] = round(load, 2)
    return format_easy_days(tuple(loads))


def format_easy_days(loads: Sequence[float]) -> str:
    return ",".join(
        name if load == 0 else f"{name}:{load:g}"
        for name, load in zip(WEEKDAYS, loads, strict=True)
        if load < 1
    )


def easy_day_loads(text: str) -> tuple[float, ...]:
    """Monday..Sunday, the share of a normal load each day takes (1: a normal day)."""
    loads = list(NORMAL_DAYS)
    for part in filter(None, parse_easy_days(text).split(",")):
        name, _, fraction = part.partition(":")
        loads[WEEKDAYS.index(name)] = float(fraction) if fraction else 0.0
    return tuple(loads)


def fuzz_bounds(interval_days: int, maximum_interval: int) -> tuple[int, int]:
    """The days fsrs's fuzz may move an interval of `interval_days` to (inclusive):
    fsrs's own range (its FUZZ_RANGES), none under 3 days."""
    if interval_days < 2.5:
        return interval_days, interval_days
    delta = 1.0
    for part in FUZZ_RANGES:
        delta += part["factor"] * max(min(float(interval_days), part["end"]) - part["start"], 0.0)
    low = max(2, round(interval_days - delta))
    high = min(round(interval_days + delta), maximum_interval)
    return min(low, high), high


def easy_day_factors(
    loads: Sequence[float], weekdays: Sequence[int], counts: Sequence[int]
) -> list[float]:
    """Each candidate day's factor (1 or MINIMUM_LOAD) from its weekday's load."""
    shares = [max(loads[day], MINIMUM_LOAD) for day in weekdays]
    total_count, total_share = sum(counts), sum(shares)
    factors = []
    for day, count, share in zip(weekdays, counts, shares, strict=True):
        load = loads[day]
        if load >= 1:
            factors.append(1.0)
        elif load <= 0:
            factors.append(MINIMUM_LOAD)
        else:
            others_share = total_share - share
            over = others_share > 0 and count / load > (total_count - count) / others_share
            factors.append(MINIMUM_LOAD if over else 1.0)
    return factors


def day_weights(
    first_interval: int, counts: Sequence[int], factors: Sequence[float]
) -> list[float]:
    """Weights of the intervals first_interval, first_interval + 1, ... (module docstring)."""
    return [
        factor * (1.0 if count == 0 else 1.0 / (count * count * (first_interval + offset)))
        for offset, (count, factor) in enumerate(zip(counts, factors, strict=True))
    ]


def seeded_fraction(question_id: str, at: datetime) -> float:
    """A number in [0, 1) fixed by the question and the review's time."""
    digest = hashlib.sha256(f"kvdrill-balance:{question_id}:{iso(at)}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def weighted_pick(weights: Sequence[float], fraction: float) -> int:
    """The index `fraction` (in [0, 1)) falls on when [0, 1) is cut in proportion to
    `weights`."""
    target = fraction * sum(weights)
    running = 0.0
    for index, weight in enumerate(weights):
        running += weight
        if target < running:
            return index
    return len(weights) - 1


@dataclass(frozen=True)
class LoadBalancer:
    """Places review cards within their fuzz range in the user's days (module docstring)."""

    days: DayClock
    easy_days: tuple[float, ...] = NORMAL_DAYS
    maximum_interval: int = 36500

    def candidates(self, row: Mapping[str, Any], at: datetime) -> tuple[int, int, int] | None:
        """(interval, lowest, highest): the days fsrs gave a card just scheduled at `at`
        and the range it may move in; None when fsrs would not fuzz it (learning steps,
        intervals under 3 days)."""
        if row["state"] != int(State.Review):
            return None
        interval = parse_iso(row["due"]) - at
        if interval.seconds or interval.microseconds or interval.days < 3:
            return None
        low, high = fuzz_bounds(interval.days, self.maximum_interval)
        return None if low == high else (interval.days, low, high)

    def place_in(self, db, row: dict[str, Any], at: datetime) -> dict[str, Any]:
        """`place` against the cards `db` holds: the day counts of the card's range come
        from one query (drill.storage.reviews.due_counts), made only for an interval that
        is balanced; the card itself not counted."""
        bounds = self.candidates(row, at)
        if bounds is None:
            return row
        interval, low, high = bounds
        if interval > MAX_BALANCED_INTERVAL:  # spread only: `place` reads no counts
            return self.place(row, at, {})
        from drill.storage.reviews import due_counts

        first = self.days.day_of(at + timedelta(days=low))
        spans = (self.days.day_of(at + timedelta(days=high)) - first).days + 1
        day_list = [first + timedelta(days=n) for n in range(spans)]
        starts = [
            iso(self.days.start_of(day)) for day in [*day_list, day_list[-1] + timedelta(days=1)]
        ]
        counts = due_counts(db, starts, row["question_id"])
        return self.place(row, at, dict(zip(day_list, counts, strict=True)))

    def place(
        self,
        row: dict[str, Any],
        at: datetime,
        count_on: Callable[[date], int] | Mapping[date, int],
    ) -> dict[str, Any]:
        """`row` (fsrs's schedule without fuzz, reviewed at `at`) with its due moved to the
        interval chosen; `count_on(day)` (or a mapping) gives the cards due on a day."""
        bounds = self.candidates(row, at)
        if bounds is None:
            return row
        interval, low, high = bounds
        dues = [at + timedelta(days=k) for k in range(low, high + 1)]
        targets = [self.days.day_of(due) for due in dues]
        if interval <= MAX_BALANCED_INTERVAL and low <= MAX_BALANCED_INTERVAL:
            lookup = count_on.get if isinstance(count_on, Mapping) else count_on
            counts = [lookup(day) or 0 for day in targets]
        else:
            counts = [0] * len(dues)
        factors = easy_day_factors(self.easy_days, [day.weekday() for day in targets], counts)
        weights = day_weights(low, counts, factors)
        chosen = weighted_pick(weights, seeded_fraction(row["question_id"], at))
        return {**row, "due": iso(dues[chosen])}

    def place_rebuilt(self, db, cards: dict[str, dict[str, Any]]) -> None:
        """Place cards an import replayed (fsrs without fuzz), in place: one by one in
        the order of their last review, each against the cards placed before it and the
        database's other cards, so an import gives the same due dates every time."""
        counts: dict[date, int] = {}
        for question_id, due in db.execute(
            "select question_id, due from cards where suspended_at is null"
        ):
            if question_id not in cards:
                day = self.days.day_of(parse_iso(due))
                counts[day] = counts.get(day, 0) + 1
        replayed = sorted(cards.values(), key=lambda r: (r["last_review"] or "", r["question_id"]))
        for row in replayed:
            if row["last_review"]:
                placed = self.place(row, parse_iso(row["last_review"]), counts)
                cards[row["question_id"]] = placed
                day = self.days.day_of(parse_iso(placed["due"]))
                counts[day] = counts.get(day, 0) + 1


def load_balancer(easy_days: str, days: DayClock, scheduler: Scheduler) -> LoadBalancer:
    """The user's balancer: their days, their easy days (the setting's text), their
    scheduler's longest interval."""
    return LoadBalancer(days, easy_day_loads(easy_days), scheduler.maximum_interval)
