"""The parallel-communication, speculative-trees and MoE-balance decks: every numeric
template draws, for two seeds, the answer worked out by hand from its params.

Each expected value is a literal written from the draw's params with the arithmetic
beside it, done by hand and not by the template's expression. The mistake rows type a
wrong answer a person would give on one of those draws and name the mistake the grader
must report; the chain rows pin each step of an interview's follow-ups.
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

from drill.kinds import kind_of
from drill.kinds.chains import draw_chain

DECK_FILES = ("parallel_communication.yaml", "speculative_trees.yaml", "moe_balance.yaml")


@pytest.fixture(scope="module")
def deck():
    return read_decks()


# fmt: off
PINNED = {
    # ------------------------------------------------------------------ tensor parallel
    # payload 128 × 4,096 × 2 = 1 MiB; ring 2 × 7/8 = 1.75 MiB; 2 × 32 = 64 all-reduces: 112 MiB
    ("tp-allreduce-bytes-per-step", 1): Pinned(
        {"layers": 32, "hidden": 4096, "tp": 8, "batch": 128}, 117_440_512, "bytes"),
    # payload 96 × 5,120 × 2 = 983,040 B; × 1.5 = 1,474,560 B; × 128 all-reduces = 180 MiB
    ("tp-allreduce-bytes-per-step", 2): Pinned(
        {"layers": 64, "hidden": 5120, "tp": 4, "batch": 96}, 188_743_680, "bytes"),
    # payload 256 × 8,192 × 2 = 4,194,304 B; × 1.5 = 6,291,456 B / 450 GB/s = 13.98101 µs;
    # + 3 µs = 16.98101 µs; × 160 all-reduces = 2,716.962 µs
    ("tp-allreduce-step-time", 1): Pinned(
        {"layers": 80, "hidden": 8192, "tp": 4, "batch": 256, "lat_us": 3, "bw_gbs": 450},
        0.0027169621333333333, "seconds"),
    # payload 512 × 8,192 × 2 = 8,388,608 B; × 1.75 = 14,680,064 B / 450 GB/s = 32.62236 µs;
    # + 5 µs = 37.62236 µs; × 160 = 6,019.578 µs
    ("tp-allreduce-step-time", 3): Pinned(
        {"layers": 80, "hidden": 8192, "tp": 8, "batch": 512, "lat_us": 5, "bw_gbs": 450},
        0.0060195783111111111, "seconds"),
    # ------------------------------------------------------------------ pipeline
    ("pp-bubble-fraction", 1): Pinned({"stages": 4, "micro": 12}, 0.2, "fraction"),  # 3 / 15
    ("pp-bubble-fraction", 2): Pinned({"stages": 4, "micro": 32}, 3 / 35, "fraction"),  # 3 / 35
    # ------------------------------------------------------------------ expert parallel
    # 256 × 2 = 512 copies × 7,168 = 3,670,016 values; × (1 + 2) B = 11,010,048 B; × 7/8
    ("ep-all-to-all-bytes", 1): Pinned(
        {"hidden": 7168, "ep": 8, "tokens": 256, "topk": 2}, 9_633_792, "bytes"),
    # 256 × 6 = 1,536 copies × 4,096 = 6,291,456 values; × 3 B = 18,874,368 B; × 7/8
    ("ep-all-to-all-bytes", 2): Pinned(
        {"hidden": 4096, "ep": 8, "tokens": 256, "topk": 6}, 16_515_072, "bytes"),
    # ------------------------------------------------------------------ draft trees
    ("tree-draft-nodes", 1): Pinned({"branch": 2, "depth": 3}, 14, "tokens"),  # 2 + 4 + 8
    ("tree-draft-nodes", 3): Pinned({"branch": 3, "depth": 3}, 39, "tokens"),  # 3 + 9 + 27
    # P(longer prefix ≥ i) = 1 − (1 − 0.9^i)²: 0.99, 1 − 0.19² = 0.9639,
    # 1 − 0.271² = 0.926559, 1 − 0.3439² = 0.88173279; sum 3.76219179; + 1
    ("tree-two-chains-tokens", 1): Pinned({"alpha": 0.9, "k": 4}, 4.76219179, "count"),
    # 1 − 0.2² = 0.96, 1 − 0.36² = 0.8704, 1 − 0.488² = 0.761856; sum 2.592256; + 1
    ("tree-two-chains-tokens", 2): Pinned({"alpha": 0.8, "k": 3}, 3.592256, "count"),
    # 32 × 49 = 1,568 positions; 2 × 14e9 × 1,568 = 43.904e12 FLOP / 989e12 = 44.3923 ms,
    # against 28e9 B / 3.35e12 B/s = 8.358 ms of weight reads
    ("tree-verify-step-floor", 1): Pinned(
        {"params_b": 14, "g": "H100 SXM", "batch": 32, "nodes": 48}, 43.904 / 989, "seconds"),
    # 16 × 49 = 784 positions; 2 × 32e9 × 784 = 50.176e12 FLOP / 989e12 = 50.734 ms,
    # against 64e9 B / 3.35e12 B/s = 19.1 ms
    ("tree-verify-step-floor", 2): Pinned(
        {"params_b": 32, "g": "H100 SXM", "batch": 16, "nodes": 48}, 50.176 / 989, "seconds"),
    # ------------------------------------------------------------------ MoE balance
    # even 2,048 × 4 / 64 = 128; capacity 1.25 × 128 = 160; load 3 × 128 = 384; 384 − 160
    ("moe-capacity-dropped", 1): Pinned(
        {"experts": 64, "topk": 4, "tokens": 2048, "factor": 1.25, "hot_x": 3}, 224, "count"),
    # even 8,192 × 2 / 64 = 256; capacity 320; load 768; 768 − 320
    ("moe-capacity-dropped", 2): Pinned(
        {"experts": 64, "topk": 2, "tokens": 8192, "factor": 1.25, "hot_x": 3}, 448, "count"),
    ("bug-moe-capacity-topk-fix", 1): Pinned(  # 1.25 × 4,096 × 8 / 64
        {"experts": 64, "topk": 8, "tokens": 4096, "factor": 1.25}, 640, "count"),
    ("bug-moe-capacity-topk-fix", 2): Pinned(  # 1.25 × 4,096 × 2 / 256
        {"experts": 256, "topk": 2, "tokens": 4096, "factor": 1.25}, 40, "count"),
    # GPU 0: 380 + 600 = 980; GPU 3: 610 + 600 = 1,210; max(980, 1,080, 960, 1,210)
    ("moe-eplb-busiest-gpu", 1): Pinned(
        {"hot": 1200, "rest0": 380, "load1": 1080, "load2": 960, "load3": 610}, 1210, "count"),
    # GPU 0: 380 + 800 = 1,180; GPU 3: 610 + 800 = 1,410; max(1,180, 800, 960, 1,410)
    ("moe-eplb-busiest-gpu", 3): Pinned(
        {"hot": 1600, "rest0": 380, "load1": 800, "load2": 960, "load3": 610}, 1410, "count"),
    # total 1,500 + 31 × 800 = 26,300; mean 821.875; 1,500 / 821.875
    ("moe-ep-straggler-ratio", 1): Pinned(
        {"gpus": 32, "hot": 1500, "rest": 800}, 1500 / 821.875, "count"),
    # total 2,000 + 7 × 1,000 = 9,000; mean 1,125; 2,000 / 1,125 = 16/9
    ("moe-ep-straggler-ratio", 4): Pinned(
        {"gpus": 8, "hot": 2000, "rest": 1000}, 16 / 9, "count"),
}

CORRECT = [  # the answer as a person would type it, on the first pinned draw
    ("tp-allreduce-bytes-per-step", 1, "112 MiB"),
    ("tp-allreduce-step-time", 1, "2.717 ms"),
    ("pp-bubble-fraction", 1, "20%"),
    ("ep-all-to-all-bytes", 1, "9.19 MiB"),
    ("tree-draft-nodes", 1, "14"),
    ("tree-two-chains-tokens", 1, "4.76"),
    ("tree-verify-step-floor", 1, "44.4 ms"),
    ("moe-capacity-dropped", 1, "224"),
    ("bug-moe-capacity-topk-fix", 1, "640"),
    ("moe-eplb-busiest-gpu", 1, "1210"),
    ("moe-ep-straggler-ratio", 1, "1.83x"),
]

MISTAKES = [
    ("tp-allreduce-bytes-per-step", 1, "64 MiB", "allreduce-payload-only"),  # 64 × 1 MiB
    ("tp-allreduce-bytes-per-step", 1, "56 MiB", "allreduce-reduce-scatter-only"),
    ("tp-allreduce-bytes-per-step", 1, "3.5 MiB", "forgot-layers"),  # 2 × 1.75 MiB
    ("tp-allreduce-bytes-per-step", 1, "896 KiB", "forgot-requests"),  # 112 MiB / 128
    ("tp-allreduce-step-time", 1, "2.237 ms", "allreduce-ignored-latency"),  # 160 × 13.981 µs
    # 160 × (3 + 4,194,304 B / 450 GB/s = 9.3207 µs)
    ("tp-allreduce-step-time", 1, "1.971 ms", "allreduce-payload-only"),
    ("tp-allreduce-step-time", 1, "1.358 ms", "tp-one-allreduce-per-layer"),  # 80 × 16.981 µs
    ("tp-allreduce-step-time", 1, "33.96 us", "forgot-layers"),  # 2 × 16.981 µs
    ("tp-allreduce-step-time", 1, "0.4887 ms", "forgot-requests"),  # 160 × (3 + 0.0546) µs
    ("pp-bubble-fraction", 1, "0.25", "pp-bubble-over-busy-time"),  # 3 / 12
    ("pp-bubble-fraction", 1, "0.8", "complement-fraction"),  # 12 / 15
    ("pp-bubble-fraction", 1, "0.2667", "pp-bubble-off-by-one"),  # 4 / 15
    ("ep-all-to-all-bytes", 1, "3.0625 MiB", "ep-dispatch-only"),  # 512 × 7,168 × 7/8
    ("ep-all-to-all-bytes", 1, "10.5 MiB", "ep-counted-local"),  # 11,010,048 B
    ("ep-all-to-all-bytes", 1, "4.594 MiB", "ep-forgot-topk"),  # half of 9.1875 MiB
    ("ep-all-to-all-bytes", 1, "12.25 MiB", "ep-both-bf16"),  # 512 × 7,168 × 4 × 7/8
    ("tree-draft-nodes", 1, "8", "tree-leaves-only"),
    ("tree-draft-nodes", 1, "6", "tree-chains-not-tree"),
    ("tree-draft-nodes", 1, "15", "tree-counted-root"),
    ("tree-two-chains-tokens", 1, "4.095", "tree-one-chain"),  # 1 + 0.9 + 0.81 + 0.729 + 0.6561
    ("tree-two-chains-tokens", 1, "7.19", "tree-added-both-chains"),  # 1 + 2 × 3.0951
    # β = 1 − 0.1² = 0.99: 1 + 0.99 + 0.9801 + 0.970299 + 0.96059601
    ("tree-two-chains-tokens", 1, "4.901", "tree-branching-every-level"),
    ("tree-two-chains-tokens", 1, "3.762", "spec-forgot-bonus-token"),
    ("tree-verify-step-floor", 1, "8.358 ms", "tree-verify-assumed-memory-bound"),
    ("tree-verify-step-floor", 1, "43.49 ms", "tree-forgot-root"),  # 32 × 48 positions
    ("moe-capacity-dropped", 1, "56", "moe-capacity-forgot-topk"),  # (384 − 160) / 4
    ("moe-capacity-dropped", 1, "256", "moe-capacity-forgot-factor"),  # 384 − 128
    ("bug-moe-capacity-topk-fix", 1, "80", "moe-capacity-forgot-topk"),  # 1.25 × 4,096 / 64
    ("bug-moe-capacity-topk-fix", 1, "512", "moe-capacity-forgot-factor"),  # 4,096 × 8 / 64
    ("moe-eplb-busiest-gpu", 1, "1080", "eplb-source-only"),
    ("moe-eplb-busiest-gpu", 1, "1810", "eplb-moved-not-split"),  # 610 + 1,200
    ("moe-eplb-busiest-gpu", 1, "1057.5", "eplb-perfect-balance"),  # 4,230 / 4
    ("moe-ep-straggler-ratio", 1, "1.875", "ep-ratio-to-others"),  # 1,500 / 800
    ("moe-ep-straggler-ratio", 1, "0.825", "ep-overhead-not-ratio"),
    ("moe-ep-straggler-ratio", 1, "0.548", "inverted-ratio"),  # 821.875 / 1,500
]
# fmt: on


def deck_templates(deck) -> list[str]:
    return numeric_templates(deck, lambda name: name in DECK_FILES)


@pytest.mark.parametrize(("question_id", "seed"), list(PINNED))
def test_a_template_draws_the_answer_worked_out_by_hand(deck, question_id, seed):
    assert_draw_is_pinned(deck, question_id, seed, PINNED[question_id, seed])


def test_every_template_of_these_decks_is_pinned_for_two_seeds(deck):
    templates = deck_templates(deck)
    assert len(templates) == 11
    assert_each_pinned_twice(templates, PINNED)


@pytest.mark.parametrize(("question_id", "seed", "answer"), CORRECT)
def test_the_answer_as_typed_is_right(deck, question_id, seed, answer):
    assert graded(deck, question_id, seed, answer).correct is True


@pytest.mark.parametrize(("question_id", "seed", "answer", "mistake"), MISTAKES)
def test_a_wrong_answer_is_named(deck, question_id, seed, answer, mistake):
    verdict = graded(deck, question_id, seed, answer)
    assert verdict.correct is False
    assert verdict.misconception == mistake


def test_tensor_parallel_over_infiniband_costs_eight_times_the_step(deck):
    # start: 80 layers, hidden 8,192, TP 8, batch 256, 5 µs; payload 4,194,304 B × 1.75 =
    # 7,340,032 B. NVLink: / 450 GB/s = 16.311 µs + 5 = 21.311 µs × 160 = 3.40979 ms.
    # InfiniBand: / 50 GB/s = 146.80064 µs + 25 = 171.80064 µs × 160 = 27.4881 ms.
    opener, over_ib = draw_chain(deck.get("tp-allreduce-step-time"), deck.get, 1)
    assert over_ib.changed == {"bw_gbs": 50, "lat_us": 25}
    assert opener.instance.expected == pytest.approx(0.003409789155555556, rel=1e-12)
    assert over_ib.instance.expected == pytest.approx(0.0274881024, rel=1e-12)
    assert over_ib.ask.startswith("The same 8-way group now spans two nodes")


def test_a_pruned_tree_halves_the_compute_bound_verify_pass(deck):
    # seed 1: 14B on an H100 SXM at batch 32. 48 nodes: 1,568 positions, 44.392 ms;
    # 24 nodes: 32 × 25 = 800 positions, 2 × 14e9 × 800 = 22.4e12 FLOP / 989e12 = 22.649 ms
    opener, pruned = draw_chain(deck.get("tree-verify-step-floor"), deck.get, 1)
    assert pruned.changed == {"nodes": 24}
    assert opener.instance.expected == pytest.approx(43.904 / 989, rel=1e-12)
    assert pruned.instance.expected == pytest.approx(22.4 / 989, rel=1e-12)
    assert kind_of("numeric").expected_text(pruned.instance) == "22.6 ms"


CONCEPT_ANSWERS = [
    # (question, answer, key points covered, wrong claims made)
    (
        "tp-across-nodes",
        "Every layer needs two all-reduces that block the next op, and across nodes the "
        "InfiniBand link is an order of magnitude slower than NVLink, so at decode the "
        "communication dominates. Pipeline stages only hand off activations point to point.",
        [1, 2, 3],
        [],
    ),
    (
        "tp-across-nodes",
        "Tensor parallelism only communicates once per forward pass, and InfiniBand is as "
        "fast as NVLink, so it works fine across nodes.",
        [],
        [1, 2],
    ),
    (
        # "costs the same as a chain" is the wrong claim, not the remedy of falling back to one
        "tree-cost-large-batch",
        "A tree costs the same as a chain regardless of batch size, because verification is "
        "always free.",
        [],
        [3],
    ),
    (
        "moe-eplb-how",
        "It makes redundant copies of the hottest experts and packs them onto GPUs using "
        "measured load statistics, re-planning periodically; routing is unchanged, the "
        "copies cost extra memory.",
        [1, 2, 3],
        [],
    ),
]


@pytest.mark.parametrize(("question_id", "answer", "covered", "wrong"), CONCEPT_ANSWERS)
def test_a_concept_answer_is_read_as_a_person_would(deck, question_id, answer, covered, wrong):
    verdict = graded(deck, question_id, 1, answer)
    assert ticks(verdict.covered) == covered
    assert ticks(verdict.wrong_claims) == wrong
