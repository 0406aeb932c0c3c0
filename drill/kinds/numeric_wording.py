"""A numeric template's tolerance matches what its question says (checked by bank lint).

The default tolerance is ±1 %, which takes an answer rounded to three significant figures.
Two wordings change what a candidate may expect:

- a question that asks for an estimate ("at roughly what batch size", "about how many",
  "approximately", "around", "the order of", "~", "≈" in the sentence that asks) takes
  any answer within ±5 % of the value (APPROXIMATE_REL) on every draw, so every answer
  rounded to two significant figures; the built-in ones take ±8 %, as wide as their slips
  allow (3.35 TB/s read as TiB/s is 9.95 % off), so "~40" is a fair answer to "roughly 42";
- a question whose tolerance is tighter than ±1 % on some draw says the precision it
  wants in its text ("to three significant figures", "to two decimal places", "to the
  millisecond", "to 0.1 ms", "exactly"), so that a sensibly rounded answer is never
  refused for a precision the question did not ask for; and an answer to the significant
  figures it asks for is taken on every draw. A whole count (a whole number answered
  within ±0.5, "how many blocks") needs no such words: a count is exact.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from drill.errors import BankError
from drill.kinds.numeric_draw import draw_numeric

APPROXIMATE_REL = 0.05
DEFAULT_REL = 0.01
_COUNTS = frozenset({"count", "tokens", "requests"})
_HEDGE = re.compile(
    r"\b(?:roughly|about|approximately|approx\.?|around|order of)\b|[~≈]", re.IGNORECASE
)
_PRECISION = re.compile(
    r"significant (?:figures?|digits?)|decimal places?|\bto the nearest\b|\bexact(?:ly)?\b"
    r"|\bto the (?:nano|micro|milli)?second\b|\bto (?:one|two|three|four|\d+) "
    r"(?:figures?|digits?|decimals?)\b|\bto \d+(?:\.\d+)? ?(?:ms|µs|us|s|%|percentage points?)\b",
    re.IGNORECASE,
)
# a sentence ends at . ? or ! before a space or the end ("0.1 ms" goes on)
_SENTENCE = re.compile(r".*?(?:[.?!](?=\s|$)|$)")
_SIG_FIGURES = re.compile(
    r"\b(one|two|three|four|five|six|\d+) significant (?:figures?|digits?)", re.IGNORECASE
)
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


def stated_figures(prompt: str) -> int | None:
    """The significant figures the prompt asks for ("to three significant figures"), if any."""
    match = _SIG_FIGURES.search(" ".join(prompt.split()))
    if match is None:
        return None
    word = match[1].lower()
    return _NUMBER_WORDS[word] if word in _NUMBER_WORDS else int(word)


def round_figures(value: float, figures: int) -> float:
    """`value` rounded to `figures` significant figures, halves away from zero."""
    if value == 0 or not math.isfinite(value):
        return value
    scale = 10.0 ** (figures - 1 - math.floor(math.log10(abs(value))))
    return math.copysign(math.floor(abs(value) * scale + 0.5) / scale, value)


def asking_sentence(prompt: str) -> str:
    """The sentence of `prompt` that asks: the last one ending in '?', else the last one."""
    text = " ".join(prompt.split())
    sentences = [s.strip() for s in _SENTENCE.findall(text) if s.strip()]
    asking = [s for s in sentences if s.endswith("?")]
    return (asking or sentences or [""])[-1]


def states_precision(prompt: str) -> bool:
    """Whether the prompt says how precise the answer must be."""
    return _PRECISION.search(" ".join(prompt.split())) is not None


def check_wording(
    question: Any, add: Any, draws: int, presets: Mapping[str, Any] | None = None
) -> None:
    """Report (through `add(field, message)`) a tolerance its question's words do not
    match, with the first seed that shows it (module docstring)."""
    tolerance, prompt = question.tolerance, question.prompt
    hedge = _HEDGE.search(asking_sentence(prompt))
    precise = states_precision(prompt)
    figures = stated_figures(prompt)
    for seed in range(draws):
        try:
            expected = float(draw_numeric(question, seed, presets).expected)
        except BankError:
            continue  # the draw's own problem is reported by the numeric lint
        if not (math.isfinite(expected) and expected > 0):
            continue
        rel = tolerance.relative_to(expected)
        if hedge is not None and rel < APPROXIMATE_REL - 1e-9:
            add(
                ("tolerance",),
                f"is ±{100 * rel:.3g} % on seed {seed}, but the question asks for an estimate "
                f"('{hedge[0]}'); give it at least "
                f"±{100 * APPROXIMATE_REL:g} % (tolerance: {{rel: {APPROXIMATE_REL:g}}})",
            )
            return
        if figures is not None and not tolerance.accepts(
            round_figures(expected, figures), expected
        ):
            add(
                ("tolerance",),
                f"refuses the answer to {figures} significant figures that the question asks "
                f"for ({round_figures(expected, figures):g} for {expected:g}) on seed {seed}; "
                "widen the tolerance or ask for more figures",
            )
            return
        whole_count = (
            question.unit in _COUNTS
            and tolerance.abs is not None
            and tolerance.abs <= 0.5
            and expected.is_integer()
        )
        if not precise and not whole_count and rel < DEFAULT_REL - 1e-9:
            add(
                ("tolerance",),
                f"is ±{100 * rel:.3g} % on seed {seed}, tighter than the default ±1 %, but the "
                "question does not say the precision it wants; say it in the prompt ('to "
                "three significant figures', 'to the millisecond') or widen the tolerance",
            )
            return
