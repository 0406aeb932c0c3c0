"""What the deck tests share: a template's draw pinned by hand, the check that a draw gives
it, the check that every template of some decks is pinned twice, and the grader's verdict
on an answer as typed. Each test file keeps its own literals (params, answers, mistakes);
only the checking lives here."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

import pytest

from drill.bank.loader import builtin_bank_files, read_bank
from drill.bank.schema import NumericQuestion
from drill.kinds import make_instance
from drill.kinds.grade import grade


class Pinned(NamedTuple):
    params: dict  # the draw's params (not its derived values)
    expected: float  # in the base unit of `unit`
    unit: str


def read_decks(names: Iterable[str] | None = None):
    """The built-in deck, or only the deck files named (their ids are unique deck-wide:
    tests/test_bank.py checks), read without a problem."""
    wanted = None if names is None else set(names)
    files = [p for p in builtin_bank_files() if wanted is None or p.name in wanted]
    bank, problems = read_bank(files)
    assert [str(p) for p in problems] == []
    return bank


def numeric_templates(deck, in_file) -> list[str]:
    """The numeric templates of `deck` whose file name `in_file` accepts."""
    return [
        q.id
        for q in deck
        if isinstance(q, NumericQuestion) and in_file(deck.source(q.id).path.name)
    ]


def assert_draw_is_pinned(deck, question_id: str, seed: int, want: Pinned) -> None:
    """The draw's params, unit and answer are the ones worked out by hand, and the answer
    typed in full (a share as a percentage) is graded right."""
    instance = make_instance(deck.get(question_id), seed)
    drawn = {name: instance.params[name] for name in deck.get(question_id).params}
    assert drawn == want.params
    assert instance.unit == want.unit
    assert instance.expected == pytest.approx(want.expected, rel=1e-12)
    # a share is typed as a percentage, as a person writes it
    typed = f"{want.expected * 100!r}%" if want.unit == "fraction" else repr(want.expected)
    assert grade(instance, typed).correct is True


def assert_each_pinned_twice(templates: list[str], pinned: Mapping[tuple[str, int], Pinned]):
    """Every template is pinned for at least two seeds, and nothing else is pinned."""
    assert templates, "these decks hold numeric templates"
    missing = [qid for qid in templates if sum(q == qid for q, _ in pinned) < 2]
    assert missing == []
    assert {qid for qid, _ in pinned} <= set(templates)


def graded(deck, question_id: str, seed: int, answer: str):
    """The grader's verdict on `answer` to the draw of `question_id` for `seed`."""
    return grade(make_instance(deck.get(question_id), seed), answer)


def ticks(found) -> list[int]:
    """The 1-based numbers of the key points (or wrong claims) a verdict marks."""
    return [i for i, hit in enumerate(found, 1) if hit]
