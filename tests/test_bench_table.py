"""`make bench`'s table (benchmarks/run_all.py): one row per target a benchmark reports,
with its floor, ratio, limit and verdict. No timing here: the rows are made by hand."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import run_all as bench_all  # noqa: E402


def test_a_ratio_target_shows_its_floor_and_cpu_ratio():
    target = {
        "target": "time to the first question, warm", "measured": 0.512, "floor": 0.4,
        "floor_name": "the dependencies' imports", "unit": "s", "ratio": 1.28, "limit": 1.3,
        "kind": "max_ratio", "met": True, "cpu_ratio": 1.215,
    }  # fmt: skip
    assert bench_all.row(target) == [
        "time to the first question, warm", "512 ms", "400 ms (the dependencies' imports)",
        "1.28x (CPU 1.22x)", "<= 1.3x", "met",
    ]  # fmt: skip


def test_absolute_targets_and_a_miss():
    rate = {
        "target": "numeric grading, caches cold", "measured": 9200.0, "floor": None,
        "floor_name": None, "unit": "answers/s", "ratio": None, "limit": 15000.0,
        "kind": "min", "met": False, "cpu_ratio": None,
    }  # fmt: skip
    assert bench_all.row(rate) == [
        "numeric grading, caches cold", "9,200 answers/s", "-", "-", ">= 15,000 answers/s",
        "NOT MET",
    ]  # fmt: skip
    memory = {**rate, "target": "quiz start-up memory", "measured": 41.5, "unit": "MiB",
              "limit": 64.0, "kind": "max", "met": True}  # fmt: skip
    assert bench_all.row(memory)[1:] == ["41.5 MiB", "-", "-", "<= 64 MiB", "met"]


def test_the_table_lines_up_its_columns():
    lines = bench_all.table([["a", "1 s", "-", "1.00x", "<= 2x", "met"]])
    assert lines == [
        "target  measured  floor  ratio  limit",
        "a       1 s       -      1.00x  <= 2x  met",
    ]
