"""Real wrong answers to the built-in deck, each with the verdict and the mistake it names.

Every row is a fixed (question, seed) of the built-in deck and an answer as a person
types it. The draws and the wrong answers were worked out by hand: the params from the
draw rule (random.Random seeded with the first 8 bytes of sha256("ID:SEED"), one choice
or randrange per param in the order the deck writes them), the values from each
question's formula typed out, the mistake done on purpose (one TPOT too many, the queue
left out, the capacity read as GiB...). Where a row names a mistake, the grader must
name that one: a mistake named as another one teaches the wrong lesson.
"""

from __future__ import annotations

import pytest

from drill.bank.loader import builtin_bank_files, read_bank
from drill.kinds import make_instance
from drill.kinds.grade import grade

# fmt: off
ROWS = [
    # e2e-latency-from-ttft-tpot 1: first token at 1,400 ms, then 255 gaps of 25 ms
    ("e2e-latency-from-ttft-tpot", 1, "7775 ms", "correct", None),
    ("e2e-latency-from-ttft-tpot", 1, "7.8 s", "misconception", "first-token-gap"),  # 256 gaps
    ("e2e-latency-from-ttft-tpot", 1, "6375 ms", "misconception", "forgot-ttft"),
    ("e2e-latency-from-ttft-tpot", 1, "7775 s", "misconception", "ms-vs-s"),
    # 254 gaps: no named mistake, but no longer graded right either
    ("e2e-latency-from-ttft-tpot", 1, "7.75 s", "magnitude", None),
    # e2e-latency-from-ttft-tpot 2230: 200 ms + 31 x 20 ms = 820 ms
    ("e2e-latency-from-ttft-tpot", 2230, "0.82 s", "correct", None),
    ("e2e-latency-from-ttft-tpot", 2230, "840 ms", "misconception", "first-token-gap"),
    ("e2e-latency-from-ttft-tpot", 2230, "0.62 s", "misconception", "forgot-ttft"),
    # ttft-queue-plus-prefill 1: 12 ms queue + 2 x 7e9 x 2,048 FLOP at 40 % of 989 TFLOP/s
    # (72.48 ms) = 84.48 ms
    ("ttft-queue-plus-prefill", 1, "84.5 ms", "correct", None),
    ("ttft-queue-plus-prefill", 1, "72.5 ms", "misconception", "forgot-queue"),
    ("ttft-queue-plus-prefill", 1, "41 ms", "misconception", "ignored-utilization"),  # 12 + 28.99
    ("ttft-queue-plus-prefill", 1, "48.2 ms", "misconception", "flops-2x"),  # 12 + 36.24
    ("ttft-queue-plus-prefill", 1, "84.5 s", "misconception", "ms-vs-s"),
    # ttft-queue-plus-prefill 2230: 68 ms + 2 x 13e9 x 4,096 FLOP at 70 % of 312 TFLOP/s
    ("ttft-queue-plus-prefill", 2230, "409 ms", "misconception", "ignored-utilization"),
    ("ttft-queue-plus-prefill", 2230, "488 ms", "misconception", "forgot-queue"),
    ("ttft-queue-plus-prefill", 2230, "312 ms", "misconception", "flops-2x"),
    # ttft-with-prefix-hit 1: 160 ms + 2 x 8e9 x (3,072 - 2,048) FLOP at 150 TFLOP/s
    ("ttft-with-prefix-hit", 1, "269 ms", "correct", None),
    ("ttft-with-prefix-hit", 1, "109 ms", "misconception", "forgot-queue"),
    ("ttft-with-prefix-hit", 1, "488 ms", "misconception", "prefix-hit-ignored"),
    ("ttft-with-prefix-hit", 1, "269 s", "misconception", "ms-vs-s"),
    # kv-gqa-then-fp8 1: 2 x 24 layers x 4 KV heads x 128 x 8,192 x 1 byte = 192 MiB
    ("kv-gqa-then-fp8", 1, "192 MiB", "correct", None),
    ("kv-gqa-then-fp8", 1, "1920 MiB", "misconception", "kept-kv-heads"),  # 40 heads
    ("kv-gqa-then-fp8", 1, "384 MiB", "misconception", "wrong-dtype-bytes"),
    ("kv-gqa-then-fp8", 1, "1.5 GiB", "misconception", "bits-vs-bytes"),
    ("kv-gqa-then-fp8", 1, "96 MiB", "misconception", "forgot-kv-factor"),
    # kv-gqa-then-fp8 2: 56 KV heads cut to 4 at 32 layers, 4,096 tokens: 128 MiB
    ("kv-gqa-then-fp8", 2, "1792 MiB", "misconception", "kept-kv-heads"),
    ("kv-gqa-then-fp8", 2, "1 GiB", "misconception", "bits-vs-bytes"),
    # kv-bytes-per-request 2230: 2 x 32 x 8 x 128 x 2 x 4,096 = 512 MiB; 7 query heads a KV head
    ("kv-bytes-per-request", 2230, "3.5 GiB", "misconception", "query-heads"),
    ("kv-bytes-per-request", 2230, "4 GiB", "misconception", "bits-vs-bytes"),
    ("kv-bytes-per-request", 2230, "256 MiB", "misconception", "forgot-kv-factor"),
    ("kv-bytes-per-request", 2230, "16 MiB", "misconception", "forgot-layers"),
    ("kv-bytes-per-request", 2230, "0.5 GB", "misconception", "gb-vs-gib"),
    ("kv-bytes-per-request", 2230, "0.537 GB", "correct", None),
    ("kv-bytes-per-request", 2230, "512 KiB", "misconception", "off-by-1024"),
    # kv-bytes-per-request 1: 2 x 24 x 16 x 256 x 1 byte x 2,048 = 384 MiB; with 2-byte
    # elements where the text says 1, 768 MiB
    ("kv-bytes-per-request", 1, "384 MiB", "correct", None),
    ("kv-bytes-per-request", 1, "768 MiB", "misconception", "wrong-dtype-bytes"),
    # kv-bytes-concurrent 1: 24 requests x (2 x 40 x 8 x 128 x 8,192 x 1 byte = 640 MiB)
    # = 15 GiB; one layer 384 MiB; one token of each request 24 x 80 KiB = 1,920 KiB
    ("kv-bytes-concurrent", 1, "15 GiB", "correct", None),
    ("kv-bytes-concurrent", 1, "384 MiB", "misconception", "forgot-layers"),
    ("kv-bytes-concurrent", 1, "1920 KiB", "misconception", "per-token-not-total"),
    # bug-gib-printed-as-gb-fix 1: 2 x 32 x 8 x 128 x 2 B x 8,192 = 1 GiB
    ("bug-gib-printed-as-gb-fix", 1, "1 GiB", "correct", None),
    ("bug-gib-printed-as-gb-fix", 1, "0.5 GiB", "misconception", "forgot-kv-factor"),
    ("bug-gib-printed-as-gb-fix", 1, "32 MiB", "misconception", "forgot-layers"),
    ("bug-gib-printed-as-gb-fix", 1, "128 KiB", "misconception", "per-token-not-total"),
    # mla-latent-per-request 1: 61 x 576 x 2 B x 8,192 = 549 MiB; at 1 byte 274.5 MiB
    ("mla-latent-per-request", 1, "549 MiB", "correct", None),
    ("mla-latent-per-request", 1, "274.5 MiB", "misconception", "wrong-dtype-bytes"),
    # disagg-link-time 1: 256 x 10^6 B over 400 Gb/s = 50 x 10^9 B/s: 5.12 ms; the 256 MB
    # read as MiB, 268,435,456 B: 5.37 ms
    ("disagg-link-time", 1, "5.12 ms", "correct", None),
    ("disagg-link-time", 1, "5.37 ms", "misconception", "gb-vs-gib"),
    # wq-w4a16-compute-bound-batch 1: 989 / 3.35 / 4 = 73.8 sequences; 3.35 TB/s read as
    # TiB/s (3.683 x 10^12 B/s): 67.1
    ("wq-w4a16-compute-bound-batch", 1, "74", "correct", None),
    ("wq-w4a16-compute-bound-batch", 1, "67", "misconception", "gb-vs-gib"),
    # on 2230 (2-byte elements), 256 MiB is both half of K+V and 1-byte elements: the tie
    # names the K+V factor (the row above); 7 query heads a KV head, so no tie on doubling
    # requests-fit-after-weights 1: an H200, (141 x 2^30 - 14e9) B / (2 x 32 x 8 x 128 x
    # 2,048 x 2 B) = 137,397,597,184 / 268,435,456 = 511.8
    ("requests-fit-after-weights", 1, "511 requests", "correct", None),
    ("requests-fit-after-weights", 1, "512 requests", "misconception", "rounded-up-capacity"),
    # 141 GiB taken as 141e9 bytes: 127e9 / 268,435,456 = 473.1
    ("requests-fit-after-weights", 1, "473 requests", "misconception", "capacity-gib-as-gb"),
    ("requests-fit-after-weights", 1, "564 requests", "misconception", "forgot-weights"),
    ("requests-fit-after-weights", 1, "1023 requests", "misconception", "forgot-kv-factor"),
    # longest-context-fits 1: 48 GB, 8B weights, 28 layers x 4 KV heads, 24 requests
    ("longest-context-fits", 1, "25823 tokens", "misconception", "capacity-gb-as-gib"),
    ("longest-context-fits", 1, "558035 tokens", "misconception", "forgot-requests"),
    ("longest-context-fits", 1, "34877 tokens", "misconception", "forgot-weights"),
    # recompute-vs-cache-positions 1: 128 x 256 + 128 x 127 / 2 - (256 + 127) = 40,513
    ("recompute-vs-cache-positions", 1, "40513 tokens", "correct", None),
    ("recompute-vs-cache-positions", 1, "40896 tokens", "misconception", "total-not-difference"),
    ("recompute-vs-cache-positions", 1, "40512 tokens", "misconception", "decode-steps-off-by-one"),
    # contiguous-waste-fraction 1: 1 - 2,816 / 16,384 = 82.8125 %
    ("contiguous-waste-fraction", 1, "82.8%", "correct", None),
    ("contiguous-waste-fraction", 1, "17.2%", "misconception", "complement-fraction"),
    # contiguous-waste-bytes 1: 18 requests x (8,192 - 5,120) tokens x 2 x 32 x 4 x 128 x 2 B
    ("contiguous-waste-bytes", 1, "3.375 GiB", "correct", None),
    ("contiguous-waste-bytes", 1, "192 MiB", "misconception", "forgot-requests"),
    ("contiguous-waste-bytes", 1, "9 GiB", "misconception", "used-full-context"),
    # decode-step-floor-with-kv 2230: (16e9 + 24 x 536,870,912) B / 4.8 TB/s
    ("decode-step-floor-with-kv", 2230, "2.68 ms", "misconception", "forgot-weights"),
    ("decode-step-floor-with-kv", 2230, "3.44 ms", "misconception", "forgot-requests"),
    ("decode-step-floor-with-kv", 2230, "3.33 ms", "misconception", "forgot-kv-reads"),
    # the 16 GB of weights read once for each of the 24 sequences: (24 x 16e9 +
    # 12,884,901,888) B / 4.8 TB/s = 82.68 ms
    ("decode-step-floor-with-kv", 2230, "82.68 ms", "misconception", "weights-read-per-sequence"),
    # kv-bytes-per-request 2230 again: one token is 2 x 32 x 8 x 128 x 2 B = 128 KiB
    ("kv-bytes-per-request", 2230, "128 KiB", "misconception", "per-token-not-total"),
    # kv-gqa-then-fp8 1 again: 192 MiB over 24 layers and 8,192 tokens
    ("kv-gqa-then-fp8", 1, "8 MiB", "misconception", "forgot-layers"),
    ("kv-gqa-then-fp8", 1, "24 KiB", "misconception", "per-token-not-total"),
    # contiguous-waste-bytes 1 again: 3.375 GiB over 32 layers
    ("contiguous-waste-bytes", 1, "108 MiB", "misconception", "forgot-layers"),
    # requests-fit-after-weights 1 again: 137.4 GB free, 256 MiB a request (8 MiB a layer,
    # 128 KiB a token); the weights at one byte a parameter leave 144.4 GB
    ("requests-fit-after-weights", 1, "16379 requests", "misconception", "forgot-layers"),
    ("requests-fit-after-weights", 1, "1048260", "misconception", "per-token-not-total"),
    ("requests-fit-after-weights", 1, "537 requests", "misconception", "wrong-dtype-bytes"),
    # preset-decode-floor 1: Phi-3 mini, 3.82e9 x 2 B at 3.35 TB/s = 2.28 ms
    ("preset-decode-floor", 1, "2.28 ms", "correct", None),
    ("preset-decode-floor", 1, "1.14 ms", "misconception", "wrong-dtype-bytes"),
    # decode-step-floor-with-kv 3: (14 GB + 12 x 1 GiB) / 4.8 TB/s = 5.6 ms
    ("decode-step-floor-with-kv", 3, "4.14 ms", "misconception", "wrong-dtype-bytes"),
    ("decode-step-floor-with-kv", 3, "4.26 ms", "misconception", "forgot-kv-factor"),
    # prefill-flops-total 1: 2 x 70e9 x 4,096 = 573.44 TFLOP; 140 GFLOP a token
    ("prefill-flops-total", 1, "140 GFLOP", "misconception", "per-token-not-total"),
    # prefill-time-floor-flops 3: 2 x 34e9 x 32,768 FLOP at 989 TFLOP/s = 2.253 s
    ("prefill-time-floor-flops", 3, "68.8 us", "misconception", "per-token-not-total"),
    # mla-tp-per-gpu 3: 61 x 576 x 2 B x 8,192 = 549 MiB on every GPU
    ("mla-tp-per-gpu", 3, "549 MiB", "correct", None),
    ("mla-tp-per-gpu", 3, "9 MiB", "misconception", "forgot-layers"),
    ("mla-tp-per-gpu", 3, "68.625 KiB", "misconception", "per-token-not-total"),
    # decode-tpot-tp-preset 3: Llama 3 70B on 8 A100 80GB, 24 x 2,048 tokens, 70 % of
    # 2.039 TB/s: (17.65 GB + 2.01 GB) / 1.43 TB/s = 13.8 ms
    ("decode-tpot-tp-preset", 3, "13.8 ms", "correct", None),
    ("decode-tpot-tp-preset", 3, "100 ms", "misconception", "forgot-tp-split"),  # all weights
    ("decode-tpot-tp-preset", 3, "23.65 ms", "misconception", "forgot-tp-split"),  # whole caches
    ("decode-tpot-tp-preset", 3, "1.41 ms", "misconception", "forgot-weights"),
    ("decode-tpot-tp-preset", 3, "13.07 ms", "misconception", "forgot-kv-factor"),
    ("decode-tpot-tp-preset", 3, "7.59 ms", "misconception", "wrong-dtype-bytes"),
    # prefill-ttft-tp-preset 3: Qwen2.5 72B, 8,192 tokens on 4 A100s at 50 %: 2.05 s; one
    # FLOP per parameter (attention kept) gives 1.095 s
    ("prefill-ttft-tp-preset", 3, "2.05 s", "correct", None),
    ("prefill-ttft-tp-preset", 3, "1.095 s", "misconception", "flops-2x"),
    # paged-last-block-waste 1: 40 x 3,457 tokens in 32-token blocks, 63 slots empty in each
    # last block; the 109 blocks of each sequence hold 8.515625 GiB in all
    ("paged-last-block-waste", 1, "77.5 MiB", "correct", None),
    ("paged-last-block-waste", 1, "8.52 GiB", "misconception", "total-not-difference"),
    # paged-pool-blocks 1: an H100, 90 % of 80 GiB = 77,309,411,328 B, less 26 GB and 4 GB,
    # in blocks of 2.5 MiB (2,621,440 B) = 18,047.1
    ("paged-pool-blocks", 1, "18047", "correct", None),
    ("paged-pool-blocks", 1, "19572", "misconception", "forgot-activations"),
    ("paged-pool-blocks", 1, "721884", "misconception", "forgot-layers"),
    ("paged-pool-blocks", 1, "36094", "misconception", "forgot-kv-factor"),
    # disagg-kv-transfer-bytes 1: 32 layers x 4 KV heads x 128 x 1 B, 4,096 prompt tokens
    ("disagg-kv-transfer-bytes", 1, "128 MiB", "correct", None),
    ("disagg-kv-transfer-bytes", 1, "4 MiB", "misconception", "forgot-layers"),
    ("disagg-kv-transfer-bytes", 1, "32 KiB", "misconception", "per-token-not-total"),
    # preemption-swap-round-trip 5: 2 copies of 128 MiB at 25 GB/s = 10.7 ms
    ("preemption-swap-round-trip", 5, "10.7 ms", "correct", None),
    ("preemption-swap-round-trip", 5, "0.336 ms", "misconception", "forgot-layers"),
    # 25 GB/s read as 25 GiB/s: 2 x 2^27 B / (25 x 2^30 B/s) = 10 ms exactly
    ("preemption-swap-round-trip", 5, "10 ms", "misconception", "gb-vs-gib"),
    # half of it, one copy or both copies without the K+V factor: the tie names one way
    ("preemption-swap-round-trip", 5, "5.37 ms", "misconception", "swap-one-way"),
    # spec-expected-tokens 1: alpha 0.7, k = 4: (1 - 0.7^5) / 0.3 = 2.773
    ("spec-expected-tokens", 1, "2.773", "correct", None),
    ("spec-expected-tokens", 1, "2.533", "misconception", "spec-series-one-short"),
    # spec-speedup 1: 2.952 tokens a round at 3 x 3 % + 1 = 1.09 steps = 2.708x
    ("spec-speedup", 1, "2.708", "correct", None),
    ("spec-speedup", 1, "2.866", "misconception", "spec-draft-once"),
    # spec-verify-compute-bound-batch 1: 989 / 3.35 = 295.2 over 7 positions = 42.2
    ("spec-verify-compute-bound-batch", 1, "42.2", "correct", None),
    ("spec-verify-compute-bound-batch", 1, "49.2", "misconception", "spec-forgot-bonus-token"),
    # bug-hidden-size-fix 5: Llama 3 8B, 40 GB pool, 512 MiB a request: 74
    ("bug-hidden-size-fix", 5, "74 requests", "correct", None),
    ("bug-hidden-size-fix", 5, "149 requests", "misconception", "forgot-kv-factor"),
    ("bug-hidden-size-fix", 5, "2384 requests", "misconception", "forgot-layers"),
    ("bug-hidden-size-fix", 5, "80 requests", "misconception", "capacity-gb-as-gib"),
    # bug-tp-pool-once-fix 5: (4 x 120 GB - 68 GB) / 1.5 GB = 274.7
    ("bug-tp-pool-once-fix", 5, "274 requests", "correct", None),
    ("bug-tp-pool-once-fix", 5, "320 requests", "misconception", "forgot-weights"),
    # (4 x 120 x 1.073741824 - 68) / 1.5 = 298.3
    ("bug-tp-pool-once-fix", 5, "298 requests", "misconception", "capacity-gb-as-gib"),
    # bug-tp-pool-once-fix 20: 8B over 2 GPUs of 120 GB, 2.5 GB a request: 240 / 2.5 = 96
    # with the weights left out, and (240 x 1.073741824 - 16) / 2.5 = 96.68 with the budget
    # read as GiB; the tie names the first
    ("bug-tp-pool-once-fix", 20, "89 requests", "correct", None),
    ("bug-tp-pool-once-fix", 20, "96 requests", "misconception", "forgot-weights"),
    # bug-query-heads-fix 5: 2 x 32 x 4 x 128 x 32,768 x 2 B = 2 GiB
    ("bug-query-heads-fix", 5, "64 MiB", "misconception", "forgot-layers"),
    ("bug-query-heads-fix", 5, "64 KiB", "misconception", "per-token-not-total"),
    # bug-mla-latent-twice-fix 1: 61 x 576 x 8,192 x 2 B = 549 MiB
    ("bug-mla-latent-twice-fix", 1, "9 MiB", "misconception", "forgot-layers"),
    ("bug-mla-latent-twice-fix", 1, "68.6 KiB", "misconception", "per-token-not-total"),
]
# fmt: on


@pytest.fixture(scope="module")
def deck():
    bank, problems = read_bank(builtin_bank_files())
    assert problems == []
    return bank


@pytest.mark.parametrize(("question_id", "seed", "answer", "status", "mistake"), ROWS)
def test_a_wrong_answer_gets_its_verdict_and_its_mistake(
    deck, question_id, seed, answer, status, mistake
):
    verdict = grade(make_instance(deck.get(question_id), seed), answer)
    assert (verdict.status, verdict.misconception) == (status, mistake)


def test_the_table_covers_many_wrong_answers_and_questions():
    wrong = [row for row in ROWS if row[3] != "correct"]
    assert len(wrong) >= 40
    assert len({row[0] for row in wrong}) >= 12
