"""Quantities: formatting in human units and reading answers back."""

import pytest

from drill.quantities.units import (
    best_fit_unit,
    format_bytes,
    format_in,
    format_number,
    format_quantity,
    parse_unit,
)


@pytest.fixture(autouse=True)
def _units_read_afresh():
    """parse_unit keeps what it has read; each test here reads its units afresh, so a test
    runs every line it checks whatever ran before it (mutation testing relies on it)."""
    parse_unit.cache_clear()


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0"),
        (8, "8"),
        (0.5, "0.5"),
        (0.536870912, "0.537"),
        (3.35, "3.35"),
        (1.2000000000000002, "1.2"),
        (7.000000000000001, "7"),
        (536.870912, "537"),
        (1234.5, "1,235"),
        (-1234.5, "-1,235"),
        (536870912, "536,870,912"),
        (0.001, "0.001"),
        (0.00001234, "1.23e-5"),
        (3e21, "3e21"),
        (9.9996, "10"),
    ],
)
def test_format_number(value, text):
    assert format_number(value) == text


@pytest.mark.parametrize(
    ("n", "binary", "text"),
    [
        (536870912, True, "512 MiB"),
        (2**33, True, "8 GiB"),
        (16 * 536870912, True, "8 GiB"),
        (512, True, "512 B"),
        (0, True, "0 B"),
        (1.5 * 2**40, True, "1.5 TiB"),
        (1000 * 2**20, True, "0.977 GiB"),  # not "1,000 MiB"
        (536870912, False, "537 MB"),
        (2**33, False, "8.59 GB"),
        (-536870912, True, "-512 MiB"),
    ],
)
def test_format_bytes(n, binary, text):
    assert format_bytes(n, binary=binary) == text


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [
        (536870912, "GiB", "0.5 GiB"),
        (536870912, "GB", "0.537 GB"),
        (536870912, "bytes", "512 MiB"),  # a dimension name: best fit
        (3.35e12, "bytes_per_s", "3.35 TB/s"),
        (3.35e12, "TB/s", "3.35 TB/s"),
        (0.0012, "seconds", "1.2 ms"),
        (0.0012, "ms", "1.2 ms"),
        (0.0012, "us", "1,200 µs"),
        (2.5e-8, "seconds", "25 ns"),
        (312e12, "flop_per_s", "312 TFLOP/s"),
        (312e12, "TFLOPS", "312 TFLOP/s"),
        (14e9, "flop", "14 GFLOP"),
        (0.75, "fraction", "75%"),
        (0.07, "%", "7%"),
        (4096, "tokens", "4,096 tokens"),
        (1, "requests", "1 request"),
        (2.5, "count", "2.5"),
        (150, "flop_per_byte", "150 FLOP/B"),
        (50e9, "Gbps", "400 Gb/s"),
        (1e6, "tokens/s", "1,000,000 tokens/s"),
    ],
)
def test_format_quantity(value, unit, text):
    assert format_quantity(value, unit) == text


def test_format_quantity_unknown_unit_is_an_error():
    with pytest.raises(ValueError, match="unknown unit 'furlongs'"):
        format_quantity(1, "furlongs")


def test_best_fit_unit():
    assert best_fit_unit(536870912, "bytes") == "MiB"
    assert best_fit_unit(536870912, "bytes", binary=False) == "MB"
    assert best_fit_unit(0.02, "seconds") == "ms"
    assert best_fit_unit(2e15, "flop_per_s") == "PFLOP/s"


@pytest.mark.parametrize(
    ("text", "symbol", "dimension", "base", "decimal", "bits"),
    [
        ("GB", "GB", "bytes", 10**9, True, False),
        ("Gb", "Gb", "bytes", 10**9 / 8, True, True),
        ("gb", "GB", "bytes", 10**9, True, False),
        ("GiB", "GiB", "bytes", 2**30, False, False),
        ("gibibytes", "GiB", "bytes", 2**30, False, False),
        ("gigabits", "Gb", "bytes", 10**9 / 8, True, True),
        ("b", "bits", "bytes", 1 / 8, None, True),
        ("B", "B", "bytes", 1, None, False),
        ("kB", "kB", "bytes", 1000, True, False),
        ("KiB", "KiB", "bytes", 1024, False, False),
        ("μs", "µs", "seconds", 1e-6, None, False),
        ("us", "µs", "seconds", 1e-6, None, False),
        ("MS", "ms", "seconds", 1e-3, None, False),
        ("minutes", "min", "seconds", 60, None, False),
        ("GB per second", "GB/s", "bytes_per_s", 10**9, True, False),
        ("GiB/s", "GiB/s", "bytes_per_s", 2**30, False, False),
        ("Gbps", "Gb/s", "bytes_per_s", 10**9 / 8, True, True),
        ("tok/s", "tokens/s", "tokens_per_s", 1, None, False),
        ("tokens per second", "tokens/s", "tokens_per_s", 1, None, False),
        ("TFLOPS", "TFLOP/s", "flop_per_s", 10**12, True, False),
        ("TFLOP/S", "TFLOP/s", "flop_per_s", 10**12, True, False),
        ("PFLOPS", "PFLOP/s", "flop_per_s", 10**15, True, False),
        ("TFLOPs", "TFLOP", "flop", 10**12, True, False),
        ("GFLOP", "GFLOP", "flop", 10**9, True, False),
        ("FLOP/byte", "FLOP/B", "flop_per_byte", 1, None, False),
        ("%", "%", "fraction", 0.01, None, False),
        ("GiB per request", "GiB", "bytes", 2**30, False, False),
        ("ms/token", "ms", "seconds", 1e-3, None, False),
    ],
)
def test_parse_unit(text, symbol, dimension, base, decimal, bits):
    spec = parse_unit(text)
    assert spec is not None
    assert (spec.symbol, spec.dimension, spec.decimal_prefix, spec.bits) == (
        symbol,
        dimension,
        decimal,
        bits,
    )
    assert spec.factor == pytest.approx(base, rel=1e-12)


@pytest.mark.parametrize("text", ["", "iB", "furlongs", "GB/GB", "tokens/s/s/s", "s/GB"])
def test_parse_unit_unknown(text):
    assert parse_unit(text) is None


# --- reading answers -----------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from drill.errors import AnswerError  # noqa: E402
from drill.quantities.units import ANSWER_EXAMPLES, DIMENSIONS, parse_answer  # noqa: E402

GIB = 2**30


@pytest.mark.parametrize(
    ("text", "value", "dimension", "symbol", "decimal", "bits"),
    [
        ("536870912", 536870912, None, None, None, False),
        ("536,870,912", 536870912, None, None, None, False),
        ("536_870_912", 536870912, None, None, None, False),
        ("536 870 912", 536870912, None, None, None, False),
        ("5.4e8", 5.4e8, None, None, None, False),
        ("5.4E8", 5.4e8, None, None, None, False),
        ("5.4×10^8", 5.4e8, None, None, None, False),
        ("5.4 x 10^8", 5.4e8, None, None, None, False),
        ("5.4 × 10⁸", 5.4e8, None, None, None, False),
        ("2^29", 536870912, None, None, None, False),
        ("3/4", 0.75, None, None, None, False),
        ("0.75", 0.75, None, None, None, False),
        ("75%", 0.75, "fraction", "%", None, False),
        ("75 %", 0.75, "fraction", "%", None, False),
        ("75 percent", 0.75, "fraction", "%", None, False),
        ("2*32*8*128*4096*2", 536870912, None, None, None, False),
        ("2 · 32 · 8 · 128 · 4096 · 2", 536870912, None, None, None, False),
        ("−3", -3, None, None, None, False),
        ("0.5 GiB", GIB / 2, "bytes", "GiB", False, False),
        ("0.5GiB", GIB / 2, "bytes", "GiB", False, False),
        ("0.5 gib", GIB / 2, "bytes", "GiB", False, False),
        ("0.5 gibibytes", GIB / 2, "bytes", "GiB", False, False),
        ("512 MiB per request", GIB / 2, "bytes", "MiB", False, False),
        ("≈ 0.5 GiB.", GIB / 2, "bytes", "GiB", False, False),
        ("0.537 GB", 537e6, "bytes", "GB", True, False),
        ("0.537 gigabytes", 537e6, "bytes", "GB", True, False),
        ("537 MB", 537e6, "bytes", "MB", True, False),
        ("536870912 bytes", 536870912, "bytes", "bytes", None, False),
        ("536870912 B", 536870912, "bytes", "B", None, False),
        ("2*32*8*128*4096*2 bytes", 536870912, "bytes", "bytes", None, False),
        ("4 Gb", 5e8, "bytes", "Gb", True, True),
        ("4 gigabits", 5e8, "bytes", "Gb", True, True),
        ("4294967296 bits", GIB / 2, "bytes", "bits", None, True),
        ("1.2 ms", 0.0012, "seconds", "ms", None, False),
        ("1.2 µs", 1.2e-6, "seconds", "µs", None, False),
        ("1.2 μs", 1.2e-6, "seconds", "µs", None, False),
        ("1.2 us", 1.2e-6, "seconds", "µs", None, False),
        ("30 ns", 3e-8, "seconds", "ns", None, False),
        ("2 sec", 2, "seconds", "s", None, False),
        ("2 seconds", 2, "seconds", "s", None, False),
        ("1.5 minutes", 90, "seconds", "min", None, False),
        ("20 ms/token", 0.02, "seconds", "ms", None, False),
        ("3.35 TB/s", 3.35e12, "bytes_per_s", "TB/s", True, False),
        ("3.35 TB per second", 3.35e12, "bytes_per_s", "TB/s", True, False),
        ("3.12 TiB/s", 3.12 * 2**40, "bytes_per_s", "TiB/s", False, False),
        ("400 Gbps", 5e10, "bytes_per_s", "Gb/s", True, True),
        ("312 TFLOPS", 312e12, "flop_per_s", "TFLOP/s", True, False),
        ("312 TFLOP/s", 312e12, "flop_per_s", "TFLOP/s", True, False),
        ("312 tflop/S", 312e12, "flop_per_s", "TFLOP/s", True, False),
        ("1.2 PFLOPS", 1.2e15, "flop_per_s", "PFLOP/s", True, False),
        ("14 GFLOP", 14e9, "flop", "GFLOP", True, False),
        ("14 GFLOPs", 14e9, "flop", "GFLOP", True, False),
        ("4,096 tokens", 4096, "tokens", "tokens", None, False),
        ("1,000 tok/s", 1000, "tokens_per_s", "tokens/s", None, False),
        ("50 tokens per second", 50, "tokens_per_s", "tokens/s", None, False),
        ("8 requests", 8, "requests", "requests", None, False),
        ("1 request", 1, "requests", "requests", None, False),
        ("150 FLOP/byte", 150, "flop_per_byte", "FLOP/B", None, False),
        ("150 flops per byte", 150, "flop_per_byte", "FLOP/B", None, False),
        ("4x", 4, "count", "×", None, False),
        ("4×", 4, "count", "×", None, False),
        ("17.2 req/s", 17.2, "requests_per_s", "requests/s", None, False),
        ("17.2 rps", 17.2, "requests_per_s", "requests/s", None, False),
        ("17.2 sequences per second", 17.2, "requests_per_s", "requests/s", None, False),
        ("38 tps", 38, "tokens_per_s", "tokens/s", None, False),
        ("36 steps", 36, "count", "steps", None, False),
        ("8 GPUs", 8, "count", "GPUs", None, False),
        ("288 sequences", 288, "requests", "sequences", None, False),
        ("77th", 77, "count", None, None, False),
        ("p99", 99, "count", None, None, False),
        ("about 42", 42, None, None, None, False),
        ("approx. 0.5 GiB", GIB / 2, "bytes", "GiB", False, False),
        ("5 bits per element", 0.625, "bytes", "bits", None, True),
    ],
)
def test_parse_answer(text, value, dimension, symbol, decimal, bits):
    parsed = parse_answer(text)
    assert parsed.value == pytest.approx(value, rel=1e-12)
    assert (parsed.dimension, parsed.unit_symbol, parsed.decimal_prefix, parsed.bits) == (
        dimension,
        symbol,
        decimal,
        bits,
    )


def test_parse_answer_keeps_the_written_number():
    assert parse_answer("0.5 GiB").number == 0.5
    assert parse_answer("75%").number == 75
    assert parse_answer("536870912").value == 536870912.0


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "the answer is empty"),
        ("   ", "the answer is empty"),
        ("GiB", "there is no number in it"),
        ("half a gig", "there is no number in it"),
        ("0.5 furlongs", "'furlongs' is not a unit I know"),
        ("2*pi", "'pi' is not a unit I know"),
        ("1,5 GiB", "commas may only group thousands"),
        ("2 + GiB", "cannot read"),
        ("9**9**9**9", "too large"),
        ("1e999", "not a finite number"),
        ("1e308 EB", "too large"),
        ("1/0", "division by zero"),
        ("x" * 200_000, r"too long \(200,000 characters"),
    ],
)
def test_parse_answer_unreadable(text, reason):
    with pytest.raises(AnswerError, match=reason) as info:
        parse_answer(text)
    assert ANSWER_EXAMPLES in str(info.value)
    assert ANSWER_EXAMPLES == "try 0.5 GiB, 536,870,912, 2*32*8*128*4096*2 or 75%"


@settings(max_examples=500)
@given(st.text(max_size=60))
def test_arbitrary_text_only_raises_answer_error(text):
    try:
        parsed = parse_answer(text)
    except AnswerError:
        return
    assert parsed.value == parsed.value  # a real number, not NaN


_ANSWERISH = st.text(alphabet="0123456789.,_ %/*x^eEkKMGTiBbsmun-()", max_size=30)


@settings(max_examples=500)
@given(_ANSWERISH)
def test_answer_like_text_only_raises_answer_error(text):
    try:
        parse_answer(text)
    except AnswerError:
        pass


SYMBOLS = [
    "B", "kB", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB", "Gb", "Mb", "bits",
    "ns", "us", "µs", "ms", "s", "min",
    "B/s", "MB/s", "GB/s", "TB/s", "GiB/s", "Gbps",
    "FLOP", "GFLOP", "TFLOP", "PFLOP", "FLOP/s", "TFLOP/s", "TFLOPS", "PFLOP/s",
    "tokens", "tokens/s", "tok/s", "requests", "%", "FLOP/B", "x",
]  # fmt: skip
_VALUES = st.floats(min_value=1e-12, max_value=1e18) | st.integers(0, 10**15)


@settings(max_examples=400)
@given(st.sampled_from(SYMBOLS), _VALUES, st.booleans(), st.integers(1, 6))
def test_format_then_parse_round_trips(symbol, magnitude, negative, digits):
    value = -magnitude if negative else magnitude
    text = format_quantity(value, symbol, digits=digits)
    parsed = parse_answer(text)
    assert parsed.dimension == parse_unit(symbol).dimension
    assert parsed.value == pytest.approx(value, rel=0.5 * 10 ** (1 - digits) * 1.0001)


@settings(max_examples=300)
@given(st.sampled_from(sorted(DIMENSIONS)), _VALUES)
def test_best_fit_format_then_parse_round_trips(dimension, value):
    text = format_quantity(value, dimension)
    parsed = parse_answer(text)
    assert parsed.dimension == (None if dimension == "count" else dimension)
    assert parsed.value == pytest.approx(value, rel=0.005 * 1.0001)


@pytest.mark.parametrize(
    "text, precision",
    [
        ("172 ms", 0.5 / 172),
        ("0.17 s", 0.005 / 0.17),
        ("1.72e2", 0.5 / 172),
        ("200", 0.5 / 200),  # trailing zeros count as typed
        ("536,870,912 bytes", 0.5 / 536870912),
        ("2*32*8", 0.0),  # arithmetic is exact
        ("3/4", 0.0),
        ("0", 0.0),
    ],
)
def test_the_precision_an_answer_was_typed_at(text, precision):
    assert parse_answer(text).typed_precision == precision


@given(
    whole=st.integers(min_value=1, max_value=10**9),
    decimals=st.text(alphabet="0123456789", max_size=6),
)
def test_typed_precision_is_half_the_last_digit(whole, decimals):
    text = f"{whole}.{decimals}" if decimals else str(whole)
    parsed = parse_answer(text)
    half_digit = 0.5 * 10.0 ** -len(decimals)
    assert parsed.typed_precision * parsed.value == pytest.approx(half_digit, rel=1e-9)


# --- formatting at the edges, value by value ---------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"), [(float("inf"), "inf"), (float("-inf"), "-inf"), (float("nan"), "nan")]
)
def test_a_number_that_is_not_finite_is_shown_as_python_writes_it(value, text):
    assert format_number(value) == text


def test_one_significant_figure_is_the_least_shown():
    assert format_number(0.536870912, 1) == "0.5"
    assert format_number(0.536870912, 0) == "0.5"


def test_e_notation_starts_at_a_quadrillion_and_below_a_ten_thousandth():
    assert format_number(1e15) == "1e15"
    assert format_number(999_999_999_999_999) == "999,999,999,999,999"
    assert format_number(1e-4) == "0.0001"
    assert format_number(9.99e-5) == "9.99e-5"


def test_whole_numbers_with_more_figures_than_asked_get_commas_and_round_half_up():
    assert format_number(10_000, 5) == "10,000"
    assert format_number(1_000, 4) == "1,000"
    assert format_number(110.5) == "111"
    assert format_number(1234.5, 4) == "1,235"


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [
        (4, "×", "4×"),
        (1, "byte", "1 byte"),
        (-1, "byte", "-1 byte"),
        (2, "byte", "2 bytes"),
        (1, "token", "1 token"),
        (-1, "tokens", "-1 token"),
    ],
)
def test_a_times_sign_sticks_to_its_number_and_one_of_a_plain_unit_is_singular(value, unit, text):
    assert format_quantity(value, unit) == text


def test_a_unit_this_module_cannot_read_leaves_the_number_bare():
    assert format_in(1234.5, "furlongs") == "1,235"
    assert format_in(1234.5, None) == "1,235"


def test_exactly_one_kib_is_shown_in_kib():
    assert format_bytes(1024) == "1 KiB"
    assert best_fit_unit(1e-3, "seconds") == "ms"


def test_byte_counts_are_binary_unless_asked_otherwise():
    assert format_bytes(536870912) == "512 MiB"


def test_a_value_that_rounds_to_1000_steps_up_one_unit_at_the_figures_asked():
    assert best_fit_unit(999.6 * 2**20, "bytes") == "GiB"  # "1,000 MiB" at three figures
    assert format_bytes(999.6 * 2**20, digits=4) == "999.6 MiB"
    assert format_quantity(999.6 * 2**20, "bytes", digits=4) == "999.6 MiB"
    assert format_bytes(1000.4 * 2**40) == "0.977 PiB"  # up to the ladder's last unit


# --- reading answers at the edges, word for word -----------------------------------------


def _unreadable(text) -> str:
    with pytest.raises(AnswerError) as refused:
        parse_answer(text)
    return str(refused.value)


def test_an_answer_that_is_not_text_is_refused_with_examples():
    assert _unreadable(5) == (
        "an answer must be text; try 0.5 GiB, 536,870,912, 2*32*8*128*4096*2 or 75%"
    )


def test_an_answer_of_2000_characters_is_read_and_2001_refused():
    assert parse_answer("1" + " " * 1999).value == 1.0
    assert _unreadable("1" + " " * 2000) == (
        "that answer is too long (2,001 characters; at most 2,000); "
        "try 0.5 GiB, 536,870,912, 2*32*8*128*4096*2 or 75%"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("GiB", "cannot read 'GiB': there is no number in it"),
        ("x" * 41, f"cannot read '{'x' * 37}...': there is no number in it"),
        ("x" * 40, f"cannot read '{'x' * 40}': there is no number in it"),
        ("foo*2", "cannot read 'foo*2': 'foo' is not a number or a unit I know"),
        ("X5", "cannot read 'X5': 'X5' is not a number or a unit I know"),
        ("(1,000", "cannot read '(1,000': cannot read '(1000' as arithmetic"),
        (
            "40,96",
            "cannot read '40,96': commas may only group thousands (536,870,912); "
            "decimals take a point (1.5)",
        ),
        ("3..", "cannot read '3..': cannot read '3..' as arithmetic"),
        # a comma that groups no thousands, in an answer refused for another reason
        ("max(1,2)/0", "cannot read 'max(1,2)/0': division by zero"),
        ("10^300 EiB", "cannot read '10^300 EiB': the number is too large"),
        ("1e300 EiB", "cannot read '1e300 EiB': the number is too large"),
    ],
)
def test_an_unreadable_answer_says_why_word_for_word(text, message):
    assert _unreadable(text) == message + "; " + ANSWER_EXAMPLES


def test_a_leading_equals_sign_is_skipped():
    assert parse_answer("= 5").value == 5.0
    assert parse_answer("=5").value == 5.0


def test_a_full_stop_after_a_unit_ends_the_sentence():
    assert (parse_answer("5 B.").value, parse_answer("5 B.").unit_symbol) == (5.0, "B")
    assert (parse_answer("4X.").value, parse_answer("4X.").dimension) == (4.0, "count")


def test_a_bare_number_keeps_the_number_as_written():
    assert parse_answer("512").number == 512.0


# --- unit symbols as the formatter writes them back -------------------------------------


@pytest.mark.parametrize(
    ("text", "symbol"),
    [
        ("kB", "kB"),  # decimal kilo is a lowercase k
        ("KB", "kB"),
        ("kilobytes", "kB"),
        ("KiB", "KiB"),  # binary kibi a capital K
        ("kibibytes", "KiB"),
        ("Gbytes", "GB"),
        ("Gibytes", "GiB"),
        ("Gib", "Gib"),
        ("Kib", "Kib"),
        ("Mbits", "Mb"),
        ("GB/ms", "GB/ms"),
        ("tokens/min", "tokens/min"),
    ],
)
def test_a_unit_is_written_back_in_its_one_spelling(text, symbol):
    assert parse_unit(text).symbol == symbol


def test_a_rate_in_bits_stays_in_bits_and_a_minute_divides_by_60():
    assert parse_unit("Gb/s").bits is True
    assert (parse_unit("GB/min").mul, parse_unit("GB/min").div) == (10**9, 60)
    assert parse_answer("60 GB/min").value == 1e9


# ---------------------------------------------------------------- count nouns
@pytest.mark.parametrize(
    ("noun", "many"),
    [
        ("block", "blocks"), ("box", "boxes"), ("batch", "batches"), ("mesh", "meshes"),
        ("bus", "buses"), ("entry", "entries"), ("day", "days"), ("key", "keys"),
        ("toy", "toys"), ("guy", "guys"),
    ],
)  # fmt: skip
def test_the_plural_of_a_count_noun(noun, many):
    from drill.quantities.units import plural

    assert plural(noun) == many


def test_a_noun_the_question_counts_is_read_as_a_count_of_it_in_any_case():
    three = parse_answer("3 widgets", nouns=["widget"])
    assert (three.value, three.dimension, three.unit_symbol, three.noun) == (
        3.0, "count", "widgets", "widget",
    )  # fmt: skip
    one = parse_answer("1 Widget", nouns=["Widget"])
    assert (one.value, one.unit_symbol, one.noun) == (1.0, "widgets", "widget")


@pytest.mark.parametrize("answer", ["3 gadgets", "5 distinct widgets"])
def test_a_noun_neither_counted_nor_known_is_not_read(answer):
    with pytest.raises(AnswerError, match="is not a unit I know"):
        parse_answer(answer, nouns=["widget"])


def test_a_known_count_noun_after_a_word_that_is_no_unit_is_read():
    experts = parse_answer("11.44 distinct experts")
    assert (experts.value, experts.unit_symbol, experts.noun) == (11.44, "experts", "expert")
