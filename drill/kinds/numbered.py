"""Kinds that show numbered entries under their text and are answered by naming them.

Choice questions show options and order questions items, both numbered from 1 in
the quiz (lettered from A on a sheet); an answer names entries by number or letter:
"2", "b", "a, c", "3 1 4 2", "3,1,4,2", "c a d b".
"""

from __future__ import annotations

import re
from abc import abstractmethod
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from drill.kinds.base import GradedKind
from drill.reports.document import Block

if TYPE_CHECKING:
    from drill.kinds.instance import Instance

_TOKEN_SPLIT = re.compile(r"(?:\s*(?:,|;|\band\b|&|\+|->|→|>|-)\s*|\s+)", re.IGNORECASE)


def _entry_index(token: str, count: int) -> int | None:
    """'2' or 'b' or '(b)' -> 1 (0-based); None if it names no entry."""
    token = token.strip("().:[]").lower()
    if token.isdigit() and token.isascii():
        index = int(token) - 1
    elif len(token) == 1 and "a" <= token <= "z":
        index = ord(token) - ord("a")
    else:
        return None
    return index if 0 <= index < count else None


def read_indexes(text: str, count: int, what: str, *, compact: bool = False) -> list[int] | str:
    """Display indexes (0-based) in the order given, or the reason they can't be read.

    `compact` also reads one run of as many digits or letters as there are entries
    ("3142", "cadb") as that many entries.
    """
    text = text.strip() if isinstance(text, str) else ""
    if not text:
        return f"give the {what}"
    if len(text) > 500:
        return "that answer is too long"
    tokens = [t for t in _TOKEN_SPLIT.split(text) if t]
    if not tokens:
        return f"give the {what}"
    if compact and len(tokens) == 1 and len(tokens[0]) == count > 1 and tokens[0].isalnum():
        tokens = list(tokens[0])
    indexes = []
    for token in tokens:
        index = _entry_index(token, count)
        if index is None:
            last = chr(ord("a") + count - 1)
            return f"{token!r} is not one of 1-{count} (or a-{last})"
        indexes.append(index)
    return indexes


def spoken_list(indexes: Iterable[int]) -> str:
    """Display numbers of 0-based indexes as a sentence says them: "2", "1, 3 and 4"."""
    shown = [str(i + 1) for i in indexes]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


class NumberedKind(GradedKind):
    """A graded kind whose entries are listed, numbered, under its text."""

    sheet_note: str  # under the entries on a sheet: how to write the answer

    @abstractmethod
    def entries(self, instance: Instance) -> Sequence[str]:
        """The options or items, in the order shown."""

    def prompt_lines(self, instance: Instance) -> list[str]:
        numbered = [f"  {i}. {text}" for i, text in enumerate(self.entries(instance), 1)]
        return [instance.text.rstrip(), *numbered]

    def question_blocks(self, instance: Instance) -> list[Block]:
        return [
            Block("text", instance.text.strip()),
            Block("options", items=tuple(self.entries(instance))),
            Block("note", self.sheet_note),
            Block("space", lines=self.space_lines),
        ]
