"""The built-in deck, drawn hard: every template over many seeds passes the lint checks."""

from __future__ import annotations

import pytest

from drill.bank.loader import builtin_bank_files, read_bank
from drill.bank.schema import NumericQuestion
from drill.kinds import make_instance
from drill.kinds.grade import grade
from drill.serving.measured import EXAMPLE_MEASURED

STRESS_SEEDS = 500


@pytest.fixture(scope="module")
def deck():
    bank, problems = read_bank(builtin_bank_files())
    assert [str(p) for p in problems] == []
    # as lint checks it: the questions drawn from the user's runs with the example run
    return bank.with_runs(EXAMPLE_MEASURED)


def test_the_deck_has_every_kind(deck):
    kinds = {q.kind for q in deck}
    assert kinds == {"numeric", "concept", "choice", "order"}


def test_every_template_passes_lint_over_many_seeds(builtin_deck_lint):
    # a problem is printed as file:line: id: message, and the status is 1
    assert builtin_deck_lint.exit_code == 0, builtin_deck_lint.output
    assert builtin_deck_lint.stderr == ""


# how a person types a value in each base unit; the number is written out in full
# when it is whole (536,870,912 B), else to 6 significant digits (0.0022806 s)
TYPED_IN_BASE_UNITS = {
    "bytes": "{} B",
    "seconds": "{} s",
    "bytes_per_s": "{} B/s",
    "flop": "{} FLOP",
    "flop_per_s": "{} FLOP/s",
    "tokens": "{} tokens",
    "tokens_per_s": "{} tokens/s",
    "requests": "{} requests",
    "requests_per_s": "{} req/s",
    "fraction": "{}",
    "flop_per_byte": "{} FLOP/B",
    "count": "{}",
}


def typed(value: float, unit: str) -> str:
    number = f"{int(value):,}" if float(value).is_integer() else f"{value:.6g}"
    return TYPED_IN_BASE_UNITS[unit].format(number)


def test_every_numeric_draw_accepts_its_answer_as_typed_and_refuses_double(deck):
    # every draw's answer, typed in its base unit the way a person writes it, is right;
    # twice that is wrong (no tolerance or named mistake is that wide)
    for question in deck:
        if not isinstance(question, NumericQuestion):
            continue
        for seed in range(0, STRESS_SEEDS, 25):
            instance = make_instance(question, seed)
            right = typed(instance.expected, instance.unit)
            assert grade(instance, right).correct is True, (question.id, seed, right)
            double = typed(2 * instance.expected, instance.unit)
            assert grade(instance, double).correct is False, (question.id, seed, double)


def test_bank_lint_says_what_it_checked(builtin_deck_lint, deck):
    numeric = sum(isinstance(q, NumericQuestion) for q in deck)
    assert builtin_deck_lint.stdout == (
        f"ok: {len(deck)} questions in {len(deck.files)} files, "
        f"{numeric} numeric templates × 500 draws\n"
    )
