"""JSON from files the user hands in (config.json, history lines), read within limits.

`parse_json` is `json.loads` that refuses, with a one-line reason, what would
otherwise crash or mislead later: nesting deeper than MAX_DEPTH (64) levels,
NaN and Infinity (not JSON, though Python's reader takes them), numbers that
overflow a float, and integers longer than Python converts (4,300 digits).
The sizes of what is read are the callers' business; each bounds its input
before parsing.
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_DEPTH = 64
MAX_INT_DIGITS = 4_300  # Python's own limit for converting text to int


class JSONInputError(ValueError):
    """JSON that cannot be used; `line` and `column` are 1-based where known."""

    def __init__(self, reason: str, line: int | None = None, column: int | None = None):
        super().__init__(reason)
        self.reason = reason
        self.line = line
        self.column = column

    def __str__(self) -> str:
        if self.line is None:
            return self.reason
        return f"line {self.line}, column {self.column}: {self.reason}"


def _constant(name: str) -> Any:
    raise JSONInputError(f"{name} is not a number JSON allows")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JSONInputError(f"the number {text[:20]} is too large")
    return value


def _depth(value: Any) -> int:
    """Nesting depth of parsed JSON (a scalar is 0), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            depth += 1
            if depth > MAX_DEPTH:
                return depth
            deepest = max(deepest, depth)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth) for child in children)
    return deepest


_DECODER = json.JSONDecoder(parse_constant=_constant, parse_float=_float)


def parse_json(text: str) -> Any:
    """The value of one JSON document; JSONInputError says why it cannot be used."""
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise JSONInputError(exc.msg, exc.lineno, exc.colno) from None
    except JSONInputError:
        raise
    except RecursionError:
        raise JSONInputError(f"nested more than {MAX_DEPTH} levels deep") from None
    except ValueError:  # int() of more digits than Python converts
        raise JSONInputError(f"a number has more than {MAX_INT_DIGITS:,} digits") from None
    # as many brackets as levels allowed cannot nest deeper: most texts skip the walk
    if text.count("[") + text.count("{") > MAX_DEPTH and _depth(value) > MAX_DEPTH:
        raise JSONInputError(f"nested more than {MAX_DEPTH} levels deep")
    return value
