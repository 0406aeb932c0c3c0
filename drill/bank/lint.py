"""Lint a loaded bank: the checks that need more than the schema.

Each question's kind (drill.kinds) checks it: numeric templates are checked
statically, drawn with seeds 0..draws-1 and checked against the slips their
formulas invite (drill.kinds.numeric_lint), concept
questions may only cite evidence an engine run can measure, choice options and
order items must differ. Each problem is reported once per field, at the line of
that field, with the first seed that shows it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from drill.bank.loader import Bank, LintError, display_path
from drill.kinds import kind_of
from drill.kinds.instance import dotted

DEFAULT_DRAWS = 200


@dataclass(frozen=True)
class LintContext:
    """What every question of one lint run is checked against."""

    draws: int  # seeded draws of each numeric template
    catalogue: Mapping[str, Any]  # the misconception catalogue, by id
    presets: Mapping[str, Any]  # the model presets, by name


class LintReport:
    """Problems of one question, at most one per field."""

    def __init__(self, bank: Bank, qid: str) -> None:
        self.bank, self.qid = bank, qid
        self.path = display_path(bank.source(qid).path)
        self.problems: list[LintError] = []
        self._fields: set[tuple[tuple, tuple]] = set()

    def add(self, field: tuple, message: str, key: tuple = ()) -> None:
        """A problem at `field` (a path such as ("misconceptions", 1, "expr")); `key`
        tells apart problems of one field that are each reported once (the slips
        of a template are all reported at its first line)."""
        if (field, key) in self._fields:
            return
        self._fields.add((field, key))
        line = self.bank.field_line(self.qid, *field)
        where = f"{dotted(field)}: " if field else ""
        self.problems.append(LintError(self.path, line, self.qid, where + message))

    def seen(self, field: tuple, key: tuple = ()) -> bool:
        return (field, key) in self._fields

    def add_repeats(self, field: str, texts: Sequence[str], why: str) -> None:
        """A problem at each of `texts` that repeats an earlier one, ignoring case and
        spacing; `why` says what the repeat breaks."""
        seen: set[str] = set()
        for i, text in enumerate(texts):
            key = " ".join(text.split()).casefold()
            if key in seen:
                self.add((field, i), f"'{text}' appears twice; {why}")
            seen.add(key)


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
        problems.extend(sorted(report.problems, key=lambda p: p.line))
    return problems
