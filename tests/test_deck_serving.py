"""The serving decks (question_bank/serving_*.yaml, spot_the_bug.yaml): every numeric
template draws, for two seeds, the answer worked out by hand from its params.

Each expected value below is a literal, written from the params of the draw with the
arithmetic shown beside it, done by hand and not by the template's expression: a
slip in a template's formula, a param range or a derived value fails here. The
mistakes rows type a wrong answer a person would give on one of those draws and
name the mistake the grader must report.
"""

from __future__ import annotations

from typing import NamedTuple

import pytest

from drill.bank import builtin_bank_files, read_bank
from drill.grade import grade
from drill.instance import make_instance
from drill.schema import NumericQuestion

SERVING_FILES = ("serving_", "spot_the_bug")


class Pinned(NamedTuple):
    params: dict  # the draw's params (not its derived values)
    expected: float  # in the base unit of `unit`
    unit: str


@pytest.fixture(scope="module")
def deck():
    bank, problems = read_bank(builtin_bank_files())
    assert [str(p) for p in problems] == []
    return bank


def serving_templates(deck) -> list[str]:
    return [
        q.id
        for q in deck
        if isinstance(q, NumericQuestion) and deck.source(q.id).path.name.startswith(SERVING_FILES)
    ]


# fmt: off
PINNED = {
    # ------------------------------------------------------------------ scheduling
    # 16 slots × 1,024 steps = 16,384 slot-steps; 1,024 + 15 × 224 = 4,384 tokens;
    # idle 12,000 / 16,384
    ("static-batch-idle-slots", 1): Pinned(
        {"batch": 16, "long": 1024, "short": 224}, 0.732421875, "fraction"),
    # 4 × 512 = 2,048; 512 + 3 × 128 = 896; idle 1,152 / 2,048
    ("static-batch-idle-slots", 2): Pinned(
        {"batch": 4, "long": 512, "short": 128}, 0.5625, "fraction"),
    # 256 decode tokens leave 256 of 512; 9,000 / 256 = 35.2 -> 36 steps
    ("chunked-prefill-steps", 1): Pinned(
        {"budget": 512, "eighths": 4, "prompt": 9000}, 36, "count"),
    # 192 decode tokens leave 320; 9,000 / 320 = 28.1 -> 29 steps
    ("chunked-prefill-steps", 2): Pinned(
        {"budget": 512, "eighths": 3, "prompt": 9000}, 29, "count"),
    # 16 chunks: 16 × 8 ms = 128 ms; (16,384 + 16 × 32) × 20 µs = 337.92 ms; 465.92 ms
    ("chunked-prefill-own-ttft", 1): Pinned(
        {"prompt": 16384, "chunk": 1024, "decodes": 32, "overhead_ms": 8, "per_token_us": 20},
        0.46592, "seconds"),
    # 16 chunks: 96 ms; (8,192 + 512) × 40 µs = 348.16 ms; 444.16 ms
    ("chunked-prefill-own-ttft", 2): Pinned(
        {"prompt": 8192, "chunk": 512, "decodes": 32, "overhead_ms": 6, "per_token_us": 40},
        0.44416, "seconds"),
    # 6 ms + (512 + 64) × 30 µs = 6 + 17.28 = 23.28 ms
    ("chunked-prefill-decode-gap", 1): Pinned(
        {"prompt": 16384, "chunk": 512, "decodes": 64, "overhead_ms": 6, "per_token_us": 30},
        0.02328, "seconds"),
    # 8 ms + (1,024 + 32) × 30 µs = 8 + 31.68 = 39.68 ms
    ("chunked-prefill-decode-gap", 2): Pinned(
        {"prompt": 8192, "chunk": 1024, "decodes": 32, "overhead_ms": 8, "per_token_us": 30},
        0.03968, "seconds"),
    # 2 × 40 × 8 × 128 × 2 × 1,024 = 167,772,160 B; / 25 GB/s = 6.7108864 ms; twice
    ("preemption-swap-round-trip", 1): Pinned(
        {"ctx": 1024, "layers": 40, "kv_heads": 8, "link_gbs": 25}, 0.0134217728, "seconds"),
    # 2 × 32 × 8 × 128 × 2 × 4,096 = 536,870,912 B; / 25 GB/s = 21.47483648 ms; twice
    ("preemption-swap-round-trip", 2): Pinned(
        {"ctx": 4096, "layers": 32, "kv_heads": 8, "link_gbs": 25}, 0.04294967296, "seconds"),
}

# (question, seed, answer as typed, the mistake the grader names)
MISTAKES = [
    ("static-batch-idle-slots", 2, "43.75%", "complement-fraction"),
    ("chunked-prefill-steps", 1, "18", "budget-ignores-decodes"),  # ceil(9,000 / 512)
    ("chunked-prefill-own-ttft", 1, "336.32 ms", "chunking-is-free"),  # 8 + 16,416 × 20 µs
    ("chunked-prefill-own-ttft", 1, "455.68 ms", "forgot-piggybacked-decodes"),
    ("chunked-prefill-own-ttft", 1, "345.92 ms", "step-cost-once"),
    ("chunked-prefill-decode-gap", 1, "499.44 ms", "unchunked-gap"),  # 6 + 16,448 × 30 µs
    ("chunked-prefill-decode-gap", 1, "21.36 ms", "forgot-piggybacked-decodes"),
    ("chunked-prefill-decode-gap", 1, "17.28 ms", "forgot-step-overhead"),
    ("preemption-swap-round-trip", 2, "21.47 ms", "swap-one-way"),
]
# fmt: on


@pytest.mark.parametrize(("question_id", "seed"), list(PINNED))
def test_a_serving_template_draws_the_answer_worked_out_by_hand(deck, question_id, seed):
    want = PINNED[question_id, seed]
    instance = make_instance(deck.get(question_id), seed)
    drawn = {name: instance.params[name] for name in deck.get(question_id).params}
    assert drawn == want.params
    assert instance.unit == want.unit
    assert instance.expected == pytest.approx(want.expected, rel=1e-12)
    assert grade(instance, repr(want.expected)).correct is True


def test_every_serving_template_is_pinned_for_two_seeds(deck):
    pinned = {qid for qid, _ in PINNED}
    templates = serving_templates(deck)
    assert templates, "the serving decks hold numeric templates"
    missing = [qid for qid in templates if sum(q == qid for q, _ in PINNED) < 2]
    assert missing == []
    assert pinned <= set(templates)


@pytest.mark.parametrize(("question_id", "seed", "answer", "mistake"), MISTAKES)
def test_a_wrong_answer_to_a_serving_template_is_named(deck, question_id, seed, answer, mistake):
    verdict = grade(make_instance(deck.get(question_id), seed), answer)
    assert verdict.correct is False
    assert verdict.misconception == mistake
