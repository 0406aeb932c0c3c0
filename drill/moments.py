"""The span of times kvdrill accepts: the years EARLIEST_YEAR to LATEST_YEAR.

Scheduling adds intervals of up to a hundred years to a review's time, and
statistics step weeks back and forth from now; Python's dates end at the years
1 and 9999. A time in 1970..9000 keeps all of that arithmetic in range, so a
`--now` or an imported `reviewed_at` outside it is refused where it is read.
"""

from __future__ import annotations

from datetime import datetime, timezone

EARLIEST_YEAR = 1970
LATEST_YEAR = 9000


def moment_problem(moment: datetime) -> str | None:
    """Why `moment` (in UTC, or naive) is outside the years kvdrill works in, or None."""
    year = moment.year
    if moment.utcoffset():
        try:
            year = moment.astimezone(timezone.utc).year
        except OverflowError:  # 9999-12-31T23:00-05:00 has no UTC date
            pass
    if EARLIEST_YEAR <= year <= LATEST_YEAR:
        return None
    return f"is in the year {year}; times must lie in {EARLIEST_YEAR} to {LATEST_YEAR}"
