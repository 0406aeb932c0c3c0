"""Instance + answer -> Verdict: is it right, and if not, which mistake was it?

`grade(instance, text)` dispatches on the instance's kind:

numeric   The answer is read by `drill.units.parse_answer` into base units and
          compared with the expected value under the instance's tolerance
          (drill.schema.Tolerance, by default 1 % relative). In order, the verdict is
            correct        the value matches (a bare number is read in base units);
            unit           a bare number that matches in the unit the answer is shown
                           in ("0.5" for 0.5 GiB, "75" for 75 %): right, rated Hard;
                           or a unit of the wrong kind around the right number: wrong;
            misconception  the value matches one of the question's named wrong answers,
                           then one of the slips the grader knows by their ratio to the
                           answer (bits-vs-bytes, gb-vs-gib, off-by-1024, ms-vs-s,
                           off-by-1000, percent-vs-fraction, flops-2x);
            magnitude      the right digits with the wrong power of ten, or within a
                           factor of ten of the answer;
            wrong          anything else;
            unreadable     the text could not be read: the caller asks again.
choice    Option numbers (1-based, as displayed) or letters: "2", "b", "a, c".
order     Display numbers or letters in order: "3 1 4 2", "3,1,4,2", "c a d b".
concept   Self-rated: `covered` says which key points' cues appear in the text.

Suggested ratings (FSRS): 1 Again when wrong, 2 Hard when right only after a unit
slip or a hint, 3 Good when right, 4 Easy when right within `fast_ms`.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

from drill.dimensions import DIMENSIONS
from drill.dimensions import words as dimension_words
from drill.errors import AnswerError, BankError
from drill.instance import Instance
from drill.misconceptions import catalogue_entry
from drill.units import (
    ANSWER_EXAMPLES,
    Parsed,
    best_fit_unit,
    format_in,
    format_quantity,
    parse_answer,
    parse_unit,
)

Status = Literal["correct", "unit", "magnitude", "misconception", "unreadable", "wrong", "self"]

AGAIN, HARD, GOOD, EASY = 1, 2, 3, 4
# answers faster than this (per kind) suggest Easy
FAST_MS = {"numeric": 15_000, "choice": 8_000, "order": 12_000}


@dataclass(frozen=True)
class Verdict:
    correct: bool | None  # None for a self-rated concept answer
    status: Status
    value: float | None = None  # the answer read, in base units of `unit`
    expected: float | None = None  # the expected value, in base units of `unit`
    unit: str | None = None  # the question's dimension (a drill.schema.Unit)
    misconception: str | None = None  # a catalogue id
    misconception_name: str | None = None
    feedback: str = ""  # one or a few lines for the user
    rating: int = AGAIN  # suggested FSRS rating, 1-4
    covered: tuple[bool, ...] = ()  # concept: one flag per key point

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["covered"] = list(self.covered)
        return data


# --------------------------------------------------------------------------- dispatch


def grade(
    instance: Instance,
    answer_text: str,
    *,
    duration_ms: int | None = None,
    hinted: bool = False,
    fast_ms: int | None = None,
) -> Verdict:
    """The verdict on `answer_text` for `instance`; never raises for any text."""
    fast = FAST_MS.get(instance.kind, 15_000) if fast_ms is None else fast_ms
    quick = duration_ms is not None and duration_ms < fast
    if instance.kind == "numeric":
        verdict = grade_numeric(instance, answer_text)
    elif instance.kind == "choice":
        verdict = grade_choice(instance, answer_text)
    elif instance.kind == "order":
        verdict = grade_order(instance, answer_text)
    elif instance.kind == "concept":
        verdict = grade_concept(instance, answer_text)
    else:
        raise BankError(f"{instance.question_id}: cannot grade kind {instance.kind!r}")
    return _with_rating(verdict, quick=quick, hinted=hinted)


def _with_rating(verdict: Verdict, *, quick: bool, hinted: bool) -> Verdict:
    if verdict.status == "self":
        rating = min(verdict.rating, HARD) if hinted else verdict.rating
    elif not verdict.correct:
        rating = AGAIN
    elif verdict.status == "unit" or hinted:
        rating = HARD
    else:
        rating = EASY if quick else GOOD
    return replace(verdict, rating=rating)


# --------------------------------------------------------------------------- numeric

# plain counts: "4 requests" answers "how many times as many" (a count), and "4x" a count
# of requests; tokens and requests are still told apart
_COUNTS = frozenset({"count", "tokens"}), frozenset({"count", "requests"})
# dimensions the ratio-based slips apply to
_BYTE_DIMS = frozenset({"bytes", "bytes_per_s"})
# dimensions whose base unit is a natural way to write the answer with no unit at all
_BARE_OK = frozenset(name for name, d in DIMENSIONS.items() if d.bare)
_FLOP_DIMS = frozenset({"flop", "flop_per_s", "flop_per_byte"})


def _show_symbol(instance: Instance, expected: float) -> str:
    """The unit the expected value is shown in: show_as, else the best fit."""
    if instance.show_as and parse_unit(instance.show_as) is not None:
        return instance.show_as
    return best_fit_unit(expected, instance.unit or "count")


def format_expected(instance: Instance) -> str:
    """The expected value as every screen shows it: in show_as (or the best fit), and for
    a byte count the exact number too, e.g. "512 MiB (536,870,912 bytes)"."""
    expected = instance.expected
    shown = format_in(expected, _show_symbol(instance, expected))
    if instance.unit == "bytes" and float(expected).is_integer():
        exact = f"{int(expected):,}"
        if exact not in shown:
            return f"{shown} ({exact} bytes)"
    return shown


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
    """The verdict on a numeric answer (rating left at Again; `grade` sets it)."""
    if instance.expected is None:
        raise BankError(f"{instance.question_id}: a numeric instance needs an expected value")
    expected = float(instance.expected)
    dimension = instance.unit or "count"
    ctx = _Context(
        instance,
        expected,
        dimension,
        _show_symbol(instance, expected),
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
    for wrong in instance.misconceptions:
        if instance.tolerance.accepts(wrong.value, expected):
            continue  # cannot tell it from the right answer on this draw
        for value in readings:
            if instance.tolerance.accepts(value, wrong.value):
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
    # the used part for the wasted part (or the reverse)
    if ctx.dimension == "fraction" and 0 < expected < 1 and abs(expected - 0.5) > ctx.rel:
        for value in readings:
            if _near(value, 1 - expected, ctx.rel):
                return _slip(ctx, "complement-fraction", value, tail(value))
    # the same number with the other kind of prefix (0.5 GB for 0.5 GiB)
    if expected and expected > 0:
        for slip_id, ratios in _slips(ctx.dimension):
            if slip_id == "gb-vs-gib" and not _prefix_kinds_differ(ctx, parsed):
                continue
            for value in readings:
                if value > 0 and any(_near(value, expected * r, ctx.rel) for r in ratios):
                    return _slip(ctx, slip_id, value, tail(value))
        for value in readings:
            verdict = _magnitude(ctx, value, tail(value))
            if verdict is not None:
                return verdict
    return _verdict(ctx, "wrong", False, readings[0], feedback=tail(None).strip())


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


# --------------------------------------------------------------------------- choice

_TOKEN_SPLIT = re.compile(r"(?:\s*(?:,|;|\band\b|&|\+|->|→|>|-)\s*|\s+)", re.IGNORECASE)


def _option_index(token: str, count: int) -> int | None:
    """'2' or 'b' or '(b)' -> 1 (0-based); None if it names no option."""
    token = token.strip("().:[]").lower()
    if token.isdigit() and token.isascii():
        index = int(token) - 1
    elif len(token) == 1 and "a" <= token <= "z":
        index = ord(token) - ord("a")
    else:
        return None
    return index if 0 <= index < count else None


def _read_indexes(text: str, count: int, what: str, *, compact: bool = False) -> list[int] | str:
    """Display indexes (0-based) in the order given, or the reason they can't be read."""
    text = text.strip() if isinstance(text, str) else ""
    if not text:
        return f"give the {what}"
    if len(text) > 500:
        return "that answer is too long"
    tokens = [t for t in _TOKEN_SPLIT.split(text) if t]
    if not tokens:
        return f"give the {what}"
    if compact and len(tokens) == 1 and len(tokens[0]) == count > 1 and tokens[0].isalnum():
        tokens = list(tokens[0])  # "3142" or "cadb"
    indexes = []
    for token in tokens:
        index = _option_index(token, count)
        if index is None:
            last = chr(ord("a") + count - 1)
            return f"{token!r} is not one of 1-{count} (or a-{last})"
        indexes.append(index)
    return indexes


def _list(indexes: Iterable[int]) -> str:
    shown = [str(i + 1) for i in indexes]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def grade_choice(instance: Instance, answer_text: str) -> Verdict:
    count = len(instance.options)
    chosen = _choice_by_text(instance, answer_text)
    if chosen is None:
        read = _read_indexes(answer_text, count, "option's number or letter")
        if isinstance(read, str):
            return Verdict(
                correct=False, status="unreadable",
                feedback=f"Cannot read that: {read}; answer with an option's number or letter, "
                "e.g. 2 or b (several: 1 3).",
            )  # fmt: skip
        chosen = list(dict.fromkeys(read))
    right = set(instance.correct_options)
    picked = set(chosen)
    if picked == right:
        return Verdict(correct=True, status="correct")
    missing, extra = sorted(right - picked), sorted(picked - right)
    parts = [f"You chose {_list(chosen)}; the answer is {_list(sorted(right))}."]
    if len(right) > 1 and missing:
        parts.append(f"Missed {_list(missing)}.")
    if extra:
        why = [instance.option_why[i] for i in extra if i < len(instance.option_why)]
        parts.extend(w.strip() for w in why if w)
    return Verdict(correct=False, status="wrong", feedback=" ".join(parts))


def _choice_by_text(instance: Instance, text: str) -> list[int] | None:
    """The option whose text was typed out in full, if exactly one matches."""
    wanted = " ".join(str(text).split()).casefold()
    if len(wanted) < 3:
        return None
    hits = [
        i
        for i, option in enumerate(instance.options)
        if " ".join(option.split()).casefold() == wanted
    ]
    return hits if len(hits) == 1 else None


# --------------------------------------------------------------------------- order


def grade_order(instance: Instance, answer_text: str) -> Verdict:
    count = len(instance.items)
    read = _read_indexes(answer_text, count, "items' numbers in order", compact=True)
    if not isinstance(read, str) and sorted(read) != list(range(count)):
        read = f"give each of the numbers 1-{count} exactly once"
    if isinstance(read, str):
        return Verdict(
            correct=False, status="unreadable",
            feedback=f"Cannot read that: {read}; e.g. {' '.join(str(i) for i in range(count, 0, -1))}.",
        )  # fmt: skip
    right = list(instance.correct_order)
    if read == right:
        return Verdict(correct=True, status="correct")
    in_place = sum(a == b for a, b in zip(read, right, strict=True))
    feedback = (
        f"{in_place} of {count} in the right place. "
        f"Right order: {' '.join(str(i + 1) for i in right)}."
    )
    return Verdict(correct=False, status="wrong", feedback=feedback)


# --------------------------------------------------------------------------- concept


def _normalise_words(text: str) -> str:
    text = re.sub(r"[-_/]", " ", text.casefold())
    return " ".join(text.split())


@functools.lru_cache(maxsize=4096)
def _cue_pattern(cue: str) -> re.Pattern[str]:
    """A cue as a regex: word-bounded, plural-tolerant, hyphen or space between words."""
    words = _normalise_words(cue).split()
    parts = []
    for word in words:
        stem = word[:-1] if len(word) > 3 and word.endswith("s") and word[-2] != "s" else word
        parts.append(re.escape(stem) + ("(?:e?s)?" if stem[-1:].isalpha() else ""))
    body = r"\s?".join(parts)
    return re.compile(rf"(?<![a-z0-9]){body}(?![a-z0-9])")


def cues_covered(text: str, key_points: Iterable[tuple[str, Iterable[str]]]) -> tuple[bool, ...]:
    """For each (point, cues): whether any cue appears in `text`."""
    normalised = _normalise_words(text or "")
    return tuple(
        any(cue.strip() and _cue_pattern(cue).search(normalised) for cue in cues)
        for _point, cues in key_points
    )


def grade_concept(instance: Instance, answer_text: str) -> Verdict:
    text = answer_text if isinstance(answer_text, str) else ""
    covered = cues_covered(text[:20_000], instance.key_points)
    hits = sum(covered)
    if covered and hits == len(covered):
        rating = GOOD
    elif hits:
        rating = HARD
    else:
        rating = AGAIN
    points = [point for point, _cues in instance.key_points]
    got = [p for p, c in zip(points, covered, strict=True) if c]
    missed = [p for p, c in zip(points, covered, strict=True) if not c]
    lines = []
    if got:
        lines.append("Covered: " + "; ".join(got))
    if missed:
        lines.append("Missed: " + "; ".join(missed))
    return Verdict(
        correct=None, status="self", feedback="\n".join(lines), rating=rating, covered=covered
    )


__all__ = [
    "ANSWER_EXAMPLES",
    "FAST_MS",
    "Verdict",
    "cues_covered",
    "grade",
    "grade_choice",
    "grade_concept",
    "grade_numeric",
    "grade_order",
]
