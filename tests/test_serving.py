"""The serving calculator's maths against figures worked out by hand (drill.serving.estimates)."""

import pytest

from drill.errors import ConfigError
from drill.serving.estimates import (
    DEFAULTS,
    Efficiencies,
    efficiencies_from_run,
    memory_per_gpu,
    slo_batch,
    tpot,
    ttft,
)
from drill.serving.gpus import gpu_named, spec_for
from drill.serving.kvmath import ModelShape, get_preset

GiB = 2**30
H100, H200 = gpu_named("h100"), gpu_named("h200")
LLAMA, DEEPSEEK = get_preset("llama-3-70b"), get_preset("deepseek-v3")
FIXED = Efficiencies(mfu=0.5, mbu=0.8, source="fixed for the test")


def test_llama_3_70b_at_tp_4_splits_weights_and_kv_heads():
    m = memory_per_gpu(LLAMA, H100, tp=4, seq_len=8192)
    # weights: 70.6e9 params x 2 bytes / 4 GPUs
    assert m.weight_bytes == 35_300_000_000
    # 8 KV heads over 4 GPUs: 2 per GPU, 2 (K, V) x 80 layers x 2 x 128 x 2 bytes per token
    assert (m.kv_heads_per_gpu, m.kv_replicas) == (2, 1)
    assert m.kv_bytes_per_token == 81_920
    assert m.kv_bytes_per_sequence == 81_920 * 8192 == 671_088_640
    # 90% of 80 GiB, less the weights, in whole sequences: 42,009,411,328 / 671,088,640 = 62.6
    assert m.usable_bytes == 80 * GiB * 9 // 10 == 77_309_411_328
    assert m.kv_budget_bytes == 42_009_411_328
    assert m.max_sequences == 62


def test_llama_3_70b_at_tp_16_replicates_each_kv_head():
    m = memory_per_gpu(LLAMA, H100, tp=16, seq_len=8192)
    assert m.weight_bytes == 70_600_000_000 * 2 // 16 == 8_825_000_000
    # 16 GPUs, 8 KV heads: one head per GPU, each head on 2 GPUs, so per GPU only halves
    assert (m.kv_heads_per_gpu, m.kv_replicas) == (1, 2)
    assert m.kv_bytes_per_token == 2 * 80 * 1 * 128 * 2 == 40_960
    assert m.kv_bytes_per_sequence == 335_544_320
    # (77,309,411,328 - 8,825,000,000) / 335,544,320 = 204.1
    assert m.max_sequences == 204


def test_deepseek_v3_at_tp_8_keeps_the_whole_mla_latent_on_every_gpu():
    m = memory_per_gpu(DEEPSEEK, H200, tp=8, seq_len=8192, weights_dtype="fp8")
    assert m.weight_bytes == 671_000_000_000 // 8 == 83_875_000_000
    # the latent (512 + 64 elements per layer) is not split: 576 x 61 layers x 2 bytes
    assert (m.kv_heads_per_gpu, m.kv_replicas) == (None, 8)
    assert m.kv_bytes_per_token == 576 * 61 * 2 == 70_272
    assert m.kv_bytes_per_sequence == 575_668_224
    # 90% of 141 GiB = 136,257,837,465 (floor); less the weights, / 575,668,224 = 90.99
    assert m.usable_bytes == 136_257_837_465
    assert m.max_sequences == 90


def test_weights_that_do_not_fit_leave_no_sequences():
    m = memory_per_gpu(DEEPSEEK, H100, tp=8, seq_len=8192)  # bf16: 167.75 GB per GPU
    assert m.weight_bytes == 167_750_000_000
    assert (m.kv_budget_bytes, m.max_sequences) == (0, 0)
    assert slo_batch(DEEPSEEK, H100, m, 0.05, FIXED) == 0


def test_ttft_and_tpot_of_llama_3_70b_at_tp_4():
    m = memory_per_gpu(LLAMA, H100, tp=4, seq_len=8192)
    first = ttft(LLAMA, H100, m, 8192, FIXED)
    # FLOPs per GPU: (8192 x 2 x 70.6e9 + 4 x 80 layers x 64 heads x 128 x 8192 x 8193 / 2) / 4
    #   = (1,156,710,400,000,000 + 87,971,667,640,320) / 4 = 311,170,516,910,080
    assert first.flops == 311_170_516_910_080
    # at 989 TFLOP/s x 0.5: 0.62926 s; the memory side is 35.97 GB at 3.35 TB/s x 0.8
    assert first.compute_s == pytest.approx(311_170_516_910_080 / 494.5e12)
    assert round(first.seconds, 6) == 0.629263
    assert first.bound == "compute"
    # bytes per GPU: the weights once (35.3 GB) + the 8,192 prompt tokens' KV written
    assert first.bytes == 35_300_000_000 + 8192 * 81_920 == 35_971_088_640
    assert first.memory_s == pytest.approx(35_971_088_640 / 2.68e12)
    step = tpot(LLAMA, H100, m, 1, FIXED)
    # bytes per GPU: the weights once (35.3 GB) + one sequence's 8,192 tokens of KV
    assert step.bytes == 35_300_000_000 + 671_088_640
    assert step.seconds == pytest.approx(35_971_088_640 / 2.68e12)
    assert round(step.seconds * 1e3, 4) == 13.4220
    assert step.bound == "memory"


def test_the_largest_batch_meeting_a_tpot_target():
    m = memory_per_gpu(LLAMA, H100, tp=4, seq_len=8192)
    # TPOT(B) = (35.3e9 + B x 671,088,640) / 2.68e12 <= 20 ms: B <= 27.27
    assert slo_batch(LLAMA, H100, m, 0.020, FIXED) == 27
    assert (
        tpot(LLAMA, H100, m, 27, FIXED).seconds <= 0.020 < tpot(LLAMA, H100, m, 28, FIXED).seconds
    )
    # 50 ms would allow 147 sequences, but only 62 fit
    assert slo_batch(LLAMA, H100, m, 0.050, FIXED) == 62
    # not even one sequence in 10 ms: the weights alone take 13.2 ms
    assert slo_batch(LLAMA, H100, m, 0.010, FIXED) == 0


def test_a_mixture_of_experts_reads_the_experts_its_tokens_use():
    m = memory_per_gpu(DEEPSEEK, H200, tp=8, seq_len=8192, weights_dtype="fp8")
    one = tpot(DEEPSEEK, H200, m, 1, FIXED)
    # batch 1 reads the 37e9 active params (fp8, over 8 GPUs) + its latent cache
    assert one.bytes == 37_000_000_000 / 8 + 575_668_224
    # 32 sequences would read 32 x 37e9 > 671e9: every weight once
    many = tpot(DEEPSEEK, H200, m, 32, FIXED)
    assert many.bytes == 671_000_000_000 / 8 + 32 * 575_668_224


def test_efficiencies_come_from_the_stored_run():
    cpu_run = {
        "device_name": "Example CPU",
        "created_at": "2026-11-02T07:00:00.000000+00:00",
        "peaks": {"spec": None},
        "prefill": [{"prompt_len": 128, "mfu": 0.4}, {"prompt_len": 512, "mfu": 0.7}],
        "decode": [{"context_len": 1024, "mbu": 0.5}, {"context_len": 128, "mbu": 0.6}],
    }
    eff = efficiencies_from_run(cpu_run)
    assert (eff.mfu, eff.mbu) == (0.7, 0.6)
    assert eff.source == (
        "your engine run of 2026-11-02 on Example CPU: prefill of 512 tokens and decode at "
        "context 128, against the peaks it measured"
    )
    gpu_run = {
        **cpu_run,
        "device_name": "NVIDIA H100 80GB HBM3",
        "peaks": {"spec": spec_for("NVIDIA H100 80GB HBM3")},
        "prefill": [{"prompt_len": 2048, "flops_per_s": 593.4e12, "mfu": 0.8}],
        "decode": [{"context_len": 128, "bytes_per_s": 2.68e12, "mbu": 0.9}],
    }
    eff = efficiencies_from_run(gpu_run)
    # against the spec sheet: 593.4 / 989 and 2.68 / 3.35
    assert (round(eff.mfu, 6), round(eff.mbu, 6)) == (0.6, 0.8)
    assert eff.source.endswith("against the H100 SXM spec sheet")
    assert efficiencies_from_run(None) is DEFAULTS
    assert efficiencies_from_run({"schema": 1}) is DEFAULTS
    assert (DEFAULTS.mfu, DEFAULTS.mbu) == (0.5, 0.7)


def test_bad_inputs_are_config_errors():
    with pytest.raises(ConfigError, match="unknown GPU 'h1000'; did you mean h100"):
        gpu_named("h1000")
    with pytest.raises(ConfigError, match="tp must be at least 1"):
        memory_per_gpu(LLAMA, H100, tp=0, seq_len=8192)
    with pytest.raises(ConfigError, match="MFU must be above 0 and at most 1"):
        Efficiencies(1.5, 0.5, "x")


# --- the edges of the calculator, value by value -----------------------------------------


def test_efficiencies_of_exactly_one_are_accepted_and_zero_is_refused():
    assert (Efficiencies(1.0, 1.0, "peak").mfu, Efficiencies(1.0, 1.0, "peak").mbu) == (1.0, 1.0)
    with pytest.raises(ConfigError) as refused:
        Efficiencies(0.5, 0, "x")
    assert str(refused.value) == "MBU must be above 0 and at most 1, got 0"
    with pytest.raises(ConfigError) as refused:
        Efficiencies(1.01, 0.5, "x")
    assert str(refused.value) == "MFU must be above 0 and at most 1, got 1.01"


def test_a_decode_steps_own_efficiencies_come_from_the_batch_sweep():
    cpu_run = {
        "device_name": "Example CPU",
        "peaks": {"spec": None},
        "prefill": [{"prompt_len": 512, "mfu": 0.7}],
        "decode": [{"context_len": 128, "mbu": 0.6}],
        "batch": [
            {"batch": 1, "mbu": 0.6, "flops_util": 0.01},
            {"batch": 4, "mbu": 0.45, "flops_util": 0.04},
            {"batch": 2, "mbu": 0.5, "flops_util": 0.02},
            {"batch": 32, "mbu": 0.2, "flops_util": 0.35},
        ],
        "batch_ridge": 16,
    }
    eff = efficiencies_from_run(cpu_run)
    # the smallest batch above 1 for the reads, the largest (past the ridge) for compute
    assert (eff.mfu, eff.mbu, eff.batch_mbu, eff.decode_mfu) == (0.7, 0.6, 0.5, 0.35)
    assert eff.for_decode(1) == (0.35, 0.6)
    assert eff.for_decode(2) == (0.35, 0.5)
    assert eff.source == (
        "your engine run on Example CPU: prefill of 512 tokens and decode at context 128, "
        "batch MBU at batch 2, decode MFU at batch 32, against the peaks it measured"
    )
    # a largest batch short of the ridge says nothing of a decode step's FLOP/s
    below = efficiencies_from_run({**cpu_run, "batch_ridge": 64})
    assert (below.batch_mbu, below.decode_mfu) == (0.5, None)
    assert below.for_decode(32) == (0.7, 0.5)
    # a run stored without its ridge, or without a sweep
    assert efficiencies_from_run({**cpu_run, "batch_ridge": None}).decode_mfu is None
    bare = efficiencies_from_run({**cpu_run, "batch": []})
    assert (bare.batch_mbu, bare.decode_mfu, bare.for_decode(8)) == (None, None, (0.7, 0.6))
    # an older run's sweep without the rates: its MFU and MBU still count
    older = efficiencies_from_run({**cpu_run, "batch": [{"batch": 2}, {"batch": 32}]})
    assert (older.mfu, older.mbu, older.batch_mbu, older.decode_mfu) == (0.7, 0.6, None, None)
    assert older.source == (
        "your engine run on Example CPU: prefill of 512 tokens and decode at context 128, "
        "against the peaks it measured"
    )


def test_a_decode_step_is_timed_at_its_own_efficiencies():
    m = memory_per_gpu(LLAMA, H100, tp=4, seq_len=8192)
    eff = Efficiencies(0.5, 0.8, "x", decode_mfu=0.1, batch_mbu=0.4)
    # batch 1 at MBU 80%: (35.3e9 + 671,088,640) / 2.68e12
    assert round(tpot(LLAMA, H100, m, 1, eff).memory_s, 6) == 0.013422
    # batch 2 at the batch MBU: (35.3e9 + 2 x 671,088,640) / 1.34e12
    assert round(tpot(LLAMA, H100, m, 2, eff).memory_s, 6) == 0.027345
    # its FLOPs at the decode MFU, 98.9 TFLOP/s
    step = tpot(LLAMA, H100, m, 2, eff)
    assert step.compute_s == step.flops / 98.9e12
    # a batch measured reading faster than one sequence is held to one sequence's rate,
    # so TPOT still grows with the batch and the SLO's search holds
    faster = Efficiencies(0.5, 0.5, "x", batch_mbu=0.8)
    assert faster.for_decode(2) == (0.5, 0.5)
    one, two = (tpot(LLAMA, H100, m, b, faster).seconds for b in (1, 2))
    assert two > one
    with pytest.raises(ConfigError) as refused:
        Efficiencies(0.5, 0.5, "x", decode_mfu=0.0)
    assert str(refused.value) == "decode MFU must be above 0 and at most 1, got 0.0"
    with pytest.raises(ConfigError) as refused:
        Efficiencies(0.5, 0.5, "x", batch_mbu=1.2)
    assert str(refused.value) == "batch MBU must be above 0 and at most 1, got 1.2"


RUN = {
    "device_name": "NVIDIA H100 80GB HBM3",
    "peaks": {"spec": spec_for("NVIDIA H100 80GB HBM3")},
    "prefill": [{"prompt_len": 2048, "flops_per_s": 1100e12}],
    "decode": [{"context_len": 128, "bytes_per_s": 3.5e12}],
}


def test_a_run_that_beat_the_spec_sheet_counts_as_full_efficiency():
    eff = efficiencies_from_run(RUN)
    assert (eff.mfu, eff.mbu) == (1.0, 1.0)


def test_a_run_without_a_date_is_named_without_one():
    assert efficiencies_from_run(RUN).source == (
        "your engine run on NVIDIA H100 80GB HBM3: prefill of 2,048 tokens and decode at "
        "context 128, against the H100 SXM spec sheet"
    )


def test_a_shape_without_a_parameter_count_asks_for_one():
    moe_no_total = ModelShape("m", "typed by hand", 4, 8, 8, 64, dtype="bf16", active_params=10**9)
    with pytest.raises(ConfigError) as refused:
        memory_per_gpu(moe_no_total, H100, tp=1, seq_len=1024)
    assert str(refused.value) == (
        "typed by hand has no parameter count; give it with --params N (e.g. 8.03B), "
        "or use a preset"
    )


def test_a_shape_without_query_heads_has_no_latency():
    no_q_heads = ModelShape("m", "typed by hand", 4, None, 8, 64, dtype="bf16", params=10**9)
    m = memory_per_gpu(no_q_heads, H100, tp=1, seq_len=1024)
    with pytest.raises(ConfigError) as refused:
        ttft(no_q_heads, H100, m, 1024, FIXED)
    assert str(refused.value) == "typed by hand names no query heads; --latency needs them"


def test_one_gpu_holds_the_whole_model():
    m = memory_per_gpu(LLAMA, H200, tp=1, seq_len=8192)
    assert m.weight_bytes == 141_200_000_000  # 70.6e9 x 2 bytes: more than 90% of 141 GiB
    assert (m.kv_heads_per_gpu, m.kv_replicas, m.kv_bytes_per_token) == (8, 1, 327_680)
    assert (m.kv_budget_bytes, m.max_sequences) == (0, 0)


def test_kv_heads_split_unevenly_round_up_per_gpu():
    # 8 KV heads over 3 GPUs: 3 on each (64 query heads are not split with them)
    m = memory_per_gpu(LLAMA, H100, tp=3, seq_len=8192)
    assert (m.kv_heads_per_gpu, m.kv_replicas) == (3, 1)
    assert m.kv_bytes_per_token == 2 * 80 * 3 * 128 * 2 == 122_880
    assert m.max_sequences == 30


def test_each_kv_head_is_held_by_a_whole_number_of_gpus():
    assert repr(memory_per_gpu(LLAMA, H100, tp=16, seq_len=8192).kv_replicas) == "2"
    # 12 GPUs for 8 heads: one head each, 4 heads on a second GPU; reported as 1
    assert repr(memory_per_gpu(LLAMA, H100, tp=12, seq_len=8192).kv_replicas) == "1"


FP32 = ModelShape("f", "fp32 model", 4, 8, 8, 64, hidden=512, dtype="fp32", params=1_000_000)
NO_DTYPE = ModelShape("n", "no dtype", 4, 8, 8, 64, hidden=512, params=1_000_000)


def test_weights_and_kv_are_counted_in_the_models_dtype_unless_told_otherwise():
    m = memory_per_gpu(FP32, H100, tp=1, seq_len=1024)
    assert (m.weight_width, m.weight_bytes, m.kv_bytes_per_token) == (4.0, 4_000_000, 16_384)
    m = memory_per_gpu(FP32, H100, tp=1, seq_len=1024, kv_dtype="fp8")
    assert (m.weight_width, m.kv_bytes_per_token) == (4.0, 4_096)
    assert m.kv_bytes_per_sequence == 4_194_304


def test_weights_of_a_shape_without_a_dtype_are_counted_in_bf16():
    m = memory_per_gpu(NO_DTYPE, H100, tp=1, seq_len=1024, kv_dtype="fp8")
    assert (m.weight_width, m.weight_bytes, m.kv_bytes_per_token) == (2.0, 2_000_000, 4_096)


def test_tpot_flops_are_the_weights_twice_plus_attention_over_the_context():
    m = memory_per_gpu(LLAMA, H100, tp=4, seq_len=8192)
    # (2 x 70.6e9 + 4 x 80 layers x 64 heads x 128 x 8,192) / 4 GPUs, per sequence
    assert tpot(LLAMA, H100, m, 1, FIXED).flops == 40_668_709_120
    assert tpot(LLAMA, H100, m, 32, FIXED).flops == 32 * 40_668_709_120 == 1_301_398_691_840


def test_a_tpot_target_met_exactly_is_met():
    m = memory_per_gpu(LLAMA, H100, tp=4, seq_len=8192)
    # (35.3e9 + 27 x 671,088,640) / (3.35e12 x 0.8), TPOT at batch 27 to the last bit
    exactly = 0.01993260943283582
    assert slo_batch(LLAMA, H100, m, exactly, FIXED) == 27
    assert slo_batch(LLAMA, H100, m, 0.0199326, FIXED) == 26
