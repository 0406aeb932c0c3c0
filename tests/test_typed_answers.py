"""Answers typed the way candidates write them, against real questions of the built-in deck.

Each row is a fixed (question, seed) and an answer as a person types it, with the verdict
and the words the user is told: a count with what it counts ("36 steps", "18,047 blocks"),
a count of something else than the question counts ("18,047 requests" for blocks: the
number is right, the thing is not, and the user is told so in one line), rates
("17.2 req/s", "38.5 tps"), ranks ("77th", "p77"), a hedge ("about 42"), bits where bits
are asked, and a rate where a count is asked (a named mistake). The draws, worked out by
hand: chunked-prefill-steps 1 is 36 steps; paged-pool-blocks 1 is 18,047 blocks;
paged-max-concurrent 1 is 288 sequences; moe-experts-touched 1 is 11.4375 experts;
goodput-both-slos 1 is 20 × 0.86 = 17.2 requests/s; littles-law-concurrency 1 is 180
requests; tps-per-user-from-tpot 1 is 1,000 / 26 = 38.46 tokens/s; system-tps-from-batch 1
is 16 / 0.054 = 296.3 tokens/s; percentile-nearest-rank 1 is position 77 of 77;
spec-verify-compute-bound-batch 1 is 42.17 sequences; kv-int4-bits-per-element 1 is
4 + 2 × 2 × 8 / 32 = 5 bits; wq-int4-bits-per-weight 1 is 4 + (16 + 4) / 128 =
4.15625 bits; prefix-cache-flops-saved 1 is 0.3 × 2 × 70e9 × 1,024 =
43.008 TFLOP; kv-bytes-per-request 2230 is 512 MiB; recompute-vs-cache-positions 1 is
40,513 positions (tokens); flash-decoding-splits 1 is 2 sequences × 8 KV heads = 16 pairs,
ceil(108 SMs / 16) = 7 splits; cost-per-million-output 1 is $2.00 an hour over 128 × 40
tokens/s × 3,600 s = 18.432 M tokens, $0.1085 per million ("$0.109" as people write it).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drill.bank.loader import builtin_bank_files, read_bank
from drill.kinds import make_instance
from drill.kinds.grade import grade
from drill.quantities.units import parse_answer

BITS_VS_BYTES = (
    "A byte is 8 bits. Memory sizes and HBM bandwidth are quoted in bytes (B); network links "
    "are often quoted in bits (b, Gbps). Capital B for bytes, lowercase b for bits."
)


def _deck():
    bank, problems = read_bank(builtin_bank_files())
    assert problems == []
    return {question.id: question for question in bank}


DECK = _deck()


@pytest.fixture
def deck():
    return DECK


# fmt: off
ROWS = [
    ('chunked-prefill-steps', 1, '36 steps', 'correct', True, None, ''),
    ('chunked-prefill-steps', 1, '36 prefill steps', 'correct', True, None, ''),
    ('chunked-prefill-steps', 1, '36 step', 'correct', True, None, ''),
    ('chunked-prefill-steps', 1, '36 blocks', 'unit', False, None, 'You answered in blocks; the question counts steps: 36 steps.'),
    ('chunked-prefill-steps', 1, 'about 36', 'correct', True, None, ''),
    ('paged-pool-blocks', 1, '18047 blocks', 'correct', True, None, ''),
    ('paged-pool-blocks', 1, '18,047 blocks', 'correct', True, None, ''),
    ('paged-pool-blocks', 1, '18047 requests', 'unit', False, None, 'You answered in requests; the question counts blocks: 18,047 blocks.'),
    ('paged-pool-blocks', 1, '18047 sequences', 'unit', False, None, 'You answered in sequences; the question counts blocks: 18,047 blocks.'),
    ('paged-pool-blocks', 1, '18047', 'correct', True, None, ''),
    ('paged-pool-blocks', 1, '18048 blocks', 'magnitude', False, None, 'The right order of magnitude, but 0.006% too high. Accepted within ±0.5. You gave 18,048; the answer is 18,047.'),
    ('paged-max-concurrent', 1, '288 sequences', 'correct', True, None, ''),
    ('paged-max-concurrent', 1, '288 requests', 'correct', True, None, ''),
    ('paged-max-concurrent', 1, '288 seqs', 'correct', True, None, ''),
    ('paged-max-concurrent', 1, '288 blocks', 'unit', False, None, 'You answered in blocks; the question counts sequences: 288 sequences.'),
    ('paged-max-concurrent', 1, '288 tokens', 'unit', False, None, 'You answered in tokens; the question counts sequences: 288 sequences.'),
    ('moe-experts-touched', 1, '11.44 experts', 'correct', True, None, ''),
    ('moe-experts-touched', 1, '11.44 distinct experts', 'correct', True, None, ''),
    ('moe-experts-touched', 1, '11.44 GPUs', 'unit', False, None, 'You answered in GPUs; the question counts experts: 11.4 experts.'),
    ('goodput-both-slos', 1, '17.2 req/s', 'correct', True, None, ''),
    ('goodput-both-slos', 1, '17.2 requests/s', 'correct', True, None, ''),
    ('goodput-both-slos', 1, '17.2 rps', 'correct', True, None, ''),
    ('goodput-both-slos', 1, '17.2 requests per second', 'correct', True, None, ''),
    ('goodput-both-slos', 1, '17.2', 'correct', True, None, ''),
    ('goodput-both-slos', 1, '17.2 requests', 'unit', False, 'rate-vs-count', 'requests is not a rate; the question asks for a request rate: 17.2 requests/s.'),
    ('goodput-both-slos', 1, '20 req/s', 'misconception', False, 'throughput-not-goodput', 'Goodput counts only the requests that meet every latency target. Take the requests that miss any target off the completed rate. You gave 20 requests/s; the answer is 17.2 requests/s.'),
    ('goodput-both-slos', 1, '17.2 tok/s', 'unit', False, None, 'The number is right but tokens/s is a token rate; the answer is a request rate: 17.2 requests/s.'),
    ('littles-law-concurrency', 1, '180 requests', 'correct', True, None, ''),
    ('littles-law-concurrency', 1, '180 sequences', 'correct', True, None, ''),
    ('littles-law-concurrency', 1, '180 req/s', 'unit', False, 'rate-vs-count', 'requests/s is a rate, per second; the question asks for a request count: 180 requests.'),
    ('littles-law-concurrency', 1, '180 users', 'unit', False, None, 'You answered in users; the question counts requests: 180 requests.'),
    ('tps-per-user-from-tpot', 1, '38.5 tok/s', 'correct', True, None, ''),
    ('tps-per-user-from-tpot', 1, '38.5 tps', 'correct', True, None, ''),
    ('tps-per-user-from-tpot', 1, '38.5 tokens/s', 'correct', True, None, ''),
    ('tps-per-user-from-tpot', 1, '38.5 tokens', 'unit', False, 'rate-vs-count', 'tokens is not a rate; the question asks for a token rate: 38.5 tokens/s.'),
    ('system-tps-from-batch', 1, '296 TPS', 'correct', True, None, ''),
    ('percentile-nearest-rank', 1, '77th', 'correct', True, None, ''),
    ('percentile-nearest-rank', 1, '77th percentile', 'correct', True, None, ''),
    ('percentile-nearest-rank', 1, 'the 77th', 'correct', True, None, ''),
    ('percentile-nearest-rank', 1, 'p77', 'correct', True, None, ''),
    ('percentile-nearest-rank', 1, '76th', 'misconception', False, 'rounded-down-count', 'Position 76 has fewer than 99 % of the samples at or below it; nearest rank rounds 99 % of 77 up, to 77. You gave 76; the answer is 77.'),
    ('spec-verify-compute-bound-batch', 1, 'about 42', 'correct', True, None, ''),
    ('spec-verify-compute-bound-batch', 1, '~42', 'correct', True, None, ''),
    ('spec-verify-compute-bound-batch', 1, '≈42', 'correct', True, None, ''),
    ('spec-verify-compute-bound-batch', 1, 'approx. 42', 'correct', True, None, ''),
    ('spec-verify-compute-bound-batch', 1, 'roughly 42', 'correct', True, None, ''),
    ('spec-verify-compute-bound-batch', 1, 'roughly 42 sequences', 'correct', True, None, ''),
    ('kv-int4-bits-per-element', 1, '5 bits', 'correct', True, None, ''),
    ('kv-int4-bits-per-element', 1, '5 bit', 'correct', True, None, ''),
    ('kv-int4-bits-per-element', 1, '5b', 'correct', True, None, ''),
    ('kv-int4-bits-per-element', 1, '5 bits per element', 'correct', True, None, ''),
    ('kv-int4-bits-per-element', 1, '5', 'correct', True, None, ''),
    ('kv-int4-bits-per-element', 1, '0.625 bytes', 'unit', True, None, 'Right, but the question counts bits: 5 bits.'),
    ('kv-int4-bits-per-element', 1, '5 B', 'misconception', False, 'bits-vs-bytes', BITS_VS_BYTES + ' You gave 5 B; the answer is 5 bits.'),
    ('kv-int4-bits-per-element', 1, '5 bytes', 'misconception', False, 'bits-vs-bytes', BITS_VS_BYTES + ' You gave 5 bytes; the answer is 5 bits.'),
    ('kv-int4-bits-per-element', 1, '4 bits', 'misconception', False, 'forgot-quant-scales', "A 4-bit cache stores constants beside the values: a scale (and perhaps a zero point) per group. Spread their bytes over the group's values: an FP16 scale per 32 values adds half a bit to each. You gave 4; the answer is 5."),
    ('kv-int4-bits-per-element', 1, '40 bits', 'misconception', False, 'bits-vs-bytes', BITS_VS_BYTES + ' You gave 40 bits; the answer is 5 bits.'),
    ('kv-int4-bits-per-element', 1, '40.00001 bits', 'misconception', False, 'bits-vs-bytes', BITS_VS_BYTES + ' You gave 40 bits; the answer is 5 bits.'),
    ('kv-int4-bits-per-element', 1, '0.625 bits', 'misconception', False, 'bits-vs-bytes', '0.625 is the size in bytes; the question asks for bits. You gave 0.625; the answer is 5.'),
    ('kv-int4-bits-per-element', 1, '100 bits', 'wrong', False, None, 'You gave 100; the answer is 5.'),
    ('wq-int4-bits-per-weight', 1, '0.51953125 B', 'unit', True, None, 'Right, but the question counts bits: 4.16 bits.'),
    ('wq-int4-bits-per-weight', 1, '33.25 bits', 'misconception', False, 'bits-vs-bytes', BITS_VS_BYTES + ' You gave 33.25 bits; the answer is 4.16 bits.'),
    ('prefix-cache-flops-saved', 1, '43 TFLOP', 'correct', True, None, ''),
    ('prefix-cache-flops-saved', 1, '43 TFLOPS', 'unit', False, 'rate-vs-count', 'TFLOP/s is a rate, per second; the question asks for a FLOP count: 43 TFLOP.'),
    ('prefix-cache-flops-saved', 1, '43 TFLOP/s', 'unit', False, 'rate-vs-count', 'TFLOP/s is a rate, per second; the question asks for a FLOP count: 43 TFLOP.'),
    ('prefix-cache-flops-saved', 1, '43e12 FLOP/s', 'unit', False, 'rate-vs-count', 'FLOP/s is a rate, per second; the question asks for a FLOP count: 43 TFLOP.'),
    ('prefix-cache-flops-saved', 1, '86 TFLOPS', 'wrong', False, None, 'The answer is a FLOP count (43 TFLOP), not a compute rate (FLOP/s).'),
    ('kv-bytes-per-request', 2230, '512 MiB/s', 'unit', False, 'rate-vs-count', 'MiB/s is a rate, per second; the question asks for a size in bytes: 512 MiB.'),
    ('kv-bytes-per-request', 2230, '4 Gib', 'correct', True, None, ''),
    ('kv-bytes-per-request', 2230, '0.5 Gib', 'misconception', False, 'bits-vs-bytes', BITS_VS_BYTES + ' You gave 64 MiB; the answer is 512 MiB.'),
    ('kv-bytes-per-request', 2230, '4 GiB', 'misconception', False, 'bits-vs-bytes', BITS_VS_BYTES + ' You gave 4,096 MiB; the answer is 512 MiB.'),
    ('recompute-vs-cache-positions', 1, '40513 tokens', 'correct', True, None, ''),
    ('recompute-vs-cache-positions', 1, '40513 positions', 'correct', True, None, ''),
    ('recompute-vs-cache-positions', 1, '40513 requests', 'unit', False, None, 'The number is right but requests is a request count; the answer is a token count: 40,513 tokens.'),
    ('spec-expected-tokens', 1, '2.77 tokens', 'correct', True, None, ''),
    ('flash-decoding-splits', 1, '7 splits', 'correct', True, None, ''),
    ('flash-decoding-splits', 1, '7', 'correct', True, None, ''),
    ('flash-decoding-splits', 1, '7 blocks', 'unit', False, None, 'You answered in blocks; the question counts splits: 7 splits.'),
    ('cost-per-million-output', 1, '$0.109', 'correct', True, None, ''),
    ('cost-per-million-output', 1, '~$0.11', 'correct', True, None, ''),
    ('cost-per-million-output', 1, '0.109 USD', 'correct', True, None, ''),
    ('cost-per-million-output', 1, '0.109$', 'correct', True, None, ''),
    ('cost-per-million-output', 1, '0.109 GPUs', 'unit', False, None, 'You answered in GPUs; the question counts dollars: 0.109 dollars.'),
    ('preset-mha-vs-gqa-ratio', 1, '$8', 'unit', False, None, 'You answered in dollars; the answer is no amount of money.'),
    ('preset-mha-vs-gqa-ratio', 1, '8', 'correct', True, None, ''),
    ('cost-per-million-output', 1, '$0.83', 'magnitude', False, None, 'The right order of magnitude, but 665% too high. You gave 0.83; the answer is 0.109.'),
]
# fmt: on


@pytest.mark.parametrize(
    ("qid", "seed", "answer", "status", "correct", "mistake", "feedback"), ROWS
)
def test_an_answer_as_people_write_it(deck, qid, seed, answer, status, correct, mistake, feedback):
    verdict = grade(make_instance(deck[qid], seed), answer)
    assert (verdict.status, verdict.correct, verdict.misconception) == (status, correct, mistake)
    assert verdict.feedback == feedback


@pytest.mark.parametrize(
    ("answer", "bits"),
    [("5 bits", 5.0), ("0.625 bytes", 5.0), ("5 B", 40.0), ("40 bits", 40.0), ("100 bits", 100.0)],
)
def test_a_size_for_a_count_of_bits_is_graded_as_that_many_bits(deck, answer, bits):
    assert grade(make_instance(deck["kv-int4-bits-per-element"], 1), answer).value == bits


# Tolerance that matches the wording: a question that asks "roughly" takes ±8 % (the built-in
# estimates), a question without stated precision takes its answer to three significant
# figures (2.77 for 2.7731 within ±1 %, and "2.8" too), and one that needs more says so
# ("to the millisecond"). spec-verify-compute-bound-batch 1 is 295.2 / (6 + 1) = 42.17
# sequences; decode-compute-bound-batch 1 is 295.2; spec-expected-tokens 1 is
# (1 − 0.7^5) / 0.3 = 2.7731; mean-tpot-hides-stalls 1 is 2,175 / 49 = 44.39 ms;
# chunked-prefill-own-ttft 1 is 465.92 ms; e2e-latency-from-ttft-tpot 1 is 7,775 ms.
# fmt: off
TOLERANCE_ROWS = [
    ('spec-verify-compute-bound-batch', 1, '~40', 'correct', True, None, ''),
    ('spec-verify-compute-bound-batch', 1, 'about 45', 'correct', True, None, ''),
    ('spec-verify-compute-bound-batch', 1, '49.2', 'misconception', False, 'spec-forgot-bonus-token', 'That counts 6 positions per sequence, the drafts only. The verify pass also scores one more position after them, so each sequence brings 6 + 1 positions of FLOPs. You gave 49.2; the answer is 42.2.'),
    ('spec-verify-compute-bound-batch', 1, '295', 'misconception', False, 'spec-forgot-verify-tokens', 'About 295 is where plain decode, one position per sequence, turns compute-bound. A verify pass runs 6 + 1 positions per sequence, so it gets there 6 + 1 times sooner. You gave 295; the answer is 42.2.'),
    ('decode-compute-bound-batch', 1, 'about 300', 'correct', True, None, ''),
    ('spec-expected-tokens', 1, '2.8', 'correct', True, None, ''),
    ('spec-expected-tokens', 1, '2.53', 'misconception', False, 'spec-series-one-short', 'That sums only 4 terms. With 4 drafts a round yields up to 4 + 1 tokens, so the series 1 + 0.7 + … + 0.7^4 has 4 + 1 terms, and its closed form has k + 1 in the exponent. You gave 2.53; the answer is 2.77.'),
    ('mean-tpot-hides-stalls', 1, '44.4 ms', 'correct', True, None, ''),
    ('chunked-prefill-own-ttft', 1, '465.9 ms', 'correct', True, None, ''),
    ('e2e-latency-from-ttft-tpot', 1, '7.78 s', 'magnitude', False, None, 'The right order of magnitude, but 0.06% too high. Accepted within ±0.5 ms. You gave 7,780 ms; the answer is 7,775 ms.'),
]
# fmt: on


@pytest.mark.parametrize(
    ("qid", "seed", "answer", "status", "correct", "mistake", "feedback"), TOLERANCE_ROWS
)
def test_a_tolerance_as_the_question_words_it(
    deck, qid, seed, answer, status, correct, mistake, feedback
):
    verdict = grade(make_instance(deck[qid], seed), answer)
    assert (verdict.status, verdict.correct, verdict.misconception) == (status, correct, mistake)
    assert verdict.feedback == feedback


# --- properties ----------------------------------------------------------------------------

# (as typed, singular read back): plurals, singulars, short forms, any case
COUNT_NOUNS = [
    ("steps", "step"), ("blocks", "block"), ("sequences", "sequence"), ("experts", "expert"),
    ("requests", "request"), ("tokens", "token"), ("GPUs", "gpu"), ("gpu", "gpu"),
    ("layers", "layer"), ("heads", "head"), ("users", "user"), ("pages", "page"),
    ("batches", "batch"), ("entries", "entry"), ("passes", "pass"), ("seqs", "sequence"),
    ("reqs", "request"), ("toks", "token"), ("Blocks", "block"), ("positions", "position"),
    ("splits", "split"), ("dollars", "dollar"), ("USD", "dollar"),
]  # fmt: skip
NUMBERS = st.one_of(
    st.integers(0, 10**12).map(lambda n: (f"{n}", float(n))),
    st.integers(0, 10**12).map(lambda n: (f"{n:,}", float(n))),
    st.decimals(0, 10**6, places=3).map(lambda d: (f"{d}", float(d))),
)


@settings(max_examples=300)
@given(NUMBERS, st.sampled_from(COUNT_NOUNS), st.sampled_from(["", " "]))
def test_any_number_with_any_count_noun_is_that_number(number, noun, space):
    (text, value), (typed, read) = number, noun
    parsed = parse_answer(f"{text}{space}{typed}")
    assert (parsed.value, parsed.number, parsed.noun) == (value, value, read)


@settings(max_examples=300)
@given(NUMBERS, st.sampled_from(["$", "$ ", "US$", "~$"]), st.booleans())
def test_an_amount_of_money_is_that_many_dollars(number, sign, after):
    (text, value) = number
    typed = f"{text}$" if after else f"{sign}{text}"
    parsed = parse_answer(typed)
    assert (parsed.value, parsed.number, parsed.noun) == (value, value, "dollar")


@settings(max_examples=200)
@given(st.integers(1, 10**6), st.sampled_from(["st", "nd", "rd", "th"]))
def test_a_rank_is_its_number(n, suffix):
    for text in (f"{n}{suffix}", f"{n}{suffix} percentile", f"p{n}", f"P{n}"):
        parsed = parse_answer(text)
        assert (parsed.value, parsed.dimension) == (n, "count")


HEDGES = ["about ", "About ", "~", "~ ", "≈", "≈ ", "approx. ", "approx ", "approximately ",
          "roughly ", "around ", "on the order of "]  # fmt: skip
NUMERIC_DRAWS = [
    ("spec-verify-compute-bound-batch", 1), ("paged-pool-blocks", 1), ("goodput-both-slos", 1),
    ("kv-bytes-per-request", 2230), ("e2e-latency-from-ttft-tpot", 1),
    ("contiguous-waste-fraction", 1), ("prefix-cache-flops-saved", 1),
]  # fmt: skip


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.sampled_from(NUMERIC_DRAWS),
    st.sampled_from(HEDGES),
    st.floats(0.001, 1e6, allow_nan=False).map(lambda x: f"{x:.4g}"),
    st.sampled_from(["", " ms", " GiB", " requests/s", " blocks", "%", " TFLOP"]),
)
def test_a_hedged_answer_is_graded_as_the_number(deck, draw, hedge, number, unit):
    instance = make_instance(deck[draw[0]], draw[1])
    plain, hedged = grade(instance, number + unit), grade(instance, hedge + number + unit)
    if plain.status == "unreadable":  # its message quotes the answer as typed
        assert hedged.status == "unreadable"
        return
    assert (hedged.status, hedged.correct, hedged.misconception, hedged.feedback) == (
        plain.status, plain.correct, plain.misconception, plain.feedback,
    )  # fmt: skip


# counts of something else than blocks; a sequence is a request, but neither is a block
OTHER_THINGS = ["requests", "sequences", "tokens", "steps", "GPUs", "users", "pages", "experts"]


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.integers(0, 199), st.sampled_from(OTHER_THINGS))
def test_the_right_count_of_another_thing_is_never_credited(deck, seed, noun):
    instance = make_instance(deck["paged-pool-blocks"], seed)
    count = f"{int(instance.expected):,}"
    assert grade(instance, f"{count} blocks").correct is True
    assert grade(instance, count).correct is True
    verdict = grade(instance, f"{count} {noun}")
    assert (verdict.status, verdict.correct) == ("unit", False)
    assert verdict.feedback == (
        f"You answered in {noun}; the question counts blocks: {count} blocks."
    )


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.integers(0, 199), st.sampled_from(["blocks", "tokens", "GPUs", "users", "steps"]))
def test_the_right_count_of_sequences_as_another_thing_is_never_credited(deck, seed, noun):
    instance = make_instance(deck["paged-max-concurrent"], seed)
    count = f"{int(instance.expected):,}"
    for same in ("sequences", "requests", "seqs", ""):
        assert grade(instance, f"{count} {same}").correct is True
    verdict = grade(instance, f"{count} {noun}")
    assert (verdict.status, verdict.correct, verdict.misconception) == ("unit", False, None)
