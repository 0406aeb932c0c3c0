"""Which limit a step hits, judged by experiment: scripted times (no real timing) that follow
the bytes, the FLOPs, or a busy machine's whims, and the verdicts they give."""

from engine_check.claims import compute_claims
from engine_check.contention import RetryBudget, measure_steady
from engine_check.fits import loglog_fit, two_factor_fit
from engine_check.timing import Timing

GB = 1e9


def run_with(times_ms, shares=None) -> dict:
    """A result whose decode and prefill points took `times_ms`: {"depth": [3], "batch":
    [3], "prefill": [3]}; every point's other-programs share is `shares` (or 0.02)."""
    share = 0.02 if shares is None else shares
    depth = [
        {"layers": layers, "context_len": 128, "bytes": nbytes, "flops": nbytes / 2,
         "ms": t, "best_ms": t, "other_share": share}
        for layers, nbytes, t in zip((2, 4, 6), (0.4 * GB, 0.8 * GB, 1.2 * GB), times_ms["depth"],
                                     strict=True)
    ]  # fmt: skip
    batch = [
        {"batch": b, "context_len": 128, "bytes": 1.2 * GB, "flops": b * 0.6 * GB,
         "ms": t, "best_ms": t, "tokens_per_s": b / (t / 1e3), "other_share": share}
        for b, t in zip((1, 2, 4), times_ms["batch"], strict=True)
    ]  # fmt: skip
    prefill = [
        {"prompt_len": n, "flops": n * 0.6 * GB, "bytes": 1.2 * GB, "ms": t, "best_ms": t,
         "flops_per_s": n * 0.6 * GB / (t / 1e3), "mfu": 0.7, "other_share": share}
        for n, t in zip((128, 256, 512), times_ms["prefill"], strict=True)
    ]  # fmt: skip
    return {
        "peaks": {"bandwidth_bytes_per_s": 40 * GB, "matmul_flops_per_s": 150 * GB},
        "prefill": prefill,
        "decode": [],
        "depth": depth,
        "batch": batch,
        "batch_ridge": 4,
        "recompute": [],
        "kv": None,
    }


# time = bytes / 20 GB/s: 20, 40, 60 ms by depth, 60 ms whatever the batch
FOLLOWS_BYTES = {"depth": [20.0, 40.0, 60.0], "batch": [60.0, 60.0, 60.0],
                 "prefill": [500.0, 1000.0, 2000.0]}  # fmt: skip
# time = FLOPs / 10 GFLOP/s: 20, 40, 60 ms by depth, 60, 120, 240 ms by batch
FOLLOWS_FLOPS = {"depth": [20.0, 40.0, 60.0], "batch": [60.0, 120.0, 240.0],
                 "prefill": [900.0, 900.0, 900.0]}  # fmt: skip
# a memory-bound machine whose batch-2, batch-4 and 512-token points another program slowed
BLURRED = {"depth": [20.0, 40.0, 60.0], "batch": [60.0, 130.0, 200.0],
           "prefill": [500.0, 1000.0, 700.0]}  # fmt: skip


def test_time_that_follows_the_bytes_is_memory_bound_and_the_note_quotes_exponents():
    claims = compute_claims(run_with(FOLLOWS_BYTES))
    decode = claims["decode_memory_bound"]
    assert decode["holds"] is True and decode["verdict"] == "holds"
    assert decode["text"] == (
        "4.00x the FLOPs (batch 1 to 4) cost 1.00x the time; 3.00x the bytes (2 to 6 blocks "
        "at batch 1) cost 3.00x: time ∝ bytes^1.00 · FLOPs^0.00 over 6 points (R² 1.00); "
        "a batch-1 step took 60 ms, streaming 20 GB/s, 50% of the measured memory bandwidth "
        "(MBU): decode is bound by reading the weights"
    )
    prefill = claims["prefill_compute_bound"]
    assert prefill["verdict"] == "holds"
    assert prefill["text"].startswith(
        "prefill of 128 to 512 tokens: 4.00x the FLOPs cost 4.00x the time at the same "
        "weights read (time ∝ FLOPs^1.00 over 3 prompt lengths, R² 1.00)"
    )
    assert prefill["text"].endswith(
        "70% of the measured matmul peak (MFU): prefill is bound by the matmuls"
    )


def test_time_that_follows_the_flops_is_not_memory_bound():
    claims = compute_claims(run_with(FOLLOWS_FLOPS))
    decode = claims["decode_memory_bound"]
    assert decode["holds"] is False and decode["verdict"] == "does not hold"
    assert "4.00x the FLOPs (batch 1 to 4) cost 4.00x the time" in decode["text"]
    assert "time ∝ bytes^0.00 · FLOPs^1.00" in decode["text"]
    assert decode["text"].endswith("the time follows the FLOPs, so decode here is compute-bound")
    prefill = claims["prefill_compute_bound"]
    assert prefill["verdict"] == "does not hold"
    assert "FLOPs^0.00" in prefill["text"]
    assert claims["batch_amortizes_decode"]["verdict"] == "does not hold"


def test_a_busy_machine_that_blurs_the_trends_gives_unsure_not_does_not_hold():
    busy = compute_claims(run_with(BLURRED, shares=0.45))
    for name in ("decode_memory_bound", "prefill_compute_bound"):
        assert busy[name]["holds"] is False
        assert busy[name]["verdict"] == "unsure"
        assert busy[name]["text"].endswith(
            "unsure: the machine was busy (other programs used up to 45% of the CPU while "
            "these points ran), so the measurements cannot tell"
        )
    # the same times on a quiet machine are taken at their word
    quiet = compute_claims(run_with(BLURRED))
    assert quiet["decode_memory_bound"]["verdict"] == "does not hold"
    assert quiet["prefill_compute_bound"]["verdict"] == "does not hold"


def test_fits_use_every_point():
    fit = loglog_fit([1, 2, 4, 8], [10.0, 10.0, 10.0, 80.0])
    # one pair (1 -> 4) says flat; the fit over all four sees the rise
    assert round(fit.exponents[0], 3) == 0.9 and fit.points == 4
    assert loglog_fit([3, 3], [1.0, 2.0]) is None
    # bytes and FLOPs moving together cannot be told apart
    assert two_factor_fit([1, 2, 4], [2, 4, 8], [1.0, 2.0, 4.0]) is None
    fit = two_factor_fit([1, 2, 4, 4], [1, 2, 4, 16], [1.0, 2.0, 4.0, 4.0])
    assert [round(e, 6) for e in fit.exponents] == [1.0, 0.0] and fit.r2 == 1.0


class ScriptedTimer:
    def __init__(self, ms):
        self.ms = list(ms)

    def time_ms(self, fn):
        fn()
        return self.ms.pop(0)


class ScriptedMeter:
    def __init__(self, shares):
        self.shares = shares

    def __call__(self):
        return self

    def start(self):
        pass

    def stop(self):
        return self.shares.pop(0)


def test_a_disturbed_point_is_timed_again_and_the_fastest_try_kept():
    timer = ScriptedTimer([9.0, 30.0, 31.0, 10.0, 11.0])  # warm-up, then two tries of 2
    budget = RetryBudget(1.0)
    steady = measure_steady(lambda: None, timer, 1, 2, ScriptedMeter([0.6, 0.05]), budget)
    assert steady.tries == 2 and steady.other_share == 0.05
    assert steady.timing == Timing(warmup_ms=(9.0,), samples_ms=(10.0, 11.0))
    assert budget.spent == 0.021


def test_retries_stop_when_the_budget_is_spent():
    timer = ScriptedTimer([100.0, 200.0, 140.0, 150.0])
    budget = RetryBudget(0.5)
    steady = measure_steady(lambda: None, timer, 0, 2, ScriptedMeter([0.6, 0.7, 0.6]), budget)
    # a second try like the first (0.3 s) fits in 0.5 s; after it (0.29 s) a third would not
    assert steady.tries == 2 and budget.spent == 0.29
    assert steady.timing.samples_ms == (140.0, 150.0) and steady.other_share == 0.7


def test_the_quiz_quotes_an_unsure_verdict_as_it_stands():
    from drill.serving.evidence import quote_evidence

    claims = compute_claims(run_with(BLURRED, shares=0.45))
    run = {"device_name": "Example CPU", "dtype": "float32", "claims": claims}
    (line,) = quote_evidence(["decode_memory_bound"], run)
    assert line.startswith("Your last engine run, on Example CPU (float32): 4.00x the FLOPs")
    assert line.endswith("so the measurements cannot tell.")


def test_decode_quotes_its_share_of_the_read_stream_beside_the_mbu():
    run = run_with(FOLLOWS_BYTES)
    run["peaks"]["kernels"] = [
        {"name": "read", "rate": 25 * GB},
        {"name": "read", "rate": 32 * GB},
        {"name": "copy", "rate": 40 * GB},
    ]
    text = compute_claims(run)["decode_memory_bound"]["text"]
    assert (
        "20 GB/s, 50% of the measured memory bandwidth (MBU) and 62.5% of the read stream:" in text
    )


def test_a_read_of_the_same_weights_timed_in_turns_is_quoted_before_the_peak_read():
    run = run_with(FOLLOWS_BYTES)
    run["peaks"]["kernels"] = [{"name": "read", "rate": 32 * GB}]
    run["stream_pair"] = {"fraction": 0.875}
    text = compute_claims(run)["decode_memory_bound"]["text"]
    assert "(MBU) and 87.5% of a read of the same weights timed in turns with it" in text
    assert "of the read stream" not in text


def probe(own_rate: float, other_rate: float) -> list[dict]:
    return [
        {"dtype": "float32", "bytes": 4e8, "bytes_per_s": own_rate},
        {"dtype": "bfloat16", "bytes": 2e8, "bytes_per_s": other_rate},
    ]


def test_the_verdict_says_the_bytes_were_varied_by_depth_and_why_not_by_dtype():
    run = run_with(FOLLOWS_BYTES)
    run["dtype_probe"] = probe(27 * GB, 17 * GB)
    decode = compute_claims(run)["decode_memory_bound"]
    assert decode["verdict"] == "holds"
    assert decode["text"].endswith(
        "; the bytes were varied by depth, not by dtype: bfloat16 weights streamed 17 GB/s in "
        "a one-row matmul against 27 GB/s for float32, so a sweep of dtypes would time the "
        "kernels as well as the bytes: decode is bound by reading the weights"
    )
    run["dtype_probe"] = probe(27 * GB, 25 * GB)  # within 15%: either experiment serves
    assert (
        "by depth (bfloat16 weights streamed 25 GB/s in a one-row matmul against 27 GB/s for "
        "float32: a sweep of dtypes would serve too): decode is bound"
    ) in compute_claims(run)["decode_memory_bound"]["text"]
    del run["dtype_probe"]
    assert "dtype" not in compute_claims(run)["decode_memory_bound"]["text"]
