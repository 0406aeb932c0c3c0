"""Text from outside (files, typed input) made safe to store and to print.

`valid_text` makes any string encodable as UTF-8: input that was not UTF-8, or a
JSON escape such as "\\ud800", leaves lone surrogates that SQLite and a UTF-8
terminal both refuse. `printable` also removes what a terminal would act on
rather than show: C0 controls other than newline and tab, DEL, C1 controls, and
whole escape sequences (ESC [ ... m and the like), so a bank or a config.json
cannot recolour, retitle or rewrite the user's terminal; and the bidirectional
embedding, override and isolate controls, with which text can print in an order
other than the one it is read in.
"""

from __future__ import annotations

import re

REPLACEMENT = "\ufffd"
# the most of an answer that is stored (and that `kvdrill import` accepts)
MAX_ANSWER_CHARS = 10_000

_SURROGATE = re.compile("[\ud800-\udfff]")
# ESC or CSI/OSC/DCS... introducers with their parameters; a whole sequence goes at once
_ESCAPE_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI: colours, cursor moves, erase
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC, DCS...
    r"|\x1b[ -/]*[0-~]?"  # two-character escapes (ESC c resets the terminal)
)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def valid_text(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD, so it encodes as UTF-8."""
    return _SURROGATE.sub(REPLACEMENT, text)


def printable(text: str) -> str:
    """`text` as it may reach a terminal: no escape sequences or control characters
    (newline and tab are kept) and no lone surrogates."""
    text = _ESCAPE_SEQUENCE.sub("", text)
    return valid_text(_CONTROL.sub("", text))


def stored_answer(text: str) -> str:
    """An answer as the database keeps it: valid text, at most MAX_ANSWER_CHARS."""
    return valid_text(text[:MAX_ANSWER_CHARS])


_JSON_UNESCAPED_CONTROL = re.compile("[\x7f-\x9f]")


def escape_json_controls(json_text: str) -> str:
    """JSON text with DEL and C1 controls written as \\u escapes, as it writes C0 ones;
    the value read back is the same."""
    return _JSON_UNESCAPED_CONTROL.sub(lambda m: f"\\u{ord(m[0]):04x}", json_text)
