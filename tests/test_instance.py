"""question + seed -> Instance: deterministic draws and exactly rendered text."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter

from drill.bank.loader import load_bank
from drill.bank.schema import Question, Tolerance
from drill.errors import BankError
from drill.kinds import make_instance
from drill.kinds.instance import InstanceError
from drill.kinds.numeric_draw import draw_numeric
from drill.quantities.render import format_value, placeholders, render
from drill.serving.kvmath import ModelShape

BANKS = Path(__file__).parent / "banks"

CATALOGUE = {
    "forgot-kv-factor": SimpleNamespace(
        name="forgot the K+V factor", feedback="Count both K and V {tensors}."
    ),
    "gb-vs-gib": SimpleNamespace(name="GB read as GiB", feedback="Decimal vs binary units."),
}


@pytest.fixture(scope="module")
def bank():
    return load_bank([BANKS / "good"])


def question(data: dict):
    base = {"topic": "kv-cache", "solution": ["-"], "unit": "bytes", "kind": "numeric"}
    return TypeAdapter(Question).validate_python({**base, **data})


def test_worked_example_renders_exactly(bank):
    q = bank.get("fx-kv-request")
    inst = make_instance(q, 3, catalogue=CATALOGUE)
    assert inst.question_id == "fx-kv-request"
    assert inst.kind == "numeric"
    assert inst.seed == 3
    assert inst.text == (
        "A model has 32 layers, 8 KV heads of dimension 128 and an FP16 cache (2 bytes). "
        "How many bytes of KV cache does one request of 4,096 tokens hold?"
    )
    assert inst.expected == 536870912
    assert inst.unit == "bytes"
    assert inst.show_as == "GiB"
    assert inst.tolerance == Tolerance(rel=0.01)
    assert inst.params == {
        "layers": 32,
        "kv_heads": 8,
        "head_dim": 128,
        "seq": 4096,
        "dtype_bytes": 2,
        "per_token": 131072,
    }
    assert inst.solution == (
        "Per token: 2 × 32 × 8 × 128 × 2 = 131,072 bytes.",
        "Per request: 131,072 × 4,096 = 536,870,912 bytes = 0.5 GiB.",
    )
    # the template's own hint, then its formula in words and with this draw's numbers
    assert inst.hints == (
        "Count K and V: {2} tensors per layer.",
        "The formula: 2 (K and V) × layers × KV heads × head_dim × bytes per element × "
        "tokens, in bytes.",
        "With this draw's numbers: 2 × 32 × 8 × 128 × 2 × 4,096.",
    )
    first, second = inst.misconceptions
    assert (first.id, first.name, first.value) == (
        "forgot-kv-factor",
        "forgot the K+V factor",
        268435456,
    )
    # the catalogue's text is generic and shown as written, braces and all
    assert first.feedback == "Count both K and V {tensors}."
    # the question's own feedback overrides the catalogue's and uses the draw's numbers
    assert second.value == pytest.approx(576460752.303423)
    assert second.feedback == "That is 0.576 GB read as GiB; the answer is 0.5 GiB."


def test_same_id_and_seed_give_the_same_instance(bank):
    for qid in bank.ids:
        q = bank.get(qid)
        for seed in (0, 1, 12345, 2**40):
            assert make_instance(q, seed, catalogue=CATALOGUE) == make_instance(
                q, seed, catalogue=CATALOGUE
            )


def test_seeds_cover_the_range_on_its_steps(bank):
    q = bank.get("fx-concurrent")
    seen_requests = set()
    seen_gib = set()
    for seed in range(200):
        inst = make_instance(q, seed)
        seen_requests.add(inst.params["requests"])
        seen_gib.add(inst.params["per_request_gib"])
        assert inst.expected == inst.params["requests"] * inst.params["per_request_gib"] * 2**30
    assert seen_requests == {2, 4, 6, 8}
    assert seen_gib == {0.25, 0.5, 0.75, 1}
    # the draw depends on the seed, and on the id: the same seed elsewhere differs
    draws = {(make_instance(q, s).params["requests"]) for s in range(10)}
    assert len(draws) > 1


def test_range_of_decimals_reads_as_written():
    q = question(
        {
            "id": "q-dec",
            "prompt": "{x}",
            "params": {"x": {"range": [0.1, 0.5], "step": 0.1}},
            "answer": "x",
        }
    )
    values = {draw_numeric(q, s).values["x"] for s in range(200)}
    assert values == {0.1, 0.2, 0.3, 0.4, 0.5}


def test_rendered_ranged_text(bank):
    q = bank.get("fx-concurrent")
    for seed in range(20):
        inst = make_instance(q, seed)
        n, gib = inst.params["requests"], inst.params["per_request_gib"]
        each = f"{gib:g} GiB"
        assert inst.text == f"{n} requests each hold {each} of KV cache. How much in total?"
        assert inst.solution == (f"{n} × {each} = {n * gib:.3g} GiB",)


def test_preset_params_expose_model_fields():
    shape = ModelShape(
        name="tiny",
        display_name="Tiny-1B",
        layers=16,
        q_heads=32,
        kv_heads=8,
        head_dim=64,
        hidden=2048,
        dtype="bf16",
        params=1_200_000_000,
    )
    q = question(
        {
            "id": "q-preset",
            "prompt": "{m} has {m_layers} layers",
            "params": {"m": {"preset": ["tiny"]}, "seq": {"choices": [1000]}},
            "derived": {"kv": "2 * m_layers * m_kv_heads * m_head_dim * m_dtype_bytes * seq"},
            "answer": "kv",
        }
    )
    inst = make_instance(q, 0, presets={"tiny": shape})
    assert inst.text == "Tiny-1B has 16 layers"
    assert inst.expected == 2 * 16 * 8 * 64 * 2 * 1000
    assert inst.params["m_q_heads"] == 32
    assert inst.params["m_hidden"] == 2048
    assert inst.params["m_params"] == 1_200_000_000
    assert inst.params["m_dtype_bytes"] == 2


def test_unknown_preset_names_the_field():
    q = question(
        {"id": "q-np", "prompt": "{m}", "params": {"m": {"preset": ["nope"]}}, "answer": "1"}
    )
    with pytest.raises(InstanceError) as info:
        make_instance(q, 0, presets={})
    assert info.value.field == ("params", "m", "preset")
    assert str(info.value) == "q-np: params.m.preset: unknown model preset 'nope'"


def test_gpu_params_expose_the_spec_sheet_and_render_the_display_name():
    q = question(
        {
            "id": "q-gpu",
            "prompt": "{g}: {g_memory:GiB}, {g_bandwidth:TB/s}, {g_flops:TFLOP/s}",
            "params": {"g": {"gpu": ["h100"]}},
            "answer": "g_memory * 9 / 10",
            "solution": ["{g} has {g_memory} bytes"],
        }
    )
    inst = make_instance(q, 0)
    assert inst.text == "H100 SXM: 80 GiB, 3.35 TB/s, 989 TFLOP/s"
    assert inst.solution == ("H100 SXM has 85,899,345,920 bytes",)
    assert inst.params == {
        "g": "H100 SXM",
        "g_memory": 85_899_345_920,
        "g_bandwidth": 3_350_000_000_000,
        "g_flops": 989_000_000_000_000,
    }
    assert inst.expected == 77_309_411_328


def test_a_gpu_param_draws_each_of_its_keys():
    q = question(
        {
            "id": "q-gpus",
            "prompt": "{g}",
            "params": {"g": {"gpu": ["h200", "a100-80gb", "l4"]}},
            "answer": "g_memory",
        }
    )
    names = {make_instance(q, seed).params["g"] for seed in range(40)}
    assert names == {"H200", "A100 80GB SXM", "L4"}


def test_preset_params_expose_active_parameters():
    q = question(
        {
            "id": "q-active",
            "prompt": "{m}",
            "params": {"m": {"preset": ["mixtral-8x7b"]}, "d": {"preset": ["llama-3-8b"]}},
            "answer": "m_active + d_active",
        }
    )
    inst = make_instance(q, 0)
    assert inst.params["m_params"] == 46_700_000_000
    assert inst.params["m_active"] == 12_900_000_000
    assert inst.params["d_active"] == inst.params["d_params"] == 8_030_000_000


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        (["h100", "h1000"], "unknown GPU 'h1000'; did you mean h100, h200, h100-nvl?"),
        (["H200"], "unknown GPU 'H200'; write it 'h200'"),
        (["tpu-v5"], "unknown GPU 'tpu-v5'; known: h200-nvl, h200, gh200"),
    ],
)
def test_an_unknown_gpu_key_is_refused_when_the_question_is_read(keys, message):
    from pydantic import ValidationError

    with pytest.raises(ValidationError) as info:
        question({"id": "q-g", "prompt": "{g}", "params": {"g": {"gpu": keys}}, "answer": "1"})
    assert message in str(info.value)


def test_unknown_placeholder_names_question_and_field():
    q = question(
        {"id": "q-ph", "prompt": "ok", "answer": "3", "solution": ["fine", "uses {nothing}"]}
    )
    with pytest.raises(BankError) as info:
        make_instance(q, 0)
    assert str(info.value) == "q-ph: solution[1]: unknown placeholder {nothing}"


def test_expression_error_names_the_field():
    q = question(
        {
            "id": "q-div",
            "prompt": "{n}",
            "params": {"n": {"choices": [0]}},
            "derived": {"inv": "1 / n"},
            "answer": "inv",
        }
    )
    with pytest.raises(InstanceError) as info:
        make_instance(q, 0)
    assert info.value.field == ("derived", "inv")
    assert str(info.value) == "q-div: derived.inv: division by zero"


def test_choice_options_are_shuffled_and_the_right_one_tracked(bank):
    q = bank.get("fx-which-heads")
    orders = set()
    for seed in range(60):
        inst = make_instance(q, seed)
        assert sorted(inst.options) == sorted(o.text for o in q.options)
        assert [inst.options[i] for i in inst.correct_options] == ["KV heads"]
        assert inst.option_why[inst.correct_options[0]] == "only K and V are cached"
        orders.add(inst.options)
    assert len(orders) == 6  # every arrangement of three options turns up


def test_order_items_are_shuffled_never_solved(bank):
    q = bank.get("fx-request-path")
    for seed in range(100):
        inst = make_instance(q, seed)
        assert inst.items != tuple(q.items)
        assert [inst.items[i] for i in inst.correct_order] == [
            "tokenize",
            "prefill",
            "decode",
            "detokenize",
        ]


def test_concept_copies_answer_points_and_evidence(bank):
    inst = make_instance(bank.get("fx-why-cache"), 5)
    assert inst.text == "Why keep a KV cache at all?"
    assert inst.answer_text.startswith("Without it every decode step")
    assert inst.key_points == (("avoids recomputing the prefix", ("recompute", "recomputing")),)
    assert inst.evidence == ("cache_beats_recompute",)
    assert inst.expected is None


# ------------------------------------------------------------------ placeholder rendering


def test_format_rules():
    assert format_value(536870912) == "536,870,912"
    assert format_value(0.5) == "0.5"
    assert format_value(3.14159) == "3.142"
    assert format_value(12345.678) == "12,346"
    assert format_value(268435456.0) == "268,435,456"
    assert format_value("Llama-3-8B") == "Llama-3-8B"
    assert format_value(536870912, "GiB") == "0.5 GiB"
    assert format_value(0.0123, "ms") == "12.3 ms"
    assert format_value(3.35e12, "TB/s") == "3.35 TB/s"
    assert format_value(0.75, "%") == "75%"
    assert format_value(3.14159, ".2f") == "3.14"
    assert format_value(12345.0, ",") == "12,345"


def test_render_braces_and_errors():
    assert render("{{x}} is {x:,}", {"x": 4096}) == "{x} is 4,096"
    with pytest.raises(BankError, match="unknown placeholder {y}"):
        render("{y}", {"x": 1})
    with pytest.raises(BankError, match="lone '}'"):
        render("a } b", {})
    # a dotted name is one name looked up whole, never an attribute of a value
    with pytest.raises(BankError, match=r"unknown placeholder \{x\.real\}"):
        render("{x.real}", {"x": 1})
    assert render("{gpu.h100.bandwidth}", {"gpu.h100.bandwidth": "3.35 TB/s"}) == "3.35 TB/s"
    with pytest.raises(BankError, match="must be a name"):
        render("{x[0]}", {"x": 1})
    with pytest.raises(BankError, match="neither a unit nor a number format"):
        render("{x:GiZ}", {"x": 1})


@given(st.text())
def test_escaped_text_renders_back_unchanged(text):
    escaped = text.replace("{", "{{").replace("}", "}}")
    assert placeholders(escaped) == []
    assert render(escaped, {}) == text


@given(st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True), st.integers(-(10**12), 10**12))
def test_a_placeholder_is_replaced_by_its_value(name, value):
    assert render(f"<{{{name}}}>", {name: value}) == f"<{value:,}>"
