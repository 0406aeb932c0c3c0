"""Which questions a mock interview asks, in which order: a pure function of the bank,
the seed and (for --focus weak) the weights of the user's weak questions.

An interviewer works problems and asks for explanations: an interview holds numeric
templates and concept questions (choice and order questions stay on sheets and in the
quiz). About half its questions are numeric. The first numeric problem is a template
with a follow-up chain (drill.kinds.chains) when the topic has one, and any template with a
chain brings its follow-ups, as many as there is room for. Problems and explanations
take turns: a problem (with its follow-ups), an explanation, the next problem, and so
on. Within each kind questions are drawn by weighted sampling without replacement
(drill.reports.sheet.weighted_sample), weight 1 unless weak questions are weighted up.

A question is drawn with `drill.reports.sheet.item_seed(seed, id)`: the interview with seed S
shows the same numbers as the sheet with seed S.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from drill.errors import BankError
from drill.kinds.chains import Lookup, chain_length, draw_chain
from drill.kinds.instance import Instance
from drill.reports.sheet import UNSEEN_WEIGHT, item_seed, weighted_sample

KINDS = ("numeric", "concept")


@dataclass(frozen=True)
class Turn:
    """One question of an interview as it is asked."""

    number: int  # 1-based, in the order asked
    instance: Instance
    ask: str | None = None  # a follow-up's words; None: the question's own text
    follow_up_of: int | None = None  # the number of the problem it follows up
    drawn_seed: int | None = None  # the seed that alone reproduces it (None: a follow-up)

    @property
    def question_id(self) -> str:
        return self.instance.question_id

    @property
    def topic(self) -> str:
        return self.instance.topic


def _order(questions: Sequence[Any], seed: int, tag: str, weights: Mapping[str, float]):
    """Every question, in a weighted random order (seeded; bank order does not matter)."""
    rng = random.Random(f"kvdrill-interview:{seed}:{tag}")
    ordered = sorted(questions, key=lambda q: q.id)
    return weighted_sample(ordered, len(ordered), lambda q: weights.get(q.id, UNSEEN_WEIGHT), rng)


def plan_interview(
    questions: Sequence[Any],
    n: int,
    seed: int,
    lookup: Lookup,
    make_instance: Callable[[Any, int], Instance],
    *,
    weights: Mapping[str, float] | None = None,
) -> list[Turn]:
    """The `n` questions of an interview (fewer if the pool is smaller), as asked."""
    weights = weights or {}
    pool = [q for q in questions if q.kind in KINDS]
    numeric = [q for q in pool if q.kind == "numeric"]
    concept = [q for q in pool if q.kind == "concept"]
    if not pool:
        raise BankError("no numeric or concept questions to ask in an interview")
    n = min(n, len(pool) + sum(chain_length(q) - 1 for q in numeric))
    concept_slots = min(len(concept), n // 2)
    numeric_slots = n - concept_slots
    problems = _problems(numeric, numeric_slots, seed, weights)
    used = sum(len(p) for p in problems)
    concept_slots = min(len(concept), n - used)
    explanations = [[q] for q in _order(concept, seed, "concept", weights)[:concept_slots]]

    blocks: list[list[Any]] = []
    for i in range(max(len(problems), len(explanations))):
        blocks += [*problems[i : i + 1], *explanations[i : i + 1]]
    return _turns(blocks, seed, lookup, make_instance)


def _problems(
    numeric: Sequence[Any], slots: int, seed: int, weights: Mapping[str, float]
) -> list[list[Any]]:
    """The numeric problems: lists of the question and its follow-ups (chain openers
    hold their chain length in the list, as the opener repeated: the chain is drawn
    later)."""
    order = _order(numeric, seed, "numeric", weights)
    openers = [q for q in order if chain_length(q) > 1]
    order = openers[:1] + [q for q in order if q not in openers[:1]]
    problems: list[list[Any]] = []
    taken: set[str] = set()
    left = slots
    for question in order:
        if left <= 0:
            break
        ids = _chain_ids(question)
        if taken & set(ids):
            continue
        length = min(chain_length(question), left)
        problems.append([question] * length)
        taken |= set(ids[:length])
        left -= length
    return problems


def _chain_ids(question: Any) -> list[str]:
    """The ids a chain opened by `question` asks, in order."""
    chain = getattr(question, "chain", None)
    follow = [f.question or question.id for f in chain.follow_ups] if chain else []
    return [question.id, *follow]


def _turns(
    blocks: Sequence[Sequence[Any]],
    seed: int,
    lookup: Lookup,
    make_instance: Callable[[Any, int], Instance],
) -> list[Turn]:
    turns: list[Turn] = []
    for block in blocks:
        question = block[0]
        qseed = item_seed(seed, question.id)
        number = len(turns) + 1
        if len(block) == 1:
            turns.append(Turn(number, make_instance(question, qseed), drawn_seed=qseed))
            continue
        steps = draw_chain(question, lookup, qseed)[: len(block)]
        # a start fixes some of the opener's params: then the seed alone does not redraw it
        opener_seed = None if question.chain.start else qseed
        for i, step in enumerate(steps):
            turns.append(
                Turn(
                    number + i,
                    step.instance,
                    ask=step.ask,
                    follow_up_of=number if i else None,
                    drawn_seed=None if i else opener_seed,
                )
            )
    return turns


def per_question_share_s(minutes: float, count: int) -> float:
    """The time one question may take for the interview to end on time, in seconds."""
    return minutes * 60 / max(count, 1)


def clock(seconds: float) -> str:
    """A duration as a clock shows it: 0:42, 12:05, 1:02:03 (whole seconds, rounded down)."""
    total = max(0, math.floor(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
