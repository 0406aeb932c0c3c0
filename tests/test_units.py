"""Quantities: formatting in human units and reading answers back."""

import pytest

from drill.units import best_fit_unit, format_bytes, format_number, format_quantity, parse_unit


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
