"""Leeches: cards that keep lapsing, and the named mistake behind their lapses.

As in Anki, a card becomes a leech when a lapse (Again on a card in review)
brings its lapses to the leech threshold, and again every half threshold after
that (8, 12, 16... for the default 8: drill.srs.becomes_leech); the quiz then
suspends it. Beyond Anki,
the reviews say which misconception the grader named in most of those lapses,
and `kvdrill quiz --drill ID` practises the questions that test it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class LapseCause:
    """The misconception named in most of a card's lapses."""

    lapses: int  # lapses in the card's history
    misconception: str | None  # None: no lapse had a named mistake
    count: int  # lapses that named it


def lapse_cause(lapse_flags: Sequence[bool], misconceptions: Sequence[str | None]) -> LapseCause:
    """The most frequent misconception among the lapses (the reviews flagged True);
    a tie goes to the one named in the latest lapse."""
    named = [m for lapse, m in zip(lapse_flags, misconceptions, strict=True) if lapse and m]
    if not named:
        return LapseCause(sum(lapse_flags), None, 0)
    counts = Counter(named)
    latest = {m: i for i, m in enumerate(named)}
    best = max(counts, key=lambda m: (counts[m], latest[m]))
    return LapseCause(sum(lapse_flags), best, counts[best])


def card_lapse_cause(db, question_id: str, scheduler) -> LapseCause:
    """`lapse_cause` of one card from its scheduled reviews in the database."""
    from drill.srs import lapse_flags

    reviews = list(
        db.query(
            "select reviewed_at, rating, misconception from reviews"
            " where question_id = ? and cram = 0 order by reviewed_at, rowid",
            [question_id],
        )
    )
    flags = lapse_flags(scheduler, reviews)
    return lapse_cause(flags, [r["misconception"] for r in reviews])


def questions_testing(
    questions: Iterable[Any], misconception_id: str, recorded: Mapping[str, int]
) -> list[Any]:
    """The questions that test a misconception: those whose reviews recorded it
    (`recorded`: question id -> times, most first), then the numeric templates that
    name it among their misconceptions, in bank order."""
    by_id = {q.id: q for q in questions}
    chosen = [by_id[qid] for qid in sorted(recorded, key=lambda q: -recorded[q]) if qid in by_id]
    seen = {q.id for q in chosen}
    for q in by_id.values():
        names = {m.id for m in getattr(q, "misconceptions", ())}
        if misconception_id in names and q.id not in seen:
            chosen.append(q)
            seen.add(q.id)
    return chosen


def recorded_in_reviews(db, misconception_id: str) -> dict[str, int]:
    """Question id -> how many reviews recorded this misconception."""
    rows = db.execute(
        "select question_id, count(*) from reviews where misconception = ?"
        " group by question_id order by count(*) desc, question_id",
        [misconception_id],
    ).fetchall()
    return dict(rows)


def drill_questions(db, questions: Iterable[Any], misconception_id: str) -> list[Any]:
    """`questions_testing` with the reviews in the database; BankError when none does,
    suggesting the mistake ids close to an unknown one."""
    from drill.bank.misconceptions import load_misconception_catalogue
    from drill.errors import BankError, did_you_mean

    questions = list(questions)
    found = questions_testing(questions, misconception_id, recorded_in_reviews(db, misconception_id))
    if found:
        return found
    known = sorted(
        set(load_misconception_catalogue())
        | {m.id for q in questions for m in getattr(q, "misconceptions", ())}
        | {m for (m,) in db.execute("select distinct misconception from reviews") if m}
    )
    if misconception_id not in known:
        hint = did_you_mean(misconception_id, known) or "`kvdrill mistakes` lists them"
        raise BankError(f"unknown mistake {misconception_id!r}; {hint}")
    raise BankError(
        f"no question tests the misconception {misconception_id!r}: no numeric template "
        "names it and no review recorded it (`kvdrill mistakes` lists the mistakes and your "
        "counts)"
    )


def leech_lines(question_id: str, cause: LapseCause, misconception_name: str | None) -> list[str]:
    """What the quiz says when a card becomes a leech."""
    lines = [
        f"Leech: {question_id} has lapsed {cause.lapses} times and is suspended "
        f"(`kvdrill unsuspend {question_id}` brings it back)."
    ]
    if cause.misconception is None:
        lines.append("No named mistake lies behind its lapses: read its solution again.")
    else:
        name = misconception_name or cause.misconception
        lines.append(
            f"Behind {cause.count} of its {cause.lapses} lapses: {name}. Practise it with "
            f"`kvdrill quiz --drill {cause.misconception}`."
        )
    return lines
