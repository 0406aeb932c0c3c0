"""The calculator's TTFT and TPOT set against a run's points, on a hand-made run (no
torch, no timing). Every expected figure is worked out by hand in the comments."""

import copy

import pytest

from engine_check.calculator_check import calculator_check
from engine_check.html_report import calculator_section
from engine_check.report import calculator_lines, calculator_of


def made_run() -> dict:
    """One block, one head of width 2, a million parameters in fp32; both peaks 1e9/s.

    KV per token: 2 · 1 layer · 1 head · 2 · 4 bytes = 16. The calculator counts
    prefill of P tokens as P · 2e6 + 4 · 1 · 1 · 2 · P(P+1)/2 FLOPs, and a decode step
    of B sequences at context L as B · (2e6 + 8 · L) FLOPs and 4e6 + B · 16 · L bytes.
    """
    return {
        "device_name": "Test CPU <8 cores>",
        "dtype": "float32",
        "config": {
            "model": {"layers": 1, "d_model": 8, "heads": 1, "kv_heads": 1, "head_dim": 2,
                      "ffn": 8, "vocab": 16},
            "params": 1_000_000,
            "batch_context_len": 10,
        },
        "peaks": {"matmul_flops_per_s": 1e9, "bandwidth_bytes_per_s": 1e9},
        # prefill 100: 200,040,400 FLOPs, 0.2000404 s at the peak; measured 0.4000808 s,
        # so MFU 50%. The engine counted 160,032,320 FLOPs: the calculator's are 1.25x.
        "prefill": [
            {"prompt_len": 100, "ms": 400.0808, "flops": 160_032_320, "mfu": 0.4},
            {"prompt_len": 10, "ms": 50.0, "flops": 16_000_000, "mfu": 0.3},
        ],
        # decode at context 10, batch 1: 4,000,160 bytes, 4.00016 ms at the peak; measured
        # 8.00032 ms, so MBU 50%. The engine counted 3,200,128 bytes: 1.25x again.
        "decode": [
            {"context_len": 100, "ms": 10.0, "bytes": 3_201_568, "mbu": 0.25},
            {"context_len": 10, "ms": 8.00032, "bytes": 3_200_128, "mbu": 0.4},
        ],
        "batch": [
            {"batch": 1, "ms": 8.0},
            {"batch": 2, "ms": 10.0},
            {"batch": 4, "ms": 20.0},
        ],
    }  # fmt: skip


def checked(run: dict | None = None) -> dict:
    run = made_run() if run is None else run
    return calculator_check(run, run["peaks"])


def test_efficiencies_are_taken_in_the_calculators_counts_beside_the_engines():
    check = checked()
    assert check["mfu"] == pytest.approx(0.5)
    assert check["mbu"] == pytest.approx(0.5)
    assert (check["run_mfu"], check["run_mbu"]) == (0.4, 0.4)
    assert check["flops_ratio"] == pytest.approx(1.25)
    assert check["bytes_ratio"] == pytest.approx(1.25)


def test_every_point_is_predicted_with_its_bound_and_error():
    points = checked()["points"]
    assert [p["label"] for p in points] == [
        "prefill 10", "prefill 100", "decode context 10", "decode context 100",
        "batch 1 at 10", "batch 2 at 10", "batch 4 at 10",
    ]  # fmt: skip
    assert [p["calibration"] for p in points] == [False, True, True] + [False] * 4
    # prefill 10: 20,000,440 FLOPs at 0.5e9/s = 40.00088 ms (bytes 4,000,160 take 8 ms)
    # decode 100: 4,001,600 bytes at 0.5e9/s = 8.0032 ms (2,000,800 FLOPs take 4 ms)
    # batch 2: 4,000,320 bytes = 8.00064 ms; 4,000,160 FLOPs = 8.00032 ms: memory
    # batch 4: 8,000,320 FLOPs = 16.00064 ms; 4,000,640 bytes = 8.00128 ms: compute
    expected = [
        (40.00088, "compute", -19.99824), (400.0808, "compute", 0.0),
        (8.00032, "memory", 0.0), (8.0032, "memory", -19.968),
        (8.00032, "memory", 0.004), (8.00064, "memory", -19.9936),
        (16.00064, "compute", -19.9968),
    ]  # fmt: skip
    for point, (predicted_ms, bound, error_pct) in zip(points, expected, strict=True):
        assert point["predicted_ms"] == pytest.approx(predicted_ms)
        assert point["bound"] == bound
        assert point["error_pct"] == pytest.approx(error_pct, abs=1e-6)
    assert points[1]["prompt_len"] == 100
    assert (points[6]["context_len"], points[6]["batch"]) == (10, 4)


def test_mean_absolute_errors_against_the_targets():
    check = checked()
    # TTFT: (19.99824 + 0) / 2; TPOT: (0 + 19.968 + 0.004 + 19.9936 + 19.9968) / 5
    assert check["ttft_mean_abs_error_pct"] == pytest.approx(9.99912)
    assert check["tpot_mean_abs_error_pct"] == pytest.approx(11.99248)
    assert (check["ttft_target_pct"], check["tpot_target_pct"]) == (15.0, 10.0)


def test_the_notes_say_where_the_calculator_is_wrong():
    notes = checked()["notes"]
    assert len(notes) == 6
    assert "2·params FLOPs per prompt token are +25%" in notes[0]
    assert "every parameter per step is +25%" in notes[0]
    assert notes[1] == (
        "TPOT misses its 10% target at decode context 100: 8 ms (memory-bound) against "
        "10 ms, -20%; batch 2 at 10: 8 ms (memory-bound) against 10 ms, -20%; batch 4 at "
        "10: 16 ms (compute-bound) against 20 ms, -20%"
    )
    # batch 1: (0 + 19.968 + 0.004) / 3; the sweep: (19.9936 + 19.9968) / 2
    assert notes[2] == "TPOT at batch 1 is off by 6.7% on average, over the batch sweep by 20.0%"
    assert notes[3] == (
        "the run's own spread: the same step (decode context 10, batch 1 at 10) measured 8.0 "
        "and 8.0 ms at two moments, 0% apart: errors of that size are the measurements' own "
        "noise"
    )
    assert notes[4].endswith("so the calculator is low for batches 2")
    assert notes[5].endswith("do not reach here, so it is low for batches 4")


def test_no_miss_is_reported_within_the_targets():
    run = made_run()
    run["decode"][0]["ms"] = 8.0032
    run["batch"][1]["ms"] = 8.0
    run["batch"][2]["ms"] = 16.0
    notes = checked(run)["notes"]
    assert len(notes) == 2 and notes[0].startswith("counting:")
    assert "measured 8.0 and 8.0 ms" in notes[1]


def test_the_spread_of_one_step_measured_twice():
    run = made_run()
    run["batch"][0]["ms"] = 10.0  # batch 1 at context 10, against 8.00032 ms before
    (spread,) = [n for n in checked(run)["notes"] if n.startswith("the run's own spread")]
    assert "measured 8.0 and 10.0 ms at two moments, 25% apart" in spread


def test_the_text_table():
    lines = calculator_lines(checked())
    assert lines[0] == (
        "(f) the calculator (kv --latency) against this run: the peaks above, MFU 50% and "
        "MBU 50% (this run: prefill of 100 tokens and decode at context 10, batch 1, in the "
        "calculator's counts; by the engine's counts 40% and 40%)"
    )
    assert lines[1].split() == ["point", "calculator", "bound", "measured", "error"]
    assert lines[3].split() == ["prefill", "100", "*", "400", "ms", "compute", "400", "ms", "+0%"]
    assert lines[8].split() == ["batch", "4", "at", "10", "16", "ms", "compute", "20", "ms", "-20%"]
    assert "  TTFT mean absolute error 10.0% (within the 15% target)" in lines
    assert "  TPOT mean absolute error 12.0% (over the 10% target)" in lines


def test_a_stored_run_without_the_check_gets_it_when_shown():
    run = made_run()
    assert calculator_of(run)["tpot_mean_abs_error_pct"] == pytest.approx(11.99248)
    stored = {**run, "calculator": {"points": [], "stored": True}}
    assert calculator_of(stored) == {"points": [], "stored": True}
    broken = copy.deepcopy(run)
    del broken["prefill"][0]["ms"]
    assert calculator_of(broken) is None


def test_the_page_section_escapes_the_device_and_shows_every_point():
    run = made_run()
    run["device_name"] = "<script>x</script>"
    section = calculator_section(run)
    assert "<script>" not in section
    assert section.count("<tr><td") == 7
    assert "TPOT mean absolute error <b>12.0%</b> (over the 10% target)" in section
