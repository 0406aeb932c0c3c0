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

from typing import NamedTuple

import pytest

from drill.bank.loader import builtin_bank_files, read_bank
from drill.bank.schema import NumericQuestion
from drill.kinds import make_instance
from drill.kinds.grade import grade

DECK_FILES = (
    "kv_offload_routing.yaml",
    "admission_fairness.yaml",
    "kv_compression_hybrids.yaml",
    "multimodal_serving.yaml",
)


class Pinned(NamedTuple):
    params: dict  # the draw's params (not its derived values)
    expected: float  # in the base unit of `unit`
    unit: str


@pytest.fixture(scope="module")
def deck():
    # these decks alone: their ids are unique deck-wide (tests/test_bank.py checks)
    bank, problems = read_bank([p for p in builtin_bank_files() if p.name in DECK_FILES])
    assert [str(p) for p in problems] == []
    return bank


def these_templates(deck) -> list[str]:
    return [
        q.id
        for q in deck
        if isinstance(q, NumericQuestion) and deck.source(q.id).path.name in DECK_FILES
    ]


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
]

# (question, seed, the right answer as a person would type it)
ANSWERS = [
    ("kv-offload-reload-time", 1, "179 ms"),
    ("kv-reload-breakeven-bandwidth", 1, "19.1 GB/s"),
    ("prefix-routing-ttft-saved", 1, "61.44ms"),
    ("consistent-hash-prefixes-moved", 1, "about 5,000"),
]
# fmt: on


@pytest.mark.parametrize(("question_id", "seed"), list(PINNED))
def test_a_template_draws_the_answer_worked_out_by_hand(deck, question_id, seed):
    want = PINNED[question_id, seed]
    instance = make_instance(deck.get(question_id), seed)
    drawn = {name: instance.params[name] for name in deck.get(question_id).params}
    assert drawn == want.params
    assert instance.unit == want.unit
    assert instance.expected == pytest.approx(want.expected, rel=1e-12)
    assert grade(instance, repr(want.expected)).correct is True


def test_every_template_of_these_decks_is_pinned_for_two_seeds(deck):
    templates = these_templates(deck)
    assert templates, "these decks hold numeric templates"
    missing = [qid for qid in templates if sum(q == qid for q, _ in PINNED) < 2]
    assert missing == []
    assert {qid for qid, _ in PINNED} <= set(templates)


@pytest.mark.parametrize(("question_id", "seed", "answer", "mistake"), MISTAKES)
def test_a_wrong_answer_is_named(deck, question_id, seed, answer, mistake):
    verdict = grade(make_instance(deck.get(question_id), seed), answer)
    assert verdict.correct is False
    assert verdict.misconception == mistake


@pytest.mark.parametrize(("question_id", "seed", "answer"), ANSWERS)
def test_the_right_answer_as_typed_is_correct(deck, question_id, seed, answer):
    verdict = grade(make_instance(deck.get(question_id), seed), answer)
    assert verdict.correct is True
    assert verdict.misconception is None
