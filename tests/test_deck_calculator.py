"""The deck's deployment templates against the serving calculator: one concept, one place.

The templates that draw a real model (a preset) on a real GPU (a gpu param) at a
tensor-parallel degree work their answer out with the bank's own expressions; the
calculator behind `kvdrill kv --gpu --tp --latency` (drill/serving/estimates.py) works out the same
figure from the same model, GPU and degree. For 200 draws of each template the two must
agree: exactly for bytes and counts, within 1e-9 relative for times. A change to either
side that the other does not follow fails here.

Each draw is also checked to be a meaningful deployment: the weights fit, at least one
sequence (or the whole batch) fits beside them, and the phase the prompt calls memory- or
compute-bound is so by the calculator's roofline.
"""

from __future__ import annotations

import pytest

from drill.bank.loader import builtin_bank_files, read_bank
from drill.bank.schema import GpuParam, NumericQuestion, PresetParam
from drill.serving.estimates import (
    DEFAULT_MBU,
    DEFAULT_MFU,
    Efficiencies,
    memory_per_gpu,
    tpot,
    ttft,
)
from drill.serving.gpus import GPU_SPECS
from drill.serving.kvmath import get_preset, load_presets

DRAWS = 200
CHECKED = (
    "tp-kv-per-gpu-preset",
    "tp-sequences-per-gpu-preset",
    "decode-tpot-tp-preset",
    "prefill-ttft-tp-preset",
    "preset-decode-floor",
)


@pytest.fixture(scope="module")
def deck():
    bank, problems = read_bank(builtin_bank_files())
    assert [str(p) for p in problems] == []
    return bank


def draws(deck, question_id):
    """(seed, the drawn values, the expected answer) for seeds 0..DRAWS-1."""
    from drill.kinds.numeric_draw import draw_numeric

    question = deck.get(question_id)
    for seed in range(DRAWS):
        draw = draw_numeric(question, seed)
        yield seed, draw.values, draw.expected


def model_and_gpu(values, model="m", gpu="g"):
    """The calculator's shape and spec sheet for a draw, found by the names it shows."""
    by_name = {shape.display_name: key for key, shape in load_presets().items()}
    shape = get_preset(by_name[values[model]])
    spec = next((s for s in GPU_SPECS if s.name == values.get(gpu)), None)
    return shape, spec


def test_every_template_of_a_real_model_on_a_real_gpu_is_checked_here(deck):
    # a gpu param without a model preset (the roofline questions) gives only the GPU's
    # figures, which tests/test_gpu_figures.py checks
    on_a_gpu = {
        q.id
        for q in deck
        if isinstance(q, NumericQuestion)
        and any(isinstance(p, GpuParam) for p in q.params.values())
        and any(isinstance(p, PresetParam) for p in q.params.values())
    }
    assert on_a_gpu <= set(CHECKED)
    assert all(qid in deck for qid in CHECKED)


def test_batch1_decode_floor_is_the_calculators_weights_over_bandwidth(deck):
    for seed, values, expected in draws(deck, "preset-decode-floor"):
        shape, gpu = model_and_gpu(values, model="model")
        memory = memory_per_gpu(shape, gpu, 1, 1)
        assert memory.kv_budget_bytes > 0, seed  # the weights fit on one GPU
        assert values["weights"] == memory.weight_bytes, seed
        assert expected == pytest.approx(memory.weight_bytes / gpu.bytes_per_s, rel=1e-9), seed


def test_kv_per_gpu_is_the_calculators(deck):
    for seed, values, expected in draws(deck, "tp-kv-per-gpu-preset"):
        shape, _ = model_and_gpu(values)
        any_gpu = GPU_SPECS[0]  # the cache a GPU holds does not depend on which GPU
        memory = memory_per_gpu(shape, any_gpu, values["tp"], values["seq"])
        assert memory.kv_replicas > 1, seed  # every draw has more GPUs than KV heads
        assert expected == memory.kv_bytes_per_sequence, seed


def test_sequences_per_gpu_are_the_calculators(deck):
    for seed, values, expected in draws(deck, "tp-sequences-per-gpu-preset"):
        shape, gpu = model_and_gpu(values)
        memory = memory_per_gpu(shape, gpu, values["tp"], values["seq"])
        assert memory.max_sequences >= 1, seed
        assert expected == memory.max_sequences, seed
        assert values["usable"] == memory.usable_bytes, seed
        assert values["shard"] == memory.weight_bytes, seed


def test_decode_tpot_is_the_calculators(deck):
    for seed, values, expected in draws(deck, "decode-tpot-tp-preset"):
        shape, gpu = model_and_gpu(values)
        memory = memory_per_gpu(shape, gpu, values["tp"], values["ctx"])
        assert memory.max_sequences >= values["batch"], seed  # the batch fits
        eff = Efficiencies(mfu=DEFAULT_MFU, mbu=values["mbu_pct"] / 100, source="the prompt")
        step = tpot(shape, gpu, memory, values["batch"], eff)
        assert step.bound == "memory", seed
        assert expected == pytest.approx(step.seconds, rel=1e-9), seed


def test_prefill_ttft_is_the_calculators(deck):
    for seed, values, expected in draws(deck, "prefill-ttft-tp-preset"):
        shape, gpu = model_and_gpu(values)
        memory = memory_per_gpu(shape, gpu, values["tp"], values["prompt"])
        assert memory.kv_budget_bytes > 0, seed  # the weights fit
        eff = Efficiencies(mfu=values["mfu_pct"] / 100, mbu=DEFAULT_MBU, source="the prompt")
        step = ttft(shape, gpu, memory, values["prompt"], eff)
        assert step.bound == "compute", seed
        assert expected == pytest.approx(step.seconds, rel=1e-9), seed


def test_the_drawn_models_and_gpus_vary(deck):
    # the checks above hold for every model and GPU a template lists, not just one
    seen = {
        qid: {
            (values.get("m", values.get("model")), values.get("g"))
            for _, values, _ in draws(deck, qid)
        }
        for qid in CHECKED
    }
    assert min(len(pairs) for pairs in seen.values()) >= 3
    assert len(seen["tp-sequences-per-gpu-preset"]) == 12  # 3 models × 4 GPUs
