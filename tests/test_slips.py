"""The slips lint derives from a template's formula: which wrong answers, by which names."""

from __future__ import annotations

from drill.bank.schema import question_adapter
from drill.kinds.numeric_draw import draw_numeric
from drill.kinds.numeric_slips import derive, slip_draws


def question(**data):
    base = {"id": "fx-slips", "topic": "kv-cache", "solution": ["-"], "kind": "numeric"}
    return question_adapter().validate_python({**base, "prompt": "?", **data})


LATENCY = question(
    prompt="{ttft_ms} ms, then {tpot_ms} ms a token; {n_tokens} tokens?",
    params={
        "ttft_ms": {"choices": [200, 400]},
        "tpot_ms": {"choices": [10, 20]},
        "n_tokens": {"choices": [64, 256]},
    },
    derived={"decode_ms": "(n_tokens - 1) * tpot_ms"},
    answer="(ttft_ms + decode_ms) / 1000",
    unit="seconds",
)


def names(q, shown):
    return [name for name, _ in derive(q, set(shown))[1]]


def test_the_slips_of_a_latency_formula_in_order():
    assert names(LATENCY, ["ttft_ms", "tpot_ms", "n_tokens"]) == [
        # n_tokens sits next to a literal 1 in a sum: a count that can be off by one
        "count n_tokens -> n_tokens-1",
        "count n_tokens -> n_tokens+1",
        # each term of each sum, the hidden decode_ms written out in place
        "drop term ttft_ms",
        "drop term decode_ms",
        "drop term n_tokens",
        "drop term 1",
        # each factor of each product (not a sum), then the product doubled and halved
        "drop factor 1000",
        "double answer",
        "halve answer",
        "drop factor tpot_ms",
        "double decode_ms",
        "halve decode_ms",
        # two givens whose names end in the same word
        "swap tpot_ms and ttft_ms",
        # the unit slips of a time
        "answer x1000",
        "answer /1000",
    ]


def test_slips_with_the_same_values_on_every_draw_are_one_slip():
    draws = [draw_numeric(LATENCY, seed) for seed in range(20)]
    found, _ = slip_draws(LATENCY, {"ttft_ms", "tpot_ms", "n_tokens"}, draws)
    assert [item.slip.names for item in found] == [
        ("count n_tokens -> n_tokens-1",),
        # one gap too many, by either road
        ("count n_tokens -> n_tokens+1", "drop term 1"),
        ("drop term ttft_ms",),
        ("drop term decode_ms",),
        ("drop term n_tokens",),
        # ms not turned into s, by either road
        ("drop factor 1000", "answer x1000"),
        ("double answer",),
        ("halve answer",),
        ("drop factor tpot_ms",),
        ("double decode_ms",),
        ("halve decode_ms",),
        ("swap tpot_ms and ttft_ms",),
        ("answer /1000",),
    ]
    # seed 0 draws 200 ms, 10 ms, 64 tokens (worked from the draw rule): one gap less is
    # 0.2 + 62 x 0.01 s
    assert found[0].values[0] == 0.82


KV = question(
    prompt="{layers} layers, {q_heads} query heads sharing {kv_heads} KV heads, {seq} tokens?",
    params={
        "layers": {"choices": [32]},
        "kv_heads": {"choices": [8]},
        "group": {"choices": [4]},
        "seq": {"choices": [4096]},
    },
    derived={
        "q_heads": "kv_heads * group",
        "per_token": "2 * layers * kv_heads * 128 * 2",
        "kv": "per_token * seq",
    },
    answer="kv",
    unit="bytes",
)


def test_a_product_spread_over_derived_values_is_seen_whole():
    found = names(KV, ["layers", "q_heads", "kv_heads", "seq"])
    # per_token is written out inside kv: its factors are kv's factors
    assert found[:9] == [
        "drop factor per_token",
        "drop factor 2 in kv",
        "drop factor layers",
        "drop factor kv_heads",
        "drop factor 128",
        "drop factor 2 in kv (2)",
        "drop factor seq",
        "double kv",
        "halve kv",
    ]
    # q_heads is shown, so it is a given and never written out: using it for kv_heads is
    # the query-head mistake
    assert "swap kv_heads and q_heads" in found


def test_a_capacity_in_gb_can_be_read_as_gib():
    q = question(
        prompt="{cap_gb} GB, {per_request} bytes a request?",
        params={"cap_gb": {"choices": [80]}, "per_request": {"choices": [10**9]}},
        answer="floor(cap_gb * 10**9 / per_request)",
        unit="requests",
    )
    assert names(q, ["cap_gb", "per_request"])[-1] == "read cap_gb as GiB"
