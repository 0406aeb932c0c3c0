"""The numeric grader: is a number (with its unit) the answer, and if not, which mistake?

The answer is read by `drill.quantities.units.parse_answer` into base units and compared with
the expected value under the instance's tolerance (drill.bank.schema.Tolerance, by
default 1 % relative). In order, the verdict is
  correct        the value matches;
  unit           a bare number right in a unit the question uses (below): right,
                 rated Hard, "give the unit"; or a unit of the wrong kind around
                 the right number: wrong;
  misconception  the value matches one of the question's named wrong answers, then
                 one of the slips the grader knows by their ratio to the answer
                 (bits-vs-bytes, gb-vs-gib, off-by-1024, ms-vs-s, off-by-1000,
                 percent-vs-fraction, flops-2x);
  magnitude      the right digits with the wrong power of ten, or within a factor
                 of ten of the answer;
  wrong          anything else;
  unreadable     the text could not be read: the caller asks again.

A bare number (no unit) is read in the units the question uses, and no other:
  - a count, a number of tokens or requests, or FLOP per byte: as that number;
  - a fraction: as a fraction (0.75), or as a percentage (75) when the question
    asks for a percentage ("what percentage", "in percent"); the other reading is
    the percent-vs-fraction slip (75 for 0.75, 0.75 for 75 %);
  - anything else (bytes, a time, a rate, FLOPs): first in the question's display
    unit (its show_as, else the unit the answer is best shown in), then in each
    unit the question's text states (its "4,096 ms", "3.35 TB/s"), then in the
    base unit (bytes, seconds). Right in the base unit is right: a byte count or
    seconds need no unit. Right in the display unit or a stated unit is right,
    rated Hard, with "Right number, but give the unit: 0.5 GiB": the number is
    what the question worked in, only the unit is missing. Right in no unit the
    question uses is wrong, and says which unit the question wants ("Give the
    unit: the answer is in MiB"), and the unit it would be right in, if any ("it
    would be in GiB"): the question never showed that unit, so the number is not
    credited, nor is a unit slip (GB vs GiB, off by 1024 or 1000, ms vs s, bits
    vs bytes) named for a reading in a unit the number was not given; read in
    the base unit it means what it says, and a slip there is named (576,460,752
    bytes for 0.5 GiB is GB read as GiB). A power of ten that a unit prefix
    explains (10^3) is not called "right digits" for a bare number either.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass

from drill.bank.misconceptions import catalogue_entry
from drill.errors import AnswerError, BankError
from drill.kinds.counted import counted_noun, other_thing
from drill.kinds.instance import Instance, MisconceptionValue
from drill.kinds.verdict import Status, Verdict
from drill.quantities.dimensions import DIMENSIONS
from drill.quantities.dimensions import words as dimension_words
from drill.quantities.units import (
    Parsed,
    UnitSpec,
    best_fit_unit,
    count_unit,
    format_in,
    format_quantity,
    parse_answer,
    parse_unit,
)

# plain counts: "4 requests" answers "how many times as many" (a count), and "4x" a count
# of requests; tokens and requests are still told apart
_COUNTS = frozenset({"count", "tokens"}), frozenset({"count", "requests"})
# a rate and the count or size it is a rate of: 43 TFLOP/s for 43 TFLOP is the wrong kind
_RATE_AND_COUNT = tuple(
    frozenset(pair)
    for pair in (
        ("flop", "flop_per_s"),
        ("bytes", "bytes_per_s"),
        ("tokens", "tokens_per_s"),
        ("requests", "requests_per_s"),
        ("count", "tokens_per_s"),
        ("count", "requests_per_s"),
    )
)
_RATE_DIMS = frozenset({"flop_per_s", "bytes_per_s", "tokens_per_s", "requests_per_s"})
# dimensions the ratio-based slips apply to
_BYTE_DIMS = frozenset({"bytes", "bytes_per_s"})
# dimensions whose base unit is a natural way to write the answer with no unit at all
_BARE_OK = frozenset(name for name, d in DIMENSIONS.items() if d.bare)
_FLOP_DIMS = frozenset({"flop", "flop_per_s", "flop_per_byte"})
# slips of the unit alone, which a number written without one cannot show
_UNIT_SLIPS = frozenset({"bits-vs-bytes", "gb-vs-gib", "off-by-1024", "off-by-1000", "ms-vs-s"})
# a quantity stated in a question's text, "4,096 ms", "3.35 TB/s", "80 GB"; in 10^9 the 9
# is no quantity, and a lone B ("a 7B model") is a billion, not a byte
_STATED = re.compile(r"(?<![\w.^])\d[\d,]*(?:\.\d+)?\s?([A-Za-zµμ]+(?:/[A-Za-z]+)?)")
_ASKS_PERCENT = re.compile(r"\bpercent(?:age)?\b|\bin %|\bas a %", re.IGNORECASE)


def show_symbol(instance: Instance, expected: float) -> str:
    """The unit the expected value is shown in: show_as, else the best fit."""
    return _show_symbol(instance.show_as, instance.unit, expected)


def _show_symbol(show_as: str | None, unit: str | None, expected: float) -> str:
    if show_as and parse_unit(show_as) is not None:
        return show_as
    return best_fit_unit(expected, unit or "count")


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
    """The verdict on a numeric answer (rating left at Again; `drill.kinds.grade.grade` sets it)."""
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
    asked = counted_noun(instance)
    try:
        parsed = parse_answer(
            answer_text if isinstance(answer_text, str) else "", nouns=(asked,) if asked else ()
        )
    except AnswerError as exc:
        return _verdict(ctx, "unreadable", False, None, feedback=str(exc))
    parsed = _lenient_dimension(parsed, dimension, answer_text)

    if parsed.dimension is None:
        return _grade_bare(ctx, parsed)
    if asked in ("bit", "byte") and dimension == "count" and parsed.dimension == "bytes":
        return _grade_size_count(ctx, parsed, asked)
    if parsed.dimension != dimension and {parsed.dimension, dimension} not in _COUNTS:
        return _grade_wrong_dimension(ctx, parsed)
    if instance.tolerance.accepts(parsed.value, expected):
        if other_thing(instance, asked, parsed.noun, parsed.dimension):
            if asked is None:  # money where none is asked
                feedback = f"You answered in {parsed.unit_symbol}; the answer is no amount of money."
            else:
                feedback = (
                    f"You answered in {parsed.unit_symbol}; the question counts "
                    f"{plural_of(asked)}: {_count_of(expected, asked)}."
                )
            return _verdict(ctx, "unit", False, parsed.value, feedback=feedback)
        return _verdict(ctx, "correct", True, parsed.value, feedback="")
    return _diagnose(ctx, parsed, (parsed.value,))


def plural_of(noun: str) -> str:
    """How a message names many of `noun`: "blocks", "GPUs"."""
    return count_unit(noun).symbol


def _count_of(value: float, noun: str) -> str:
    """A count with what it counts: "16,021 blocks", "1 GPU"."""
    number = format_quantity(value, None)
    return f"{number} {noun if number == '1' else plural_of(noun)}"


def _grade_size_count(ctx: _Context, parsed: Parsed, asked: str) -> Verdict:
    """A size ("5 bits", "0.625 bytes") for a question that counts bits or bytes as a plain
    number: right in the unit counted is right; right in the other is right with a unit
    slip ("the question counts bits"); eight times or an eighth of the answer (5 bytes for 5
    bits) is the bits-vs-bytes slip; anything else is diagnosed as a count."""
    value = parsed.value * 8 if asked == "bit" else parsed.value  # parsed.value is in bytes
    in_asked_unit = parsed.bits == (asked == "bit")
    expected = ctx.expected
    if ctx.instance.tolerance.accepts(value, expected):
        if in_asked_unit:
            return _verdict(ctx, "correct", True, value)
        note = f"Right, but the question counts {asked}s: {_count_of(expected, asked)}."
        return _verdict(ctx, "unit", True, value, feedback=note)
    # the number of the unit counted, diagnosed as a plain count
    as_count = Parsed(value, typed_precision=parsed.typed_precision)
    found = _question_mistake(ctx.instance, expected, (value,), precision=parsed.typed_precision)
    # eight times or an eighth of the answer: "5 B" or "40 bits" for 5 bits
    if found is None and any(_near(value, expected * r, ctx.rel) for r in (8.0, 1 / 8)):
        typed = format_quantity(parsed.number or 0.0, None, digits=6)
        tail = (
            f" You gave {typed} {parsed.unit_symbol}; the answer is {_count_of(expected, asked)}."
        )
        return _slip(ctx, "bits-vs-bytes", value, tail)
    return _diagnose(ctx, as_count, (value,))


def _lenient_dimension(parsed: Parsed, dimension: str, text: str) -> Parsed:
    """Read "312 TFLOPs" as a rate when a rate is asked: the spelling is ambiguous in use."""
    if dimension == "flop_per_s" and parsed.dimension == "flop" and "FLOPs" in text:
        return Parsed(
            parsed.value, "flop_per_s", (parsed.unit_symbol or "FLOP") + "/s",
            parsed.decimal_prefix, parsed.bits, parsed.number, parsed.typed_precision,
        )  # fmt: skip
    return parsed


def stated_units(text: str, dimension: str) -> tuple[UnitSpec, ...]:
    """The units of `dimension` that `text` states quantities in, in order, each once."""
    found: dict[tuple[int, int], UnitSpec] = {}
    for symbol in _STATED.findall(text):
        spec = parse_unit(symbol) if symbol not in ("B", "b") else None
        if spec is not None and spec.dimension == dimension:
            found.setdefault((spec.mul, spec.div), spec)
    return tuple(found.values())


def bare_readings(instance: Instance, expected: float) -> tuple[UnitSpec | None, ...]:
    """The units a bare number is read in for `instance`, in order (module docstring):
    None is the base unit, where a bare number is complete; the others are units the
    question uses, where it lacks its unit."""
    return _bare_readings(instance.text, instance.unit, instance.show_as, expected)


# worked out once per draw (its text, units and answer), not once per answer
@functools.lru_cache(maxsize=4096)
def _bare_readings(
    text: str, unit: str | None, show_as: str | None, expected: float
) -> tuple[UnitSpec | None, ...]:
    dimension = unit or "count"
    if dimension == "fraction":
        asks_percent = _ASKS_PERCENT.search(text) is not None
        return (parse_unit("%"),) if asks_percent else (None,)
    if dimension in _BARE_OK:
        return (None,)
    readings: dict[tuple[int, int], UnitSpec] = {}
    shown = parse_unit(_show_symbol(show_as, unit, expected))
    for spec in (shown, *stated_units(text, dimension)):
        if spec is not None and spec.dimension == dimension and spec.factor != 1:
            readings.setdefault((spec.mul, spec.div), spec)
    return (*readings.values(), None)


def _grade_bare(ctx: _Context, parsed: Parsed) -> Verdict:
    """A number without a unit, read in the units the question uses (module docstring)."""
    instance, expected = ctx.instance, ctx.expected
    units = bare_readings(instance, expected)
    readings = []
    for spec in units:
        value = parsed.value * (spec.factor if spec else 1.0)
        # a reading that overflows ("1e303" read as GiB) cannot be the answer meant
        if not math.isfinite(value):
            continue
        if instance.tolerance.accepts(value, expected):
            if spec is None or ctx.dimension in _BARE_OK:
                return _verdict(ctx, "correct", True, value)
            note = f"Right number, but give the unit: {format_in(expected, spec.symbol)}."
            return _verdict(ctx, "unit", True, value, feedback=note)
        readings.append(value)
    return _diagnose(ctx, parsed, tuple(readings) or (parsed.value,), bare=True)


def _give_the_unit(ctx: _Context, parsed: Parsed) -> str:
    """What a bare number right in no unit the question uses is told: the unit it wants,
    the units it was read in, and the one it would be right in, if any."""
    names = [
        spec.symbol if spec else _base_symbol(ctx.dimension)
        for spec in bare_readings(ctx.instance, ctx.expected)
    ]
    tried = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
    whole = parsed.value.is_integer() and abs(parsed.value) < 1e15
    number = f"{int(parsed.value):,}" if whole else format_quantity(parsed.value, None, digits=6)
    elsewhere = _right_in(ctx, parsed)
    would = f" (it would be in {elsewhere})" if elsewhere else ""
    return (
        f"Give the unit: the answer is in {ctx.symbol}. A bare {number} is not the answer "
        f"in {tried}{would}."
    )


# units a bare number may have been meant in, beyond a dimension's display ladder
_OTHER_UNITS = {
    "bytes": ("kB", "MB", "GB", "TB", "PB", "bits", "Kib", "Mib", "Gib", "Tib", "Kb", "Mb", "Gb"),
    "bytes_per_s": ("KiB/s", "MiB/s", "GiB/s", "TiB/s", "Gb/s", "Tb/s"),
}


def _right_in(ctx: _Context, parsed: Parsed) -> str | None:
    """The unit of the answer's dimension a bare number would be right in, if any."""
    dimension = DIMENSIONS[ctx.dimension]
    for symbol in (*dimension.ladder, *_OTHER_UNITS.get(ctx.dimension, ())):
        spec = parse_unit(symbol)
        # a product that overflows to inf is accepted by no tolerance
        if spec is not None and ctx.instance.tolerance.accepts(
            parsed.value * spec.factor, ctx.expected
        ):
            return symbol
    return None


def _base_symbol(dimension: str) -> str:
    """How the base unit of `dimension` is written: bytes, s, B/s, FLOP, FLOP/s."""
    for symbol in DIMENSIONS[dimension].ladder:
        spec = parse_unit(symbol)
        if spec is not None and spec.factor == 1:
            return "bytes" if dimension == "bytes" else symbol
    return dimension


def _grade_wrong_dimension(ctx: _Context, parsed: Parsed) -> Verdict:
    instance, expected = ctx.instance, ctx.expected
    spec = parse_unit(ctx.symbol)
    number_matches = parsed.number is not None and (
        instance.tolerance.accepts(parsed.number, expected)
        or (spec is not None and instance.tolerance.accepts(parsed.number * spec.factor, expected))
    )
    wanted = dimension_words(ctx.dimension)
    given = dimension_words(parsed.dimension)
    right = number_matches or instance.tolerance.accepts(parsed.value, expected)
    if right and {parsed.dimension, ctx.dimension} in _RATE_AND_COUNT:
        kind = "a rate, per second" if parsed.dimension in _RATE_DIMS else "not a rate"
        feedback = (
            f"{parsed.unit_symbol} is {kind}; the question asks for {wanted}: "
            f"{ctx.shown(expected)}."
        )
        info = catalogue_entry("rate-vs-count")
        return _verdict(
            ctx, "unit", False, parsed.value,
            misconception="rate-vs-count", misconception_name=info.name, feedback=feedback,
        )  # fmt: skip
    if right:
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
            # a number with its unit has one reading: its value
            return f" You gave {ctx.given(parsed.value)}; the answer is {answer}."
        number = format_quantity(parsed.value, None, digits=6)
        note = "" if ctx.dimension in _BARE_OK else " Give the unit too."
        if value is None or (value == parsed.value and ctx.dimension in _BARE_OK):
            return f" You gave {number}; the answer is {answer}.{note}"
        return f" Your {number} reads as {ctx.shown(value)}; the answer is {answer}.{note}"

    # a bare number right in some unit of the answer's kind lacks only its unit
    unit_missing = bare and ctx.dimension not in _BARE_OK
    if unit_missing and _right_in(ctx, parsed) is not None:
        return _verdict(ctx, "wrong", False, readings[0], feedback=_give_the_unit(ctx, parsed))
    # a slip of the unit alone shows only where the number means what it says: typed with
    # its unit, or bare and read in the base unit; not read in a unit it was not given
    groups = [(readings, True)]
    if unit_missing:
        guessed = tuple(value for value in readings if value != parsed.value)
        groups = [(guessed, False), ((parsed.value,), True)]

    # the question's own named mistakes come first
    for values, unit_slips in groups:
        found = _question_mistake(
            instance, expected, values, unit_slips=unit_slips, precision=parsed.typed_precision
        )
        if found is not None:
            wrong, value = found
            info = catalogue_entry(wrong.id)
            text = (wrong.feedback or info.feedback).strip()
            return _verdict(
                ctx, "misconception", False, value,
                misconception=wrong.id, misconception_name=wrong.name or info.name,
                feedback=(text + tail(value)).strip(),
            )  # fmt: skip

    # a bit unit around the number of bytes asked for is an eighth of the answer: the
    # bits-vs-bytes slip, named by _known_slip below
    differ = _prefix_kinds_differ(ctx, parsed)
    # the number right with the other kind of prefix: 536.9 MiB for 512 MiB (536.9 MB)
    other = None if differ else _right_with_other_prefix(ctx, parsed)
    if other is not None:
        number = format_quantity(parsed.number or 0.0, None, digits=6)
        return _slip(
            ctx, "gb-vs-gib", parsed.value,
            f" You wrote {number} {parsed.unit_symbol}; {number} {other[1]} would be right"
            f" (the answer is {answer}).",
        )  # fmt: skip
    for values, unit_slips in groups:
        known = _known_slip(
            ctx.dimension, expected, ctx.rel, values, prefix_differs=differ, unit_slips=unit_slips
        )
        if known is not None:
            return _slip(ctx, known[0], known[1], tail(known[1]))
    if expected and expected > 0:
        for value in readings:
            verdict = _magnitude(ctx, value, tail(value), unit_steps=unit_missing)
            if verdict is not None:
                return verdict
    if unit_missing:
        return _verdict(ctx, "wrong", False, readings[0], feedback=_give_the_unit(ctx, parsed))
    return _verdict(ctx, "wrong", False, readings[0], feedback=tail(None).strip())


# the coarsest typing that may name a mistake by its rounding: three significant digits
MAX_TYPED_PRECISION = 0.005


def _question_mistake(
    instance: Instance,
    expected: float,
    readings: tuple[float, ...],
    *,
    unit_slips: bool = True,
    precision: float = 0.0,
) -> tuple[MisconceptionValue, float] | None:
    """The question's named wrong answer a reading matches, and that reading; without
    `unit_slips`, none that is a slip of the unit alone (for a bare number).

    A reading matches a wrong answer within the question's tolerance or, failing any,
    within the `precision` it was typed at (relative, as Parsed.typed_precision; three
    significant digits or more): "172 ms" is the mistake worth 172.4 ms under a tolerance
    of 0.2 %, unless the right answer too rounds to what was typed. Of several matches
    the nearest is named (the first listed of equally near ones), except that one a tie
    of the template (`ties`) names over another matching one is named."""
    candidates = [
        wrong
        for wrong in instance.misconceptions
        # one that cannot be told from the right answer on this draw is never named
        if not instance.tolerance.accepts(wrong.value, expected)
        and (unit_slips or wrong.id not in _UNIT_SLIPS)
    ]

    def nearest(within) -> tuple[MisconceptionValue, float] | None:
        matches = [
            (abs(value - wrong.value), order, wrong, value)
            for order, (value, wrong) in enumerate(
                (value, wrong) for value in readings for wrong in candidates
            )
            if within(value, wrong.value)
        ]
        # a tie of the template names one of two matching mistakes over the other
        matched = {wrong.id for _, _, wrong, _ in matches}
        beaten = {loser for _, _, wrong, _ in matches for loser in wrong.beats} & matched
        kept = [m for m in matches if m[2].id not in beaten] or matches
        if not kept:
            return None
        _, _, wrong, value = min(kept, key=lambda m: (m[0], m[1]))
        return wrong, value

    found = nearest(lambda value, wrong: instance.tolerance.accepts(value, wrong))
    if found is not None or not 0 < precision <= MAX_TYPED_PRECISION:
        return found
    return nearest(
        lambda value, wrong: (
            abs(value - wrong) <= precision * abs(value)
            # as typed, it may be the right answer rounded: then it names no mistake
            and abs(value - expected) > precision * abs(value)
        )
    )


def _known_slip(
    dimension: str,
    expected: float,
    rel: float,
    readings: tuple[float, ...],
    *,
    prefix_differs: bool,
    unit_slips: bool = True,
) -> tuple[str, float] | None:
    """A slip the grader knows by its relation to the answer, and the reading that shows it;
    without `unit_slips`, none that is a slip of the unit alone (for a bare number)."""
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
            if not unit_slips and slip_id in _UNIT_SLIPS:
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
    shown = parse_unit(ctx.symbol)
    if shown is None or shown.decimal_prefix is None:
        return True
    return parsed.decimal_prefix != shown.decimal_prefix


_PREFIX_STEPS = "kmgtpe"  # k is one step of 1000 or 1024, m two, ...


def _other_prefix_reading(parsed: Parsed) -> tuple[float, str, int] | None:
    """The number as typed, read with the other kind of prefix of the same step (536.9 MiB
    read as 536.9 MB): its value in base units, that unit, and the prefix's step (2 for
    M); None for a unit without a prefix, in bits, or not of bytes (TFLOP/s)."""
    spec = parse_unit(parsed.unit_symbol) if parsed.unit_symbol else None
    if spec is None or spec.decimal_prefix is None or parsed.number is None or parsed.bits:
        return None
    size, slash, per = spec.symbol.partition("/")  # "MiB", "/", "ms"
    letter = size[:1].lower()
    if letter not in _PREFIX_STEPS or not size.endswith("B"):
        return None
    # parse_unit writes the letter's case for each kind (kB, KiB)
    other = parse_unit(letter + ("B" if spec.decimal_prefix is False else "iB") + slash + per)
    if other is None:
        return None
    return parsed.number * other.factor, other.symbol, _PREFIX_STEPS.index(letter) + 1


def _right_with_other_prefix(ctx: _Context, parsed: Parsed) -> tuple[float, str, int] | None:
    """The other-prefix reading of a typed number of bytes (or bytes per second) when it
    is the answer: as typed (its last digit's rounding, three significant digits or
    finer), else within the question's tolerance; and only where the tolerance tells the
    two prefixes apart at all."""
    other = _other_prefix_reading(parsed)
    if other is None:
        return None
    value, _unit, step = other
    tolerance, expected = ctx.instance.tolerance, ctx.expected
    ratio = 1.024**step
    if tolerance.accepts(expected * ratio, expected) or tolerance.accepts(
        expected / ratio, expected
    ):
        return None  # the slip would be graded right: nothing to name
    precision = parsed.typed_precision
    if 0 < precision <= MAX_TYPED_PRECISION:
        right = abs(value - expected) <= precision * abs(value)
    else:
        right = tolerance.accepts(value, expected)
    return other if right else None


def _near(value: float, target: float, rel: float) -> bool:
    # a target that overflowed (the answer times 1024^4 near 1e308) is near nothing
    return math.isfinite(target) and abs(value - target) <= rel * abs(target)


def _slip(ctx: _Context, slip_id: str, value: float, tail: str) -> Verdict:
    info = catalogue_entry(slip_id)
    return _verdict(
        ctx, "misconception", False, value,
        misconception=slip_id, misconception_name=info.name,
        feedback=(info.feedback + tail).strip(),
    )  # fmt: skip


def _magnitude(ctx: _Context, value: float, tail: str, *, unit_steps: bool) -> Verdict | None:
    """Right digits with the wrong power of ten, or within ten times the answer; with
    `unit_steps`, a power of ten a unit prefix explains (10^3, 10^6) is left unnamed."""
    if not (value > 0 and math.isfinite(value) and math.isfinite(ctx.expected)):
        return None
    ratio = value / ctx.expected  # may overflow to inf or underflow to 0: compared only
    # the power of ten from logs, which stay finite where the ratio does not (1e-320 / 5e8)
    power = round(math.log10(value) - math.log10(ctx.expected))
    prefix_step = unit_steps and power % 3 == 0
    if (
        power != 0
        and abs(power) <= 18
        and not prefix_step
        and _near(value, ctx.expected * 10.0**power, ctx.rel)
    ):
        direction = "large" if power > 0 else "small"
        feedback = f"Right digits, wrong power of ten (10^{abs(power)} too {direction})."
        return _verdict(ctx, "magnitude", False, value, feedback=feedback + tail)
    if 0.1 < ratio < 10:
        off = abs(ratio - 1) * 100
        # under 1 % off (an abs or sig tolerance): the size to one digit, and how close is close
        size = f"{off:.0f}" if off >= 1 else f"{off:.1g}"
        feedback = (
            f"The right order of magnitude, but {size}% too {'high' if ratio > 1 else 'low'}."
        )
        if off < 1:
            tolerance = ctx.instance.tolerance
            feedback += (
                f" Accepted within ±{ctx.shown(tolerance.abs)}."  # in the answer's unit
                if tolerance.abs is not None
                else " " + tolerance.describe(ctx.dimension)
            )
        return _verdict(ctx, "magnitude", False, value, feedback=feedback + tail)
    return None
