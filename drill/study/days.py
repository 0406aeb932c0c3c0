"""The user's days: calendar days in their time zone that begin at the rollover hour.

Like Anki, a day starts at 4 am by default, so a review at 1 am counts for the day
before: a late session does not make the next morning's cards "tomorrow's". Every
day-based figure (new cards per day, streak, heatmap, true retention, forecast,
"later today") is counted in these days. Times in the database stay UTC.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone, tzinfo

DEFAULT_ROLLOVER_HOUR = 4


@dataclass(frozen=True)
class DayClock:
    """Days in `tz` (None: the system's zone) that begin at `rollover_hour`:00."""

    tz: tzinfo | None = None
    rollover_hour: int = DEFAULT_ROLLOVER_HOUR

    def day_of(self, moment: datetime) -> date:
        """The user's day that `moment` (an aware time) falls on."""
        local = moment.astimezone(self.tz)
        return (local - timedelta(hours=self.rollover_hour)).date()

    def start_of(self, day: date) -> datetime:
        """When `day` begins, as an aware UTC time."""
        naive = datetime.combine(day, time(self.rollover_hour))
        local = naive.replace(tzinfo=self.tz) if self.tz is not None else naive.astimezone()
        return local.astimezone(timezone.utc)

    def day_start(self, moment: datetime) -> datetime:
        """The beginning of the day `moment` falls on (UTC)."""
        return self.start_of(self.day_of(moment))

    def next_day_start(self, moment: datetime) -> datetime:
        return self.start_of(self.day_of(moment) + timedelta(days=1))


UTC_DAYS = DayClock(timezone.utc, 0)  # plain UTC calendar days
