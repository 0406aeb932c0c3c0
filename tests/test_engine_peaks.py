"""The peak logic with a scripted clock (no torch): which kernel sets each peak, and what a
point that beats a peak does."""

import pytest

from engine_check.claims import decode_memory_bound
from engine_check.peaks import (
    BANDWIDTH,
    MATMUL,
    Kernel,
    PeakSettings,
    best_peaks,
    measure_kernels,
    settle_peaks,
)
from engine_check.report import derive_rows, peak_lines
from engine_check.timing import measure_for

ONCE = PeakSettings(warmups=1, min_repeats=2, min_seconds=0.0)


class ScriptedTimer:
    """Each kernel's calls take the milliseconds given for it, warm-ups included."""

    def __init__(self, ms_by_kernel: dict):
        self.ms = ms_by_kernel
        self.calls: list[str] = []

    def time_ms(self, fn) -> float:
        self.calls.append(fn.__name__)
        return self.ms[fn.__name__]


def kernel(name: str, kind: str, work: float) -> Kernel:
    def run() -> None:
        pass

    run.__name__ = name
    return Kernel(name, kind, work, run)


# Counted as the bus moves them on a CPU: a read of n bytes moves n, a copy 3n (its
# stores read each line first), a triad 4n; n = 1 GB.
KERNELS = [
    kernel("read", BANDWIDTH, 1e9),
    kernel("copy", BANDWIDTH, 3e9),
    kernel("triad", BANDWIDTH, 4e9),
    kernel("matmul 4096x4096x4096", MATMUL, 1e11),
]
# the read streams at 16 GB/s, the copy at 12 GB/s, the triad at 12.8 GB/s; 200 GFLOP/s
FIRST = {"read": 62.5, "copy": 250.0, "triad": 312.5, "matmul 4096x4096x4096": 500.0}


def sections(decode_bytes: float) -> dict:
    """One point of each kind, each taking 125 ms."""
    return {
        "prefill": [{"prompt_len": 512, "ms": 125.0, "flops": 2e10, "bytes": 1e8}],
        "decode": [{"context_len": 128, "ms": 125.0, "flops": 1e8, "bytes": decode_bytes}],
        "batch": [{"batch": 1, "context_len": 128, "ms": 125.0, "flops": 1e8, "bytes": 1e9}],
        "recompute": [],
    }


def no_remeasure(kind):
    raise AssertionError(f"{kind} was measured again")


def test_a_kernel_is_timed_until_its_repeats_and_seconds_are_both_reached():
    timer = ScriptedTimer({"read": 62.5})
    timing = measure_for(KERNELS[0].run, timer, warmups=1, min_repeats=2, min_seconds=0.3)
    assert timing.warmup_ms == (62.5,)
    assert timing.samples_ms == (62.5,) * 5  # 5 x 62.5 ms is the first total >= 0.3 s
    assert len(timer.calls) == 6


def test_the_copy_is_slower_than_a_read_so_mbu_divides_by_the_read_stream():
    timer = ScriptedTimer(FIRST)
    rows = measure_kernels(timer, KERNELS, ONCE, "before")
    assert [(r["name"], r["rate"], r["calls"]) for r in rows] == [
        ("read", 16e9, 2),
        ("copy", 12e9, 2),
        ("triad", 12.8e9, 2),
        ("matmul 4096x4096x4096", 200e9, 2),
    ]
    assert best_peaks(rows) == {
        "matmul_flops_per_s": 200e9,
        "matmul_from": "matmul 4096x4096x4096",
        "bandwidth_bytes_per_s": 16e9,
        "bandwidth_from": "read",
    }
    # decode moves 1.2 GB in 125 ms: 9.6 GB/s, 60% of the read stream (80% of the copy's)
    rows, peaks, warnings = settle_peaks(rows, sections(1.2e9), no_remeasure)
    assert warnings == []
    derived = derive_rows(sections(1.2e9), peaks)
    assert derived["decode"][0]["mbu"] == 0.6
    assert derived["decode"][0]["bytes_per_s"] == 9.6e9
    assert derived["prefill"][0]["mfu"] == 0.8
    assert derived["batch"][0]["mbu"] == 0.5
    assert peak_lines({**peaks, "kernels": rows})[1] == (
        "  matmul 200 GFLOP/s (matmul 4096x4096x4096)    memory 16 GB/s (read)"
    )
    claim = decode_memory_bound({"decode": derived["decode"]})
    assert "60% of the measured memory bandwidth" in claim["text"]


def test_a_peak_is_the_best_of_the_rounds_before_and_after_the_experiments():
    before = measure_kernels(ScriptedTimer(FIRST), KERNELS, ONCE, "before")
    faster_copy = {**FIRST, "copy": 150.0}  # 20 GB/s after the experiments
    after = measure_kernels(ScriptedTimer(faster_copy), KERNELS, ONCE, "after")
    _, peaks, _ = settle_peaks(before + after, sections(1.2e9), no_remeasure)
    assert (peaks["bandwidth_bytes_per_s"], peaks["bandwidth_from"]) == (20e9, "copy")


def remeasuring(ms: dict, asked: list):
    def remeasure(kind):
        asked.append(kind)
        again = [k for k in KERNELS if k.kind == kind]
        return measure_kernels(ScriptedTimer(ms), again, ONCE.longer(), "again")

    return remeasure


def test_a_point_above_a_peak_has_that_peak_measured_again_and_says_so():
    rows = measure_kernels(ScriptedTimer(FIRST), KERNELS, ONCE, "before")
    asked: list[str] = []
    # decode moves 2.4 GB in 125 ms: 19.2 GB/s, above the 16 GB/s read; measured again
    # for longer, the read reaches 20 GB/s
    rows, peaks, warnings = settle_peaks(
        rows, sections(2.4e9), remeasuring({**FIRST, "read": 50.0}, asked)
    )
    assert asked == [BANDWIDTH]
    assert [r["round"] for r in rows] == ["before"] * 4 + ["again"] * 3
    assert [r["calls"] for r in rows if r["round"] == "again"] == [6, 6, 6]
    assert (peaks["bandwidth_bytes_per_s"], peaks["bandwidth_from"]) == (20e9, "read")
    assert peaks["matmul_flops_per_s"] == 200e9
    assert warnings == [
        "the bandwidth peak was measured low: decode at context 128 reached 19.2 GB/s, "
        "120% of it (16 GB/s, read); measured again for longer, read reached 20 GB/s"
    ]
    assert derive_rows(sections(2.4e9), peaks)["decode"][0]["mbu"] == 0.96


def test_a_point_still_above_the_remeasured_peak_becomes_the_peak():
    rows = measure_kernels(ScriptedTimer(FIRST), KERNELS, ONCE, "before")
    asked: list[str] = []
    rows, peaks, warnings = settle_peaks(rows, sections(2.4e9), remeasuring(FIRST, asked))
    assert (peaks["bandwidth_bytes_per_s"], peaks["bandwidth_from"]) == (
        19.2e9,
        "decode at context 128",
    )
    assert warnings == [
        "the bandwidth peak was measured low: decode at context 128 reached 19.2 GB/s, "
        "120% of it (16 GB/s, read); measured again for longer, read reached 16 GB/s, "
        "still less, so the peak is the rate decode at context 128 reached"
    ]
    derived = derive_rows(sections(2.4e9), peaks)
    assert derived["decode"][0]["mbu"] == 1.0
    assert max(r["mbu"] for r in derived["batch"] + derived["decode"]) <= 1


def test_prefill_above_the_matmul_peak_has_the_matmul_peak_measured_again():
    rows = measure_kernels(ScriptedTimer(FIRST), KERNELS, ONCE, "before")
    asked: list[str] = []
    fast_prefill = sections(1.2e9)
    fast_prefill["prefill"][0]["flops"] = 2.675e10  # 214 GFLOP/s
    _, peaks, warnings = settle_peaks(
        rows, fast_prefill, remeasuring({**FIRST, "matmul 4096x4096x4096": 400.0}, asked)
    )
    assert asked == [MATMUL]
    assert peaks["matmul_flops_per_s"] == 250e9
    assert warnings == [
        "the matmul peak was measured low: prefill of 512 tokens reached 214 GFLOP/s, "
        "107% of it (200 GFLOP/s, matmul 4096x4096x4096); measured again for longer, "
        "matmul 4096x4096x4096 reached 250 GFLOP/s"
    ]
    assert derive_rows(fast_prefill, peaks)["prefill"][0]["mfu"] == pytest.approx(0.856)


def test_a_run_stored_before_the_peaks_were_settled_reads_as_schema_2():
    from engine_check.report import current_peaks

    old = {"peaks": {"matmul_flops_per_s": 1e11, "copy_bytes_per_s": 2e10, "matmul_size": 3072}}
    peaks = current_peaks(old)
    assert (peaks["bandwidth_bytes_per_s"], peaks["bandwidth_from"]) == (
        2e10,
        "copy (counted as 2 x its size)",
    )
    assert peaks["matmul_from"] == "matmul 3072^3"
