"""The built-in deck, drawn hard: every template over many seeds passes the lint checks."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from drill.bank import builtin_bank_files, read_bank
from drill.cli import cli
from drill.grade import grade
from drill.instance import make_instance
from drill.lint import lint_bank
from drill.schema import NumericQuestion

STRESS_SEEDS = 500


@pytest.fixture(scope="module")
def deck():
    bank, problems = read_bank(builtin_bank_files())
    assert [str(p) for p in problems] == []
    return bank


def test_the_deck_has_every_kind(deck):
    kinds = {q.kind for q in deck}
    assert kinds == {"numeric", "concept", "choice", "order"}


def test_every_template_passes_lint_over_many_seeds(deck):
    assert [str(p) for p in lint_bank(deck, draws=STRESS_SEEDS)] == []


def test_every_numeric_draw_grades_its_own_answer_correct(deck):
    # the exact expected value, typed back as a plain number, is always right
    for question in deck:
        if not isinstance(question, NumericQuestion):
            continue
        for seed in range(0, STRESS_SEEDS, 25):
            instance = make_instance(question, seed)
            verdict = grade(instance, repr(instance.expected))
            assert verdict.correct is True, (question.id, seed, instance.expected)


def test_bank_lint_command_passes_on_the_deck(deck):
    result = CliRunner().invoke(cli, ["bank", "lint"])
    assert result.exit_code == 0, result.output
    numeric = sum(isinstance(q, NumericQuestion) for q in deck)
    assert result.stdout == (
        f"ok: {len(deck)} questions in {len(deck.files)} files, "
        f"{numeric} numeric templates × 200 draws\n"
    )
