"""Quantities: read and write bytes, times, rates, FLOPs and percentages.

Every value is held in the base unit of its dimension (see drill.quantities.dimensions):
bytes, seconds, bytes/s, FLOP, FLOP/s, tokens, tokens/s, requests, requests/s, a
fraction (0.75, shown as 75%), FLOP/byte, or a plain count.

Unit symbols are read by one function, `parse_unit`, shared by the formatter
(`format_quantity(value, "GiB")`) and the answer reader (`parse_answer`), so
anything the tool prints it can also read back.

Case rules for bytes and bits: `B` is a byte and `b` a bit; a capital prefix
with a lowercase b (`Gb`, `Mb`, `Kib`) is bits, as in network rates. An
all-lowercase symbol (`gb`, `mb`, `gib`) is read as bytes, because that is what
people mean when they type it casually. Everything else is case-insensitive,
except that `FLOPs` (capital FLOP, lowercase s) is a count and `FLOPS` a rate.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from drill.errors import AnswerError, ExprError
from drill.quantities.dimensions import DECIMAL_BYTES_LADDER
from drill.quantities.dimensions import DIMENSIONS as TABLE
from drill.quantities.expr import compile_expr

# ---------------------------------------------------------------------------
# Unit symbols


@dataclass(frozen=True)
class UnitSpec:
    """One unit: `value_in_base = number * mul / div` (integers, so no float noise)."""

    symbol: str  # canonical display form, e.g. "GiB", "TB/s", "µs", "%"
    dimension: str  # a name in drill.quantities.dimensions
    mul: int = 1
    div: int = 1
    # True for decimal prefixes (k, M, G ...), False for binary ones (Ki, Mi ...),
    # None when the symbol has no prefix; only set for bytes, bits and FLOP.
    decimal_prefix: bool | None = None
    bits: bool = False  # written in bits; mul/div already convert to bytes
    # what a count counts, in the singular ("block", "request"); None for any other unit
    noun: str | None = None

    @property
    def factor(self) -> float:
        """Base units per one of this unit (a float, for display maths)."""
        return self.mul / self.div


_DECIMAL = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12, "p": 10**15, "e": 10**18}
_BINARY = {"k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40, "p": 2**50, "e": 2**60}
_WORD_PREFIX = {
    "kilo": "k", "mega": "m", "giga": "g", "tera": "t", "peta": "p", "exa": "e",
    "kibi": "ki", "mebi": "mi", "gibi": "gi", "tebi": "ti", "pebi": "pi", "exbi": "ei",
}  # fmt: skip


def _prefixed(prefix: str, dimension: str, base: str, *, bits: bool = False) -> UnitSpec:
    """A prefixed byte/bit/FLOP unit from a normalised prefix ('', 'g', 'gi', ...)."""
    letter, binary = prefix[:1], prefix.endswith("i")
    if not prefix:
        scale, decimal = 1, None
    elif binary:
        scale, decimal = _BINARY[letter], False
    else:
        scale, decimal = _DECIMAL[letter], True
    shown = "" if not prefix else ("k" if letter == "k" and not binary else letter.upper())
    shown += "i" if binary else ""
    if bits:
        symbol = (shown.upper()[:1] + shown[1:] + "b") if prefix else "bits"
        return UnitSpec(symbol, dimension, scale, 8, decimal, True)
    return UnitSpec(shown + base, dimension, scale, 1, decimal)


_BYTE_SYMBOL = re.compile(r"(?P<p>[kmgtpe]?)(?P<i>i?)(?P<u>b)", re.IGNORECASE)
_BYTE_WORD = re.compile(
    r"(?P<p>[kmgtpe]|kilo|mega|giga|tera|peta|exa|kibi|mebi|gibi|tebi|pebi|exbi)?"
    r"(?P<i>i?)[ -]?(?P<u>bytes?|bits?)",
    re.IGNORECASE,
)
_FLOP = re.compile(
    r"(?P<p>[kmgtpe]|kilo|mega|giga|tera|peta|exa)?[ -]?(?P<f>flop)(?P<s>s?)", re.IGNORECASE
)

_TIME = {
    **dict.fromkeys(
        ["ns", "nsec", "nanosecond", "nanoseconds"], UnitSpec("ns", "seconds", 1, 10**9)
    ),
    **dict.fromkeys(
        ["us", "µs", "usec", "microsecond", "microseconds"], UnitSpec("µs", "seconds", 1, 10**6)
    ),
    **dict.fromkeys(
        ["ms", "msec", "millisecond", "milliseconds"], UnitSpec("ms", "seconds", 1, 10**3)
    ),
    **dict.fromkeys(["s", "sec", "secs", "second", "seconds"], UnitSpec("s", "seconds")),
    **dict.fromkeys(["min", "mins", "minute", "minutes"], UnitSpec("min", "seconds", 60)),
    **dict.fromkeys(["h", "hr", "hrs", "hour", "hours"], UnitSpec("h", "seconds", 3600)),
}
# Count nouns: "36 steps", "16,021 blocks", "288 sequences" are that many of the thing
# named; the grader tells the thing a question counts from another (drill.kinds.numeric_grade).
# Tokens and requests have dimensions of their own (a sequence is a request); the rest are
# plain counts. Each singular here also reads as its plural (block/blocks, batch/batches).
_NOUN_DIMENSION = {"token": "tokens", "request": "requests", "sequence": "requests"}
_COUNT_NOUNS = frozenset(
    "token request sequence block page step expert gpu layer head user position slot chunk "
    "iteration pass round batch element value parameter weight replica node device rank "
    "shard entry row sample item prompt query split dollar".split()
)
# short forms people type, and how a plural is shown where the singular's case is not
_NOUN_SHORT = {
    "tok": "token", "req": "request", "seq": "sequence", "param": "parameter", "usd": "dollar",
}  # fmt: skip
_NOUN_SHOWN = {"gpu": "GPUs"}


def plural(noun: str) -> str:
    """The plural of a count noun: block -> blocks, batch -> batches, entry -> entries."""
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "o", "u"):
        return noun[:-1] + "ies"
    return noun + "s"


def singular(word: str) -> str | None:
    """The count noun `word` names in the singular ("GPUs" -> "gpu"); None for a word that
    is none (known: _COUNT_NOUNS and their short forms)."""
    low = word.lower()
    for noun in (low, low[:-1], low[:-2], low[:-3] + "y"):
        noun = _NOUN_SHORT.get(noun, noun)
        if noun in _COUNT_NOUNS and low in (noun, plural(noun), *_short_forms(noun)):
            return noun
    return None


def _short_forms(noun: str) -> tuple[str, ...]:
    return tuple(
        f for short, full in _NOUN_SHORT.items() if full == noun for f in (short, short + "s")
    )


def count_unit(noun: str) -> UnitSpec:
    """The unit of a count of `noun` (a singular): tokens and requests in their own
    dimensions, anything else a plain count."""
    shown = _NOUN_SHOWN.get(noun, plural(noun))
    return UnitSpec(shown, _NOUN_DIMENSION.get(noun, "count"), noun=noun)


_PLAIN = {
    **dict.fromkeys(["%", "percent", "pct"], UnitSpec("%", "fraction", 1, 100)),
    **dict.fromkeys(["x", "×", "times"], UnitSpec("×", "count")),
    # rates written as one word: requests (or queries) and tokens per second
    **dict.fromkeys(["rps", "qps"], UnitSpec("requests/s", "requests_per_s")),
    "tps": UnitSpec("tokens/s", "tokens_per_s"),
}
_RATES = {
    ("bytes", "seconds"): "bytes_per_s",
    ("flop", "seconds"): "flop_per_s",
    ("tokens", "seconds"): "tokens_per_s",
    ("requests", "seconds"): "requests_per_s",
    ("flop", "bytes"): "flop_per_byte",
}


def _numerator(text: str) -> UnitSpec | None:
    """A unit without a slash, e.g. 'GiB', 'gigabytes', 'TFLOP', 'ms', 'tokens'."""
    low = text.lower()
    if low in _TIME:
        return _TIME[low]
    if low in _PLAIN:
        return _PLAIN[low]
    noun = singular(low)
    if noun is not None:
        return count_unit(noun)
    m = _BYTE_SYMBOL.fullmatch(text)
    if m:
        prefix, binary, unit = m["p"], m["i"], m["u"]
        if binary and not prefix:
            return None
        # `b` is a bit when alone or after a capital prefix (Gb, Mib); `gb` is casual bytes
        bits = unit == "b" and (not prefix or prefix.isupper())
        return _prefixed(prefix.lower() + binary.lower(), "bytes", "B", bits=bits)
    m = _BYTE_WORD.fullmatch(text)
    if m:
        prefix = _WORD_PREFIX.get((m["p"] or "").lower(), (m["p"] or "").lower())
        if m["i"]:
            if len(prefix) != 1:
                return None
            prefix += "i"
        bits = m["u"].lower().startswith("bit")
        spec = _prefixed(prefix, "bytes", "B", bits=bits)
        if not prefix and not bits:
            return UnitSpec("bytes", "bytes")
        return spec
    m = _FLOP.fullmatch(text)
    if m:
        prefix = _WORD_PREFIX.get((m["p"] or "").lower(), (m["p"] or "").lower())
        spec = _prefixed(prefix, "flop", "FLOP")
        # "FLOPS"/"flops" is the rate; "FLOPs" (lowercase s after capital FLOP) a count
        if m["s"] and not (m["f"] == "FLOP" and m["s"] == "s"):
            return UnitSpec(spec.symbol + "/s", "flop_per_s", spec.mul, 1, spec.decimal_prefix)
        return spec
    return None


def _compose(num: UnitSpec, den: UnitSpec) -> UnitSpec | None:
    dimension = _RATES.get((num.dimension, den.dimension))
    if dimension is None or den.bits:
        return None
    den_symbol = "B" if den.symbol == "bytes" else den.symbol
    # "sequences/s" and "req/s" are requests per second, written one way
    num_symbol = num.dimension if num.noun in _NOUN_DIMENSION else num.symbol
    return UnitSpec(
        f"{num_symbol}/{den_symbol}",
        dimension,
        num.mul * den.div,
        num.div * den.mul,
        num.decimal_prefix,
        num.bits,
    )


_PER = re.compile(r"\s*(?:/|\bper\b)\s*", re.IGNORECASE)


@lru_cache(maxsize=1024)
def parse_unit(text: str) -> UnitSpec | None:
    """Read a unit symbol or phrase ('GiB', 'TB/s', 'tokens per second'); None if unknown."""
    text = " ".join(text.replace("μ", "µ").split())
    if not text or len(text) > 40:
        return None
    parts = _PER.split(text)
    # "per request", "/token", "per element": says what the figure is per, and leaves the
    # dimension alone
    if len(parts) > 1 and singular(parts[-1]) is not None:
        parts = parts[:-1]
    if any(not p for p in parts):
        return None
    if len(parts) == 1:
        spec = _numerator(parts[0])
        if spec is None and parts[0].lower().endswith("ps") and len(parts[0]) > 2:
            # Gbps, GBps, MBps: bits or bytes per second
            head = _numerator(parts[0][:-2])
            if head is not None and head.dimension == "bytes":
                return _compose(head, _TIME["s"])
        return spec
    if len(parts) == 2:
        num, den = _numerator(parts[0]), _numerator(parts[1])
        if num is None or den is None:
            return None
        if num.dimension == "flop_per_s" and _FLOP.fullmatch(parts[0]):
            # before a slash, "flops" is a plural count: "FLOPs per byte", "flops/s"
            num = UnitSpec(num.symbol[:-2], "flop", num.mul, num.div, num.decimal_prefix)
        return _compose(num, den)
    return None


# ---------------------------------------------------------------------------
# Formatting


def format_number(value: float, digits: int = 3) -> str:
    """A number a person would write: `digits` significant figures, no float noise.

    The integer part is never rounded away (1234.5 -> "1,235"); thousands are
    separated by commas; very small or very large magnitudes use e-notation.
    """
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value == 0:
        return "0"
    digits = max(1, digits)
    magnitude = abs(value)
    if magnitude >= 1e15 or magnitude < 1e-4:
        mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
        if "." in mantissa:
            mantissa = mantissa.rstrip("0").rstrip(".")
        return f"{mantissa}e{int(exponent)}"
    if magnitude >= 10 ** (digits - 1):
        # half away from zero, as people round (round() would give 1234 for 1234.5)
        whole = math.floor(magnitude + 0.5)
        return f"{'-' if value < 0 else ''}{whole:,}"
    decimals = digits - 1 - math.floor(math.log10(magnitude))
    text = f"{value:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    if text in ("-0", ""):
        return "0"
    return text


def _with_symbol(number: str, spec: UnitSpec) -> str:
    if spec.symbol == "%":
        return number + "%"
    if spec.symbol == "×":
        return number + "×"
    symbol = spec.symbol
    if number in ("1", "-1") and symbol in ("bytes", "tokens", "requests"):
        symbol = symbol[:-1]
    return f"{number} {symbol}"


def _in_unit(value: float, spec: UnitSpec) -> float:
    if isinstance(value, int) and (value * spec.div) % spec.mul == 0:
        return value * spec.div // spec.mul
    return value * spec.div / spec.mul


# Best-fit ladders, smallest unit first: the largest whose number stays >= 1.
_LADDERS: dict[str, tuple[str, ...]] = {
    **{name: dimension.ladder for name, dimension in TABLE.items()},
    "bytes_decimal": DECIMAL_BYTES_LADDER,
}
DIMENSIONS = frozenset(TABLE)


def best_fit_unit(value: float, dimension: str, *, binary: bool = True, digits: int = 3) -> str:
    """The symbol a person would show `value` (base units of `dimension`) in."""
    ladder = _LADDERS["bytes_decimal" if dimension == "bytes" and not binary else dimension]
    magnitude = abs(value)
    chosen = ladder[0]
    for symbol in ladder:
        spec = parse_unit(symbol)
        if spec is not None and magnitude >= spec.factor:
            chosen = symbol
    # avoid "1,000 MiB": when rounding reaches 1000, step up one unit
    index = ladder.index(chosen)
    spec = parse_unit(chosen) if chosen else None
    if index + 1 < len(ladder) and spec is not None:
        shown = abs(float(format_number(_in_unit(value, spec), digits).replace(",", "")))
        if shown >= 1000:
            chosen = ladder[index + 1]
    return chosen


def format_quantity(value: float, unit_or_dimension: str | None, digits: int = 3) -> str:
    """Show `value` (base units) in a unit symbol ("GiB", "ms", "TB/s", "%") or best fit.

    A dimension name (from drill.quantities.dimensions, such as "bytes", "seconds", "fraction")
    picks the best-fitting symbol; bytes use binary prefixes (512 MiB), rates
    and FLOPs decimal ones (3.35 TB/s, 312 TFLOP/s). For an exact byte count
    write the number with `format_number` or Python's `{:,}`.
    """
    if not unit_or_dimension or unit_or_dimension == "count":
        return format_number(value, digits)
    if unit_or_dimension in DIMENSIONS:
        symbol = best_fit_unit(value, unit_or_dimension, digits=digits)
        if not symbol:
            return format_number(value, digits)
        unit_or_dimension = symbol
    spec = parse_unit(unit_or_dimension)
    if spec is None:
        raise ValueError(f"unknown unit {unit_or_dimension!r}")
    return _with_symbol(format_number(_in_unit(value, spec), digits), spec)


def format_in(value: float, symbol: str | None) -> str:
    """`value` in the unit `symbol` (a symbol or a dimension), or bare when it has none
    or one this module cannot read."""
    if not symbol:
        return format_quantity(value, None)
    try:
        return format_quantity(value, symbol)
    except ValueError:
        return format_quantity(value, None)


def format_bytes(n: float, binary: bool = True, digits: int = 3) -> str:
    """A byte count in the best-fitting unit: "512 MiB", "8 GiB", "537 MB" (binary=False)."""
    symbol = best_fit_unit(n, "bytes", binary=binary, digits=digits)
    spec = parse_unit(symbol)
    assert spec is not None
    return _with_symbol(format_number(_in_unit(n, spec), digits), spec)


# ---------------------------------------------------------------------------
# Reading answers

ANSWER_EXAMPLES = "try 0.5 GiB, 536,870,912, 2*32*8*128*4096*2 or 75%"
MAX_ANSWER_CHARS = 2_000
_UNIT_EXAMPLES = "GiB, GB, MiB, bytes, Gb (bits), ms, µs, s, GB/s, TFLOP/s, tokens/s, %"


@dataclass(frozen=True)
class Parsed:
    """A typed answer: `value` in the base unit of `dimension` (None for a bare number)."""

    value: float
    dimension: str | None = None
    unit_symbol: str | None = None  # canonical symbol of the unit written, e.g. "GiB"
    decimal_prefix: bool | None = None  # as UnitSpec.decimal_prefix
    bits: bool = False  # the unit was in bits; `value` is already converted to bytes
    number: float | None = None  # the number as written, before the unit
    # half a unit of the last digit typed, relative to the number ("172" 0.0029, "0.17"
    # 0.029); 0 for arithmetic, whose result is exact
    typed_precision: float = 0.0
    # what a count counts, in the singular ("block" for "16,021 blocks"); None otherwise
    noun: str | None = None


_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
_SUPERSCRIPT_RUN = re.compile("[⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+")
_REPLACEMENTS = str.maketrans(
    {
        "−": "-",  # minus sign
        "–": "-",  # en dash, often typed as a minus
        "·": "*",
        "⋅": "*",
        "∗": "*",
        "÷": "/",
        "⁄": "/",  # fraction slash
        "×": " x ",  # "5.4 × 10^8" or "4×"; decided below
        "≈": " ",
        "~": " ",
    }
)
_TIMES_BETWEEN_NUMBERS = re.compile(r"(?<=[\d.)])\s*[xX]\s*(?=[\d(.])")
_THOUSANDS_COMMA = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?![\d,])")
_THOUSANDS_SPACE = re.compile(r"(?<![\w.])\d{1,3}(?: \d{3})+(?![\d])")
_UNIT_TAIL_CHARS = frozenset("%/ ")


def _unreadable(text: str, reason: str) -> AnswerError:
    shown = text if len(text) <= 40 else text[:37] + "..."
    return AnswerError(f"cannot read {shown!r}: {reason}; {ANSWER_EXAMPLES}")


def _normalise(text: str) -> str:
    text = _SUPERSCRIPT_RUN.sub(lambda m: "**(" + m[0].translate(_SUPERSCRIPT) + ")", text)
    text = unicodedata.normalize("NFKC", text).translate(_REPLACEMENTS)
    text = " ".join(text.split()).lstrip("=")
    text = text.rstrip(".!") if text[-1:] in ".!" and text[-2:-1].isalpha() else text
    text = text.replace("^", "**")
    return _TIMES_BETWEEN_NUMBERS.sub("*", text).strip()


def _split_unit(text: str) -> tuple[str, str]:
    """Split '2*32 GiB' into ('2*32', 'GiB'): the unit is the trailing run of letters."""
    start = len(text)
    while start > 0 and (text[start - 1].isalpha() or text[start - 1] in _UNIT_TAIL_CHARS):
        start -= 1
    return text[:start].strip(), text[start:].strip()


def _to_base(number: int | float, spec: UnitSpec) -> float:
    if isinstance(number, int) and (number * spec.mul) % spec.div == 0:
        return float((number * spec.mul) // spec.div)
    return float(number) * spec.mul / spec.div


# a word that says the number is rounded: "about 42", "approx. 42", "roughly 42 sequences"
_HEDGE = re.compile(
    r"(?:about|around|approximately|approx\.?|roughly|circa|ca\.|(?:on the )?order of)\s*",
    re.IGNORECASE,
)
# a rank: "77th", "the 77th percentile", "p77", "P99.9"
_ORDINAL = re.compile(
    r"(?:the\s+)?(?P<n>\d+)(?:st|nd|rd|th)(?:\s+(?:percentile|position|place|rank))?"
    r"|p(?P<p>\d+(?:\.\d+)?)",
    re.IGNORECASE,
)
# a count noun after a word that says which ("11.44 distinct experts", "36 prefill steps")
_MODIFIED_NOUN = re.compile(r"(?P<word>[A-Za-z]{3,}) (?P<noun>[A-Za-z]+)")


# an amount of money as people write it: "$0.83", "US$ 12", "0.83$" (a count of dollars)
_DOLLARS = re.compile(r"(?:US)?\$\s*(?P<lead>[^$A-Za-z]+)|(?P<tail>[^$A-Za-z]+?)\s*\$")


def _dollars(text: str) -> str:
    """`$0.83` (or `0.83$`) as `0.83 dollars`; anything else as it is."""
    match = _DOLLARS.fullmatch(text)
    if match is None:
        return text
    return f"{(match['lead'] or match['tail']).strip()} dollars"


def _count_tail(tail: str, nouns: Iterable[str]) -> UnitSpec | None:
    """A count noun the unit reader does not know on its own: one the question counts
    (`nouns`, singulars), or a count noun after one word that is no unit."""
    low = tail.lower()
    for noun in nouns:
        noun = noun.lower()
        if low in (noun, plural(noun)):
            return count_unit(noun)
    match = _MODIFIED_NOUN.fullmatch(tail)
    if match and parse_unit(match["word"]) is None:
        spec = parse_unit(match["noun"])
        if spec is not None and spec.noun is not None:
            return spec
    return None


def parse_answer(text: str, *, nouns: Iterable[str] = ()) -> Parsed:
    """Read a typed answer: a number or arithmetic, optionally followed by a unit.

    Accepts `536870912`, `536,870,912`, `536 870 912`, `5.4e8`, `5.4 x 10^8`,
    `3/4`, `75%`, `2*32*8*128*4096*2`, and any of those followed by a unit such
    as `GiB`, `gigabytes`, `Gb` (bits), `ms`, `TB/s`, `TFLOPS`, `tokens per
    second`, `req/s`, `tps`, optionally with `per request`; or by what it counts
    (`36 steps`, `288 sequences`, `8 GPUs`, or one of `nouns`, the singulars of what the
    question counts). A rank (`77th`, `77th percentile`, `p77`) is its number, an amount
    of money (`$0.83`, `0.83 USD`) a count of dollars, and a leading `about`, `~`, `≈`,
    `approx.` or `roughly` is dropped. Anything else raises
    AnswerError with examples of what works.
    """
    if not isinstance(text, str):
        raise AnswerError(f"an answer must be text; {ANSWER_EXAMPLES}")
    if len(text) > MAX_ANSWER_CHARS:
        raise AnswerError(
            f"that answer is too long ({len(text):,} characters; at most "
            f"{MAX_ANSWER_CHARS:,}); {ANSWER_EXAMPLES}"
        )
    original = text.strip()
    if not original:
        raise AnswerError(f"the answer is empty; {ANSWER_EXAMPLES}")
    normal = _normalise(original)
    hedge = _HEDGE.match(normal)
    normal = normal[hedge.end() :] if hedge else normal
    normal = _dollars(normal)
    rank = _ORDINAL.fullmatch(normal)
    if rank is not None:
        digits = rank["n"] or rank["p"]
        number = float(digits)
        if not math.isfinite(number):
            raise _unreadable(original, "the number is too large")
        precision = typed_precision(digits, number)
        return Parsed(number, "count", None, number=number, typed_precision=precision)
    head, tail = _split_unit(normal)
    if not head:
        raise _unreadable(original, "there is no number in it")
    spec = None
    if tail:
        spec = parse_unit(tail) or _count_tail(tail, nouns)
        if spec is None:
            raise _unreadable(original, f"{tail!r} is not a unit I know (I read {_UNIT_EXAMPLES})")
    head = _THOUSANDS_COMMA.sub(lambda m: m[0].replace(",", ""), head)
    head = _THOUSANDS_SPACE.sub(lambda m: m[0].replace(" ", ""), head)
    try:
        literal = _plain_literal(head)
        if literal is not None:
            number = literal
        else:
            expr = compile_expr(head, max_chars=MAX_ANSWER_CHARS)
            if expr.names:
                name = sorted(expr.names)[0]
                raise _unreadable(original, f"{name!r} is not a number or a unit I know")
            number = expr.evaluate({})
    except ExprError as exc:
        reason = str(exc)
        if "," in head and "comma" in reason:
            reason = "commas may only group thousands (536,870,912); decimals take a point (1.5)"
        raise _unreadable(original, reason) from None
    precision = typed_precision(head, float(number))
    if spec is None:
        return Parsed(value=float(number), number=float(number), typed_precision=precision)
    try:
        value = _to_base(number, spec)
    except OverflowError:
        value = math.inf
    if not math.isfinite(value):
        raise _unreadable(original, "the number is too large")
    return Parsed(
        value=value,
        dimension=spec.dimension,
        unit_symbol=spec.symbol,
        decimal_prefix=spec.decimal_prefix,
        bits=spec.bits,
        number=float(number),
        typed_precision=precision,
        noun=spec.noun,
    )


# a number written as a Python literal reads the same: an int without leading zeros, or a
# decimal with a point or an exponent (`5.4e8`); anything else goes to the evaluator
_PLAIN_INT = re.compile(r"0|[1-9][0-9]*")
_PLAIN_FLOAT = re.compile(r"(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+")


def _plain_literal(head: str) -> int | float | None:
    """The number a plain literal is, as compile_expr would give it (an int stays exact);
    None for arithmetic, or for a number the evaluator refuses (it says why)."""
    if len(head) > 300:
        return None
    if _PLAIN_INT.fullmatch(head):
        number = int(head)
        return number if number.bit_length() <= 1023 else None
    if _PLAIN_FLOAT.fullmatch(head):
        value = float(head)
        return value if math.isfinite(value) else None
    return None


_PLAIN_DECIMAL = re.compile(r"\s*\d*(?:\.(\d*))?(?:[eE]([+-]?\d{1,4}))?\s*")


def typed_precision(head: str, number: float) -> float:
    """Half a unit of the last digit of a plain decimal number as typed, relative to it:
    0.5 / 172 for "172", 0.005 / 0.17 for "0.17", 0.5 / 1.72 for "1.72e2". Trailing
    zeros count as typed ("200": 0.5 / 200). 0 for arithmetic or a zero."""
    match = _PLAIN_DECIMAL.fullmatch(head)
    if match is None or not number or not math.isfinite(number):
        return 0.0
    decimals = len(match[1] or "")
    exponent = int(match[2] or 0)
    try:
        return 0.5 * 10.0 ** (exponent - decimals) / abs(number)
    except OverflowError:
        return 0.0
