"""What a kind's lint is given: the run's context, and the report it adds problems to.

A problem is reported once per field, at the line of that field in its bank file
(drill.bank.lint runs every question's kind over it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from drill.bank.loader import Bank, LintError, display_path
from drill.kinds.instance import dotted


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
