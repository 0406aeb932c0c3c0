"""How the quiz's text looks on a terminal: wrapped to its width, coloured, with a
position bar. Pure functions of the text and the width.

`PLAIN` (piped output, tests) leaves every line as it is. On a terminal, lines are
wrapped at word boundaries to the terminal's width, at most MAX_TEXT_COLUMNS (long
lines are hard to read), with an indented or listed line's continuation under its
text; with colour (a terminal without NO_COLOR), right is green, wrong red, and the
named mistake and wrong claims yellow.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass

MAX_TEXT_COLUMNS = 100
BAR_CELLS = 20

_CODES = {
    "right": "32",  # green
    "wrong": "31",  # red
    "mistake": "1;33",  # bold yellow
    "careful": "33",  # yellow
    "dim": "2",
    "bold": "1",
}
# what a continuation line hangs under: an indent, then a list marker ("2. ", "[x] ", "- ")
_HANGING = re.compile(r"^\s*(?:\d+\. |\[.\] |- |• )?")


def paint(text: str, role: str | None, color: bool) -> str:
    """`text` in the colour of `role` when `color` is on (an empty text stays empty)."""
    if not color or role is None or not text:
        return text
    return f"\x1b[{_CODES[role]}m{text}\x1b[0m"


def wrap_line(line: str, width: int) -> list[str]:
    """One line as lines of at most `width` columns, broken between words only (a
    word longer than the width stands alone on its line); continuation lines keep
    the line's indent and hang under the text of a list item."""
    if len(line) <= width:
        return [line]
    hang = " " * len(_HANGING.match(line)[0])  # type: ignore[index]  # matches any line
    return textwrap.wrap(
        line,
        width,
        subsequent_indent=hang if len(hang) < width // 2 else "",
        break_long_words=False,
        break_on_hyphens=False,
    ) or [line]


def verdict_roles(lines: Sequence[str], correct: bool | None) -> list[str | None]:
    """The colour role of each verdict line: its first line right or wrong (a
    self-rated answer has none), "Mistake:" and "Careful:" lines as such."""
    roles: list[str | None] = []
    for i, line in enumerate(lines):
        if line.startswith("Mistake:"):
            roles.append("mistake")
        elif line.startswith("Careful:"):
            roles.append("careful")
        elif i == 0 and correct is not None:
            roles.append("right" if correct else "wrong")
        else:
            roles.append(None)
    return roles


def position_bar(position: int, total: int, cells: int = BAR_CELLS) -> tuple[str, str]:
    """(done, to come) parts of a bar of `cells` for item `position` of `total`."""
    done = round(cells * (position - 1) / total) if total else 0
    return "━" * done, "─" * (cells - done)


def progress(position: int, total: int) -> str:
    """Where a session stands at item `position` of `total`: the items done before it and
    those left, this one included ("[4 done, 11 left]")."""
    return f"[{position - 1} done, {total - position + 1} left]"


@dataclass(frozen=True)
class Screen:
    """How lines reach the user: `width` gives the columns to wrap to (None: no
    wrapping), `color` paints roles, `bar` draws the position bar."""

    color: bool = False
    width: Callable[[], int] | None = None
    bar: bool = False

    def lines(self, lines: Sequence[str], roles: Sequence[str | None] | None = None) -> str:
        """The lines as text to write, each ending in a newline."""
        roles = roles or [None] * len(lines)
        columns = min(self.width(), MAX_TEXT_COLUMNS) if self.width else None
        out = []
        for line, role in zip(lines, roles, strict=True):
            pieces = wrap_line(line, columns) if columns else [line]
            out += [paint(piece, role, self.color) + "\n" for piece in pieces]
        return "".join(out)

    def prompt(self, prompt: str) -> tuple[str, str]:
        """A prompt wrapped like the text: (its lines before the last, as text to write;
        its last line, to ask with)."""
        if not self.width:
            return "", prompt
        text = prompt.rstrip()
        pieces = wrap_line(text, min(self.width(), MAX_TEXT_COLUMNS))
        return "".join(p + "\n" for p in pieces[:-1]), pieces[-1] + prompt[len(text):]

    def header(self, position: int, total: int, label: str) -> str:
        """The line above a question: "[1 done, 4 left] kv-cache · new", with the bar on a
        terminal."""
        head = progress(position, total)
        if not self.bar:
            return f"{head} {label}"
        done, rest = position_bar(position, total)
        bar = paint(done, "bold", self.color) + paint(rest, "dim", self.color)
        return f"{paint(head, 'bold', self.color)} {bar} {label}"


PLAIN = Screen()
