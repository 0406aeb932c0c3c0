"""The serving decks (question_bank/serving_*.yaml, spot_the_bug.yaml): every numeric
template draws, for two seeds, the answer worked out by hand from its params.

Each expected value below is a literal, written from the params of the draw with the
arithmetic shown beside it, done by hand and not by the template's expression: a
slip in a template's formula, a param range or a derived value fails here. The
mistakes rows type a wrong answer a person would give on one of those draws and
name the mistake the grader must report.
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
)

from drill.kinds import make_instance

SERVING_FILES = ("serving_", "spot_the_bug")


@pytest.fixture(scope="module")
def deck():
    return read_decks()


def serving_templates(deck) -> list[str]:
    return numeric_templates(deck, lambda name: name.startswith(SERVING_FILES))


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
        {"ctx": 1024, "layers": 40, "kv_heads": 8, "link_gbs": 25, "trips": 2}, 0.0134217728, "seconds"),
    # 2 × 32 × 8 × 128 × 2 × 4,096 = 536,870,912 B; / 25 GB/s = 21.47483648 ms; twice
    ("preemption-swap-round-trip", 2): Pinned(
        {"ctx": 4096, "layers": 32, "kv_heads": 8, "link_gbs": 25, "trips": 2}, 0.04294967296, "seconds"),
    # ------------------------------------------------------------------ paged KV
    # per token 2 × 40 × 4 × 64 × 2 = 40,960 B; × 32 tokens
    ("paged-block-bytes", 1): Pinned(
        {"block": 32, "layers": 40, "kv_heads": 4, "head_dim": 64, "dtype_bytes": 2},
        1_310_720, "bytes"),
    # per token 2 × 32 × 4 × 128 × 2 = 65,536 B; × 32 tokens
    ("paged-block-bytes", 2): Pinned(
        {"block": 32, "layers": 32, "kv_heads": 4, "head_dim": 128, "dtype_bytes": 2},
        2_097_152, "bytes"),
    # 126 × 32 + 2 = 4,034 tokens: 126 full blocks and one more
    ("paged-blocks-per-sequence", 1): Pinned({"block": 32, "full": 126, "extra": 2}, 127, "count"),
    # 125 × 16 + 2 = 2,002 tokens: 125 full blocks and one more
    ("paged-blocks-per-sequence", 2): Pinned({"block": 16, "full": 125, "extra": 2}, 126, "count"),
    # 31 empty slots per sequence: 40 × 31 × 65,536 B
    ("paged-last-block-waste", 1): Pinned(
        {"seqs": 40, "block": 32, "full": 108, "extra": 1, "per_token": 65536},
        81_264_640, "bytes"),
    # 14 empty slots per sequence: 30 × 14 × 327,680 B
    ("paged-last-block-waste", 2): Pinned(
        {"seqs": 30, "block": 16, "full": 34, "extra": 2, "per_token": 327680},
        137_625_600, "bytes"),
    # H100: 90 % of 80 GiB = 77,309,411,328 B, less 26 GB and 4 GB = 47,309,411,328 B;
    # block 2 × 40 × 8 × 128 × 2 × 16 = 2,621,440 B; 18,047.1
    ("paged-pool-blocks", 1): Pinned(
        {"g": "H100 SXM", "util_pct": 90, "params_b": 13, "activations_gb": 4, "block": 16,
         "layers": 40, "kv_heads": 8},
        18047, "count"),
    # H100: 77,309,411,328 B less 14 GB and 2 GB = 61,309,411,328 B; block 2 × 40 × 4 × 128
    # × 2 × 16 = 1,310,720 B; 46,775.4
    ("paged-pool-blocks", 2): Pinned(
        {"g": "H100 SXM", "util_pct": 90, "params_b": 7, "activations_gb": 2, "block": 16,
         "layers": 40, "kv_heads": 4},
        46775, "count"),
    # 2,200 / 256 = 8.6 -> 9 blocks a sequence; 2,600 / 9 = 288.9
    ("paged-max-concurrent", 1): Pinned(
        {"pool_blocks": 2600, "block": 256, "max_len": 2200}, 288, "count"),
    # 700 / 128 = 5.5 -> 6 blocks a sequence; 1,400 / 6 = 233.3
    ("paged-max-concurrent", 2): Pinned(
        {"pool_blocks": 1400, "block": 128, "max_len": 700}, 233, "count"),
    # 63 × 16 + 6 = 1,014 tokens; 63 full blocks = 1,008
    ("prefix-cache-reusable-tokens", 1): Pinned({"block": 16, "full": 63, "extra": 6}, 1008, "tokens"),
    # 73 × 16 + 11 = 1,179 tokens; 73 full blocks = 1,168
    ("prefix-cache-reusable-tokens", 2): Pinned({"block": 16, "full": 73, "extra": 11}, 1168, "tokens"),
    # 2 × 70e9 × 1,024 = 143.36 TFLOP per hit; × 0.3
    ("prefix-cache-flops-saved", 1): Pinned(
        {"shared": 1024, "hit_pct": 30, "params_b": 70}, 43.008e12, "flop"),
    # 2 × 8e9 × 512 = 8.192 TFLOP per hit; × 0.9
    ("prefix-cache-flops-saved", 2): Pinned(
        {"shared": 512, "hit_pct": 90, "params_b": 8}, 7.3728e12, "flop"),
    # 3,072 − 0.4 × 2,048 = 2,252.8 tokens × 16e9 FLOP / 150e12 = 240.2987 ms; + 230 ms
    ("prefix-cache-mean-ttft", 1): Pinned(
        {"prompt": 3072, "shared": 2048, "hit_pct": 40, "params_b": 8, "rate_tflops": 150,
         "queue_ms": 230},
        0.470298666666667, "seconds"),
    # 8,192 − 0.4 × 1,024 = 7,782.4 tokens × 14e9 FLOP / 150e12 = 726.3573 ms; + 200 ms
    ("prefix-cache-mean-ttft", 2): Pinned(
        {"prompt": 8192, "shared": 1024, "hit_pct": 40, "params_b": 7, "rate_tflops": 150,
         "queue_ms": 200},
        0.926357333333333, "seconds"),
    # ------------------------------------------------------------------ speculative decoding
    # 1 + 0.7 + 0.49 + 0.343 + 0.2401
    ("spec-expected-tokens", 1): Pinned({"alpha": 0.7, "k": 4}, 2.7731, "count"),
    # (1 − 0.7^9) / 0.3 = (1 − 0.040353607) / 0.3
    ("spec-expected-tokens", 2): Pinned({"alpha": 0.7, "k": 8}, 3.19882131, "count"),
    # (1 + 0.8 + 0.64 + 0.512) / (3 × 0.03 + 1) = 2.952 / 1.09
    ("spec-speedup", 1): Pinned({"alpha": 0.8, "k": 3, "draft_pct": 3}, 2.708256880733945, "count"),
    # (1 + 0.7 + 0.49 + 0.343) / (3 × 0.05 + 1) = 2.533 / 1.15
    ("spec-speedup", 2): Pinned({"alpha": 0.7, "k": 3, "draft_pct": 5}, 2.202608695652174, "count"),
    # H100 SXM: 989 / 3.35 = 295.2239 FLOP/B; / (6 + 1)
    ("spec-verify-compute-bound-batch", 1): Pinned({"g": "H100 SXM", "k": 6}, 42.17484008528785, "count"),
    # 295.2239 / (5 + 1)
    ("spec-verify-compute-bound-batch", 2): Pinned({"g": "H100 SXM", "k": 5}, 49.20398009950249, "count"),
    # ------------------------------------------------------------------ architectures
    # 61 × (512 + 64) × 2 B = 70,272 B a token; × 8,192
    ("mla-latent-per-request", 1): Pinned({"dtype_bytes": 2, "seq": 8192}, 575_668_224, "bytes"),
    # 61 × 576 × 1 B = 35,136 B a token; × 65,536
    ("mla-latent-per-request", 2): Pinned({"dtype_bytes": 1, "seq": 65536}, 2_302_672_896, "bytes"),
    # 2 × 16 × 128 = 4,096 elements against 576
    ("mla-vs-gqa-per-token", 1): Pinned({"kv_heads": 16}, 64 / 9, "count"),
    # 2 × 8 × 128 = 2,048 against 576
    ("mla-vs-gqa-per-token", 6): Pinned({"kv_heads": 8}, 32 / 9, "count"),
    # one full copy on each GPU: 61 × 576 × 1 × 4,096
    ("mla-tp-per-gpu", 1): Pinned({"tp": 8, "dtype_bytes": 1, "seq": 4096}, 143_917_056, "bytes"),
    # 61 × 576 × 1 × 8,192
    ("mla-tp-per-gpu", 2): Pinned({"tp": 8, "dtype_bytes": 1, "seq": 8192}, 287_834_112, "bytes"),
    # (4 + 2 × 5) = 14e9 B at 1 byte / 3.35e12 B/s (H100 SXM) = 4.1791 ms
    ("moe-batch1-step-floor", 1): Pinned(
        {"shared_b": 4, "experts": 16, "expert_b": 5, "topk": 2, "dtype_bytes": 1, "g": "H100 SXM"},
        0.004179104477611940, "seconds"),
    # (1.5 + 4 × 5) = 21.5e9 B / 3.35e12 B/s (H100 SXM) = 6.4179 ms
    ("moe-batch1-step-floor", 2): Pinned(
        {"shared_b": 1.5, "experts": 64, "expert_b": 5, "topk": 4, "dtype_bytes": 1, "g": "H100 SXM"},
        0.006417910447761194, "seconds"),
    # 64 × (1 − (58/64)^2) = (4,096 − 3,364) / 64
    ("moe-experts-touched", 1): Pinned({"experts": 64, "topk": 6, "batch": 2}, 11.4375, "count"),
    # 256 × (1 − (250/256)^4) = 256 × (1 − 0.9094947)
    ("moe-experts-touched", 2): Pinned({"experts": 256, "topk": 6, "batch": 4}, 23.16935634613037, "count"),
    # 4 + 2 × 2 × 8 / 32 = 4 + 1
    ("kv-int4-bits-per-element", 1): Pinned({"group_size": 32, "consts": 2, "scale_bytes": 2}, 5, "count"),
    # 4 + 2 × 4 × 8 / 128 = 4 + 0.5
    ("kv-int4-bits-per-element", 2): Pinned({"group_size": 128, "consts": 2, "scale_bytes": 4}, 4.5, "count"),
    # 2 / (0.5 + 4 / 128) = 2 / 0.53125
    ("kv-int4-capacity-gain", 1): Pinned({"group_size": 128, "scale_bytes": 4}, 3.764705882352941, "count"),
    # 2 / (0.5 + 2 / 128) = 2 / 0.515625
    ("kv-int4-capacity-gain", 2): Pinned({"group_size": 128, "scale_bytes": 2}, 3.878787878787879, "count"),
    # ------------------------------------------------------------------ parallelism
    # 2 × 64 × 2 × 128 × 2 × 4,096 = 268,435,456 B over 2 KV heads: one head a GPU
    # 2 × 48 × 4 × 128 × 2 × 32,768 = 3,221,225,472 B over 4 KV heads
    # H200: 141 GiB − 68 GB / 2 = 151,397,597,184 − 34e9 = 117,397,597,184 B free a GPU;
    # 2 × 32 × 8 × 128 × 2 × 32,768 / 2 = 2,147,483,648 B a request a GPU; 54.7
    # H100: 80 GiB − 16 GB / 2 = 77,899,345,920 B; 2 × 48 × 8 × 128 × 2 × 8,192 / 2 =
    # 805,306,368 B; 96.7
    # Llama 3 70B at TP 16: 2 × 80 × 8 × 128 × 2 × 2,048 = 671,088,640 B over its 8 KV heads
    ("tp-kv-per-gpu-preset", 1): Pinned(
        {"m": "Llama 3 70B", "tp": 16, "seq": 2048}, 83_886_080, "bytes"),
    # Qwen2.5 72B: 2 × 80 × 8 × 128 × 2 × 4,096 = 1,342,177,280 B over 8 KV heads
    ("tp-kv-per-gpu-preset", 2): Pinned(
        {"m": "Qwen2.5 72B", "tp": 16, "seq": 4096}, 167_772_160, "bytes"),
    # H200: 0.9 × 141 GiB = 136,257,837,465 B (rounded down); 70.6e9 × 2 / 8 = 17.65e9 B of
    # weights; one KV head a GPU: 2 × 80 × 1 × 128 × 2 × 8,192 = 335,544,320 B; 353.48
    ("tp-sequences-per-gpu-preset", 1): Pinned(
        {"m": "Llama 3 70B", "g": "H200", "tp": 8, "seq": 8192}, 353, "requests"),
    # H100 NVL: 0.9 × 94 GiB = 90,838,558,310 B; 46.7e9 × 2 / 8 = 11.675e9 B; one KV head:
    # 2 × 32 × 1 × 128 × 2 × 4,096 = 67,108,864 B; 79,163,558,310 / that = 1,179.6
    ("tp-sequences-per-gpu-preset", 2): Pinned(
        {"m": "Mixtral 8x7B", "g": "H100 NVL", "tp": 8, "seq": 4096}, 1179, "requests"),
    # 2 × 32 × 4 × 128 × 1 = 32,768 B a token × 4,096 prompt tokens
    ("disagg-kv-transfer-bytes", 1): Pinned(
        {"prompt": 4096, "quarters": 3, "layers": 32, "kv_heads": 4, "dtype_bytes": 1},
        134_217_728, "bytes"),
    # 32,768 B × 2,048
    ("disagg-kv-transfer-bytes", 2): Pinned(
        {"prompt": 2048, "quarters": 2, "layers": 32, "kv_heads": 4, "dtype_bytes": 1},
        67_108_864, "bytes"),
    # 256e6 B / (400e9 / 8 B/s) = 5.12 ms
    ("disagg-link-time", 1): Pinned({"kv_mb": 256, "link_gbps": 400}, 0.00512, "seconds"),
    # 5,120e6 B / 12.5e9 B/s
    ("disagg-link-time", 2): Pinned({"kv_mb": 5120, "link_gbps": 100}, 0.4096, "seconds"),
    # ------------------------------------------------------------------ latency metrics
    # 30 requests/s × 6 s
    ("littles-law-concurrency", 1): Pinned({"rate": 30, "latency_s": 6}, 180, "requests"),
    # 5 requests/s × 2.5 s
    ("littles-law-concurrency", 2): Pinned({"rate": 5, "latency_s": 2.5}, 12.5, "requests"),
    # 256 in flight / 40 per second
    ("littles-law-latency", 1): Pinned({"in_flight": 256, "rate": 40}, 6.4, "seconds"),
    # 128 / 3 per second
    ("littles-law-latency", 2): Pinned({"in_flight": 128, "rate": 3}, 42.666666666666667, "seconds"),
    # 12 % + 6 % − 4 % = 14 % miss something; 20 × 0.86
    ("goodput-both-slos", 1): Pinned(
        {"rate": 20, "miss_ttft": 12, "miss_tpot": 6, "miss_both": 4}, 17.2, "requests_per_s"),
    # 8 % + 4 % − 3 % = 9 %; 20 × 0.91
    ("goodput-both-slos", 2): Pinned(
        {"rate": 20, "miss_ttft": 8, "miss_tpot": 4, "miss_both": 3}, 18.2, "requests_per_s"),
    # (47 × 25 + 2 × 500) / 49 = 2,175 / 49 ms
    ("mean-tpot-hides-stalls", 1): Pinned(
        {"normal_gaps": 47, "normal_ms": 25, "stalls": 2, "stall_ms": 500},
        0.04438775510204082, "seconds"),
    # (47 × 15 + 3 × 500) / 50 = 2,205 / 50 ms
    ("mean-tpot-hides-stalls", 2): Pinned(
        {"normal_gaps": 47, "normal_ms": 15, "stalls": 3, "stall_ms": 500}, 0.0441, "seconds"),
    # 0.99 × 77 = 76.23 -> 77: the slowest request
    ("percentile-nearest-rank", 1): Pinned({"n": 77, "pct": 99}, 77, "count"),
    # 0.90 × 123 = 110.7 -> 111
    ("percentile-nearest-rank", 2): Pinned({"n": 123, "pct": 90}, 111, "count"),
    # 70.6e9 × 2 / 4 = 35.3e9 B + 16 × 2 × 80 × 2 × 128 × 2 × 2,048 = 2,684,354,560 B;
    # 37,984,354,560 B / (0.6 × 2.039e12 B/s)
    ("decode-tpot-tp-preset", 1): Pinned(
        {"m": "Llama 3 70B", "g": "A100 80GB SXM", "tp": 4, "batch": 16, "ctx": 2048,
         "mbu_pct": 60},
        0.031048189112309957, "seconds"),
    # 72.7e9 × 2 / 8 = 18.175e9 B + 32 × 2 × 80 × 1 × 128 × 2 × 4,096 = 5,368,709,120 B;
    # 23,543,709,120 B / (0.8 × 3.9e12 B/s)
    ("decode-tpot-tp-preset", 2): Pinned(
        {"m": "Qwen2.5 72B", "g": "H100 NVL", "tp": 8, "batch": 32, "ctx": 4096, "mbu_pct": 80},
        0.007546060615384615, "seconds"),
    # 2 × 70.6e9 × 8,192 = 1.1567104e15 FLOP + 4 × 80 × 64 × 128 × (8,192 × 8,193 / 2) =
    # 87,971,667,640,320 FLOP; / 4 GPUs / (0.6 × 312e12 FLOP/s)
    ("prefill-ttft-tp-preset", 1): Pinned(
        {"m": "Llama 3 70B", "g": "A100 80GB SXM", "tp": 4, "prompt": 8192, "mfu_pct": 60},
        1.662235667254701, "seconds"),
    # Mixtral's 12.9e9 active parameters: 2 × 12.9e9 × 8,192 = 2.113536e14 FLOP +
    # 4 × 32 × 32 × 128 × 33,558,528 = 17,594,324,238,336 FLOP; / 4 / (0.4 × 989e12 FLOP/s)
    ("prefill-ttft-tp-preset", 4): Pinned(
        {"m": "Mixtral 8x7B", "g": "H100 SXM", "tp": 4, "prompt": 8192, "mfu_pct": 40},
        0.1446839822598989, "seconds"),
    # ------------------------------------------------------------------ spot the bug
    # 2 × 28 × 8 KV heads × 128 × 16,384 × 2 B
    ("bug-query-heads-fix", 1): Pinned(
        {"layers": 28, "kv_heads": 8, "group": 7, "seq": 16384}, 1_879_048_192, "bytes"),
    # 2 × 48 × 4 × 128 × 8,192 × 2 B
    ("bug-query-heads-fix", 4): Pinned(
        {"layers": 48, "kv_heads": 4, "group": 4, "seq": 8192}, 805_306_368, "bytes"),
    # Llama 3 8B: 2 × 32 × 8 × 128 × 2 × 8,192 = 1,073,741,824 B; 120e9 / that = 111.8
    ("bug-hidden-size-fix", 1): Pinned({"model": "Llama 3 8B", "pool_gb": 120, "seq": 8192}, 111, "requests"),
    # Qwen2.5 7B: 2 × 28 × 4 × 128 × 2 × 2,048 = 117,440,512 B; 120e9 / that = 1,021.8
    ("bug-hidden-size-fix", 2): Pinned({"model": "Qwen2.5 7B", "pool_gb": 120, "seq": 2048}, 1021, "requests"),
    # 61 × 576 × 8,192 × 2 B, without the factor 2
    ("bug-mla-latent-twice-fix", 1): Pinned({"dtype_bytes": 2, "seq": 8192}, 575_668_224, "bytes"),
    # 61 × 576 × 131,072 × 2 B
    ("bug-mla-latent-twice-fix", 2): Pinned({"dtype_bytes": 2, "seq": 131072}, 9_210_691_584, "bytes"),
    # 2 × 4 × 256 × 2 = 4,096 B a layer and token; 18 × 32,768 + 18 × 4,096 = 663,552
    ("bug-sliding-window-fix", 1): Pinned(
        {"layers": 36, "every": 2, "kv_heads": 4, "head_dim": 256, "window": 4096, "seq": 32768},
        2_717_908_992, "bytes"),
    # 2 × 16 × 128 × 2 = 8,192 B; 18 × 16,384 + 18 × 4,096 = 368,640
    ("bug-sliding-window-fix", 2): Pinned(
        {"layers": 36, "every": 2, "kv_heads": 16, "head_dim": 128, "window": 4096, "seq": 16384},
        3_019_898_880, "bytes"),
    # 2 × 32 × 8 × 128 × 2 × 8,192 = 2^30 B: exactly 1 GiB, printed as 1.074
    ("bug-gib-printed-as-gb-fix", 1): Pinned({"layers": 32, "kv_heads": 8, "seq": 8192}, 1_073_741_824, "bytes"),
    # 2 × 40 × 16 × 128 × 2 × 8,192 = 2.5 GiB
    ("bug-gib-printed-as-gb-fix", 2): Pinned({"layers": 40, "kv_heads": 16, "seq": 8192}, 2_684_354_560, "bytes"),
    # (4 × 120 − 26) / 1.5 = 302.7
    ("bug-tp-pool-once-fix", 1): Pinned({"params_b": 13, "tp": 4, "cap_gb": 120, "kv_gb": 1.5}, 302, "requests"),
    # (4 × 64 − 26) / 2.5 = 92 exactly
    ("bug-tp-pool-once-fix", 2): Pinned({"params_b": 13, "tp": 4, "cap_gb": 64, "kv_gb": 2.5}, 92, "requests"),
    # ------------------------------------------------------------------ cost per token
    # 128 × 40 = 5,120 tokens/s × 3,600 = 18,432,000 an hour; $2 / that × 10^6
    ("cost-per-million-output", 1): Pinned(
        {"price": 2, "batch": 128, "per_req": 40}, 0.10850694444444445, "count"),
    # 128 × 30 = 3,840 × 3,600 = 13,824,000; $4 / that × 10^6
    ("cost-per-million-output", 2): Pinned(
        {"price": 4, "batch": 128, "per_req": 30}, 0.28935185185185186, "count"),
    # 128 sequences every 25 × 3 = 75 ms: 1,706.67 tokens/s × 3,600 = 6,144,000; $2 / that
    ("cost-batch-tradeoff", 1): Pinned(
        {"price": 2, "b1": 16, "mult": 8, "t1_ms": 25, "growth": 3}, 0.3255208333333333, "count"),
    # 128 every 60 ms: 2,133.33 × 3,600 = 7,680,000; $3 / that
    ("cost-batch-tradeoff", 2): Pinned(
        {"price": 3, "b1": 16, "mult": 8, "t1_ms": 20, "growth": 3}, 0.390625, "count"),
    # 8 × $2.50 = $20 an hour; 5,000 × 3,600 = 18,000,000 tokens; 20 / 18
    ("cost-tp8-node", 1): Pinned({"price": 2.5, "tps": 5000}, 1.111111111111111, "count"),
    # 8 × $2 = $16; 8,000 × 3,600 = 28,800,000; 16 / 28.8
    ("cost-tp8-node", 2): Pinned({"price": 2, "tps": 8000}, 0.5555555555555556, "count"),
    # 40 % of 2,000 = 800 tokens/s × 3,600 = 2,880,000; $4 / that
    ("cost-idle-capacity", 1): Pinned({"price": 4, "tps": 2000, "load_pct": 40}, 1.388888888888889, "count"),
    # 60 % of 5,000 = 3,000 × 3,600 = 10,800,000; $3 / that
    ("cost-idle-capacity", 2): Pinned({"price": 3, "tps": 5000, "load_pct": 60}, 0.2777777777777778, "count"),
    # 0.4 × 312e12 = 124.8e12 FLOP/s / (2 × 14e9) = 4,457.14 tokens/s × 3,600; $4 / that
    ("cost-input-tokens", 1): Pinned(
        {"params_b": 14, "price": 4, "peak_tflops": 312, "mfu_pct": 40}, 0.2492877492877493, "count"),
    # 0.4 × 989e12 = 395.6e12 / 16e9 = 24,725 tokens/s × 3,600 = 89,010,000; $3 / that
    ("cost-input-tokens", 2): Pinned(
        {"params_b": 8, "price": 3, "peak_tflops": 989, "mfu_pct": 40}, 0.033704078193461405, "count"),
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
    ("paged-block-bytes", 1, "640 KiB", "forgot-kv-factor"),
    ("paged-blocks-per-sequence", 1, "126", "rounded-down-count"),
    ("paged-last-block-waste", 1, "2.5 MiB", "complement-fraction"),  # 40 × 1 × 65,536 B
    ("paged-last-block-waste", 1, "1.9375 MiB", "forgot-requests"),  # 31 × 65,536 B
    ("paged-pool-blocks", 1, "21323", "ignored-memory-utilization"),  # (80 GiB − 30 GB) / 2,621,440
    ("paged-pool-blocks", 1, "27965", "forgot-weights"),  # (72 GiB − 4 GB) / 2,621,440
    ("paged-pool-blocks", 1, "16021", "capacity-gib-as-gb"),  # (72 GB − 30 GB) / 2,621,440
    # 47,309,411,328 B over one token's 2 × 40 × 8 × 128 × 2 = 163,840 B: 288,753 tokens
    ("paged-pool-blocks", 1, "288753", "per-token-not-total"),
    ("paged-max-concurrent", 1, "302", "ignored-block-rounding"),  # 2,600 × 256 / 2,200
    ("prefix-cache-reusable-tokens", 1, "1014", "partial-block-reused"),
    ("prefix-cache-flops-saved", 1, "143.36 TFLOP", "ignored-hit-rate"),
    ("prefix-cache-mean-ttft", 1, "339.2 ms", "ignored-hit-rate"),  # 230 + 1,024 × 16e9 / 150e12
    ("prefix-cache-mean-ttft", 1, "557.7 ms", "prefix-hit-ignored"),  # 230 + 3,072 × ...
    ("spec-expected-tokens", 1, "1.7731", "spec-forgot-bonus-token"),
    ("spec-expected-tokens", 1, "3.8", "spec-independent-acceptance"),  # 4 × 0.7 + 1
    ("spec-expected-tokens", 1, "5", "spec-all-accepted"),
    ("spec-speedup", 1, "2.952", "spec-free-draft"),
    ("spec-verify-compute-bound-batch", 1, "295", "spec-forgot-verify-tokens"),
    ("mla-latent-per-request", 1, "1.072 GiB", "mla-latent-doubled"),  # 2 × 575,668,224 B
    ("mla-latent-per-request", 1, "488 MiB", "mla-forgot-rope"),  # 61 × 512 × 2 × 8,192
    # expanded per head: a key of 128 (nope) + 64 (rope) = 192 and a value of 128, so
    # 128 × (192 + 128) = 40,960 elements a layer and token; 61 × 40,960 × 2 B × 8,192
    # = 40,936,407,040 B = 38.125 GiB
    ("mla-latent-per-request", 1, "38.125 GiB", "mla-as-mha"),
    ("mla-vs-gqa-per-token", 1, "3.56", "forgot-kv-factor"),
    ("mla-vs-gqa-per-token", 1, "8", "mla-forgot-rope"),  # 4,096 / 512
    ("mla-vs-gqa-per-token", 1, "0.1406", "inverted-ratio"),  # 576 / 4,096
    ("mla-tp-per-gpu", 1, "17.16 MiB", "mla-split-by-tp"),  # 137.25 MiB / 8
    ("moe-batch1-step-floor", 1, "25.07 ms", "moe-read-all-experts"),  # (4 + 16 × 5)e9 / 3.35e12
    ("moe-batch1-step-floor", 1, "2.985 ms", "moe-forgot-shared"),  # 10e9 / 3.35e12
    ("moe-experts-touched", 1, "12", "moe-picks-not-distinct"),
    ("kv-int4-bits-per-element", 1, "4", "forgot-quant-scales"),
    ("kv-int4-bits-per-element", 1, "0.625", "bits-vs-bytes"),
    ("kv-int4-capacity-gain", 1, "4", "forgot-quant-scales"),
    ("tp-kv-per-gpu-preset", 1, "40 MiB", "tp-split-past-kv-heads"),  # 640 MiB / 16
    ("tp-kv-per-gpu-preset", 1, "640 MiB", "forgot-tp-split"),
    ("tp-sequences-per-gpu-preset", 1, "398", "ignored-memory-utilization"),  # all 141 GiB
    ("tp-sequences-per-gpu-preset", 1, "406", "forgot-weights"),  # 136.26e9 / 335,544,320
    ("tp-sequences-per-gpu-preset", 1, "44", "forgot-tp-split"),  # 353.48 / 8
    ("tp-sequences-per-gpu-preset", 1, "325", "capacity-gib-as-gb"),  # (126.9e9 − 17.65e9) / ...
    ("disagg-kv-transfer-bytes", 1, "224 MiB", "disagg-counted-output"),  # × (4,096 + 3,072)
    ("disagg-kv-transfer-bytes", 1, "64 MiB", "forgot-kv-factor"),
    ("disagg-link-time", 1, "0.64 ms", "bits-vs-bytes"),
    ("littles-law-concurrency", 1, "5", "inverted-ratio"),
    ("littles-law-latency", 1, "0.15625 s", "inverted-ratio"),
    ("goodput-both-slos", 1, "20", "throughput-not-goodput"),
    ("goodput-both-slos", 1, "16.4", "counted-both-misses-twice"),  # 20 × (1 − 0.18)
    ("mean-tpot-hides-stalls", 1, "25 ms", "typical-gap-not-mean"),
    ("mean-tpot-hides-stalls", 1, "43.5 ms", "first-token-gap"),  # 2,175 / 50
    ("percentile-nearest-rank", 2, "110", "rounded-down-count"),
    ("decode-tpot-tp-preset", 1, "28.85 ms", "forgot-kv-reads"),  # 35.3e9 B / 1.2234e12 B/s
    ("decode-tpot-tp-preset", 1, "18.63 ms", "ignored-mbu"),  # 37.98e9 B / 2.039e12 B/s
    ("decode-tpot-tp-preset", 1, "496.8 ms", "weights-read-per-sequence"),  # 16 × 31.05 ms
    ("decode-tpot-tp-preset", 1, "124.2 ms", "forgot-tp-split"),  # 4 × 31.05 ms
    ("prefill-ttft-tp-preset", 1, "1545 ms", "prefill-forgot-attention"),  # weights' FLOPs only
    ("prefill-ttft-tp-preset", 1, "997.3 ms", "ignored-utilization"),  # at 312 TFLOP/s
    ("prefill-ttft-tp-preset", 1, "6649 ms", "forgot-tp-split"),  # 4 × 1,662 ms
    ("bug-query-heads-fix", 1, "12.25 GiB", "query-heads"),  # the script's number: × 7
    ("bug-query-heads-fix", 1, "0.875 GiB", "forgot-kv-factor"),
    ("bug-hidden-size-fix", 1, "27", "hidden-size"),  # 120e9 / (2 × 32 × 4,096 × 2 × 8,192)
    ("bug-mla-latent-twice-fix", 1, "1.072 GiB", "mla-latent-doubled"),
    ("bug-sliding-window-fix", 1, "4.5 GiB", "ignored-sliding-window"),  # 4,096 × 36 × 32,768
    ("bug-sliding-window-fix", 1, "576 MiB", "window-on-every-layer"),  # 4,096 × 36 × 4,096
    ("bug-gib-printed-as-gb-fix", 1, "1.074 GiB", "gb-vs-gib"),
    ("bug-tp-pool-once-fix", 1, "62", "kv-pool-sized-once"),  # (120 − 26) / 1.5
    ("bug-tp-pool-once-fix", 1, "75", "forgot-tp-split"),  # (120 − 6.5) / 1.5
    ("cost-per-million-output", 1, "13.9", "cost-one-stream-rate"),  # $2 / (40 × 3,600) × 10^6
    ("cost-per-million-output", 1, "390.6", "cost-price-per-second"),  # $2 / 5,120 × 10^6
    ("cost-per-million-output", 1, "1.085e-7", "cost-per-token-not-million"),
    ("cost-batch-tradeoff", 1, "0.1085", "cost-ignored-step-growth"),  # 128 every 25 ms
    ("cost-batch-tradeoff", 1, "0.868", "cost-used-other-batch"),  # 16 every 25 ms
    ("cost-tp8-node", 1, "0.139", "cost-one-gpu-price"),  # $2.50 / 18,000,000 × 10^6
    ("cost-tp8-node", 1, "8.89", "cost-tokens-per-gpu"),  # $20 / (625 × 3,600) × 10^6
    ("cost-idle-capacity", 1, "0.556", "cost-ignored-idle"),  # $4 / (2,000 × 3,600) × 10^6
    ("cost-idle-capacity", 1, "0.222", "cost-load-wrong-way"),  # 0.556 × 0.4
    ("cost-input-tokens", 1, "0.0997", "ignored-utilization"),  # at the full 312 TFLOP/s
    ("cost-input-tokens", 1, "0.1246", "flops-2x"),  # one FLOP per parameter
    ("cost-input-tokens", 1, "897.4", "cost-price-per-second"),  # $4 / 4,457.14 × 10^6
]
# fmt: on


@pytest.mark.parametrize(("question_id", "seed"), list(PINNED))
def test_a_serving_template_draws_the_answer_worked_out_by_hand(deck, question_id, seed):
    assert_draw_is_pinned(deck, question_id, seed, PINNED[question_id, seed])


def test_every_serving_template_is_pinned_for_two_seeds(deck):
    templates = serving_templates(deck)
    assert_each_pinned_twice(templates, PINNED)


@pytest.mark.parametrize(("question_id", "seed", "answer", "mistake"), MISTAKES)
def test_a_wrong_answer_to_a_serving_template_is_named(deck, question_id, seed, answer, mistake):
    verdict = graded(deck, question_id, seed, answer)
    assert verdict.correct is False
    assert verdict.misconception == mistake


def test_mla_expanded_heads_are_sized_from_deepseek_v3s_config(deck):
    # DeepSeek-V3's config.json: 128 heads, qk_nope_head_dim 128, qk_rope_head_dim 64,
    # v_head_dim 128. Expanded, a head's key is 128 + 64 = 192 wide and its value 128, so a
    # layer and token hold 128 × (192 + 128) = 24,576 + 16,384 = 40,960 elements, against
    # the 512 + 64 = 576 MLA caches: 40,960 / 576 = 71.1.
    instance = make_instance(deck.get("mla-latent-per-request"), 1)
    wrong = {m.id: m.value for m in instance.misconceptions}
    assert wrong["mla-as-mha"] == 40_936_407_040  # 61 × 40,960 × 2 B × 8,192 tokens
    for qid in ("mla-vs-gqa-per-token", "mla-what-it-caches", "mla-cache-contents"):
        question = deck.get(qid)
        text = " ".join(
            str(getattr(question, f, "") or "") for f in ("explanation", "answer", "options")
        )
        assert "40,960" in text and "71" in text, qid
        assert "32,768" not in text and "57 times" not in text, qid
