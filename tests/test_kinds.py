"""Question kinds: one registry entry per kind of the bank format, and the tolerance rule."""

from __future__ import annotations

import pytest

from drill.errors import BankError
from drill.kinds import KINDS, kind_of
from drill.schema import QUESTION_TYPES, Tolerance


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
