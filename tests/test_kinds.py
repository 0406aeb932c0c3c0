"""Question kinds: one registry entry per kind of the bank format, and the tolerance rule."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from drill.bank.schema import QUESTION_TYPES, Tolerance
from drill.cli import cli
from drill.errors import BankError
from drill.kinds import KINDS, kind_of
from drill.kinds.grade import grade
from drill.kinds.instance import Instance, MisconceptionValue


def test_every_kind_of_the_bank_format_has_one_kind_and_no_other():
    assert list(KINDS) == list(QUESTION_TYPES)
    assert all(KINDS[name].name == name for name in KINDS)


def test_an_unknown_kind_is_a_bank_error_naming_the_known_ones():
    with pytest.raises(BankError) as info:
        kind_of("essay")
    assert str(info.value) == (
        "unknown question kind 'essay' (known: numeric, concept, choice, order)"
    )


def test_only_the_concept_kind_is_self_rated_and_only_numeric_is_drawn():
    assert [name for name, kind in KINDS.items() if kind.self_rated] == ["concept"]
    assert [name for name, kind in KINDS.items() if kind.templated] == ["numeric"]


@pytest.mark.parametrize(
    ("tolerance", "value", "target", "accepted"),
    [
        (Tolerance.default(), 1.0099, 1.0, True),
        (Tolerance.default(), 1.0101, 1.0, False),
        (Tolerance(rel=0.05), 0.951, 1.0, True),
        (Tolerance(abs=0.5), 12.5, 12.0, True),
        (Tolerance(abs=0.5), 12.51, 12.0, False),
        (Tolerance(sig=2), 5.4e8, 536_870_912, True),
        (Tolerance(sig=2), 5.3e8, 536_870_912, False),
    ],
)
def test_tolerance_accepts(tolerance, value, target, accepted):
    assert tolerance.accepts(value, target) is accepted


def test_tolerance_as_a_relative_one():
    assert Tolerance.default().relative_to(512) == 0.01
    assert Tolerance(sig=3).relative_to(512) == pytest.approx(0.005)
    assert Tolerance(abs=2).relative_to(400) == 0.005
    assert Tolerance(abs=2).relative_to(0) == Tolerance.DEFAULT_REL


def test_tolerance_in_words():
    assert Tolerance.default().describe("bytes") == "Accepted within ±1 %."
    assert Tolerance(rel=0.025).describe(None) == "Accepted within ±2.5 %."
    assert Tolerance(abs=0.5).describe("requests") == "Accepted within ±0.5 requests."
    assert Tolerance(abs=2**20).describe("bytes") == "Accepted within ±1 MiB."
    assert Tolerance(sig=2).describe("bytes") == "Accepted to 2 significant figures."


# --- the verdict as the quiz and `kvdrill check` show it --------------------------------

KV = Instance(
    question_id="q",
    kind="numeric",
    seed=1,
    text="How many bytes?",
    topic="kv-cache",
    difficulty=1,
    expected=2**29,
    unit="bytes",
    show_as="MiB",
    solution=("Per token: 131,072 bytes.", "Per request: 536,870,912 bytes."),
    misconceptions=(
        MisconceptionValue("forgot-kv-factor", "forgot the K+V factor of 2", 2**28, "Half."),
    ),
    explanation="K and V both.",
)


def lines(instance: Instance, answer: str) -> list[str]:
    return kind_of(instance.kind).verdict_lines(instance, grade(instance, answer))


def test_a_right_number_shows_the_answer_then_how_to_get_it():
    assert lines(KV, "512 MiB") == [
        "Right: 512 MiB (536,870,912 bytes).",
        "Solution:",
        "  Per token: 131,072 bytes.",
        "  Per request: 536,870,912 bytes.",
        "K and V both.",
    ]


def test_a_bare_right_number_is_right_with_a_unit_slip():
    assert lines(KV, "512")[:2] == [
        "Right, with a unit slip: 512 MiB (536,870,912 bytes).",
        "Right number, but give the unit: 512 MiB.",
    ]


def test_a_wrong_number_names_the_answer_then_the_mistake():
    assert lines(KV, "256 MiB")[:3] == [
        "Wrong. Answer: 512 MiB (536,870,912 bytes).",
        "Mistake: forgot the K+V factor of 2.",
        "Half. You gave 256 MiB; the answer is 512 MiB.",
    ]


def test_choice_and_order_verdicts_name_the_right_numbers():
    choice = Instance(
        question_id="c", kind="choice", seed=1, text="Which?", topic="t", difficulty=1,
        options=("a", "b", "c"), option_why=(None, "Not b.", None), correct_options=(0, 2),
    )  # fmt: skip
    order = Instance(
        question_id="o", kind="order", seed=1, text="Order?", topic="t", difficulty=1,
        items=("x", "y", "z"), correct_order=(2, 0, 1),
    )  # fmt: skip
    assert lines(choice, "1 3") == ["Right: 1 and 3."]
    assert lines(choice, "2") == [
        "Wrong. Answer: 1 and 3.",
        "You chose 2; the answer is 1 and 3. Missed 1 and 3. Not b.",
    ]
    assert lines(order, "3 1 2") == ["Right: 3 1 2."]
    assert lines(order, "1 2 3") == [
        "Wrong. Answer: 3 1 2.",
        "0 of 3 in the right place. Right order: 3 1 2.",
    ]


def test_a_concept_verdict_is_the_model_answer_and_a_checklist():
    concept = Instance(
        question_id="k", kind="concept", seed=1, text="Why?", topic="t", difficulty=1,
        answer_text="Because decode rereads the cache.",
        key_points=(("rereads the cache", ("reread",)), ("memory bound", ("memory",))),
        explanation="Measured in the engine run.",
    )  # fmt: skip
    assert lines(concept, "it rereads everything") == [
        "Model answer:",
        "  Because decode rereads the cache.",
        "Key points:",
        "  [x] 1. rereads the cache",
        "  [ ] 2. memory bound",
        "Measured in the engine run.",
    ]


def test_check_shows_a_concept_verdict_as_the_quiz_does_and_the_suggested_rating():
    bank = str(Path(__file__).parent / "banks" / "good")
    args = ["check", "fx-why-cache", "--seed", "0", "--answer", "it avoids recomputing"]
    result = CliRunner().invoke(cli, [*args, "--bank", bank])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "Model answer:",
        "  Without it every decode step recomputes K and V for the whole prefix.",
        "Key points:",
        "  [x] 1. avoids recomputing the prefix",
        "Suggested rating: 3 of 4 (you judge your own answer).",
    ]
