"""Hints: a numeric template's formula in words, then with the draw's numbers, after its own
hint; a hint on every other question, which lint asks for."""

from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import TypeAdapter

from drill.bank.loader import load_default_bank
from drill.bank.schema import Question
from drill.cli import cli
from drill.kinds import make_instance
from drill.kinds.hints import formula_hints
from drill.kinds.numeric_draw import draw_numeric


@pytest.fixture(scope="module")
def deck():
    return load_default_bank(cached=False)


def test_the_kv_template_gives_its_own_hint_then_its_formula_in_words_and_numbers(deck):
    instance = make_instance(deck.get("kv-bytes-per-request"), 2230)
    # the prompt's numbers, read by hand: 32 layers, 8 KV heads, dimension 128, 2-byte
    # elements, 4,096 tokens
    assert "has 32 layers" in instance.text and "share 8 KV heads" in instance.text
    assert "dimension 128" in instance.text and "2-byte elements" in instance.text
    assert "holds 4,096 tokens" in instance.text
    assert instance.hints == (
        "Every layer keeps a K and a V vector for each KV head (not each query head) and each "
        "token held.",
        "The formula: 2 (K and V) × layers × KV heads × head_dim × bytes per element × "
        "tokens, in bytes.",
        "With this draw's numbers: 2 × 32 × 8 × 128 × 2 × 4,096.",
    )


def test_a_template_without_its_own_hint_gives_two(deck):
    instance = make_instance(deck.get("ttft-with-prefix-hit"), 1)
    # 3,072-token prompts, 2,048 of them cached, an 8B model at 150 TFLOP/s, 160 ms queued
    assert instance.text.startswith("Prompts are 3,072 tokens, of which the first 2,048")
    assert "The 8B dense model prefills at an effective 150 TFLOP/s" in instance.text
    assert "queues for 160 ms" in instance.text
    assert instance.hints == (
        "The formula: queue wait (ms) / 1,000 + 2 (FLOPs per parameter per token) × "
        "parameters (billions) × 10^9 × (prompt tokens − cached prefix tokens) / "
        "(effective TFLOP/s × 10^12), in seconds.",
        "With this draw's numbers: 160 / 1,000 + 2 × 8 × 10^9 × (3,072 − 2,048) / "
        "(150 × 10^12).",
    )


def numeric(**fields):
    base = {"id": "q-t", "kind": "numeric", "topic": "kv-cache", "solution": ["-"], "unit": "bytes"}
    return TypeAdapter(Question).validate_python({**base, **fields})


def test_derived_values_the_prompt_shows_stay_names_and_the_rest_are_written_out():
    question = numeric(
        prompt="{q_heads} query heads share {kv_heads} KV heads; {layers} layers; FP16.",
        params={"kv_heads": {"choices": [8]}, "group": {"choices": [4]},
                "layers": {"choices": [32]}},
        derived={"q_heads": "kv_heads * group", "per_layer": "2 * kv_heads * 128 * 2",
                 "saved": "(q_heads - kv_heads) * per_layer * layers"},
        answer="saved",
    )  # fmt: skip
    words, numbers = formula_hints(question, draw_numeric(question, 1).values)
    assert words == (
        "The formula: (query heads − KV heads) × 2 (K and V) × KV heads × 128 × "
        "2 (bytes per element) × layers, in bytes."
    )
    assert numbers == "With this draw's numbers: (32 − 8) × 2 × 8 × 128 × 2 × 32."


def test_preset_fields_read_as_the_field_and_weights_as_bytes_per_weight():
    question = numeric(
        prompt="{m} on {cap_gb} GB.",
        params={"m": {"preset": ["llama-3-8b"]}, "cap_gb": {"choices": [80]}},
        answer="cap_gb * 10**9 - m_params * 2",
    )
    words, numbers = formula_hints(question, draw_numeric(question, 1).values)
    assert words == (
        "The formula: GPU memory (GB) × 10^9 − parameters × 2 (bytes per weight), in bytes."
    )
    assert numbers == "With this draw's numbers: 80 × 10^9 − 8,030,000,000 × 2."


def test_gpu_fields_and_active_parameters_read_as_their_field():
    question = numeric(
        prompt="{m} on {g}, {prompt} tokens.",
        params={"m": {"preset": ["mixtral-8x7b"]}, "g": {"gpu": ["h100"]},
                "prompt": {"choices": [4096]}},
        answer="2 * m_active * prompt / g_flops + m_params * 2 / g_bandwidth",
        unit="seconds",
    )  # fmt: skip
    words, numbers = formula_hints(question, draw_numeric(question, 1).values)
    assert words == (
        "The formula: 2 (FLOPs per parameter per token) × active parameters × prompt tokens / "
        "peak FLOP/s + parameters × 2 (bytes per weight) / memory bandwidth (bytes/s), "
        "in seconds."
    )
    assert numbers == (
        "With this draw's numbers: 2 × 12,900,000,000 × 4,096 / 989,000,000,000,000 + "
        "46,700,000,000 × 2 / 3,350,000,000,000."
    )


def test_a_2_beside_parameters_and_cached_prefix_tokens_reads_as_flops_per_token():
    # the cached prefix is a count of tokens, like the prompt: 2 FLOPs per parameter per token
    question = numeric(
        prompt="{params_b}B model, {shared}-token prefix.",
        params={"params_b": {"choices": [8]}, "shared": {"choices": [1024]}},
        answer="2 * params_b * 10**9 * shared",
        unit="flop",
    )
    words, numbers = formula_hints(question, draw_numeric(question, 1).values)
    assert words == (
        "The formula: 2 (FLOPs per parameter per token) × parameters (billions) × 10^9 × "
        "cached prefix tokens, in FLOPs."
    )
    assert numbers == "With this draw's numbers: 2 × 8 × 10^9 × 1,024."


def test_every_question_of_the_deck_has_a_hint(deck):
    for question in deck:
        hints = make_instance(question, 1).hints
        assert hints and all(hint.strip() for hint in hints), question.id


def test_lint_asks_for_a_hint_on_a_question_shown_as_written(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text(
        "deck: mine\n"
        "questions:\n"
        "  - id: mine-pick\n"
        "    kind: choice\n"
        "    topic: kv-cache\n"
        "    prompt: Pick.\n"
        "    options: [{text: a, correct: true}, {text: b}]\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(cli, ["bank", "lint", str(path)])
    assert result.exit_code == 1
    assert result.stdout == (
        f"{Path(path)}:3: mine-pick: hint: needs a hint: a line that points the way without "
        "giving the answer\n"
    )
