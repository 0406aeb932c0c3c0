"""Lint a loaded bank: the checks that need more than the schema.

Each question's kind (drill.kinds) checks it: numeric templates are checked
statically, drawn with seeds 0..draws-1 and checked against the slips their
formulas invite (drill.kinds.numeric_lint), concept
questions may only cite evidence an engine run can measure, choice options and
order items must differ, and every question takes its GPU figures from the GPU table
(drill.kinds.gpu_lint). Each problem is reported once per field, at the line of
that field, with the first seed that shows it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drill.bank.loader import Bank, LintError
from drill.kinds import kind_of
from drill.kinds.gpu_lint import lint_gpu_figures
from drill.kinds.lint_report import LintContext, LintReport

DEFAULT_DRAWS = 200


def lint_bank(
    bank: Bank,
    draws: int = DEFAULT_DRAWS,
    *,
    catalogue: Mapping[str, Any] | None = None,
    presets: Mapping[str, Any] | None = None,
) -> list[LintError]:
    """Every problem in `bank`'s questions, in bank order (see the module docstring)."""
    if catalogue is None:
        from drill.bank.misconceptions import load_misconception_catalogue

        catalogue = load_misconception_catalogue()
    if presets is None:
        from drill.serving.kvmath import load_presets

        presets = load_presets()
    context = LintContext(draws, catalogue, presets)
    problems: list[LintError] = []
    for question in bank:
        report = LintReport(bank, question.id)
        kind_of(question.kind).lint(question, report, context)
        lint_gpu_figures(question, report)
        problems.extend(sorted(report.problems, key=lambda p: p.line))
    return problems
