"""Put in order: items shown shuffled (never already in order), answered with their
numbers or letters in the right order ("3 1 4 2", "3,1,4,2", "c a d b", "3142")."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from drill.kinds.base import fixed_text_fields, lint_hint
from drill.kinds.instance import DrawSources, Instance, instance_rng
from drill.kinds.numbered import NumberedKind, read_indexes
from drill.kinds.verdict import Verdict
from drill.reports.document import Block, letter

if TYPE_CHECKING:
    from drill.kinds.lint_report import LintContext, LintReport


class OrderKind(NumberedKind):
    name = "order"
    answer_examples = "answer with the numbers in the right order, e.g. 3 1 2"
    section_title = "Put in order"
    space_lines = 1
    sheet_note = "Write the letters in the right order."
    fast_ms = 12_000

    def make_instance(self, question: Any, seed: int, sources: DrawSources) -> Instance:
        order = _shuffled_not_identity(len(question.items), instance_rng(question.id, seed))
        return Instance(
            **fixed_text_fields(question, seed),
            items=tuple(question.items[i] for i in order),
            # correct_order[k]: where the k-th item of the right order is shown
            correct_order=tuple(order.index(k) for k in range(len(order))),
        )

    def entries(self, instance: Instance) -> Sequence[str]:
        return instance.items

    def how_to_answer(self, instance: Instance) -> str:
        return "Answer with the numbers in the right order (e.g. 3 1 2)"

    def json_fields(self, instance: Instance) -> dict[str, Any]:
        # correct_order: indexes into items, in the right order
        return {"items": list(instance.items), "correct_order": list(instance.correct_order)}

    def grade(self, instance: Instance, answer_text: str) -> Verdict:
        count = len(instance.items)
        read = read_indexes(answer_text, count, "items' numbers in order", compact=True)
        if not isinstance(read, str) and sorted(read) != list(range(count)):
            read = f"give each of the numbers 1-{count} exactly once"
        if isinstance(read, str):
            example = _numbers(range(count - 1, -1, -1))
            return Verdict(
                correct=False, status="unreadable", feedback=f"Cannot read that: {read}; e.g. {example}."
            )
        right = list(instance.correct_order)
        if read == right:
            return Verdict(correct=True, status="correct")
        in_place = sum(a == b for a, b in zip(read, right, strict=True))
        feedback = f"{in_place} of {count} in the right place. Right order: {_numbers(right)}."
        return Verdict(correct=False, status="wrong", feedback=feedback)

    def expected_text(self, instance: Instance) -> str:
        return _numbers(instance.correct_order)

    def key_blocks(self, instance: Instance) -> list[Block]:
        order = instance.correct_order
        return [
            Block("answer", ", ".join(letter(i) for i in order)),
            Block("steps", items=tuple(instance.items[i] for i in order)),
        ]

    def lint(self, question: Any, report: LintReport, context: LintContext) -> None:
        lint_hint(question, report)
        report.add_repeats("items", question.items, "the order is ambiguous")


def _numbers(indexes: Iterable[int]) -> str:
    """0-based indexes as the display numbers an answer gives: "3 1 4 2"."""
    return " ".join(str(i + 1) for i in indexes)


def _shuffled_not_identity(n: int, rng: random.Random) -> list[int]:
    """A shuffle of range(n) that is not already in order (an order drill needs one)."""
    order = list(range(n))
    for _ in range(20):
        rng.shuffle(order)
        if order != sorted(order):
            return order
    return order[::-1]
