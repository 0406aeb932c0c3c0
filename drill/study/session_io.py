"""What a quiz session is given: its options, and its terminal and clock (SessionIO), so
the loop (drill.study.session) runs the same under a test as at a terminal."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from drill.srs import DEFAULT_RETENTION
from drill.study.screen import PLAIN, Screen


@dataclass(frozen=True)
class SessionOptions:
    topic: str | None = None
    new_limit: int = 10  # new cards per day, counting those already introduced today
    max_items: int = 20
    seed: int | None = None  # None: a fresh random session
    cram: bool = False  # practice only: reviews logged with cram=1, schedule untouched
    retention: float = DEFAULT_RETENTION
    fuzz: bool = True  # fsrs interval fuzzing; tests turn it off for exact due dates
    learn_ahead: timedelta = timedelta(minutes=20)
    leech_threshold: int = 8  # lapses that make a card a leech (0: never)
    drill: str | None = None  # a misconception id: practise the questions that test it
    interview: date | None = None  # bring cards back before this day (drill.study.deadline)


@dataclass(frozen=True)
class SessionIO:
    read_line: Callable[[], str | None]  # one line without its newline; None at end of input
    write: Callable[[str], None]  # text as given (newlines included)
    now: Callable[[], datetime]  # UTC-aware
    # a terminal's line editor: shows the prompt, reads one line (None at end of input)
    # and keeps it in its history when told to; None: write the prompt, then read_line
    read_prompted: Callable[[str, bool], str | None] | None = None
    screen: Screen = PLAIN
