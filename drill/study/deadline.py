"""An interview date: scheduling toward a day the user must be ready on.

With `kvdrill config interview-date 2027-01-15` set:
- a card whose next review would fall on or after that day, and that has not been
  reviewed in the last SPREAD_DAYS days before it, is brought forward into those
  days (`capped_due`), so every card is reviewed at least once more shortly before
  the interview; cards are spread over them by a stable hash of their id, so the
  reviews do not all land on the last evening;
- the desired retention rises as the day approaches (`retention_toward`): from the
  user's own setting RAMP_DAYS days out to PEAK_RETENTION on the last day before it
  (never lowered), so intervals shorten when forgetting would cost most.
Setting the date brings every existing card forward the same way. The algorithm
stays FSRS's; this only chooses when to ask and at what retention.
"""

from __future__ import annotations

import hashlib
from datetime import date, datetime, timedelta

from drill.study.days import DayClock

SPREAD_DAYS = 7
RAMP_DAYS = 30
PEAK_RETENTION = 0.97


def days_left(interview: date, now: datetime, days: DayClock) -> int:
    """Whole user days from today until the interview day (0 on the day itself)."""
    return (interview - days.day_of(now)).days


def retention_toward(base: float, interview: date, now: datetime, days: DayClock) -> float:
    """The desired retention for a review at `now`: `base` until RAMP_DAYS before the
    interview, then rising in a straight line to PEAK_RETENTION on its last day before."""
    left = days_left(interview, now, days)
    if left <= 0 or base >= PEAK_RETENTION:
        return base
    progress = min(1.0, max(0.0, (RAMP_DAYS - left + 1) / RAMP_DAYS))
    return round(base + (PEAK_RETENTION - base) * progress, 4)


def _spread(question_id: str, width: int) -> int:
    digest = hashlib.sha256(f"kvdrill-interview:{question_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % width


def capped_due(
    due: datetime,
    question_id: str,
    last_review: datetime | None,
    now: datetime,
    interview: date,
    days: DayClock,
) -> datetime:
    """`due`, or a day shortly before the interview when `due` is on or after its day.

    A card last reviewed within the final SPREAD_DAYS days before the interview has
    had its review before it and keeps `due`. Any other card moves to one of the last
    min(SPREAD_DAYS, days left - 1) days before the interview, chosen by its id, as
    long as that day is still ahead of `now`.
    """
    start = days.start_of(interview)
    final_stretch = days.start_of(interview - timedelta(days=SPREAD_DAYS))
    if due < start or (last_review is not None and last_review >= final_stretch):
        return due
    width = max(1, min(SPREAD_DAYS, days_left(interview, now, days) - 1))
    target = days.start_of(interview - timedelta(days=1 + _spread(question_id, width)))
    return target if target > now else due
