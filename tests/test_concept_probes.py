"""Answers written to probe the concept grader on the built-in deck, each with the rating it
suggests: confidently wrong answers in the deck's own vocabulary suggested Again, right
answers in other words suggested Good, terse ones read as claims rather than as lists."""

import pytest

from drill.bank.loader import load_default_bank
from drill.kinds import make_instance
from drill.kinds.grade import grade

PROBES = [
    # wrong, in the right words
    ("define-ttft", "TTFT is the average time between generated tokens, determined by the "
     "decode step.", 1),
    ("define-tpot", "TPOT is the total request time divided by the number of generated tokens, "
     "and it depends only on the model size.", 1),
    ("define-tpot", "TPOT is how long the prefill takes per prompt token; it depends on the "
     "prompt length.", 1),
    ("continuous-batching-iteration-level", "Continuous batching keeps one fixed batch running "
     "and pads every sequence to the same length, so the GPU never stops.", 1),
    ("prefill-compute-decode-bandwidth", "Prefill is memory-bound because it has to write the "
     "whole KV cache, and decode is compute-bound because it runs the full model for every "
     "token.", 1),
    # right, in other words
    ("define-ttft", "It's the latency from when the client sends the request to when the first "
     "generated token comes back. It's made of the wait in the scheduler queue plus the "
     "prefill over the prompt, minus whatever a prefix cache hit lets you skip.", 3),
    ("define-tpot", "The time between two consecutive output tokens once streaming has started; "
     "it equals the duration of one decode iteration of the current batch, so more or longer "
     "sequences in the batch make it larger.", 3),
    ("define-tps", "It can mean how fast one user's stream arrives, roughly one over TPOT, or the "
     "total tokens the server generates across every request. Growing the batch raises the "
     "total and slows each user, so a number without saying which is meaningless.", 3),
    ("batching-amortizes-weights", "In decode the step is dominated by reading the weights from "
     "HBM, and that read is shared by every sequence in the batch, so adding sequences barely "
     "lengthens the step and throughput goes up almost linearly. It stops at the compute "
     "ridge, when the per-sequence KV reads dominate, or when the KV cache runs out of "
     "memory.", 3),
    # terse
    ("decode-idle-gpu-saturated", "Yes: memory-bound, HBM bandwidth saturated, cores stall on "
     "loads; more FLOPs won't help.", 3),
]  # fmt: skip


@pytest.fixture(scope="module")
def deck():
    return load_default_bank(cached=False)


@pytest.mark.parametrize(("question", "answer", "rating"), PROBES)
def test_the_suggested_rating(deck, question, answer, rating):
    assert grade(make_instance(deck.get(question), 1), answer).rating == rating
