"""The numeric grader: is a number (with its unit) the answer, and if not, which mistake?

The answer is read by `drill.units.parse_answer` into base units and compared with
the expected value under the instance's tolerance (drill.schema.Tolerance, by
default 1 % relative). In order, the verdict is
  correct        the value matches (a bare number is read in base units);
  unit           a bare number that matches in the unit the answer is shown in
                 ("0.5" for 0.5 GiB, "75" for 75 %): right, rated Hard; or a unit
                 of the wrong kind around the right number: wrong;
  misconception  the value matches one of the question's named wrong answers, then
                 one of the slips the grader knows by their ratio to the answer
                 (bits-vs-bytes, gb-vs-gib, off-by-1024, ms-vs-s, off-by-1000,
                 percent-vs-fraction, flops-2x);
  magnitude      the right digits with the wrong power of ten, or within a factor
                 of ten of the answer;
  wrong          anything else;
  unreadable     the text could not be read: the caller asks again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from drill.dimensions import DIMENSIONS
from drill.dimensions import words as dimension_words
from drill.errors import AnswerError, BankError
from drill.instance import Instance, MisconceptionValue
from drill.misconceptions import catalogue_entry
from drill.units import (
    Parsed,
    best_fit_unit,
    format_in,
    format_quantity,
    parse_answer,
    parse_unit,
)
from drill.verdict import Status, Verdict

# plain counts: "4 requests" answers "how many times as many" (a count), and "4x" a count
# of requests; tokens and requests are still told apart
_COUNTS = frozenset({"count", "tokens"}), frozenset({"count", "requests"})
# dimensions the ratio-based slips apply to
_BYTE_DIMS = frozenset({"bytes", "bytes_per_s"})
# dimensions whose base unit is a natural way to write the answer with no unit at all
_BARE_OK = frozenset(name for name, d in DIMENSIONS.items() if d.bare)
_FLOP_DIMS = frozenset({"flop", "flop_per_s", "flop_per_byte"})


def show_symbol(instance: Instance, expected: float) -> str:
    """The unit the expected value is shown in: show_as, else the best fit."""
    if instance.show_as and parse_unit(instance.show_as) is not None:
        return instance.show_as
    return best_fit_unit(expected, instance.unit or "count")


def _slips(dimension: str) -> list[tuple[str, tuple[float, ...]]]:
    """(catalogue id, ratios answer/expected) the grader recognises for a dimension."""
    slips: list[tuple[str, tuple[float, ...]]] = []
    if dimension in _BYTE_DIMS:
        slips.append(("bits-vs-bytes", (8.0, 1 / 8)))
        slips.append(("gb-vs-gib", tuple(r for k in range(1, 6) for r in (1.024**k, 1.024**-k))))
        slips.append(
            ("off-by-1024", tuple(r for k in range(1, 5) for r in (1024.0**k, 1024.0**-k)))
        )
    if dimension == "fraction":
        slips.append(("percent-vs-fraction", (100.0, 0.01)))
    thousands = tuple(r for k in range(1, 5) for r in (1000.0**k, 1000.0**-k))
    slips.append(("ms-vs-s" if dimension == "seconds" else "off-by-1000", thousands))
    if dimension in _FLOP_DIMS:
        slips.append(("flops-2x", (0.5, 2.0)))
    return slips


@dataclass(frozen=True)
class _Context:
    instance: Instance
    expected: float
    dimension: str
    symbol: str  # unit the answer is shown in
    rel: float

    def shown(self, value: float) -> str:
        return format_in(value, self.symbol)

    def given(self, value: float) -> str:
        """A user's value: in the answer's unit when comparable, else in its own best fit.

        "1,024 MiB; the answer is 512 MiB" compares at a glance; "1,048,576 KiB" does not.
        """
        if self.expected and 1e-3 <= abs(value / self.expected) <= 1e3:
            return self.shown(value)
        return format_quantity(value, self.dimension)


def _verdict(ctx: _Context, status: Status, correct: bool, value: float | None, **kw) -> Verdict:
    return Verdict(
        correct=correct,
        status=status,
        value=value,
        expected=ctx.expected,
        unit=ctx.instance.unit,
        **kw,
    )


def grade_numeric(instance: Instance, answer_text: str) -> Verdict:
    """The verdict on a numeric answer (rating left at Again; `drill.grade.grade` sets it)."""
    if instance.expected is None:
        raise BankError(f"{instance.question_id}: a numeric instance needs an expected value")
    expected = float(instance.expected)
    dimension = instance.unit or "count"
    ctx = _Context(
        instance,
        expected,
        dimension,
        show_symbol(instance, expected),
        instance.tolerance.relative_to(expected),
    )
    try:
        parsed = parse_answer(answer_text if isinstance(answer_text, str) else "")
    except AnswerError as exc:
        return _verdict(ctx, "unreadable", False, None, feedback=str(exc))
    parsed = _lenient_dimension(parsed, dimension, answer_text)

    if parsed.dimension is None:
        return _grade_bare(ctx, parsed)
    if parsed.dimension != dimension and {parsed.dimension, dimension} not in _COUNTS:
        return _grade_wrong_dimension(ctx, parsed)
    if instance.tolerance.accepts(parsed.value, expected):
        return _verdict(ctx, "correct", True, parsed.value, feedback="")
    return _diagnose(ctx, parsed, (parsed.value,))


def _lenient_dimension(parsed: Parsed, dimension: str, text: str) -> Parsed:
    """Read "312 TFLOPs" as a rate when a rate is asked: the spelling is ambiguous in use."""
    if dimension == "flop_per_s" and parsed.dimension == "flop" and "FLOPs" in text:
        return Parsed(
            parsed.value, "flop_per_s", (parsed.unit_symbol or "FLOP") + "/s",
            parsed.decimal_prefix, parsed.bits, parsed.number,
        )  # fmt: skip
    return parsed


def _grade_bare(ctx: _Context, parsed: Parsed) -> Verdict:
    """A number without a unit: read in base units first, then in the shown unit."""
    instance, expected = ctx.instance, ctx.expected
    if instance.tolerance.accepts(parsed.value, expected):
        return _verdict(ctx, "correct", True, parsed.value)
    spec = parse_unit(ctx.symbol) if ctx.symbol else None
    readings = [parsed.value]
    in_shown_unit = parsed.value * spec.mul / spec.div if spec is not None else math.inf
    # a reading that overflows ("1e303" read as GiB) cannot be the answer meant
    if spec is not None and spec.factor != 1 and math.isfinite(in_shown_unit):
        if instance.tolerance.accepts(in_shown_unit, expected):
            if spec.symbol == "%":
                note = (
                    f"Right, but a bare {parsed.number:g} is not a percentage: "
                    f"write {ctx.shown(expected)} or {format_quantity(expected, None)}."
                )
            else:
                note = f"Right number, but give the unit: {ctx.shown(expected)}."
            return _verdict(ctx, "unit", True, in_shown_unit, feedback=note)
        readings.insert(0, in_shown_unit)  # "512" more likely meant 512 GiB than 512 bytes
    return _diagnose(ctx, parsed, tuple(readings), bare=True)


def _grade_wrong_dimension(ctx: _Context, parsed: Parsed) -> Verdict:
    instance, expected = ctx.instance, ctx.expected
    spec = parse_unit(ctx.symbol) if ctx.symbol else None
    number_matches = parsed.number is not None and (
        instance.tolerance.accepts(parsed.number, expected)
        or (spec is not None and instance.tolerance.accepts(parsed.number * spec.factor, expected))
    )
    wanted = dimension_words(ctx.dimension)
    given = dimension_words(parsed.dimension)
    if number_matches or instance.tolerance.accepts(parsed.value, expected):
        feedback = (
            f"The number is right but {parsed.unit_symbol} is {given}; the answer is "
            f"{wanted}: {ctx.shown(expected)}."
        )
        return _verdict(ctx, "unit", False, parsed.value, feedback=feedback)
    feedback = f"The answer is {wanted} ({ctx.shown(expected)}), not {given}."
    return _verdict(ctx, "wrong", False, parsed.value, feedback=feedback)


def _diagnose(
    ctx: _Context, parsed: Parsed, readings: tuple[float, ...], *, bare: bool = False
) -> Verdict:
    """Name the mistake behind a wrong value; `readings` are its possible base values."""
    instance, expected = ctx.instance, ctx.expected
    answer = ctx.shown(expected)

    def tail(value: float | None) -> str:
        """' You gave ...; the answer is ...' for the reading that was diagnosed."""
        if not bare:
            return f" You gave {ctx.given(parsed.value if value is None else value)}; the answer is {answer}."
        number = format_quantity(parsed.value, None, digits=6)
        note = "" if ctx.dimension in _BARE_OK else " Give the unit too."
        if value is None or (value == parsed.value and ctx.dimension in _BARE_OK):
            return f" You gave {number}; the answer is {answer}.{note}"
        return f" Your {number} reads as {ctx.shown(value)}; the answer is {answer}.{note}"

    # the question's own named mistakes come first
    found = _question_mistake(instance, expected, readings)
    if found is not None:
        wrong, value = found
        info = catalogue_entry(wrong.id)
        text = (wrong.feedback or info.feedback).strip()
        return _verdict(
            ctx, "misconception", False, value,
            misconception=wrong.id, misconception_name=wrong.name or info.name,
            feedback=(text + tail(value)).strip(),
        )  # fmt: skip

    # a bit unit around the number of bytes asked for
    if parsed.bits and ctx.dimension in _BYTE_DIMS and _near(parsed.value * 8, expected, ctx.rel):
        return _slip(ctx, "bits-vs-bytes", parsed.value, tail(parsed.value))
    differ = _prefix_kinds_differ(ctx, parsed)
    known = _known_slip(ctx.dimension, expected, ctx.rel, readings, prefix_differs=differ)
    if known is not None:
        return _slip(ctx, known[0], known[1], tail(known[1]))
    if expected and expected > 0:
        for value in readings:
            verdict = _magnitude(ctx, value, tail(value))
            if verdict is not None:
                return verdict
    return _verdict(ctx, "wrong", False, readings[0], feedback=tail(None).strip())


def _question_mistake(
    instance: Instance, expected: float, readings: tuple[float, ...]
) -> tuple[MisconceptionValue, float] | None:
    """The first of the question's named wrong answers a reading matches, and that reading."""
    for wrong in instance.misconceptions:
        if instance.tolerance.accepts(wrong.value, expected):
            continue  # cannot tell it from the right answer on this draw
        for value in readings:
            if instance.tolerance.accepts(value, wrong.value):
                return wrong, value
    return None


def _known_slip(
    dimension: str,
    expected: float,
    rel: float,
    readings: tuple[float, ...],
    *,
    prefix_differs: bool,
) -> tuple[str, float] | None:
    """A slip the grader knows by its relation to the answer, and the reading that shows it."""
    # the used part for the wasted part (or the reverse)
    if dimension == "fraction" and 0 < expected < 1 and abs(expected - 0.5) > rel:
        for value in readings:
            if _near(value, 1 - expected, rel):
                return "complement-fraction", value
    # the same number with the other kind of prefix (0.5 GB for 0.5 GiB), and other ratios
    if expected and expected > 0:
        for slip_id, ratios in _slips(dimension):
            if slip_id == "gb-vs-gib" and not prefix_differs:
                continue
            for value in readings:
                if value > 0 and any(_near(value, expected * r, rel) for r in ratios):
                    return slip_id, value
    return None


def mistake_for_value(instance: Instance, value: float) -> str | None:
    """The misconception id the grader names for a wrong `value` (in base units) typed in
    a unit of the answer's dimension, with either kind of prefix and no bit unit; None
    where it names none, or takes the value as right."""
    expected = float(instance.expected) if instance.expected is not None else math.nan
    if instance.tolerance.accepts(value, expected):
        return None
    found = _question_mistake(instance, expected, (value,))
    if found is not None:
        return found[0].id
    rel = instance.tolerance.relative_to(expected)
    known = _known_slip(instance.unit or "count", expected, rel, (value,), prefix_differs=True)
    return known[0] if known is not None else None


def _prefix_kinds_differ(ctx: _Context, parsed: Parsed) -> bool:
    """Whether a GB-vs-GiB mix-up is possible: a bare number, or the other kind of prefix."""
    if parsed.dimension is None:
        return True
    if parsed.decimal_prefix is None:
        return False  # plain bytes are bytes
    shown = parse_unit(ctx.symbol) if ctx.symbol else None
    if shown is None or shown.decimal_prefix is None:
        return True
    return parsed.decimal_prefix != shown.decimal_prefix


def _near(value: float, target: float, rel: float) -> bool:
    return abs(value - target) <= rel * abs(target)


def _slip(ctx: _Context, slip_id: str, value: float, tail: str) -> Verdict:
    info = catalogue_entry(slip_id)
    return _verdict(
        ctx, "misconception", False, value,
        misconception=slip_id, misconception_name=info.name,
        feedback=(info.feedback + tail).strip(),
    )  # fmt: skip


def _magnitude(ctx: _Context, value: float, tail: str) -> Verdict | None:
    if not (value > 0 and math.isfinite(value) and math.isfinite(ctx.expected)):
        return None
    ratio = value / ctx.expected  # may overflow to inf or underflow to 0: compared only
    # the power of ten from logs, which stay finite where the ratio does not (1e-320 / 5e8)
    power = round(math.log10(value) - math.log10(ctx.expected))
    if power != 0 and abs(power) <= 18 and _near(value, ctx.expected * 10.0**power, ctx.rel):
        direction = "large" if power > 0 else "small"
        feedback = f"Right digits, wrong power of ten (10^{abs(power)} too {direction})."
        return _verdict(ctx, "magnitude", False, value, feedback=feedback + tail)
    if 0.1 < ratio < 10:
        how = (
            f"{(ratio - 1) * 100:.0f}% too high"
            if ratio > 1
            else f"{(1 - ratio) * 100:.0f}% too low"
        )
        feedback = f"The right order of magnitude, but {how}."
        return _verdict(ctx, "magnitude", False, value, feedback=feedback + tail)
    return None
