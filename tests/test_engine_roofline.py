"""FLOP and byte counts, the roofline, plans and device/dtype choices (no torch needed)."""

import pytest

from drill.errors import ConfigError, EngineError
from drill.serving.gpus import spec_for
from engine_check import roofline
from engine_check.config import (
    CPU_MODEL,
    ModelConfig,
    RunPlan,
    canonical_dtype,
    plan_for,
    resolve_device,
)

# d=4, 2 heads of 2 dims, 1 KV head, ffn 3, vocab 5. By hand:
#   wqkv 4x(4+2+2)=32, wo 4x4=16, w13 4x6=24, w2 3x4=12 -> 84 linear params per layer
SMALL = ModelConfig(layers=1, d_model=4, heads=2, kv_heads=1, head_dim=2, ffn=3, vocab=5)


def test_parameter_counts_by_hand():
    assert SMALL.linear_params_per_layer == 84
    # 2 embeddings-sized matrices (5x4 each), 84 + 8 norm weights, final norm 4
    assert SMALL.params == 40 + 92 + 4


def test_prefill_flops_by_hand():
    # 3 tokens x 2 x 84 = 504; attention 4*1*2*2*(1+2+3) = 96; last-token logits 2*4*5 = 40
    assert roofline.prefill_flops(SMALL, 3) == 640
    assert roofline.prefill_flops(SMALL, 3, batch=2) == 1280


def test_decode_flops_and_bytes_by_hand():
    # 2*84 + attention 4*1*2*2*3 + logits 40 = 168 + 48 + 40
    assert roofline.decode_step_flops(SMALL, context_len=3, batch=1) == 256
    # weights: 84 + 8 + 4 (final norm) + 20 (head) + 4 (one embedding row) = 120 elems * 4 B
    # KV: 3 read + 1 written rows of 2*1*1*2 elements * 4 B = 64
    assert roofline.decode_step_bytes(SMALL, context_len=3, batch=1, dtype_bytes=4) == 544
    # batch 2: 2 embedding rows, twice the KV
    assert roofline.decode_step_bytes(SMALL, 3, 2, 4) == (124 * 4) + 128


def test_prefill_bytes_by_hand():
    # weights with 3 embedding rows: 84+8+4+20+12 = 128 elems; KV written 3 rows * 16 B
    assert roofline.prefill_bytes(SMALL, 3, dtype_bytes=4) == 128 * 4 + 48


def test_roofline_takes_the_slower_side():
    assert roofline.roofline_seconds(100, 10, peak_flops_per_s=10, peak_bytes_per_s=10) == 10
    assert roofline.roofline_seconds(10, 100, peak_flops_per_s=10, peak_bytes_per_s=10) == 10
    assert roofline.ridge_intensity(150e9, 20e9) == 7.5


def test_ridge_batch_is_the_first_compute_bound_batch():
    flops_peak, bw_peak = 150e9, 20e9
    ridge = roofline.ridge_batch(CPU_MODEL, 128, 4, flops_peak, bw_peak)

    def compute_bound(b):
        return roofline.decode_step_flops(CPU_MODEL, 128, b) / flops_peak >= (
            roofline.decode_step_bytes(CPU_MODEL, 128, b, 4) / bw_peak
        )

    assert ridge is not None and ridge > 1
    assert compute_bound(ridge) and not compute_bound(ridge - 1)
    # fp32 weights: 2 FLOP per 4 bytes per sequence, so the ridge is near 2 x 7.5 = 15
    assert 14 <= ridge <= 17
    # so much compute that each sequence's own KV reads outweigh its FLOPs at any batch
    assert roofline.ridge_batch(CPU_MODEL, 128, 4, 1e15, 1e9) is None
    # so much bandwidth that batch 1 is already compute-bound
    assert roofline.ridge_batch(CPU_MODEL, 128, 4, 1e9, 1e15) == 1


def test_model_config_rejects_bad_shapes():
    with pytest.raises(ConfigError, match="multiple of kv_heads"):
        ModelConfig(layers=1, d_model=8, heads=3, kv_heads=2, head_dim=2, ffn=4, vocab=4)
    with pytest.raises(ConfigError, match="layers"):
        ModelConfig(layers=0, d_model=8, heads=2, kv_heads=2, head_dim=2, ffn=4, vocab=4)
    with pytest.raises(ConfigError, match="even"):
        ModelConfig(layers=1, d_model=8, heads=2, kv_heads=2, head_dim=3, ffn=4, vocab=4)


def test_cpu_plan_streams_weights_far_larger_than_caches():
    for mode in ("quick", "full"):
        plan = plan_for("cpu", mode, "float32")
        assert plan.model.params * 4 > 2**30  # over 1 GiB of fp32 weights
        needed = [*plan.prompt_lens, *plan.context_lens, plan.batch_context_len]
        needed += [p + 1 for p in plan.recompute_positions]
        assert plan.max_seq == max(needed)
    quick, full = plan_for("cpu", "quick", "float32"), plan_for("cpu", "full", "float32")
    assert len(quick.prompt_lens) < len(full.prompt_lens)
    assert quick.repeats < full.repeats


def test_cuda_plan_fits_device_memory():
    small = plan_for("cuda", "full", "bfloat16", device_memory_bytes=16 * 2**30)
    big = plan_for("cuda", "full", "bfloat16", device_memory_bytes=80 * 2**30)
    assert big.model.layers == 16
    assert small.model.layers < 16
    assert small.model.params * 2 < 0.45 * 16 * 2**30
    assert plan_for("cuda", "quick", "bfloat16", None).model.layers == 8


def test_plan_for_rejects_unknown_mode_and_device():
    with pytest.raises(EngineError, match="unknown mode"):
        plan_for("cpu", "slow", "float32")
    with pytest.raises(EngineError, match="unknown device kind"):
        plan_for("tpu", "full", "float32")


def test_plan_to_dict_is_plain_json_data():
    data = plan_for("cpu", "tiny", "float32").to_dict()
    assert data["prompt_lens"] == [8, 16]
    assert data["model"]["layers"] == 2
    assert isinstance(RunPlan.max_seq, property)


@pytest.mark.parametrize(
    "requested, cuda, mps, expected",
    [
        ("auto", True, True, "cuda"),
        ("auto", False, True, "mps"),
        ("auto", False, False, "cpu"),
        ("CPU", True, True, "cpu"),
        ("cuda", True, False, "cuda"),
        ("mps", False, True, "mps"),
    ],
)
def test_resolve_device(requested, cuda, mps, expected):
    assert resolve_device(requested, cuda, mps) == expected


def test_resolve_device_refuses_missing_or_unknown():
    with pytest.raises(EngineError, match="no CUDA GPU"):
        resolve_device("cuda", False, True)
    with pytest.raises(EngineError, match="no usable Apple GPU"):
        resolve_device("mps", True, False)
    with pytest.raises(EngineError, match="unknown device 'tpu'"):
        resolve_device("tpu", True, True)


def test_dtype_names():
    assert canonical_dtype("bf16", "cpu") == "bfloat16"
    assert canonical_dtype("torch.float16", "cpu") == "float16"
    assert canonical_dtype("FP32", "cuda") == "float32"
    assert canonical_dtype(None, "cpu") == "float32"
    assert canonical_dtype("auto", "cuda") == "bfloat16"
    assert canonical_dtype("auto", "mps") == "float16"
    with pytest.raises(EngineError, match="unknown dtype 'int8'"):
        canonical_dtype("int8", "cpu")


@pytest.mark.parametrize(
    "name, spec_name",
    [
        ("NVIDIA H100 80GB HBM3", "H100 SXM"),
        ("NVIDIA H100 PCIe", "H100 PCIe"),
        ("NVIDIA H100 NVL", "H100 NVL"),
        ("NVIDIA H200", "H200"),
        ("NVIDIA GH200 480GB", "GH200"),
        ("NVIDIA A100-SXM4-40GB", "A100 40GB"),
        ("NVIDIA A100-PCIE-40GB", "A100 40GB"),
        ("NVIDIA A100-SXM4-80GB", "A100 80GB SXM"),
        ("NVIDIA A100 80GB PCIe", "A100 80GB PCIe"),
        ("NVIDIA L4", "L4"),
        ("NVIDIA L40S", "L40S"),
        ("NVIDIA A10G", "A10G"),
        ("NVIDIA A10", "A10"),
        ("NVIDIA GeForce RTX 4090", "RTX 4090"),
    ],
)
def test_spec_sheet_matches_device_names(name, spec_name):
    assert spec_for(name)["name"] == spec_name


def test_spec_sheet_values_and_unknown_gpu():
    h100 = spec_for("NVIDIA H100 80GB HBM3")
    assert h100["bf16_dense_flops_per_s"] == 989e12
    assert h100["hbm_bytes_per_s"] == 3.35e12
    assert spec_for("NVIDIA GeForce GTX 1080") is None
    assert spec_for("NVIDIA L40") is None
