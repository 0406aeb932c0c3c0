"""The calculator's TTFT and TPOT set against a run's points, on a hand-made run (no
torch, no timing). Every expected figure is worked out by hand in the comments."""

import copy

import pytest

from engine_check.calculator_check import calculator_check, where_wrong
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
        # batch 2 at context 10: 4,000,320 bytes, 4.00032 ms at the peak; measured 12 ms, so
        # batch MBU 33.336%. Batch 4 (the ridge is 3): 8,000,320 FLOPs, 8.00032 ms at the
        # peak; measured 20 ms, so decode MFU 40.0016%.
        "batch": [
            {"batch": 1, "ms": 8.0},
            {"batch": 2, "ms": 12.0},
            {"batch": 4, "ms": 20.0},
        ],
        "batch_ridge": 3,
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
    assert check["batch_mbu"] == pytest.approx(0.33336)
    assert check["decode_mfu"] == pytest.approx(0.400016)


def test_a_run_without_its_ridge_takes_no_decode_mfu():
    run = made_run()
    del run["batch_ridge"]  # stored before the ridge was: nothing says batch 4 is compute-bound
    check = checked(run)
    assert check["decode_mfu"] is None
    assert check["batch_mbu"] == pytest.approx(0.33336)
    assert [p["calibration"] for p in check["points"]][-2:] == [True, False]
    # batch 4 at prefill's MFU: 8,000,320 FLOPs at 0.5e9/s = 16.00064 ms against 20
    assert check["points"][-1]["error_pct"] == pytest.approx(-19.9968)


def test_every_point_is_predicted_with_its_bound_and_error():
    points = checked()["points"]
    assert [p["label"] for p in points] == [
        "prefill 10", "prefill 100", "decode context 10", "decode context 100",
        "batch 1 at 10", "batch 2 at 10", "batch 4 at 10",
    ]  # fmt: skip
    assert [p["calibration"] for p in points] == [
        False, True, True, False, False, True, True,
    ]  # fmt: skip
    # prefill 10: 20,000,440 FLOPs at 0.5e9/s = 40.00088 ms (bytes 4,000,160 take 8 ms)
    # decode 100: 4,001,600 bytes at 0.5e9/s = 8.0032 ms (2,000,800 FLOPs at the decode
    # MFU take 5.0018 ms)
    # batch 2: 4,000,320 bytes at the batch MBU = 12 ms; 4,000,160 FLOPs = 10 ms: memory
    # batch 4: 8,000,320 FLOPs at the decode MFU = 20 ms; 4,000,640 bytes = 12.001 ms
    expected = [
        (40.00088, "compute", -19.99824), (400.0808, "compute", 0.0),
        (8.00032, "memory", 0.0), (8.0032, "memory", -19.968),
        (8.00032, "memory", 0.004), (12.0, "memory", 0.0),
        (20.0, "compute", 0.0),
    ]  # fmt: skip
    for point, (predicted_ms, bound, error_pct) in zip(points, expected, strict=True):
        assert point["predicted_ms"] == pytest.approx(predicted_ms)
        assert point["bound"] == bound
        assert point["error_pct"] == pytest.approx(error_pct, abs=1e-6)
    assert points[1]["prompt_len"] == 100
    assert (points[6]["context_len"], points[6]["batch"]) == (10, 4)


def test_mean_absolute_errors_against_the_targets():
    check = checked()
    # TTFT: (19.99824 + 0) / 2; TPOT: (0 + 19.968 + 0.004 + 0 + 0) / 5
    assert check["ttft_mean_abs_error_pct"] == pytest.approx(9.99912)
    assert check["tpot_mean_abs_error_pct"] == pytest.approx(3.9944)
    # over the points the efficiencies do not come from: prefill 10; decode 100 and batch 1
    assert check["ttft_held_out_error_pct"] == pytest.approx(19.99824)
    assert check["tpot_held_out_error_pct"] == pytest.approx(9.986)
    assert (check["ttft_target_pct"], check["tpot_target_pct"]) == (15.0, 10.0)


def test_the_notes_say_where_the_calculator_is_wrong():
    run = made_run()
    del run["batch_ridge"]
    run["batch"][2]["ms"] = 40.0
    notes = checked(run)["notes"]
    assert len(notes) == 5
    assert "2·params FLOPs per prompt token are +25%" in notes[0]
    assert "every parameter per step is +25%" in notes[0]
    # batch 4: 16.00064 ms against 40, -59.9984%
    assert notes[1] == (
        "TPOT misses its 10% target at decode context 100: 8 ms (memory-bound) against "
        "10 ms, -20%; batch 4 at 10: 16 ms (compute-bound) against 40 ms, -60%"
    )
    # batch 1: (0 + 19.968 + 0.004) / 3; the sweep: (0 + 59.9984) / 2
    assert notes[2] == "TPOT at batch 1 is off by 6.7% on average, over the batch sweep by 30.0%"
    assert notes[3] == (
        "the run's own spread: the same step (decode context 10, batch 1 at 10) measured 8.0 "
        "and 8.0 ms at two moments, 0% apart: errors of that size are the measurements' own "
        "noise"
    )
    # batch 4's reads at the batch MBU: 4,000,640 bytes / 0.33336e9 = 12.00096 ms, within
    # 1.5x of its 16.00064 ms of compute
    assert notes[4] == (
        "near the ridge, where a decode step's compute and its reads take about as long "
        "(batch 4: 16 and 12 ms), the roofline takes the slower of the two, as if the other "
        "were hidden under it; measured, they overlap only in part, so the calculator is low "
        "for batches 4"
    )


def test_a_batch_far_above_the_ridge_is_charged_at_the_decode_mfu():
    run = made_run()
    del run["batch_ridge"]
    # batch 8: 16,000,640 FLOPs at prefill's 0.5e9/s = 32.00128 ms, reads 12.0029 ms
    run["batch"].append({"batch": 8, "ms": 40.0})
    notes = checked(run)["notes"]
    assert notes[-1] == (
        "above the ridge it charges a decode step at prefill's MFU, which the few-row matmuls "
        "of a decode step do not reach here, so it is low for batches 8"
    )
    run["batch_ridge"] = 3  # batch 8 now gives the decode MFU, and batch 4 is above the ridge
    run["batch"][2]["ms"] = 16.0  # 8,000,320 FLOPs at 16,000,640 / 40 ms = 20 ms: +25%
    assert checked(run)["notes"][-1] == (
        "above the ridge it charges a decode step at the decode MFU of its largest batch, "
        "which the few-row matmuls of a decode step beat here, so it is high for batches 4"
    )


def test_below_the_ridge_each_added_sequence_is_not_charged():
    point = {
        "kind": "tpot", "label": "batch 8 at 10", "batch": 8, "context_len": 10,
        "predicted_ms": 10.0, "compute_ms": 2.0, "memory_ms": 10.0, "bound": "memory",
        "measured_ms": 20.0, "error_pct": -50.0, "calibration": False,
    }  # fmt: skip
    check = {
        "points": [point], "flops_ratio": 1.0, "bytes_ratio": 1.0, "batch_mbu": 0.3,
        "ttft_mean_abs_error_pct": None, "tpot_mean_abs_error_pct": 5.0,
        "ttft_target_pct": 15.0, "tpot_target_pct": 10.0,
    }  # fmt: skip
    assert where_wrong(check)[-1] == (
        "below the ridge the calculator takes a decode step as the weights' read time at the "
        "batch MBU whatever the batch (the roofline's max of compute and memory, compute "
        "hidden under the reads); measured, each added sequence costs time of its own, so the "
        "calculator is low for batches 8"
    )


def test_no_miss_is_reported_within_the_targets():
    run = made_run()
    run["decode"][0]["ms"] = 8.0032
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
        "MBU 50%, decode MFU 40%, batch MBU 33.3% (this run: prefill of 100 tokens and decode "
        "at context 10, batch 1, batch MBU at batch 2, decode MFU at batch 4, in the "
        "calculator's counts; by the engine's counts 40% and 40%)"
    )
    assert lines[1].split() == ["point", "calculator", "bound", "measured", "error"]
    assert lines[3].split() == ["prefill", "100", "*", "400", "ms", "compute", "400", "ms", "+0%"]
    # batch 1: 8.00032 ms predicted against 8.0004 measured, -0.001%: "+0%", not "-0%"
    run = made_run()
    run["batch"][0]["ms"] = 8.0004
    assert calculator_lines(checked(run))[6].split()[-2:] == ["ms", "+0%"]
    assert lines[8].split() == ["batch", "4", "at", "10", "*", "20", "ms", "compute", "20", "ms",
                                "+0%"]  # fmt: skip
    assert lines[9:11] == [
        "  TTFT mean absolute error 10.0% (within the 15% target); 20.0% over the point the "
        "efficiencies do not come from",
        "  TPOT mean absolute error 4.0% (within the 10% target); 10.0% over the 2 points "
        "the efficiencies do not come from",
    ]


def test_a_stored_run_without_the_check_gets_it_when_shown():
    run = made_run()
    assert calculator_of(run)["tpot_mean_abs_error_pct"] == pytest.approx(3.9944)
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
    assert (
        "TPOT mean absolute error <b>4.0%</b> (within the 10% target); 10.0% over the 2 points "
        "the efficiencies do not come from"
    ) in section
    assert "MFU 50%, MBU 50%, decode MFU 40%, batch MBU 33.3%: this run" in section
