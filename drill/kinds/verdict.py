"""A graded answer: the Verdict every kind's grader returns, and the ratings it suggests.

Suggested ratings (FSRS): 1 Again when wrong, 2 Hard when right only after a unit
slip or a hint, 3 Good when right, 4 Easy when right within the kind's `fast_ms`.
A self-rated answer (status "self") carries the kind's own suggestion.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

Status = Literal["correct", "unit", "magnitude", "misconception", "unreadable", "wrong", "self"]

AGAIN, HARD, GOOD, EASY = 1, 2, 3, 4


@dataclass(frozen=True)
class Verdict:
    correct: bool | None  # None for a self-rated concept answer
    status: Status
    value: float | None = None  # the answer read, in base units of `unit`
    expected: float | None = None  # the expected value, in base units of `unit`
    unit: str | None = None  # the question's dimension (a drill.bank.schema.Unit)
    misconception: str | None = None  # a catalogue id
    misconception_name: str | None = None
    feedback: str = ""  # one or a few lines for the user
    # suggested FSRS rating, 1-4; None where a self-rated answer's reading is too uncertain
    # to suggest one (the user rates)
    rating: int | None = AGAIN
    covered: tuple[bool, ...] = ()  # concept: one flag per key point
    # concept: per key point, the wrong claim the answer makes about it, or None
    wrong_claims: tuple[str | None, ...] = ()

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["covered"] = list(self.covered)
        data["wrong_claims"] = list(self.wrong_claims)
        return data
