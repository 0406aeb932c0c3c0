"""A concept answer's checklist at the quiz's prompt: the grader ticks the key points it
read in the answer, and the user has the last word.

After the verdict the quiz asks once more before the rating: Enter keeps the ticks as
they are; numbers toggle points (`1 3`, `2,4`), the checklist is shown again with the
rating the ticks now suggest, and Enter then keeps them. While the ticks are the
grader's own, the suggestion is the grader's (a wrong claim it found suggests Again);
once the user has changed one, it follows the ticks alone
(drill.kinds.concept.rating_from_ticks). The final ticks are stored with the review.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from drill.kinds.concept import checklist_lines, rating_from_ticks
from drill.kinds.instance import Instance
from drill.study.session_text import RATING_NAMES

PROMPT = "Ticks: Enter keeps them; numbers toggle points (1 3): "
_NUMBERS = re.compile(r"[\s,;]+")


def toggled(ticks: Sequence[bool], text: str) -> tuple[bool, ...] | None:
    """`ticks` with the points numbered in `text` toggled (each number once per mention);
    None when `text` holds anything but numbers of points."""
    words = [w for w in _NUMBERS.split(text.strip()) if w]
    if not words or not all(w.isdigit() and 1 <= int(w) <= len(ticks) for w in words):
        return None
    result = list(ticks)
    for word in words:
        result[int(word) - 1] = not result[int(word) - 1]
    return tuple(result)


class TickPrompt:
    """The ticks of one answer as the user corrects them, a line at a time."""

    def __init__(
        self,
        instance: Instance,
        ticks: Sequence[bool],
        claims: Sequence[str | None],
        suggested: int | None,
        cap: int | None = None,
    ) -> None:
        count = len(instance.key_points)
        self.instance = instance
        self.ticks = (tuple(ticks) + (False,) * count)[:count]
        self.claims = tuple(claims)
        self.suggested = suggested  # the rating to offer; None: the grader cannot tell
        self.cap = cap  # the highest rating to suggest (a hint was used)
        self.changed = False

    def answer(self, text: str) -> list[str] | None:
        """Take one line typed at PROMPT: None when it keeps the ticks (Enter), else the
        lines to show (the checklist again, or how to toggle)."""
        if not text.strip():
            return None
        new = toggled(self.ticks, text)
        if new is None:
            return [
                f"Type the numbers of the points to toggle (1 to {len(self.ticks)}), or press "
                "Enter to keep the ticks."
            ]
        self.ticks, self.changed = new, True
        rating = rating_from_ticks(new)
        self.suggested = rating if self.cap is None else min(rating, self.cap)
        return [
            *checklist_lines(self.instance, self.ticks),
            f"These ticks suggest {self.suggested} {RATING_NAMES[self.suggested]}.",
        ]
