"""The weight-quantization and multi-LoRA decks (question_bank/weight_quantization.yaml,
multi_lora.yaml): every numeric template draws, for two seeds, the answer worked out by
hand from its params, and a wrong answer a person would give is named as its mistake.

Each expected value is a literal, written from the draw's params with the arithmetic
beside it, done by hand and not by the template's expression. (The cost deck,
serving_cost.yaml, is a serving deck: its pins are in tests/test_deck_serving.py.)
"""

from __future__ import annotations

import pytest
from deck_pins import (
    Pinned,
    assert_draw_is_pinned,
    assert_each_pinned_twice,
    graded,
    numeric_templates,
    read_decks,
    ticks,
)

DECK_FILES = ("weight_quantization.yaml", "multi_lora.yaml")


@pytest.fixture(scope="module")
def deck():
    # these decks alone (and the cost deck, for its answers as typed): their ids are unique
    # deck-wide (tests/test_bank.py checks)
    return read_decks((*DECK_FILES, "serving_cost.yaml"))


# fmt: off
PINNED = {
    # ------------------------------------------------------------------ weight quantization
    # 4 bits + (16-bit scale + 4-bit zero) / 128 = 4 + 0.15625
    ("wq-int4-bits-per-weight", 1): Pinned({"group_size": 128}, 4.15625, "count"),
    # 4 + 20 / 64 = 4 + 0.3125
    ("wq-int4-bits-per-weight", 4): Pinned({"group_size": 64}, 4.3125, "count"),
    # 4 + 16/128 = 4.125 bits = 0.515625 B; × 13e9 = 6.703125e9 B
    ("wq-w4-model-bytes", 1): Pinned({"params_b": 13, "group_size": 128}, 6_703_125_000, "bytes"),
    # 4 + 16/32 = 4.5 bits = 0.5625 B; × 7e9 = 3.9375e9 B
    ("wq-w4-model-bytes", 2): Pinned({"params_b": 7, "group_size": 32}, 3_937_500_000, "bytes"),
    # 8e9 × 0.515625 B = 4.125e9 B over 0.8 × 4.8e12 = 3.84e12 B/s: 1.07421875 ms
    ("wq-w4-decode-step", 1): Pinned(
        {"params_b": 8, "group_size": 128, "bw_tbs": 4.8, "mbu_pct": 80}, 0.00107421875, "seconds"),
    # 13e9 × (4.25 / 8) = 6.90625e9 B over 0.7 × 4.8e12 = 3.36e12 B/s: 2.05543 ms
    ("wq-w4-decode-step", 2): Pinned(
        {"params_b": 13, "group_size": 64, "bw_tbs": 4.8, "mbu_pct": 70}, 0.0020554315476190477, "seconds"),
    # 989 / 3.35 = 295.224 FLOP/B; 2 FLOPs per half byte is 4 FLOP/B per sequence: / 4
    ("wq-w4a16-compute-bound-batch", 1): Pinned({"bw_tbs": 3.35}, 73.80597014925372, "count"),
    # 312 / 2.039 = 153.016; / 4
    ("wq-w4a16-compute-bound-batch", 2): Pinned({"bw_tbs": 2.039}, 38.254046101029914, "count"),
    # ------------------------------------------------------------------ multi-LoRA
    # ffn 14,336; widths 2 × 8,192 + 2 × 5,120 + 3 × 18,432 = 81,920; 80 × 64 × 81,920 × 2 B
    ("lora-adapter-bytes", 1): Pinned({"layers": 80, "d": 4096, "r": 64}, 838_860_800, "bytes"),
    # ffn 28,672; 2 × 16,384 + 2 × 9,216 + 3 × 36,864 = 161,792; 80 × 64 × 161,792 × 2 B
    ("lora-adapter-bytes", 2): Pinned({"layers": 80, "d": 8192, "r": 64}, 1_656_750_080, "bytes"),
    # ffn 17,920; 2 × 10,240 + 2 × 6,144 + 3 × 23,040 = 101,888; 32 × 8 × 101,888 × 2 =
    # 52,166,656 B; 8e9 / that = 153.4
    ("lora-adapters-fit", 1): Pinned({"budget_gb": 8, "layers": 32, "d": 5120, "r": 8}, 153, "count"),
    # 40 × 8 × 101,888 × 2 = 65,208,320 B; 16e9 / that = 245.4
    ("lora-adapters-fit", 2): Pinned({"budget_gb": 16, "layers": 40, "d": 5120, "r": 8}, 245, "count"),
    # 8 × (5,120 + 17,920) / (5,120 × 17,920) = 184,320 / 91,750,400
    ("lora-extra-flops", 1): Pinned({"d": 5120, "r": 8}, 0.0020089285714285712, "fraction"),
    # 64 × (8,192 + 28,672) / (8,192 × 28,672) = 288 / 28,672
    ("lora-extra-flops", 3): Pinned({"d": 8192, "r": 64}, 0.010044642857142858, "fraction"),
    # (10,240 + 5,632) = 15,872; 40 × 32 × 15,872 × 2 = 40,632,320 B; / 50e9 B/s
    ("lora-swap-latency", 1): Pinned(
        {"layers": 40, "d": 5120, "kv_dim": 512, "r": 32, "link_gbs": 50}, 0.0008126464, "seconds"),
    # (16,384 + 9,216) = 25,600; 40 × 64 × 25,600 × 2 = 131,072,000 B; / 50e9 B/s
    ("lora-swap-latency", 2): Pinned(
        {"layers": 40, "d": 8192, "kv_dim": 1024, "r": 64, "link_gbs": 50}, 0.00262144, "seconds"),
    # 80 layers × 2 matrices × 8 × (5,120 + 5,120) × 2 B = 25 MiB
    ("bug-lora-product-fix", 1): Pinned({"layers": 80, "d": 5120, "r": 8}, 26_214_400, "bytes"),
    # 40 × 2 × 32 × 10,240 × 2 B = 50 MiB
    ("bug-lora-product-fix", 2): Pinned({"layers": 40, "d": 5120, "r": 32}, 52_428_800, "bytes"),
}

# (question, seed, answer as typed, the mistake the grader names)
MISTAKES = [
    ("wq-int4-bits-per-weight", 1, "4", "forgot-quant-scales"),
    ("wq-int4-bits-per-weight", 1, "4.125", "wq-forgot-zero-point"),  # 4 + 16/128
    ("wq-int4-bits-per-weight", 1, "4.25", "wq-zero-point-16-bit"),  # 4 + 32/128
    ("wq-int4-bits-per-weight", 4, "0.539", "bits-vs-bytes"),  # 4.3125 / 8
    ("wq-w4-model-bytes", 1, "6.5 GB", "forgot-quant-scales"),  # 13e9 / 2
    ("wq-w4-model-bytes", 1, "26 GB", "wrong-dtype-bytes"),  # 13e9 × 2 in BF16
    ("wq-w4-model-bytes", 2, "31.5 GB", "bits-vs-bytes"),  # 7e9 × 4.5
    ("wq-w4-decode-step", 1, "4.17 ms", "wrong-dtype-bytes"),  # 16e9 / 3.84e12
    ("wq-w4-decode-step", 1, "1.04 ms", "forgot-quant-scales"),  # 4e9 / 3.84e12
    ("wq-w4-decode-step", 1, "0.859 ms", "ignored-mbu"),  # 4.125e9 / 4.8e12
    ("wq-w4a16-compute-bound-batch", 1, "295", "wq-bf16-crossover"),
    ("wq-w4a16-compute-bound-batch", 1, "148", "flops-2x"),  # 295.2 / 2
    ("wq-w4a16-compute-bound-batch", 2, "306", "bits-vs-bytes"),  # 2 × 153.0
    ("lora-adapter-bytes", 1, "10 MiB", "forgot-layers"),  # one layer: 64 × 81,920 × 2 B
    ("lora-adapter-bytes", 1, "260 MiB", "lora-attention-only"),  # 80 × 64 × 26,624 × 2 B
    ("lora-adapter-bytes", 1, "380 MiB", "lora-one-matrix"),  # 80 × 64 × 38,912 × 2 B
    ("lora-adapter-bytes", 1, "860 MiB", "query-heads"),  # 80 × 64 × 88,064 × 2 B
    ("lora-adapters-fit", 1, "164", "capacity-gb-as-gib"),  # 8 × 2^30 / 52,166,656
    ("lora-adapters-fit", 1, "476", "lora-attention-only"),  # 8e9 / (512 × 32,768)
    ("lora-extra-flops", 1, "0.156%", "lora-one-matrix"),  # 8 / 5,120
    ("lora-extra-flops", 1, "0.0446%", "lora-one-matrix"),  # 8 / 17,920
    ("lora-swap-latency", 1, "6.5 ms", "bits-vs-bytes"),  # × 8
    ("lora-swap-latency", 1, "0.406 ms", "wrong-dtype-bytes"),  # 1 byte a parameter
    ("lora-swap-latency", 1, "20.3 us", "forgot-layers"),  # / 40
    ("lora-swap-latency", 1, "1.48 s", "lora-product-not-sum"),  # 73,819,750,400 B / 50e9
    ("bug-lora-product-fix", 1, "62.5 GiB", "lora-product-not-sum"),  # 1,280 × 5,120² × 2 B
    ("bug-lora-product-fix", 1, "12.5 MiB", "lora-one-matrix"),
    ("bug-lora-product-fix", 1, "320 KiB", "forgot-layers"),  # 26,214,400 / 80
]

# answers as a person types them, right on the draw
RIGHT = [
    ("wq-int4-bits-per-weight", 1, "4.16 bits"),
    ("wq-w4-model-bytes", 1, "6.70 GB"),
    ("wq-w4-decode-step", 1, "1.07 ms"),
    ("wq-w4a16-compute-bound-batch", 1, "~74"),
    ("lora-adapter-bytes", 1, "800 MiB"),
    ("lora-adapters-fit", 1, "153"),
    ("lora-extra-flops", 1, "0.2%"),
    ("lora-swap-latency", 1, "0.81 ms"),
    ("bug-lora-product-fix", 1, "25 MiB"),
    # the cost deck's dollars, typed as plain numbers
    ("cost-per-million-output", 1, "0.1085"),
    ("cost-per-million-output", 1, "0.11"),  # to the cent: 1.4 % above $0.1085
    ("cost-batch-tradeoff", 1, "0.326"),
    ("cost-batch-tradeoff", 1, "0.33"),  # to the cent: 1.4 % above $0.3255
    ("cost-tp8-node", 1, "1.11"),
    ("cost-idle-capacity", 1, "1.39"),
    ("cost-input-tokens", 1, "0.249"),
]
# fmt: on


def deck_templates(deck) -> list[str]:
    return numeric_templates(deck, lambda name: name in DECK_FILES)


@pytest.mark.parametrize(("question_id", "seed"), list(PINNED))
def test_a_template_draws_the_answer_worked_out_by_hand(deck, question_id, seed):
    assert_draw_is_pinned(deck, question_id, seed, PINNED[question_id, seed])


def test_every_template_of_the_two_decks_is_pinned_for_two_seeds(deck):
    templates = deck_templates(deck)
    assert len(templates) == 9
    assert_each_pinned_twice(templates, PINNED)


@pytest.mark.parametrize(("question_id", "seed", "answer", "mistake"), MISTAKES)
def test_a_wrong_answer_is_named(deck, question_id, seed, answer, mistake):
    verdict = graded(deck, question_id, seed, answer)
    assert verdict.correct is False
    assert verdict.misconception == mistake


# dollars rounded past the cent are not the answer: $0.10 is 7.8 % below $0.1085
TOO_COARSE = [
    ("cost-per-million-output", 1, "0.1"),
    ("cost-input-tokens", 2, "0.03"),  # 11 % below $0.0337
]


@pytest.mark.parametrize(("question_id", "seed", "answer"), TOO_COARSE)
def test_a_cost_rounded_past_the_cent_is_not_right(deck, question_id, seed, answer):
    assert graded(deck, question_id, seed, answer).correct is False


@pytest.mark.parametrize(("question_id", "seed", "answer"), RIGHT)
def test_a_rounded_answer_is_right(deck, question_id, seed, answer):
    assert graded(deck, question_id, seed, answer).correct is True


@pytest.mark.parametrize(
    ("answer", "named", "not_named"),
    [
        # 8 / 5,120 = r / d_in: the product by B alone, 2 × r × 17,920 over 2 × 5,120 × 17,920
        ("0.156%", "only the product by B (17,920 × r)", "only the product by A"),
        # 8 / 17,920 = r / d_out: the product by A alone, 2 × r × 5,120 over the base
        ("0.0446%", "only the product by A (r × 5,120)", "only the product by B"),
    ],
)
def test_a_one_factor_slip_names_the_factor_it_kept(deck, answer, named, not_named):
    verdict = graded(deck, "lora-extra-flops", 1, answer)
    assert verdict.misconception == "lora-one-matrix"
    assert named in verdict.feedback
    assert not_named not in verdict.feedback


def test_the_microscaling_formats_are_told_apart_exactly(deck):
    # MXFP4 (OCP MX spec): 32 values a block, E8M0 scale; NVFP4: 16 a block, E4M3 scale
    # and an FP32 scale per tensor
    question = deck.get("wq-nvfp4-vs-mxfp4")
    right = [o.text for o in question.options if o.correct]
    assert len(right) == 1
    assert "E8M0 scale per block of 32" in right[0]
    assert "E4M3 scale per block of 16" in right[0]
    assert "FP32 scale per tensor" in right[0]


# (question, an answer as a person types it, the key points a grader ticks, the wrong claims
# it makes, the rating suggested)
# fmt: off
CONCEPT_ANSWERS = [
    ("wq-awq-vs-gptq",
     "AWQ looks at activation magnitudes to find the roughly 1% of salient channels and scales"
     " those weight channels up before rounding, dividing the inputs by the same factor, so no"
     " mixed precision and no backprop. GPTQ goes one column at a time and updates the"
     " remaining unquantized weights to compensate the error, using the inverse Hessian from"
     " calibration data.",
     [1, 2], [], 3),
    ("wq-awq-vs-gptq",
     "AWQ keeps the largest weights in FP16. GPTQ fine-tunes the model with gradients after"
     " quantizing.",
     [], [1, 2], 1),
    ("wq-helps-decode-not-prefill",
     "INT4 weights need 4 times fewer flops, so everything gets faster, prefill too.",
     [], [2], 1),
    ("lora-merge-vs-separate",
     "Merge when you serve a single fine-tune: zero overhead. With many tenants, merged weights"
     " would need a full copy per adapter, so keep them separate: one shared base serves many"
     " small adapters and one batch can mix different adapters, at the price of extra low-rank"
     " compute with SGMV kernels, and you can hot swap adapters.",
     [1, 2, 3], [], 3),
    ("cost-input-vs-output-price",
     "Prefill handles all prompt tokens in parallel and is compute bound, so many input tokens"
     " per GPU second. Decode is one token per step per sequence and memory bound, and each"
     " generating sequence holds KV cache memory for its whole reply, limiting the batch."
     " Prices follow GPU time; cached input is cheaper still.",
     [1, 2, 3], [], 3),
]
# fmt: on


@pytest.mark.parametrize(
    ("question_id", "answer", "covered", "contradicted", "rating"), CONCEPT_ANSWERS
)
def test_a_concept_answer_is_read_as_a_person_reads_it(
    deck, question_id, answer, covered, contradicted, rating
):
    verdict = graded(deck, question_id, 1, answer)
    assert ticks(verdict.covered) == covered
    assert ticks(verdict.wrong_claims) == contradicted
    assert verdict.rating == rating
