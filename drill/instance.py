"""question + seed -> Instance: the concrete item a user sees and is graded on."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Kind = Literal["numeric", "concept", "choice", "order"]


@dataclass(frozen=True)
class MisconceptionValue:
    """A named wrong answer for this draw: `value` in the question's base unit."""

    id: str
    name: str  # short human name from the catalogue, e.g. "forgot the K+V factor"
    value: float
    feedback: str  # rendered with this draw's numbers


@dataclass(frozen=True)
class Instance:
    question_id: str
    kind: Kind
    seed: int
    text: str  # the prompt with this draw's numbers substituted
    topic: str
    difficulty: int
    # drawn params and derived values (numbers, or strings such as a model name)
    params: dict[str, float | int | str] = field(default_factory=dict)
    # numeric only: the expected value in the base unit of `unit`
    expected: float | None = None
    unit: str | None = None  # a drill.schema.Unit
    show_as: str | None = None  # the unit symbol to display the expected value in
    tolerance_rel: float | None = None
    tolerance_abs: float | None = None
    tolerance_sig: int | None = None
    solution: tuple[str, ...] = ()  # worked steps, numbers substituted
    misconceptions: tuple[MisconceptionValue, ...] = ()
    hint: str | None = None
    explanation: str | None = None
    # concept: model answer and key points (point, cues)
    answer_text: str | None = None
    key_points: tuple[tuple[str, tuple[str, ...]], ...] = ()
    evidence: tuple[str, ...] = ()
    # choice: options in display order, and the indexes (0-based) that are correct
    options: tuple[str, ...] = ()
    option_why: tuple[str | None, ...] = ()
    correct_options: tuple[int, ...] = ()
    # order: items in display (shuffled) order, and the correct order as indexes into them
    items: tuple[str, ...] = ()
    correct_order: tuple[int, ...] = ()
