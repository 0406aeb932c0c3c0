"""Exports of the bank to the formats teachers and flashcard users already use.

One module per format (`anki`, `moodle`, `gift`), each with:
  SUFFIX        the file name ending it writes
  CANNOT_CARRY  what the format has no place for, one line each (shown in
                `kvdrill bank export -h`, and in the file where the format allows comments)
  render(items, stamp) -> (bytes, notes)
                the file's bytes and what was left out; the same items and stamp give
                the same bytes

Every question is drawn as the quiz draws it (drill.kinds.make_instance): a numeric
template `draws` times, with seeds seed, seed + 1, ..., the other kinds once with the
seed. Bank text is escaped for each format (HTML entities, GIFT's own escapes).
"""

from __future__ import annotations

import importlib
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from drill.kinds.instance import Instance
from drill.reports.html_text import html_text

FORMATS = ("anki", "moodle", "gift")


@dataclass(frozen=True)
class ExportItem:
    """One question with what is exported of it: one instance, or a numeric template's draws."""

    question: Any
    instances: tuple[Instance, ...]


def export_items(
    questions: Sequence[Any],
    draws: int,
    seed: int,
    make_instance: Callable[[Any, int], Instance],
) -> list[ExportItem]:
    """Every question (in id order, so the file does not depend on bank order) with its draws."""
    from drill.kinds import kind_of

    items = []
    for question in sorted(questions, key=lambda q: q.id):
        count = draws if kind_of(question.kind).templated else 1
        instances = tuple(make_instance(question, seed + k) for k in range(count))
        items.append(ExportItem(question, instances))
    return items


def exporter(name: str) -> Any:
    """The module of format `name` (imported only when used: genanki loads only for Anki)."""
    if name not in FORMATS:
        raise ValueError(f"unknown export format {name!r}")
    return importlib.import_module(f"drill.exports.{name}")


class Untranslatable(Exception):
    """Something of a question the format has no form for."""


def unit_factor(symbol: str) -> float:
    """How many base units (bytes, seconds...) one `symbol` is; 1 for a plain count ("")."""
    from drill.quantities.units import parse_unit

    if not symbol:
        return 1.0
    spec = parse_unit(symbol)
    if spec is None:
        raise Untranslatable(symbol)
    return spec.mul / spec.div


def display_unit(instance: Instance) -> tuple[str, float]:
    """The unit a numeric instance's answer is asked in (its show_as, else the best fit,
    as the quiz shows it) and its factor to base units."""
    from drill.kinds.numeric import expected_value
    from drill.kinds.numeric_grade import show_symbol

    symbol = show_symbol(instance, expected_value(instance))
    return symbol, unit_factor(symbol)


def plain_number(value: float, sig: int | None = None) -> str:
    """A number as an import file takes it: whole numbers without a fraction, others as
    the shortest decimal that reads back as the same float, never with an exponent
    (3.0517578125e-05 is written 0.000030517578125); `sig` rounds to that many
    significant figures first (a margin needs no more)."""
    if sig is not None and value:
        value = float(f"{value:.{sig}g}")
    if float(value).is_integer() and abs(value) < 1e18:
        return str(int(value))
    return format(Decimal(repr(float(value))), "f")


def answer_number(value: float, margin: float) -> str:
    """An answer as an import file writes it: to 12 significant figures (so float noise,
    0.37499999999999994, is gone) and to the decimal place a hundredth of its margin
    needs, no finer (2.666666666666667 within ±0.0267 is 2.6667)."""
    value = float(f"{value:.12g}")
    if margin > 0 and math.isfinite(margin):
        value = round(value, max(0, math.ceil(math.log10(50 / margin))))
    return plain_number(value)


def margin(instance: Instance, value: float, factor: float) -> float:
    """The bank's tolerance around `value` (in a unit of `factor` base units) as a ± margin."""
    tolerance = instance.tolerance
    if tolerance.abs is not None:
        return tolerance.abs / factor
    return tolerance.relative_to(value) * abs(value)


# ----------------------------------------------------------------------------- numeric answers

PERCENT_SLIP = "percent-vs-fraction"
PERCENT_SLIP_FEEDBACK = (
    "That is the answer as a fraction; the question asks for a percentage, the fraction times 100."
)
_WHAT_FRACTION = re.compile(r"\b([Ww])hat fraction\b")


@dataclass(frozen=True)
class NumericAnswer:
    """One answer of a numeric draw as a quiz tool grades it: `value` as the student types
    it (in the display unit), its ± `margin`; a wrong one names its `mistake` and says
    why (`feedback`), the right one has neither."""

    value: float
    margin: float
    mistake: str = ""
    feedback: str = ""


def is_percent_slip(wrong: Any, expected: float) -> bool:
    """Whether a named wrong answer is a percentage given where a fraction is asked: the
    catalogue's percent-vs-fraction, or any value 100 times the answer."""
    return wrong.id == PERCENT_SLIP or (
        expected != 0 and math.isclose(wrong.value, 100 * expected, rel_tol=1e-9)
    )


def numeric_answers(instance: Instance) -> tuple[str, list[NumericAnswer]]:
    """The display unit of a numeric draw and its answers in it: the right one, then each
    named mistake. A fraction shown in % is asked as a percentage, so its
    percent-vs-fraction slip is the other way round there: the fraction typed as it is
    (0.9375 where 93.75 is asked), not the answer times 100 read as a percentage."""
    from drill.kinds.numeric import expected_value

    symbol, factor = display_unit(instance)
    expected = expected_value(instance)
    value = expected / factor
    answers = [NumericAnswer(value, margin(instance, value, factor))]
    for wrong in instance.misconceptions:
        if symbol == "%" and is_percent_slip(wrong, expected):
            slip = NumericAnswer(
                expected, margin(instance, expected, 1.0), wrong.name, PERCENT_SLIP_FEEDBACK
            )
        else:
            wrong_value = wrong.value / factor
            wrong_margin = margin(instance, wrong_value, factor)
            slip = NumericAnswer(wrong_value, wrong_margin, wrong.name, wrong.feedback.strip())
        answers.append(slip)
    return symbol, answers


def possible(answer: NumericAnswer, right: NumericAnswer) -> bool:
    """Whether a value can be an answer to the quantity asked: a finite number, and not
    below zero where the answer is not (no count, size, time or share is negative)."""
    return math.isfinite(answer.value) and (answer.value >= 0 or right.value < 0)


def asked_in(question_html: str, symbol: str) -> str:
    """A question's HTML with the sentence that asks for its display unit ("" for a plain
    count); a question shown in % asks for a percentage, its "what fraction" becoming
    "what percentage"."""
    if symbol == "%":
        question_html += html_text("Answer in percent (75 for three quarters).")
        return _WHAT_FRACTION.sub(r"\1hat percentage", question_html)
    return question_html + (html_text(f"Answer in {symbol}.") if symbol else "")
