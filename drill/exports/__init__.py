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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from drill.kinds.instance import Instance

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
    """A number as an import file takes it: whole numbers without a fraction or exponent,
    others as Python's shortest repr; `sig` rounds to that many significant figures
    first (a margin needs no more)."""
    if sig is not None and value:
        value = float(f"{value:.{sig}g}")
    if float(value).is_integer() and abs(value) < 1e18:
        return str(int(value))
    return repr(float(value))


def margin(instance: Instance, value: float, factor: float) -> float:
    """The bank's tolerance around `value` (in a unit of `factor` base units) as a ± margin."""
    tolerance = instance.tolerance
    if tolerance.abs is not None:
        return tolerance.abs / factor
    return tolerance.relative_to(value) * abs(value)
