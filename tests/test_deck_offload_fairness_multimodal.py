"""The decks on KV offload and routing, admission and fairness, KV eviction and hybrid
models, and multimodal serving: every numeric template draws, for two seeds, the answer
worked out by hand from its params.

Each expected value below is a literal, written from the params of the draw with the
arithmetic shown beside it, done by hand and not by the template's expression: a slip in
a template's formula, a param range or a derived value fails here. The mistakes rows type
a wrong answer a person would give on one of those draws and name the mistake the grader
must report; the answers rows type the right answer as a person would.
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

DECK_FILES = (
    "kv_offload_routing.yaml",
    "admission_fairness.yaml",
    "kv_compression_hybrids.yaml",
    "multimodal_serving.yaml",
)


@pytest.fixture(scope="module")
def deck():
    # these decks alone: their ids are unique deck-wide (tests/test_bank.py checks)
    return read_decks(DECK_FILES)


def these_templates(deck) -> list[str]:
    return numeric_templates(deck, lambda name: name in DECK_FILES)


# fmt: off
PINNED = {
    # ------------------------------------------------------------------ offload and routing
    # 2 × 32 × 8 × 128 × 2 = 131,072 B a token × 8,192 = 1,073,741,824 B; / 6e9 B/s
    ("kv-offload-reload-time", 1): Pinned(
        {"layers": 32, "kv_heads": 8, "prefix": 8192, "link_gbs": 6}, 0.178956970666666667, "seconds"),
    # 2 × 48 × 8 × 128 × 2 = 196,608 B × 8,192 = 1,610,612,736 B; / 6e9 B/s
    ("kv-offload-reload-time", 2): Pinned(
        {"layers": 48, "kv_heads": 8, "prefix": 8192, "link_gbs": 6}, 0.268435456, "seconds"),
    # OPT-13B: 2 × 40 × 40 × 128 × 2 = 819,200 B a token; 2 × 12.85e9 / 600e12 = 42.8333 µs;
    # 819,200 × 600e12 / 25.7e9
    ("kv-reload-breakeven-bandwidth", 1): Pinned(
        {"m": "OPT-13B", "tflops": 600}, 1.9125291828793774e10, "bytes_per_s"),
    # Qwen2.5 7B: 2 × 28 × 4 × 128 × 2 = 57,344 B; 2 × 7.61e9 / 600e12 = 25.3667 µs;
    # 57,344 × 600e12 / 15.22e9
    ("kv-reload-breakeven-bandwidth", 5): Pinned(
        {"m": "Qwen2.5 7B", "tflops": 600}, 2.260604467805519e9, "bytes_per_s"),
    # 2,048 × 40 µs = 81.92 ms; × (90 − 15) %
    ("prefix-routing-ttft-saved", 1): Pinned(
        {"shared": 2048, "per_token_us": 40, "random_pct": 15, "aware_pct": 90}, 0.06144, "seconds"),
    # 4,096 × 60 µs = 245.76 ms; × (70 − 20) %
    ("prefix-routing-ttft-saved", 2): Pinned(
        {"shared": 4096, "per_token_us": 60, "random_pct": 20, "aware_pct": 70}, 0.12288, "seconds"),
    # 60,000 / (11 + 1)
    ("consistent-hash-prefixes-moved", 1): Pinned({"prefixes": 60000, "replicas": 11}, 5000, "count"),
    # 60,000 / (8 + 1)
    ("consistent-hash-prefixes-moved", 2): Pinned(
        {"prefixes": 60000, "replicas": 8}, 6666.666666666667, "count"),
    # ------------------------------------------------------------------ admission and fairness
    # free 24,000 − 7,200 − 800 = 16,000; ceil(7,000 / 16) = 438 blocks each; 36.5
    ("admission-kv-budget", 1): Pinned(
        {"total": 24000, "used_pct": 30, "reserve": 800, "prompt": 1000, "max_new": 6000}, 36, "requests"),
    # free 32,000 − 9,600 − 600 = 21,800; ceil(5,000 / 16) = 313 blocks each; 69.6
    ("admission-kv-budget", 2): Pinned(
        {"total": 32000, "used_pct": 30, "reserve": 600, "prompt": 1000, "max_new": 4000}, 69, "requests"),
    # ceil(6,000 / 16) = 375 blocks; 375 − 240 = 135 missing; 135 / 70 = 1.9 -> 2
    ("preempt-for-priority", 1): Pinned({"prompt": 6000, "free": 240, "held": 70}, 2, "requests"),
    # 375 − 200 = 175 missing; 175 / 70 = 2.5 -> 3
    ("preempt-for-priority", 2): Pinned({"prompt": 6000, "free": 200, "held": 70}, 3, "requests"),
    # (32,000 + 1,000 × 9 / 2) / 10,000 = 36,500 / 10,000
    ("hol-fcfs-mean-ttft", 1): Pinned(
        {"long": 32000, "n": 8, "short": 1000, "rate": 10000}, 3.65, "seconds"),
    # (32,000 + 1,000 × 7 / 2) / 10,000
    ("hol-fcfs-mean-ttft", 2): Pinned(
        {"long": 32000, "n": 6, "short": 1000, "rate": 10000}, 3.55, "seconds"),
    # λ = 60; room (4 − 0.2) × 40 = 152; queued floor(30.4) = 30; (152 − 30) / 20
    ("shed-time-to-threshold", 1): Pinned(
        {"mu": 40, "over_pct": 50, "slo_s": 4, "prefill_ms": 200, "q_pct": 20}, 6.1, "seconds"),
    # queued floor(60.8) = 60; (152 − 60) / 20
    ("shed-time-to-threshold", 2): Pinned(
        {"mu": 40, "over_pct": 50, "slo_s": 4, "prefill_ms": 200, "q_pct": 40}, 4.6, "seconds"),
    # (1,200 × 3 − 400) / 2
    ("vtc-tokens-until-switch", 1): Pinned(
        {"c_a": 8000, "diff": 1200, "w_a": 3, "prompt": 400}, 1600, "tokens"),
    # (2,400 × 3 − 800) / 2
    ("vtc-tokens-until-switch", 2): Pinned(
        {"c_a": 12000, "diff": 2400, "w_a": 3, "prompt": 800}, 3200, "tokens"),
    # 60,000 / (1,500 + 2,000) = 17.1
    ("token-rate-limit-requests", 1): Pinned(
        {"tpm": 60000, "prompt": 1500, "max_tokens": 2000, "actual": 300}, 17, "requests"),
    # 150,000 / (500 + 4,000) = 33.3
    ("token-rate-limit-requests", 2): Pinned(
        {"tpm": 150000, "prompt": 500, "max_tokens": 4000, "actual": 600}, 33, "requests"),
    # queued ceil(5 × 8 × 1.3) = 52; 52 / 8
    ("bug-shed-arrival-rate-fix", 1): Pinned(
        {"mu": 8, "over_pct": 50, "slo_s": 5, "extra_pct": 30}, 6.5, "seconds"),
    # queued ceil(5 × 12 × 1.1) = 66; 66 / 12
    ("bug-shed-arrival-rate-fix", 2): Pinned(
        {"mu": 12, "over_pct": 100, "slo_s": 5, "extra_pct": 10}, 5.5, "seconds"),
    # ------------------------------------------------------------------ eviction and hybrids
    # 72 / 6 = 12 attention layers; 2 × 12 × 8 × 128 × 2 = 49,152 B a token × 262,144 = 12 GiB
    ("hybrid-attention-kv", 1): Pinned({"layers": 72, "period": 6, "seq": 262144}, 12_884_901_888, "bytes"),
    # 24 / 6 = 4; 16,384 B a token × 65,536 = 1 GiB
    ("hybrid-attention-kv", 2): Pinned({"layers": 24, "period": 6, "seq": 65536}, 1_073_741_824, "bytes"),
    # 48 − 6 = 42 Mamba layers × 8,192 × 19 × 4 B (622,592 B)
    ("mamba-state-per-sequence", 1): Pinned(
        {"layers": 48, "d_inner": 8192, "state_bytes": 4, "seq": 8192}, 26_148_864, "bytes"),
    # 42 × 4,096 × 19 × 2 B (155,648 B)
    ("mamba-state-per-sequence", 2): Pinned(
        {"layers": 48, "d_inner": 4096, "state_bytes": 2, "seq": 8192}, 6_537_216, "bytes"),
    # KV 16,384 × 4,096 = 67,108,864 B + state 28 × 608 × 1,024 = 17,432,576 B; 40e9 / 84,541,440 = 473.1
    ("hybrid-sequences-fit", 1): Pinned(
        {"layers": 32, "state_kib": 608, "pool_gb": 40, "seq": 4096}, 473, "requests"),
    # KV 24,576 × 2,048 = 50,331,648 B + 42 × 304 KiB = 13,074,432 B; 40e9 / 63,406,080 = 630.9
    ("hybrid-sequences-fit", 2): Pinned(
        {"layers": 48, "state_kib": 304, "pool_gb": 40, "seq": 2048}, 630, "requests"),
    # 25 % of 8,000 = 2,000 tokens × 128 KiB = 262,144,000 B; 40e9 / that = 152.6
    ("kv-eviction-budget-fit", 1): Pinned(
        {"budget_pct": 25, "per_token_kib": 128, "seq": 8000, "pool_gb": 40}, 152, "requests"),
    # 2,000 × 160 KiB = 327,680,000 B; 100e9 / that = 305.2
    ("kv-eviction-budget-fit", 2): Pinned(
        {"budget_pct": 25, "per_token_kib": 160, "seq": 8000, "pool_gb": 100}, 305, "requests"),
    # ------------------------------------------------------------------ multimodal
    # 384 × 512 pixels at patch 16: 24 × 32
    ("vit-image-tokens", 1): Pinned({"p": 16, "gw": 24, "gh": 32}, 768, "tokens"),
    # 224 × 336 pixels at patch 14: 16 × 24
    ("vit-image-tokens", 5): Pinned({"p": 14, "gw": 16, "gh": 24}, 384, "tokens"),
    # ceil(800 / 448) × ceil(600 / 448) = 2 × 2 tiles + 1 thumbnail = 5 × 256
    ("image-tiling-tokens", 1): Pinned({"w": 800, "h": 600}, 1280, "tokens"),
    # ceil(3.57) × ceil(2.90) = 4 × 3 = 12 tiles + 1 = 13 × 256
    ("image-tiling-tokens", 2): Pinned({"w": 1600, "h": 1300}, 3328, "tokens"),
    # 2 × 28 × 4 × 128 × 2 = 57,344 B a token × 3 × 1,280 = 3,840 tokens
    ("image-tokens-kv", 1): Pinned(
        {"n_img": 3, "tokens": 1280, "layers": 28, "kv_heads": 4}, 220_200_960, "bytes"),
    # 2 × 32 × 4 × 128 × 2 = 65,536 B × 10 × 1,280 = 12,800 tokens
    ("image-tokens-kv", 2): Pinned(
        {"n_img": 10, "tokens": 1280, "layers": 32, "kv_heads": 4}, 838_860_800, "bytes"),
    # 90 s × 100 = 9,000 mel frames / 2 / 2
    ("audio-tokens-per-clip", 1): Pinned({"pool": 2, "dur_s": 90}, 2250, "tokens"),
    # 300 s × 100 = 30,000 / 2 / 2
    ("audio-tokens-per-clip", 2): Pinned({"pool": 2, "dur_s": 300}, 7500, "tokens"),
    # encoder 2 × 6e9 × 576 × 2 = 13.824 TFLOP; LM 2 × 7e9 × (500 + 1,152) = 23.128 TFLOP;
    # 36.952 TFLOP / 200 TFLOP/s
    ("vision-encoder-ttft", 1): Pinned(
        {"n_img": 2, "text": 500, "enc_m": 6000, "llm_b": 7, "tflops": 200}, 0.18476, "seconds"),
    # 13.824 TFLOP + 2 × 13e9 × (200 + 1,152) = 35.152 TFLOP; 48.976 / 200
    ("vision-encoder-ttft", 2): Pinned(
        {"n_img": 2, "text": 200, "enc_m": 6000, "llm_b": 13, "tflops": 200}, 0.24488, "seconds"),
}

# (question, seed, answer as typed, the mistake the grader names)
MISTAKES = [
    ("kv-offload-reload-time", 1, "89.48 ms", "forgot-kv-factor"),  # 536,870,912 B / 6e9
    ("kv-offload-reload-time", 1, "5.592 ms", "forgot-layers"),  # 33,554,432 B / 6e9
    ("kv-offload-reload-time", 1, "1.432 s", "bits-vs-bytes"),  # 8 × 178.96 ms
    ("kv-offload-reload-time", 1, "21.85 µs", "per-token-not-total"),  # 131,072 B / 6e9
    ("kv-offload-reload-time", 1, "178.96 s", "ms-vs-s"),
    ("kv-reload-breakeven-bandwidth", 1, "38.25 GB/s", "flops-2x"),  # 819,200 / 21.4167 µs
    ("kv-reload-breakeven-bandwidth", 1, "9.56 GB/s", "forgot-kv-factor"),  # 409,600 / 42.83 µs
    ("kv-reload-breakeven-bandwidth", 1, "153 GB/s", "bits-vs-bytes"),
    ("prefix-routing-ttft-saved", 1, "73.73 ms", "ignored-baseline-hits"),  # 90 % × 81.92 ms
    ("prefix-routing-ttft-saved", 1, "81.92 ms", "ignored-hit-rate"),
    ("consistent-hash-prefixes-moved", 1, "55000", "modulo-hash-remap"),  # 60,000 × 11 / 12
    ("consistent-hash-prefixes-moved", 1, "5455", "moved-share-old-count"),  # 60,000 / 11
    ("admission-kv-budget", 1, "253", "admitted-on-prompt-only"),  # 16,000 / ceil(62.5)
    ("admission-kv-budget", 1, "38", "forgot-headroom"),  # 16,800 / 438
    ("admission-kv-budget", 1, "52", "forgot-running-blocks"),  # 23,200 / 438
    ("preempt-for-priority", 2, "2", "rounded-down-count"),  # floor(2.5)
    ("preempt-for-priority", 2, "6", "forgot-free-blocks"),  # ceil(375 / 70)
    ("hol-fcfs-mean-ttft", 1, "0.45 s", "hol-forgot-head"),  # 4,500 / 10,000
    ("hol-fcfs-mean-ttft", 1, "4 s", "hol-last-not-mean"),  # (32,000 + 8,000) / 10,000
    ("hol-fcfs-mean-ttft", 1, "3.3 s", "hol-only-head"),  # 33,000 / 10,000
    ("shed-time-to-threshold", 1, "9.9 s", "queue-drains-at-arrival-rate"),  # (228 − 30) / 20
    ("shed-time-to-threshold", 1, "6.5 s", "forgot-own-prefill"),  # (160 − 30) / 20
    ("shed-time-to-threshold", 1, "2.033 s", "queue-growth-ignored-service"),  # 122 / 60
    ("vtc-tokens-until-switch", 1, "400", "vtc-ignored-weight"),  # (1,200 − 400) / 2
    ("vtc-tokens-until-switch", 1, "3200", "vtc-output-weight-one"),
    ("vtc-tokens-until-switch", 1, "1800", "vtc-forgot-prompt-charge"),  # 3,600 / 2
    ("token-rate-limit-requests", 1, "33", "charged-actual-output"),  # 60,000 / 1,800
    ("token-rate-limit-requests", 1, "40", "rate-limit-prompt-only"),
    ("token-rate-limit-requests", 1, "30", "rate-limit-output-only"),
    ("bug-shed-arrival-rate-fix", 1, "4.33 s", "queue-drains-at-arrival-rate"),  # 52 / 12
    ("bug-shed-arrival-rate-fix", 2, "0.182 s", "inverted-ratio"),  # 12 / 66
    ("hybrid-attention-kv", 1, "72 GiB", "hybrid-counted-all-layers"),
    ("hybrid-attention-kv", 1, "6 GiB", "forgot-kv-factor"),
    ("hybrid-attention-kv", 1, "1 GiB", "forgot-layers"),  # one attention layer
    ("mamba-state-per-sequence", 1, "21 MiB", "ssm-forgot-conv-state"),  # 42 × 8,192 × 16 × 4 B
    ("mamba-state-per-sequence", 1, "28.5 MiB", "hybrid-state-on-every-layer"),  # 48 layers
    ("mamba-state-per-sequence", 1, "199.5 GiB", "ssm-state-grows-with-length"),  # × 8,192
    ("hybrid-sequences-fit", 1, "596", "hybrid-forgot-ssm-state"),  # 40e9 / 67,108,864
    ("hybrid-sequences-fit", 1, "74", "hybrid-counted-all-layers"),  # 40e9 / 536,870,912
    ("hybrid-sequences-fit", 1, "508", "capacity-gb-as-gib"),  # 40 GiB / 84,541,440
    ("hybrid-sequences-fit", 1, "474", "rounded-up-capacity"),  # ceil(473.1)
    ("kv-eviction-budget-fit", 1, "38", "ignored-eviction-budget"),  # 40e9 / 1,048,576,000 B
    ("kv-eviction-budget-fit", 1, "305", "eviction-budget-half-counted"),  # 40e9 / 131,072,000 B
    ("kv-eviction-budget-fit", 1, "163", "capacity-gb-as-gib"),  # 40 × 2^30 / 262,144,000 B
    ("vit-image-tokens", 1, "24", "patches-one-side"),
    ("vit-image-tokens", 1, "12288", "patches-divided-once"),  # 384 × 512 / 16
    ("image-tiling-tokens", 2, "3072", "forgot-thumbnail"),  # 12 × 256
    ("image-tiling-tokens", 2, "1792", "rounded-down-count"),  # (3 × 2 + 1) × 256
    ("image-tokens-kv", 1, "70 MiB", "forgot-image-count"),  # 57,344 × 1,280 B
    ("image-tokens-kv", 1, "105 MiB", "forgot-kv-factor"),
    ("image-tokens-kv", 1, "7.5 MiB", "forgot-layers"),
    ("audio-tokens-per-clip", 1, "4500", "forgot-audio-pooling"),
    ("audio-tokens-per-clip", 1, "25", "per-token-not-total"),  # tokens per second
    ("vision-encoder-ttft", 1, "115.64 ms", "mm-forgot-encoder"),  # 23.128 / 200
    ("vision-encoder-ttft", 1, "104.12 ms", "mm-forgot-image-tokens"),  # (13.824 + 7) / 200
]

# (question, seed, the right answer as a person would type it)
ANSWERS = [
    ("kv-offload-reload-time", 1, "179 ms"),
    ("kv-reload-breakeven-bandwidth", 1, "19.1 GB/s"),
    ("prefix-routing-ttft-saved", 1, "61.44ms"),
    ("consistent-hash-prefixes-moved", 1, "about 5,000"),
    ("admission-kv-budget", 1, "36 requests"),
    ("hol-fcfs-mean-ttft", 1, "3650 ms"),
    ("vtc-tokens-until-switch", 1, "1,600 tokens"),
    ("bug-shed-arrival-rate-fix", 1, "6.5s"),
    ("hybrid-attention-kv", 1, "12 GiB"),
    ("mamba-state-per-sequence", 1, "24.94 MiB"),
    ("vit-image-tokens", 5, "384 tokens"),
    ("image-tiling-tokens", 1, "1,280"),
    ("vision-encoder-ttft", 1, "0.185 s"),
]
# fmt: on


@pytest.mark.parametrize(("question_id", "seed"), list(PINNED))
def test_a_template_draws_the_answer_worked_out_by_hand(deck, question_id, seed):
    assert_draw_is_pinned(deck, question_id, seed, PINNED[question_id, seed])


def test_every_template_of_these_decks_is_pinned_for_two_seeds(deck):
    templates = these_templates(deck)
    assert_each_pinned_twice(templates, PINNED)


@pytest.mark.parametrize(("question_id", "seed", "answer", "mistake"), MISTAKES)
def test_a_wrong_answer_is_named(deck, question_id, seed, answer, mistake):
    verdict = graded(deck, question_id, seed, answer)
    assert verdict.correct is False
    assert verdict.misconception == mistake


@pytest.mark.parametrize(("question_id", "seed", "answer"), ANSWERS)
def test_the_right_answer_as_typed_is_correct(deck, question_id, seed, answer):
    verdict = graded(deck, question_id, seed, answer)
    assert verdict.correct is True
    assert verdict.misconception is None


# (question, an answer as a person types it, the key points a human grader ticks, the wrong
# claims it makes, the rating suggested)
# fmt: off
CONCEPT_ANSWERS = [
    ("vtc-fairness",
     "Counting requests is unfair because one tenant's huge prompts cost far more GPU time than"
     " another's short ones. Instead track how many tokens each tenant has been served, with"
     " output tokens weighted more, divide by its weight, and always pick the tenant with the"
     " lowest counter that has work queued. When a tenant that was idle comes back its counter"
     " is lifted to the minimum of the waiting ones so it cannot bank credit.",
     [1, 2, 3], [], 3),
    ("vtc-fairness",
     "Give every tenant the same number of requests per second; an idle tenant accumulates"
     " credit to spend later.",
     [], [1, 3], 1),  # the points' words stand only in the clauses of its wrong claims
    # naming FCFS is not enough when the answer calls it fair
    ("vtc-fairness", "FCFS is fair enough for tenants.", [], [1], 1),
    ("attention-sinks-streaming",
     "Models dump lots of attention on the first few tokens because softmax must sum to one. If"
     " a sliding window evicts them perplexity explodes. StreamingLLM keeps 4 sink tokens plus a"
     " rolling window of recent tokens so memory is constant. It gives infinite context: the"
     " model remembers everything in the stream.",
     [1, 2], [3], 1),
    ("prefix-routing-vs-load",
     "Sending a request to the replica with the longest prefix match skips that prefill and"
     " lowers TTFT. But a hot system prompt overloads its owner while other replicas idle, and"
     " the queueing delay can outweigh the saving, so real routers score replicas by match"
     " length against queue length and fall back to the least loaded one.",
     [1, 2, 3], [], 3),
    # "fewer requests run" for one policy and "packs more in" for the other are both right
    ("admission-kv-reservation",
     "Reserving max_tokens up front means a request is never preempted, but most replies stop"
     " early so those blocks sit empty and fewer requests run. Admitting on the prompt alone"
     " packs more in, but the pool can run out as they grow, forcing preemption and recompute"
     " of a victim. vLLM admits optimistically with a watermark.",
     [1, 2, 3], [], 3),
    ("encoder-disaggregation",
     "The vision encoder is disaggregated onto dedicated GPUs because its compute-bound work per"
     " image would stall other requests' decode steps. It sends the image features (one vector"
     " per token) to the LLM, far less than the KV cache. Repeated images hit an encoder cache.",
     [1, 2, 3], [], 3),
    # a KV cache in the answer is not the encoder's cache of point 4
    ("encoder-disaggregation",
     "You must send the KV cache for every layer of the image tokens to the LLM workers.",
     [], [3], 1),
    ("h2o-eviction-lossy",
     "H2O keeps the recent tokens plus heavy hitters with the largest accumulated attention."
     " Evicting low-attention tokens loses nothing because they were never attended.",
     [1], [3], 1),
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
