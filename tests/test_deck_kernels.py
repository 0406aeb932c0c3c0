"""The attention-kernel, CUDA-graph and sampling decks (question_bank/attention_kernels.yaml,
cuda_graphs.yaml, sampling.yaml): every numeric template draws, for two seeds, the answer
worked out by hand from its params.

Each expected value is a literal, written from the params of the draw with the arithmetic
shown beside it, done by hand and not by the template's expression. The mistakes rows type
a wrong answer a person would give on one of those draws and name the mistake the grader
must report.
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

DECK_FILES = ("attention_kernels.yaml", "cuda_graphs.yaml", "sampling.yaml")


@pytest.fixture(scope="module")
def deck():
    return read_decks()


def deck_templates(deck) -> list[str]:
    return numeric_templates(deck, lambda name: name in DECK_FILES)


# fmt: off
PINNED = {
    # ------------------------------------------------------------------ attention kernels
    # 16,384² × 64 heads × 2 B = 34,359,738,368 B a matrix; 4 passes = 128 GiB
    ("naive-attention-score-traffic", 1): Pinned({"seq": 16384, "heads": 64}, 137_438_953_472, "bytes"),
    # 4,096² × 32 × 2 B = 1 GiB; 4 passes
    ("naive-attention-score-traffic", 2): Pinned({"seq": 4096, "heads": 32}, 4_294_967_296, "bytes"),
    # 4 × 4,096² × 64 × 2 B = 8,589,934,592 B a layer; × 80 = 687,194,767,360 B / 3.35e12 B/s
    ("flash-attention-hbm-time-saved", 1): Pinned(
        {"g": "H100 SXM", "layers": 80, "heads": 64, "seq": 4096}, 0.20513276637611940, "seconds"),
    # 4 × 2,048² × 64 × 2 B = 2,147,483,648 B; × 24 = 51,539,607,552 B / 3.35e12 B/s
    ("flash-attention-hbm-time-saved", 2): Pinned(
        {"g": "H100 SXM", "layers": 24, "heads": 64, "seq": 2048}, 0.015384957478208955, "seconds"),
    # max 7 -> 9: 6 × 2^-2 + 2.25 = 1.5 + 2.25
    ("online-softmax-rescale", 1): Pinned({"m_old": 7, "gap": 2, "l_old": 6, "tile_sum": 2.25}, 3.75, "count"),
    # 3.5 × 2^-2 + 3 = 0.875 + 3
    ("online-softmax-rescale", 2): Pinned({"m_old": 7, "gap": 2, "l_old": 3.5, "tile_sum": 3}, 3.875, "count"),
    # 2 sequences × 8 KV heads = 16 blocks; 108 / 16 = 6.75 -> 7
    ("flash-decoding-splits", 1): Pinned({"sms": 108, "batch": 2, "group": 8}, 7, "count"),
    # 1 × 8 = 8 blocks; 132 / 8 = 16.5 -> 17
    ("flash-decoding-splits", 2): Pinned({"sms": 132, "batch": 1, "group": 4}, 17, "count"),
    # ------------------------------------------------------------------ CUDA graphs
    # 24 × 10 + 6 = 246 kernels × 8 µs = 1.968 ms; − 0.4 ms
    ("graph-launch-time-saved", 1): Pinned(
        {"layers": 24, "per_layer": 10, "launch_us": 8, "gpu_ms": 0.4}, 0.001568, "seconds"),
    # 246 × 10 µs = 2.46 ms; − 0.8 ms
    ("graph-launch-time-saved", 2): Pinned(
        {"layers": 24, "per_layer": 10, "launch_us": 10, "gpu_ms": 0.8}, 0.00166, "seconds"),
    # 600 × 10 µs = 6 ms -> 166.667 tokens/s; 1.1 ms -> 909.091 tokens/s; 10,000/11 − 1,000/6
    ("graph-tokens-per-s-gain", 1): Pinned(
        {"kernels": 600, "launch_us": 10, "gpu_ms": 1.1}, 742.4242424242424, "tokens_per_s"),
    # 450 × 10 µs = 4.5 ms -> 222.222 tokens/s; 0.7 ms -> 1,428.571 tokens/s; 10,000/7 − 2,000/9
    ("graph-tokens-per-s-gain", 2): Pinned(
        {"kernels": 450, "launch_us": 10, "gpu_ms": 0.7}, 1206.3492063492063, "tokens_per_s"),
    # 130 runs on 136: 6 / 136
    ("graph-padding-waste", 1): Pinned({"batch": 130}, 0.04411764705882353, "fraction"),
    # 37 runs on 40: 3 / 40
    ("graph-padding-waste", 2): Pinned({"batch": 37}, 0.075, "fraction"),
    # (2.5 − 0.5) ms / 40 µs
    ("graph-launch-bound-batch", 1): Pinned({"cpu_ms": 2.5, "weights_ms": 0.5, "per_seq_us": 40}, 50, "count"),
    # (2.5 − 0.5) ms / 10 µs
    ("graph-launch-bound-batch", 2): Pinned({"cpu_ms": 2.5, "weights_ms": 0.5, "per_seq_us": 10}, 200, "count"),
    # ------------------------------------------------------------------ sampling
    # running sums 0.42, 0.66 < 0.75, then 0.79 reaches it: 3 tokens
    ("top-p-tokens-kept", 1): Pinned({"p": 0.75}, 3, "count"),
    # 0.94 < 0.95, then 0.98 reaches it: 6 tokens
    ("top-p-tokens-kept", 2): Pinned({"p": 0.95}, 6, "count"),
    # 50 %, 25 %, 25 % at T = 2: square roots 0.70711, 0.5, 0.5; 0.70711 / 1.70711 = √2 − 1
    ("temperature-top-probability", 1): Pinned(
        {"p1_pct": 50, "p2_pct": 25, "temp": 2.0}, 0.41421356237309515, "fraction"),
    # 60 %, 25 %, 15 % at T = 0.7: powers 1/0.7 give 0.482002, 0.138013, 0.066540;
    # 0.482002 / 0.686555
    ("temperature-top-probability", 2): Pinned(
        {"p1_pct": 60, "p2_pct": 25, "temp": 0.7}, 0.7020873480201301, "fraction"),
    # drop 5 × 0.4 + 1.0 = 3; e^3
    ("penalty-odds-factor", 1): Pinned({"count": 5, "freq": 0.4, "presence": 1.0}, 20.085536923187668, "count"),
    # drop 2 × 0.4 + 0.3 = 1.1; e^1.1
    ("penalty-odds-factor", 2): Pinned({"count": 2, "freq": 0.4, "presence": 0.3}, 3.0041660239464334, "count"),
    # 50,257 × 50 ns = 2.51285 ms a sequence; × 32
    ("grammar-mask-naive-cost", 1): Pinned({"vocab": 50257, "ns": 50, "batch": 32}, 0.0804112, "seconds"),
    # 128,256 × 100 ns = 12.8256 ms; × 8
    ("grammar-mask-naive-cost", 2): Pinned({"vocab": 128256, "ns": 100, "batch": 8}, 0.1026048, "seconds"),
}

# (question, seed, answer as typed, the mistake the grader names)
MISTAKES = [
    ("naive-attention-score-traffic", 2, "4 GiB", None),
    ("naive-attention-score-traffic", 2, "1 GiB", "naive-attn-one-pass"),
    ("naive-attention-score-traffic", 2, "2 GiB", "naive-attn-half-traffic"),
    ("naive-attention-score-traffic", 2, "128 MiB", "attn-forgot-heads"),  # 4 × 4,096² × 2 B
    ("naive-attention-score-traffic", 2, "1 MiB", "attn-linear-in-seq"),  # 4 × 4,096 × 32 × 2 B
    ("flash-attention-hbm-time-saved", 1, "205 ms", None),
    ("flash-attention-hbm-time-saved", 1, "2.564 ms", "forgot-layers"),  # one layer
    ("flash-attention-hbm-time-saved", 1, "51.28 ms", "naive-attn-one-pass"),
    ("flash-attention-hbm-time-saved", 1, "102.6 ms", "naive-attn-half-traffic"),
    ("flash-attention-hbm-time-saved", 1, "3.205 ms", "attn-forgot-heads"),  # 205.13 / 64
    ("online-softmax-rescale", 1, "3.75", None),
    ("online-softmax-rescale", 1, "8.25", "online-softmax-no-rescale"),  # 6 + 2.25
    ("online-softmax-rescale", 1, "26.25", "online-softmax-rescale-inverted"),  # 6 × 4 + 2.25
    ("online-softmax-rescale", 1, "15", "online-softmax-old-reference"),  # 6 + 2.25 × 4
    ("flash-decoding-splits", 1, "7", None),
    ("flash-decoding-splits", 1, "6", "rounded-down-count"),
    ("flash-decoding-splits", 1, "1", "query-heads"),  # 108 / (2 × 64) = 0.84 -> 1
    ("graph-launch-time-saved", 1, "1.568 ms", None),
    ("graph-launch-time-saved", 1, "1.968 ms", "graph-saves-whole-step"),
    ("graph-launch-time-saved", 1, "1.52 ms", "graph-forgot-extra-kernels"),  # 240 × 8 µs − 0.4 ms
    ("graph-launch-time-saved", 2, "1.66 ms", None),
    ("flash-decoding-splits", 2, "17", None),
    ("top-p-tokens-kept", 2, "5", "top-p-dropped-crossing-token"),  # stops at 0.94 < 0.95
    ("graph-tokens-per-s-gain", 1, "742.4 tokens/s", None),
    ("graph-tokens-per-s-gain", 1, "909.1", "total-not-difference"),
    ("graph-tokens-per-s-gain", 1, "204.1", "graph-inverted-time-saved"),  # 1 / 4.9 ms
    ("graph-padding-waste", 1, "4.41%", None),
    ("graph-padding-waste", 1, "4.615%", "graph-padding-over-real-rows"),  # 6 / 130
    ("graph-padding-waste", 1, "49.22%", "graph-padded-to-power-of-two"),  # 126 / 256
    ("graph-padding-waste", 1, "95.59%", "complement-fraction"),
    ("graph-launch-bound-batch", 1, "about 50", None),
    ("graph-launch-bound-batch", 1, "62.5", "forgot-weights"),  # 2.5 ms / 40 µs
    ("top-p-tokens-kept", 1, "3", None),
    ("top-p-tokens-kept", 1, "2", "top-p-dropped-crossing-token"),
    ("temperature-top-probability", 1, "41.4%", None),
    ("temperature-top-probability", 1, "0.6667", "temperature-multiplied"),  # 0.25 / 0.375
    ("temperature-top-probability", 1, "50%", "temperature-ignored"),
    ("penalty-odds-factor", 1, "20.09", None),
    ("penalty-odds-factor", 1, "7.389", "forgot-presence-penalty"),  # e^2
    ("penalty-odds-factor", 1, "1096.6", "presence-per-occurrence"),  # e^(5 × 1.4)
    ("penalty-odds-factor", 1, "4.055", "frequency-penalty-once"),  # e^1.4
    ("penalty-odds-factor", 1, "3", "logit-drop-not-factor"),
    ("grammar-mask-naive-cost", 1, "80.41 ms", None),
    ("grammar-mask-naive-cost", 1, "2.513 ms", "forgot-requests"),
]
# fmt: on


@pytest.mark.parametrize(("question_id", "seed"), list(PINNED))
def test_a_template_draws_the_answer_worked_out_by_hand(deck, question_id, seed):
    assert_draw_is_pinned(deck, question_id, seed, PINNED[question_id, seed])


def test_every_template_of_these_decks_is_pinned_for_two_seeds(deck):
    templates = deck_templates(deck)
    assert "flash-decoding-splits" in templates
    assert_each_pinned_twice(templates, PINNED)


@pytest.mark.parametrize(("question_id", "seed", "answer", "mistake"), MISTAKES)
def test_an_answer_as_typed_is_graded_and_its_mistake_named(deck, question_id, seed, answer, mistake):
    verdict = graded(deck, question_id, seed, answer)
    assert verdict.correct is (mistake is None)
    assert verdict.misconception == mistake


# (question, answer as typed, the key points covered, the wrong claims made)
CONCEPTS = [
    ("flash-attention-io-aware",
     "Naive attention is bandwidth bound: it writes the N^2 score matrix to HBM and reads it "
     "back. FlashAttention computes it in tiles kept in SRAM with a running max and sum, so the "
     "big matrix never leaves the chip. Output is exact and memory grows linearly.",
     [1, 2, 3], []),
    ("flash-attention-io-aware",
     "It is faster because it uses fewer FLOPs, by approximating attention with a sparse pattern.",
     [], [1, 3]),
    ("flash-decoding-why",
     "Decode at batch 1 is compute bound, so it just needs faster tensor cores.", [], [1]),
    ("cuda-graphs-why-decode",
     "Decode kernels at batch 1 take a few microseconds, less than the CPU needs to launch each, "
     "so the GPU idles. A graph records all kernels once and replays them with a single launch. "
     "Prefill kernels are long, so the launch cost is hidden behind them.",
     [1, 2, 3], []),
    ("cuda-graphs-why-decode",
     "CUDA graphs make the kernels run faster by fusing them, and they help prefill as much as "
     "decode.",
     [], [2, 3]),
    ("temperature-zero-nondeterminism",
     "Argmax is deterministic, but the logits differ in the last bits because floating point "
     "addition is not associative and the kernels reduce in an order that depends on the batch "
     "size, i.e. on the other requests. A near tie flips and the text diverges. Batch-invariant "
     "kernels with a fixed reduction order fix it at some throughput cost.",
     [1, 2, 3], []),
    ("temperature-zero-nondeterminism",
     "Temperature 0 still samples randomly because the random seed is not fixed.", [], [1]),
    ("constrained-decoding-tokenizer",
     "It samples freely and retries until the output parses.", [], [1]),
]


@pytest.mark.parametrize(("question_id", "answer", "covered", "wrong"), CONCEPTS)
def test_a_concept_answer_is_read_as_a_person_would(deck, question_id, answer, covered, wrong):
    verdict = graded(deck, question_id, 1, answer)
    assert ticks(verdict.covered) == covered
    assert ticks(verdict.wrong_claims) == wrong
