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


def test_a_target_entry_works_out_its_ratio_and_verdict():
    import bench_targets

    entry = bench_targets.target(
        "stats", 0.814, floor=0.572, floor_name="empty + quick_check", unit="s", limit=2.0,
        kind="max_ratio", cpu=0.8, cpu_floor=0.58,
    )  # fmt: skip
    # 0.814 / 0.572 = 1.42307...; 0.8 / 0.58 = 1.37931...
    assert entry == {
        "target": "stats", "measured": 0.814, "floor": 0.572, "floor_name": "empty + quick_check",
        "unit": "s", "ratio": 1.423, "limit": 2.0, "kind": "max_ratio", "met": True,
        "cpu_ratio": 1.379,
    }  # fmt: skip
    # judged unrounded: 1.1004 rounds to 1.1 but is over 1.1
    over = bench_targets.target("import", 11.004, floor=10.0, unit="s", limit=1.1,
                                kind="max_ratio")  # fmt: skip
    assert (over["ratio"], over["met"], over["cpu_ratio"]) == (1.1, False, None)
    low = bench_targets.target("grading", 9200.0, unit="answers/s", limit=15000.0, kind="min")
    high = bench_targets.target("memory", 48.8, unit="MiB", limit=64.0, kind="max")
    assert (low["met"], low["ratio"], high["met"]) == (False, None, True)


def test_ratio_lines():
    import bench_targets

    entry = bench_targets.target("stats", 0.814, floor=0.572, unit="s", limit=2.0,
                                 kind="max_ratio", cpu=0.8, cpu_floor=0.58)  # fmt: skip
    assert bench_targets.ratio_lines([entry]) == ["stats: 1.42x wall, 1.38x CPU (aim <= 2.0; met)"]
