"""Golden draws: fixed (question id, seed) pairs of the built-in deck give these exact items.

Every literal below was written once from `kvdrill ask ID --seed S --json`, and each
expected value was checked against its params by an independent calculation (the
question's formula typed out by hand). A change to seed hashing, to the order params
are drawn in, to a formula, a preset or a template's words fails here. When such a
change is deliberate, update the literals in the same commit and say why: a user's
`kvdrill ask ID --seed S` and every printed sheet change with it.
"""

from __future__ import annotations

import json
from typing import NamedTuple

import pytest
from click.testing import CliRunner

from drill.cli import cli
from drill.reports import sheet
from drill.study import session


class Draw(NamedTuple):
    params: dict
    expected: int | float
    unit: str
    show_as: str | None
    text: str


@pytest.fixture(scope="module")
def shared_home(tmp_path_factory):
    # one kvdrill home for the module, so the deck cache is read warm after the first call
    return tmp_path_factory.mktemp("golden-home")


@pytest.fixture(autouse=True)
def _warm_home(_isolated_home, shared_home, monkeypatch):
    monkeypatch.setenv("KVDRILL_HOME", str(shared_home))


def ask_json(question_id: str, seed: int) -> dict:
    result = CliRunner().invoke(cli, ["ask", question_id, "--seed", str(seed), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["id"], data["seed"]) == (question_id, seed)
    return data


# fmt: off
NUMERIC_DRAWS = {
    ("kv-bytes-per-request", 1): Draw(
        params={
            "layers": 24, "kv_heads": 16, "group": 7, "head_dim": 256, "seq": 2048,
            "dtype_bytes": 1, "q_heads": 112, "per_token": 196_608, "kv": 402_653_184,
        },
        expected=402_653_184, unit="bytes", show_as=None,
        text=(
            "A decoder-only transformer has 24 layers. Its attention is grouped: 112 query heads "
            "share 16 KV heads (7 query heads per KV head), and every head has dimension 256. The "
            "cache keeps 1-byte elements. How much memory does the KV cache of a single request "
            "occupy once it holds 2,048 tokens? Leave out allocator overhead and kernel "
            "workspace."
        ),
    ),
    ("kv-bytes-per-request", 2230): Draw(
        params={
            "layers": 32, "kv_heads": 8, "group": 7, "head_dim": 128, "seq": 4096,
            "dtype_bytes": 2, "q_heads": 56, "per_token": 131_072, "kv": 536_870_912,
        },
        expected=536_870_912, unit="bytes", show_as=None,
        text=(
            "A decoder-only transformer has 32 layers. Its attention is grouped: 56 query heads "
            "share 8 KV heads (7 query heads per KV head), and every head has dimension 128. The "
            "cache keeps 2-byte elements. How much memory does the KV cache of a single request "
            "occupy once it holds 4,096 tokens? Leave out allocator overhead and kernel "
            "workspace."
        ),
    ),
    ("kv-gqa-saving-fraction", 1): Draw(
        params={
            "layers": "80", "kv_heads": 1, "group": 16, "head_dim": "64", "seq": "4,096",
            "q_heads": 16, "kept": 0.0625,
        },
        expected=0.9375, unit="fraction", show_as="%",
        text=(
            "Two checkpoints share 80 layers, 16 query heads and head dimension 64. One was "
            "trained with multi-head attention (a KV head per query head); the other with "
            "grouped-query attention, 16 query heads per KV head, which leaves a KV-head count of "
            "1. At the same sequence length of 4,096 tokens and the same cache dtype, what "
            "fraction of the KV memory does the grouped checkpoint save?"
        ),
    ),
    ("kv-gqa-saving-fraction", 2230): Draw(
        params={
            "layers": "32", "kv_heads": 2, "group": 16, "head_dim": "128", "seq": "4,096",
            "q_heads": 32, "kept": 0.0625,
        },
        expected=0.9375, unit="fraction", show_as="%",
        text=(
            "Two checkpoints share 32 layers, 32 query heads and head dimension 128. One was "
            "trained with multi-head attention (a KV head per query head); the other with "
            "grouped-query attention, 16 query heads per KV head, which leaves a KV-head count of "
            "2. At the same sequence length of 4,096 tokens and the same cache dtype, what "
            "fraction of the KV memory does the grouped checkpoint save?"
        ),
    ),
    ("contiguous-waste-fraction", 1): Draw(
        params={
            "reserve": 16384, "live": 2816, "requests": "4", "used": 0.171875,
        },
        expected=0.828125, unit="fraction", show_as="%",
        text=(
            "An engine without paging reserves a contiguous slab of 16,384 token slots for each "
            "of its 4 running requests. On average a request has only 2,816 tokens in it. What "
            "fraction of the reserved KV memory holds nothing, to three significant figures?"
        ),
    ),
    ("contiguous-waste-fraction", 2230): Draw(
        params={
            "reserve": 16384, "live": 1536, "requests": "16", "used": 0.09375,
        },
        expected=0.90625, unit="fraction", show_as="%",
        text=(
            "An engine without paging reserves a contiguous slab of 16,384 token slots for each "
            "of its 16 running requests. On average a request has only 1,536 tokens in it. What "
            "fraction of the reserved KV memory holds nothing, to three significant figures?"
        ),
    ),
    ("longest-context-fits", 1): Draw(
        params={
            "cap_gb": 48, "params_b": 8, "layers": 28, "kv_heads": 4, "requests": 24,
            "weights": 16_000_000_000, "free": 32_000_000_000, "per_token": 57344,
            "longest": 23251,
        },
        expected=23251, unit="tokens", show_as=None,
        text=(
            "A model with 8B parameters in BF16 runs on a GPU with 48 GB (10^9 bytes). It has 28 "
            "layers and 4 KV heads of dimension 128, with an FP16 cache. You must serve 24 "
            "requests concurrently, all allowed the same length. Ignoring activations, overhead "
            "and the model's trained context limit, what is the longest context (in tokens) each "
            "request can be given?"
        ),
    ),
    ("longest-context-fits", 2230): Draw(
        params={
            "cap_gb": 24, "params_b": 8, "layers": 28, "kv_heads": 4, "requests": 8,
            "weights": 16_000_000_000, "free": 8_000_000_000, "per_token": 57344, "longest": 17438,
        },
        expected=17438, unit="tokens", show_as=None,
        text=(
            "A model with 8B parameters in BF16 runs on a GPU with 24 GB (10^9 bytes). It has 28 "
            "layers and 4 KV heads of dimension 128, with an FP16 cache. You must serve 8 "
            "requests concurrently, all allowed the same length. Ignoring activations, overhead "
            "and the model's trained context limit, what is the longest context (in tokens) each "
            "request can be given?"
        ),
    ),
    ("e2e-latency-from-ttft-tpot", 1): Draw(
        params={
            "ttft_ms": 1400, "tpot_ms": 25, "n_tokens": 256, "decode_ms": 6375, "total": 7.775,
        },
        expected=7.775, unit="seconds", show_as="ms",
        text=(
            "A streamed reply shows its first token after 1,400 ms, and every later token follows "
            "25 ms after the previous one. The reply is 256 tokens long. How long does the user "
            "wait from sending the request until the last token appears, to the millisecond?"
        ),
    ),
    ("e2e-latency-from-ttft-tpot", 2230): Draw(
        params={
            "ttft_ms": 200, "tpot_ms": 20, "n_tokens": 32, "decode_ms": 620, "total": 0.82,
        },
        expected=0.82, unit="seconds", show_as="ms",
        text=(
            "A streamed reply shows its first token after 200 ms, and every later token follows "
            "20 ms after the previous one. The reply is 32 tokens long. How long does the user "
            "wait from sending the request until the last token appears, to the millisecond?"
        ),
    ),
    ("ttft-queue-plus-prefill", 1): Draw(
        params={
            "params_b": 7, "prompt": 2048, "peak_tflops": 989, "mfu_pct": 40, "queue_pct": 16,
            "flops": 28_672_000_000_000, "rate": 395_600_000_000_000.0,
            "prefill_s": 0.07247724974721942, "queue_ms": 12, "ttft": 0.08447724974721942,
        },
        expected=0.08447724974721942, unit="seconds", show_as="ms",
        text=(
            "A request waits 12 ms in the queue, then a dense 7B-parameter model prefills its "
            "2,048-token prompt (no prefix-cache hit) on a GPU with 989 TFLOP/s of dense BF16, of "
            "which prefill achieves 40 %. With 2 FLOPs per parameter per token and attention "
            "scores ignored, what is the time to first token?"
        ),
    ),
    ("ttft-queue-plus-prefill", 2230): Draw(
        params={
            "params_b": 13, "prompt": 4096, "peak_tflops": 312, "mfu_pct": 70, "queue_pct": 14,
            "flops": 106_496_000_000_000, "rate": 218_400_000_000_000.0,
            "prefill_s": 0.4876190476190476, "queue_ms": 68, "ttft": 0.5556190476190477,
        },
        expected=0.5556190476190477, unit="seconds", show_as="ms",
        text=(
            "A request waits 68 ms in the queue, then a dense 13B-parameter model prefills its "
            "4,096-token prompt (no prefix-cache hit) on a GPU with 312 TFLOP/s of dense BF16, of "
            "which prefill achieves 70 %. With 2 FLOPs per parameter per token and attention "
            "scores ignored, what is the time to first token?"
        ),
    ),
    ("system-tps-from-batch", 1): Draw(
        params={
            "batch": 16, "step_ms": 54, "per_user": 18.51851851851852,
        },
        expected=296.2962962962963, unit="tokens_per_s", show_as=None,
        text=(
            "A decode iteration over a batch of 16 sequences takes 54 ms and gives every sequence "
            "one token. What is the system's decode throughput in tokens per second?"
        ),
    ),
    ("system-tps-from-batch", 2230): Draw(
        params={
            "batch": 256, "step_ms": 24, "per_user": 41.666666666666664,
        },
        expected=10666.666666666666, unit="tokens_per_s", show_as=None,
        text=(
            "A decode iteration over a batch of 256 sequences takes 24 ms and gives every "
            "sequence one token. What is the system's decode throughput in tokens per second?"
        ),
    ),
    ("recompute-vs-cache-positions", 1): Draw(
        params={
            "prompt": 256, "out": 128, "cached": 383, "uncached": 40896,
            "ratio": 106.7780678851175,
        },
        expected=40_513, unit="tokens", show_as=None,
        text=(
            "A prompt has 256 tokens and you generate 128 tokens. Count the token positions "
            "pushed through the model. With a KV cache, prefill handles the prompt once and "
            "produces the first token, and each later token costs one position. Without a cache, "
            "every one of the 128 steps re-runs the whole current sequence. How many more "
            "positions does the cacheless loop process than the cached one?"
        ),
    ),
    ("recompute-vs-cache-positions", 2230): Draw(
        params={
            "prompt": 1024, "out": 256, "cached": 1279, "uncached": 294_784,
            "ratio": 230.4800625488663,
        },
        expected=293_505, unit="tokens", show_as=None,
        text=(
            "A prompt has 1,024 tokens and you generate 256 tokens. Count the token positions "
            "pushed through the model. With a KV cache, prefill handles the prompt once and "
            "produces the first token, and each later token costs one position. Without a cache, "
            "every one of the 256 steps re-runs the whole current sequence. How many more "
            "positions does the cacheless loop process than the cached one?"
        ),
    ),
    ("decode-step-floor-with-kv", 1): Draw(
        params={
            "params_b": 7, "batch": 8, "ctx": 8192, "g": "H200", "g_memory": 151_397_597_184,
            "g_bandwidth": 4_800_000_000_000, "g_flops": 989_000_000_000_000,
            "weights": 14_000_000_000, "kv_each": 1_073_741_824, "kv_all": 8_589_934_592,
            "step": 0.004706236373333333,
        },
        expected=0.004706236373333333, unit="seconds", show_as="ms",
        text=(
            "A dense model with 7B parameters in BF16 has 32 layers, 8 KV heads and head "
            "dimension 128, with an FP16 cache. It decodes a batch of 8 sequences, each with "
            "8,192 tokens of context, on an H200 with 4.8 TB/s of HBM bandwidth. Each step reads "
            "all the weights once plus the whole cache of every sequence. What is the bandwidth "
            "floor on one step's time?"
        ),
    ),
    ("decode-step-floor-with-kv", 2230): Draw(
        params={
            "params_b": 8, "batch": 24, "ctx": 4096, "g": "H200", "g_memory": 151_397_597_184,
            "g_bandwidth": 4_800_000_000_000, "g_flops": 989_000_000_000_000,
            "weights": 16_000_000_000, "kv_each": 536_870_912, "kv_all": 12_884_901_888,
            "step": 0.006017687893333333,
        },
        expected=0.006017687893333333, unit="seconds", show_as="ms",
        text=(
            "A dense model with 8B parameters in BF16 has 32 layers, 8 KV heads and head "
            "dimension 128, with an FP16 cache. It decodes a batch of 24 sequences, each with "
            "4,096 tokens of context, on an H200 with 4.8 TB/s of HBM bandwidth. Each step reads "
            "all the weights once plus the whole cache of every sequence. What is the bandwidth "
            "floor on one step's time?"
        ),
    ),
    ("preset-kv-per-token-hidden-trap", 1): Draw(
        params={
            "model": "Qwen2.5 7B", "model_layers": 28, "model_kv_heads": 4, "model_q_heads": 28,
            "model_head_dim": 128, "model_hidden": 3584, "model_dtype_bytes": 2,
            "model_params": 7_610_000_000, "model_active": 7_610_000_000, "per_token": 57_344,
        },
        expected=57_344, unit="bytes", show_as="KiB",
        text=(
            "From Qwen2.5 7B's config: hidden size 3,584, 28 layers, 28 attention heads, 4 "
            "key/value heads, head dimension 128, weights and cache in a 2-byte format. How many "
            "bytes of KV cache does each token add?"
        ),
    ),
    ("preset-kv-per-token-hidden-trap", 2230): Draw(
        params={
            "model": "Llama 3.1 405B", "model_layers": 126, "model_kv_heads": 8,
            "model_q_heads": 128, "model_head_dim": 128, "model_hidden": 16384,
            "model_dtype_bytes": 2, "model_params": 405_900_000_000,
            "model_active": 405_900_000_000, "per_token": 516_096,
        },
        expected=516_096, unit="bytes", show_as="KiB",
        text=(
            "From Llama 3.1 405B's config: hidden size 16,384, 126 layers, 128 attention heads, 8 "
            "key/value heads, head dimension 128, weights and cache in a 2-byte format. How many "
            "bytes of KV cache does each token add?"
        ),
    ),
    ("preset-decode-floor", 1): Draw(
        params={
            "model": "Phi-3 mini 4k", "model_layers": 32, "model_kv_heads": 32, "model_q_heads": 32,
            "model_head_dim": 96, "model_hidden": 3072, "model_dtype_bytes": 2,
            "model_params": 3_820_000_000, "model_active": 3_820_000_000, "g": "H100 SXM",
            "g_memory": 85_899_345_920, "g_bandwidth": 3_350_000_000_000,
            "g_flops": 989_000_000_000_000, "weights": 7_640_000_000, "step": 0.002280597014925373,
        },
        expected=0.002280597014925373, unit="seconds", show_as="ms",
        text=(
            "Phi-3 mini 4k (3,820,000,000 parameters, 2-byte weights) decodes at batch 1 on an "
            "H100 SXM, with 3.35 TB/s of HBM bandwidth and 989 TFLOP/s of dense BF16. Ignoring the "
            "KV cache and overheads, what is the minimum time per decode step?"
        ),
    ),
    ("preset-decode-floor", 2230): Draw(
        params={
            "model": "OPT-13B", "model_layers": 40, "model_kv_heads": 40, "model_q_heads": 40,
            "model_head_dim": 128, "model_hidden": 5120, "model_dtype_bytes": 2,
            "model_params": 12_850_000_000, "model_active": 12_850_000_000, "g": "H100 SXM",
            "g_memory": 85_899_345_920, "g_bandwidth": 3_350_000_000_000,
            "g_flops": 989_000_000_000_000, "weights": 25_700_000_000,
            "step": 0.0076716417910447764,
        },
        expected=0.0076716417910447764, unit="seconds", show_as="ms",
        text=(
            "OPT-13B (12,850,000,000 parameters, 2-byte weights) decodes at batch 1 on an H100 "
            "SXM, with 3.35 TB/s of HBM bandwidth and 989 TFLOP/s of dense BF16. Ignoring the KV "
            "cache and overheads, what is the minimum time per decode step?"
        ),
    ),
}
# fmt: on


@pytest.mark.parametrize(("question_id", "seed"), list(NUMERIC_DRAWS))
def test_a_numeric_draw_is_pinned(question_id, seed):
    data = ask_json(question_id, seed)
    got = Draw(**{name: data[name] for name in Draw._fields})
    want = NUMERIC_DRAWS[question_id, seed]
    assert got == want
    # equal numbers can still differ in what is printed: 4096 vs 4096.0, or params in
    # another order; the repr tells those apart
    assert repr(got) == repr(want)


PAGING_OPTIONS = {
    "block table": (
        "A block table mapping each sequence to fixed-size blocks, like an OS page table."
    ),
    "bigger slab": "A bigger contiguous slab with room to grow.",
    "host memory": "Moving the whole cache to host memory.",
    "recompute": "Recomputing K and V each step instead of storing them.",
}


@pytest.mark.parametrize(
    ("seed", "shown", "correct"),
    [
        (1, ["host memory", "recompute", "block table", "bigger slab"], [2]),
        (2230, ["bigger slab", "host memory", "block table", "recompute"], [2]),
    ],
)
def test_choice_options_are_shown_in_a_pinned_order(seed, shown, correct):
    data = ask_json("paging-analogy", seed)
    assert data["options"] == [PAGING_OPTIONS[name] for name in shown]
    assert data["correct"] == correct


@pytest.mark.parametrize(
    ("seed", "options", "correct"),
    [
        (1, ["8 × 64", "72", "8", "64"], [2]),
        (2230, ["8", "72", "64", "8 × 64"], [0]),
    ],
)
def test_short_choice_options_are_shown_in_a_pinned_order(seed, options, correct):
    data = ask_json("kv-cache-head-count", seed)
    assert data["options"] == options
    assert data["correct"] == correct


LOOP_STEPS = {
    "split": "Split the prompt into tokens and fetch their embeddings.",
    "prefill": (
        "Prefill, in one pass or in chunks, over every prompt position, storing K and V in all "
        "layers and KV heads."
    ),
    "first": "Sample the first output token from the last position's logits.",
    "feed": "Feed that token in as a single new position and compute its K and V row.",
    "attend": (
        "Attend over the cached K and V together with the new row, then sample the next token."
    ),
    "loop": "Loop on the single-token step until an end-of-sequence token or the length limit.",
}


@pytest.mark.parametrize(
    ("seed", "shown", "correct_order"),
    [
        (1, ["feed", "split", "first", "prefill", "attend", "loop"], [1, 3, 2, 0, 4, 5]),
        (2230, ["prefill", "first", "loop", "attend", "feed", "split"], [5, 0, 1, 4, 3, 2]),
    ],
)
def test_order_items_are_shown_in_a_pinned_order(seed, shown, correct_order):
    data = ask_json("autoregressive-loop-order", seed)
    assert data["items"] == [LOOP_STEPS[name] for name in shown]
    assert data["correct_order"] == correct_order
    # the right order is the order the bank writes the steps in
    assert [data["items"][i] for i in correct_order] == list(LOOP_STEPS.values())


@pytest.mark.parametrize(
    ("session_seed", "position", "seed"),
    [
        (0, 1, 898_952_056),
        (1, 1, 339_923_146),
        (1, 2, 1_135_764_349),
        (2230, 1, 320_982_710),
        (2230, 10, 294_715_227),
        (2**31 - 1, 3, 1_404_995_452),
    ],
)
def test_quiz_item_seeds_are_pinned(session_seed, position, seed):
    assert session.item_seed(session_seed, position) == seed


@pytest.mark.parametrize(
    ("sheet_seed", "question_id", "seed"),
    [
        # the first two are the draws `kvdrill sheet -n 8` prints for seeds 1 and 2024
        (1, "preset-mha-vs-gqa-ratio", 227_391_755),
        (2024, "preset-decode-floor", 77_335_785),
        (0, "kv-bytes-per-request", 1_906_121_424),
        (2230, "kv-bytes-per-request", 439_939_974),
        (2024, "autoregressive-loop-order", 1_901_644_511),
    ],
)
def test_sheet_item_seeds_are_pinned(sheet_seed, question_id, seed):
    assert sheet.item_seed(sheet_seed, question_id) == seed
