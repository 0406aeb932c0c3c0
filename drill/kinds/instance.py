"""The concrete item a user sees and is graded on: question + seed -> Instance.

Every kind makes its Instance (drill.kinds: `make_instance` dispatches on the question's
kind); this module holds what all kinds share: the Instance, its seeded RNG, what a
draw reads besides its question, and the error a question that cannot be drawn raises.
A numeric draw is drill.kinds.numeric_draw.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from drill.bank.schema import Tolerance
from drill.errors import BankError


@dataclass(frozen=True)
class MisconceptionValue:
    """A named wrong answer for this draw: `value` in the question's base unit."""

    id: str
    name: str  # short human name from the catalogue, e.g. "forgot the K+V factor"
    value: float
    feedback: str  # rendered with this draw's numbers
    # ids of the question's other named wrong answers this one is named over when an
    # answer matches both (the template's `ties`)
    beats: tuple[str, ...] = ()


@dataclass(frozen=True)
class Instance:
    question_id: str
    kind: str  # a name in drill.kinds.KINDS
    seed: int
    text: str  # the prompt with this draw's numbers substituted
    topic: str
    difficulty: int
    # drawn params and derived values (numbers, or strings such as a model name)
    params: dict[str, float | int | str] = field(default_factory=dict)
    # numeric only: the expected value in the base unit of `unit`
    expected: float | None = None
    unit: str | None = None  # a drill.bank.schema.Unit
    show_as: str | None = None  # the unit symbol to display the expected value in
    tolerance: Tolerance = Tolerance.default()
    solution: tuple[str, ...] = ()  # worked steps, numbers substituted
    misconceptions: tuple[MisconceptionValue, ...] = ()
    # shown one by one on the quiz's `h`: the question's own hint, then (numeric) its
    # formula in words and with this draw's numbers (drill.kinds.hints)
    hints: tuple[str, ...] = ()
    explanation: str | None = None
    # concept: model answer and key points (point, cues)
    answer_text: str | None = None
    key_points: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # concept: wrong claims about key points (index into key_points, claim, cues)
    wrong_claims: tuple[tuple[int, str, tuple[str, ...]], ...] = ()
    evidence: tuple[str, ...] = ()
    # choice: options in display order, and the indexes (0-based) that are correct
    options: tuple[str, ...] = ()
    option_why: tuple[str | None, ...] = ()
    correct_options: tuple[int, ...] = ()
    # order: items in display (shuffled) order, and the correct order as indexes into them
    items: tuple[str, ...] = ()
    correct_order: tuple[int, ...] = ()


class InstanceError(BankError):
    """A question that cannot be drawn; `field` is the path of the offending field."""

    def __init__(self, question_id: str, field: tuple[str | int, ...], message: str) -> None:
        from drill.text import printable

        message = printable(message)  # it may quote bank text, and it is printed
        self.question_id = question_id
        self.field = field
        self.detail = message
        super().__init__(f"{question_id}: {dotted(field)}: {message}" if field else message)


def dotted(field: tuple[str | int, ...]) -> str:
    """("misconceptions", 1, "expr") -> "misconceptions[1].expr"."""
    text = ""
    for part in field:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def instance_rng(question_id: str, seed: int) -> random.Random:
    """The RNG for one draw: the same id and seed give the same numbers everywhere."""
    digest = hashlib.sha256(f"{question_id}:{seed}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


@dataclass(frozen=True)
class DrawSources:
    """What a numeric draw reads besides its question: model presets by name and the
    misconception catalogue by id (None: the built-in ones, loaded when needed)."""

    presets: Mapping[str, Any] | None = None
    catalogue: Mapping[str, Any] | None = None


def common_fields(question: Any, seed: int) -> dict[str, Any]:
    """The Instance fields every kind takes from its question as they are."""
    return {
        "question_id": question.id,
        "kind": question.kind,
        "seed": seed,
        "topic": question.topic,
        "difficulty": question.difficulty,
    }
