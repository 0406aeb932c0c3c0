"""Which slips of each numeric template the grader cannot name: `kvdrill bank lint --coverage`.

Every slip lint derives (drill.kinds.numeric_slips) is evaluated on seeds 0..draws-1,
and on each draw where it differs from the answer its value is graded as a person
would type it, in a unit of the answer's dimension with either kind of prefix
(drill.kinds.numeric_grade.mistake_for_value): named by one of the question's
misconceptions, or by a slip the grader knows by its ratio to the answer, or by
nothing. The report, one block per numeric template in bank order:

    FILE:LINE: ID: N slips, K without a name
      SLIP                                 no name on any draw where it differs
      SLIP (no name on U of D draws)       no name on some of them
    coverage: N slips in T numeric templates, K without a name

A template that cannot be drawn is left out (lint reports why).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from drill.bank.loader import Bank, display_path
from drill.bank.schema import NumericQuestion
from drill.errors import BankError
from drill.kinds.instance import InstanceError
from drill.kinds.numeric_draw import NumericDraw, draw_numeric
from drill.kinds.numeric_grade import mistake_for_value
from drill.kinds.numeric_lint import grading_instance
from drill.kinds.numeric_slips import same, slip_draws


@dataclass(frozen=True)
class SlipCoverage:
    """One slip of a template: on how many draws it differs from the answer, and on
    how many of those the grader names no mistake."""

    slip: str
    differs: int
    unnamed: int


def template_coverage(
    question: NumericQuestion, draws: int, presets: Mapping[str, Any]
) -> list[SlipCoverage] | None:
    """The slips of one template and how well the grader names them; None if it
    cannot be drawn or its prompt cannot be read."""
    from drill.quantities.render import placeholders

    try:
        shown = {p.name for p in placeholders(question.prompt)}
    except BankError:
        return None
    drawn: list[tuple[int, NumericDraw]] = []
    for seed in range(draws):
        try:
            draw = draw_numeric(question, seed, presets)
        except InstanceError:
            continue
        if draw.expected > 0:
            drawn.append((seed, draw))
    if not drawn:
        return None
    found, _ = slip_draws(question, shown, [draw for _, draw in drawn])
    instances = [grading_instance(question, seed, draw, named=True) for seed, draw in drawn]
    report = []
    for item in found:
        differs = unnamed = 0
        for (_, draw), instance, value in zip(drawn, instances, item.values, strict=True):
            if value is None or same(value, draw.expected):
                continue
            differs += 1
            unnamed += mistake_for_value(instance, value) is None
        report.append(SlipCoverage(item.slip.name, differs, unnamed))
    return report


def coverage_lines(bank: Bank, draws: int, presets: Mapping[str, Any]) -> list[str]:
    """The coverage report of every numeric template in `bank` (see the module docstring)."""
    lines: list[str] = []
    templates = slips = unnamed = 0
    for question in bank:
        if not isinstance(question, NumericQuestion):
            continue
        report = template_coverage(question, draws, presets)
        if report is None:
            continue
        source = bank.source(question.id)
        missing = [item for item in report if item.unnamed]
        lines.append(
            f"{display_path(source.path)}:{source.line}: {question.id}: "
            f"{len(report)} slips, {len(missing)} without a name"
        )
        for item in missing:
            some = (
                ""
                if item.unnamed == item.differs
                else (f" (no name on {item.unnamed} of {item.differs} draws)")
            )
            lines.append(f"  {item.slip}{some}")
        templates += 1
        slips += len(report)
        unnamed += len(missing)
    noun = "template" if templates == 1 else "templates"
    lines.append(f"coverage: {slips} slips in {templates} numeric {noun}, {unnamed} without a name")
    return lines
