"""Verdicts computed from measurements, on hand-made results (no torch needed)."""

import copy

from engine_check.claims import CLAIM_NAMES, compute_claims


def measured() -> dict:
    """A CPU-like run: decode streams near the memory bandwidth, prefill near the matmul peak."""
    return {
        "prefill": [
            {"prompt_len": 128, "ms": 500.0, "flops_per_s": 1.0e11, "mfu": 0.55,
             "bandwidth_util": 0.10},
            {"prompt_len": 512, "ms": 2000.0, "flops_per_s": 1.2e11, "mfu": 0.8,
             "bandwidth_util": 0.03},
        ],
        "decode": [
            {"context_len": 1024, "ms": 60.0, "bytes_per_s": 1.9e10, "mbu": 0.86,
             "flops_util": 0.05},
            {"context_len": 128, "ms": 55.0, "bytes_per_s": 2.0e10, "mbu": 0.9,
             "flops_util": 0.06},
        ],
        "batch": [
            {"batch": 1, "ms": 50.0, "tokens_per_s": 20.0},
            {"batch": 4, "ms": 55.0, "tokens_per_s": 72.7},
            {"batch": 8, "ms": 62.5, "tokens_per_s": 128.0},
            {"batch": 32, "ms": 200.0, "tokens_per_s": 160.0},
        ],
        "batch_ridge": 17,
        "recompute": [
            {"position": 32, "cached_ms": 50.0, "recompute_ms": 120.0},
            {"position": 256, "cached_ms": 52.0, "recompute_ms": 900.0},
        ],
        "kv": {"measured_bytes": 50331648, "formula_bytes": 50331648,
               "allocator_delta_bytes": None, "layers": 6, "kv_heads": 4, "head_dim": 128,
               "seq_len": 2048, "requests": 1, "dtype_bytes": 4},
    }  # fmt: skip


def test_every_claim_is_present_with_a_bool_and_a_sentence():
    claims = compute_claims(measured())
    assert list(claims) == list(CLAIM_NAMES)
    for claim in claims.values():
        assert isinstance(claim["holds"], bool)
        assert isinstance(claim["text"], str) and claim["text"]


def test_claims_hold_on_a_typical_run_and_quote_the_numbers():
    claims = compute_claims(measured())
    assert all(c["holds"] for c in claims.values())
    decode = claims["decode_memory_bound"]["text"]
    # the shortest context is judged, whatever the list order
    assert "context 128" in decode and "90%" in decode and "6%" in decode
    assert decode.endswith("memory-bound")
    prefill = claims["prefill_compute_bound"]["text"]
    assert "512 tokens" in prefill and "80%" in prefill and prefill.endswith("compute-bound")
    kv = claims["kv_formula_exact"]["text"]
    assert "50,331,648" in kv and "2·6·4·128·2048·4" in kv and kv.endswith("exact")
    recompute = claims["cache_beats_recompute"]["text"]
    assert "position 256" in recompute and "17.3x" in recompute
    batch = claims["batch_amortizes_decode"]["text"]
    assert "batch 8 decoded 6.4x" in batch and "ridge is near batch 17" in batch


def test_decode_not_memory_bound_when_bandwidth_is_low():
    run = measured()
    for row in run["decode"]:
        row["mbu"] = 0.2
    claim = compute_claims(run)["decode_memory_bound"]
    assert claim["holds"] is False
    assert "overheads" in claim["text"]


def test_decode_compute_heavy_is_not_memory_bound():
    run = measured()
    run["decode"][1]["flops_util"] = 0.4
    claim = compute_claims(run)["decode_memory_bound"]
    assert claim["holds"] is False
    assert "matmul units are the limit" in claim["text"]


def test_prefill_below_half_the_peak_does_not_hold():
    run = measured()
    run["prefill"][1]["mfu"] = 0.45
    assert compute_claims(run)["prefill_compute_bound"]["holds"] is False


def test_kv_mismatch_or_allocator_disagreement_does_not_hold():
    run = measured()
    run["kv"]["measured_bytes"] += 512
    assert compute_claims(run)["kv_formula_exact"]["holds"] is False
    run = measured()
    run["kv"]["allocator_delta_bytes"] = 50331648 + 2**21
    claim = compute_claims(run)["kv_formula_exact"]
    assert claim["holds"] is False and "allocator grew by 52,428,800" in claim["text"]
    run["kv"]["allocator_delta_bytes"] = 50331648
    assert compute_claims(run)["kv_formula_exact"]["holds"] is True


def test_recompute_must_be_slower_and_grow():
    run = measured()
    run["recompute"][1]["recompute_ms"] = 40.0  # faster than the cached step
    assert compute_claims(run)["cache_beats_recompute"]["holds"] is False
    run = measured()
    run["recompute"][0]["recompute_ms"] = 1000.0  # did not grow with position
    assert compute_claims(run)["cache_beats_recompute"]["holds"] is False


def test_batching_judged_by_a_fit_over_the_batches_up_to_the_ridge():
    run = measured()
    run["batch_ridge"] = 15  # batches 1, 4, 8: 50, 55, 62.5 ms grow as batch^0.10
    claim = compute_claims(run)["batch_amortizes_decode"]
    assert claim["holds"] and "batch 8 decoded 6.4x" in claim["text"]
    assert "over batches 1, 4, 8 the step time grew as batch^0.10" in claim["text"]
    run["batch"][2]["ms"] = 266.7  # batch 8 barely better than batch 1: batch^0.70
    run["batch"][2]["tokens_per_s"] = 30.0
    claim = compute_claims(run)["batch_amortizes_decode"]
    assert claim["holds"] is False and "batch^0.70" in claim["text"]
    assert claim["text"].endswith("batching did not pay off")
    run["batch_ridge"] = None  # no ridge: every batch counts, batch^0.47
    claim = compute_claims(run)["batch_amortizes_decode"]
    assert "batch 32 decoded 8.0x" in claim["text"] and claim["holds"] is True
    run["batch"] = run["batch"][:2]  # one pair: judged the old way, at half the ridge
    run["batch_ridge"] = 3
    claim = compute_claims(run)["batch_amortizes_decode"]
    assert claim["holds"] is False and "no batch above 1" in claim["text"]


def test_missing_experiments_give_false_claims_not_errors():
    empty = {"prefill": [], "decode": [], "batch": [], "recompute": [], "kv": None}
    claims = compute_claims(empty)
    assert [c["holds"] for c in claims.values()] == [False] * 5
    assert [c["verdict"] for c in claims.values()] == ["does not hold"] * 5


def test_claims_do_not_modify_the_result():
    run = measured()
    before = copy.deepcopy(run)
    compute_claims(run)
    assert run == before


def test_busy_machine_warning_above_a_tenth_of_the_cpu():
    from engine_check.report import busy_warning

    assert busy_warning({"other_cpu_share": 0.1}) is None
    assert busy_warning({"other_cpu_share": None}) is None
    assert busy_warning({}) is None
    assert busy_warning({"other_cpu_share": 0.35}) == (
        "warning: other programs used 35% of the CPU time during the run; "
        "they slowed it, so the numbers may be low"
    )


def test_other_programs_share_from_proc_stat_counters():
    from engine_check.contention import busy_cpu_seconds, other_share

    stat = "cpu  100 20 30 5000 40 5 5 40 0 0\ncpu0 50 10 15 2500 20 2 3 20 0 0\n"
    # user+nice+system+irq+softirq+steal = 200 ticks; iowait and idle are not busy
    assert busy_cpu_seconds(stat, ticks_per_s=100) == 2.0
    # 10 s of 2 CPUs, 12 CPU-seconds busy, 8 of them ours: others used 4 / 20
    assert other_share(12.0, 8.0, 10.0, 2) == 0.2
    assert other_share(5.0, 8.0, 10.0, 2) == 0.0  # counters are coarse: never negative
    assert other_share(1.0, 0.0, 0.0, 2) == 0.0
