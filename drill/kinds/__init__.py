"""The kinds of question, by name: the one table the rest of kvdrill asks.

Each kind (a `drill.kinds.base.Kind`) draws, shows, grades, renders and lints its
own questions. Adding a kind takes its module here, its question type in
drill/bank/schema.py and one entry in KINDS; nothing else tests a kind's name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
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
    kind = kind_of(question.kind)
    instance = kind.make_instance(question, seed, DrawSources(presets, catalogue))
    # a numeric template renders its placeholders, GPU figures among them; the other kinds
    # show their text as written, less `{gpu.<key>.<field>}`
    return instance if kind.templated else with_gpu_figures(instance)


def with_gpu_figures(instance: Instance) -> Instance:
    """`instance` with each `{gpu.<key>.<field>}` in its texts written out from the GPU
    table (drill.serving.gpus.fill_gpu_figures); an unknown one is an InstanceError."""
    from drill.kinds.instance import InstanceError
    from drill.serving.gpus import GPU_PLACEHOLDER, fill_gpu_figures

    def fill(text: str | None) -> str | None:
        if not text or not GPU_PLACEHOLDER.search(text):
            return text
        try:
            return fill_gpu_figures(text)
        except BankError as exc:
            raise InstanceError(instance.question_id, (), str(exc)) from None

    return replace(
        instance,
        text=fill(instance.text) or "",
        explanation=fill(instance.explanation),
        hints=tuple(fill(h) or "" for h in instance.hints),
        answer_text=fill(instance.answer_text),
        key_points=tuple((fill(point) or "", cues) for point, cues in instance.key_points),
        wrong_claims=tuple((i, fill(claim) or "", cues) for i, claim, cues in instance.wrong_claims),
        options=tuple(fill(o) or "" for o in instance.options),
        option_why=tuple(fill(w) for w in instance.option_why),
        items=tuple(fill(i) or "" for i in instance.items),
    )


__all__ = ["KINDS", "Kind", "kind_of", "make_instance"]
