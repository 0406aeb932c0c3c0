"""The kinds of question, by name: the one table the rest of kvdrill asks.

Each kind (a `drill.kinds.base.Kind`) draws, shows, grades, renders and lints its
own questions. Adding a kind takes its module here, its question type in
drill/bank/schema.py and one entry in KINDS; nothing else tests a kind's name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drill.errors import BankError
from drill.kinds.base import Kind
from drill.kinds.choice import ChoiceKind
from drill.kinds.concept import ConceptKind
from drill.kinds.instance import DrawSources, Instance
from drill.kinds.numeric import NumericKind
from drill.kinds.order import OrderKind

# in the order of a mock interview sheet's parts
KINDS: dict[str, Kind] = {
    kind.name: kind for kind in (NumericKind(), ConceptKind(), ChoiceKind(), OrderKind())
}


def kind_of(name: str) -> Kind:
    """The kind called `name`; BankError naming the known kinds when there is none."""
    kind = KINDS.get(name) if isinstance(name, str) else None
    if kind is None:
        raise BankError(f"unknown question kind {name!r} (known: {', '.join(KINDS)})")
    return kind


def make_instance(
    question: Any,
    seed: int,
    *,
    presets: Mapping[str, Any] | None = None,
    catalogue: Mapping[str, Any] | None = None,
) -> Instance:
    """The concrete item for `question` and `seed`: same id and seed, same item.

    The question's kind makes it (drill.kinds); `presets` and `catalogue` replace
    the built-in model presets and misconception catalogue of a numeric draw.
    """
    return kind_of(question.kind).make_instance(question, seed, DrawSources(presets, catalogue))


__all__ = ["KINDS", "Kind", "kind_of", "make_instance"]
