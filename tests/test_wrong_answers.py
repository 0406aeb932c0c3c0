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

from drill.bank import builtin_bank_files, read_bank
from drill.grade import grade
from drill.instance import make_instance

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
    ("ttft-with-prefix-hit", 1, "488 ms", "misconception", "used-full-context"),
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
    # kv-bytes-per-token 1: 2 x 16 x 8 x 64 x 1 byte = 16 KiB; 4 query heads a KV head
    ("kv-bytes-per-token", 1, "128 KiB", "misconception", "bits-vs-bytes"),
    ("kv-bytes-per-token", 1, "64 KiB", "misconception", "query-heads"),
    ("kv-bytes-per-token", 1, "8 KiB", "misconception", "forgot-kv-factor"),
    ("kv-bytes-per-token", 1, "1 KiB", "misconception", "forgot-layers"),
    # requests-fit-after-weights 1: (141e9 - 14e9) B / (2 x 32 x 8 x 128 x 2,048 x 2 B) = 473.1
    ("requests-fit-after-weights", 1, "473 requests", "correct", None),
    ("requests-fit-after-weights", 1, "474 requests", "misconception", "rounded-up-capacity"),
    ("requests-fit-after-weights", 1, "511 requests", "misconception", "capacity-gb-as-gib"),
    ("requests-fit-after-weights", 1, "525 requests", "misconception", "forgot-weights"),
    ("requests-fit-after-weights", 1, "946 requests", "misconception", "forgot-kv-factor"),
    # longest-context-fits 1: 48 GB, 8B weights, 28 layers x 4 KV heads, 24 requests
    ("longest-context-fits", 1, "25823 tokens", "misconception", "capacity-gb-as-gib"),
    ("longest-context-fits", 1, "558035 tokens", "misconception", "forgot-requests"),
    ("longest-context-fits", 1, "34877 tokens", "misconception", "forgot-weights"),
    # preset-requests-fit 1: Qwen2.5 7B on 141 GB at 2,048 tokens: 1,071
    ("preset-requests-fit", 1, "1159 requests", "misconception", "capacity-gb-as-gib"),
    ("preset-requests-fit", 1, "1200 requests", "misconception", "forgot-weights"),
    # preset-mha-requests-fit 2: OPT-13B on 80 GB at 1,024 tokens: 64
    ("preset-mha-requests-fit", 2, "64 requests", "correct", None),
    ("preset-mha-requests-fit", 2, "71 requests", "misconception", "capacity-gb-as-gib"),
    # recompute-vs-cache-positions 1: 128 x 256 + 128 x 127 / 2 - (256 + 127) = 40,513
    ("recompute-vs-cache-positions", 1, "40513 tokens", "correct", None),
    ("recompute-vs-cache-positions", 1, "40896 tokens", "misconception", "total-not-difference"),
    ("recompute-vs-cache-positions", 1, "40512 tokens", "misconception", "decode-steps-off-by-one"),
    # preset-kv-tensor-parallel 2230: Llama 3 70B at 4,096 tokens on 4 GPUs: 320 MiB each
    ("preset-kv-tensor-parallel", 2230, "1.25 GiB", "misconception", "forgot-tp-split"),
    ("preset-kv-tensor-parallel", 2230, "2560 MiB", "misconception", "bits-vs-bytes"),
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
