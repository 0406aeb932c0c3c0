"""Instance + answer -> Verdict: is it right, and if not, which mistake was it?

`grade(instance, text)` asks the instance's kind (drill.kinds) for the verdict
and suggests an FSRS rating for it: 1 Again when wrong, 2 Hard when right only
after a unit slip or a hint, 3 Good when right, 4 Easy when right within the
kind's `fast_ms`. A self-rated (concept) verdict keeps the kind's suggestion, at
most Hard after a hint. How each kind reads answers:

numeric   a number with its unit, compared under the question's tolerance; a
          wrong one is diagnosed (drill.kinds.numeric_grade);
choice    option numbers (1-based, as displayed) or letters: "2", "b", "a, c";
order     display numbers or letters in order: "3 1 4 2", "3,1,4,2", "c a d b";
concept   self-rated: `covered` says which key points the text makes (drill.kinds.cues),
          `wrong_claims` which it gets wrong.
"""

from __future__ import annotations

from dataclasses import replace

from drill.kinds import kind_of
from drill.kinds.instance import Instance
from drill.kinds.verdict import AGAIN, EASY, GOOD, HARD, Status, Verdict


def grade(
    instance: Instance,
    answer_text: str,
    *,
    duration_ms: int | None = None,
    hinted: bool = False,
    fast_ms: int | None = None,
) -> Verdict:
    """The verdict on `answer_text` for `instance`; never raises for any text."""
    kind = kind_of(instance.kind)
    fast = kind.fast_ms if fast_ms is None else fast_ms
    quick = duration_ms is not None and duration_ms < fast
    return _with_rating(kind.grade(instance, answer_text), quick=quick, hinted=hinted)


def _with_rating(verdict: Verdict, *, quick: bool, hinted: bool) -> Verdict:
    rating: int | None
    if verdict.status == "self":
        rating = verdict.rating
        if hinted and rating is not None:
            rating = min(rating, HARD)
    elif not verdict.correct:
        rating = AGAIN
    elif verdict.status == "unit" or hinted:
        rating = HARD
    else:
        rating = EASY if quick else GOOD
    # a frozen verdict that already carries the rating (every wrong answer's Again) is
    # returned as it is: copying it is a good part of what grading a wrong answer costs
    return verdict if verdict.rating == rating else replace(verdict, rating=rating)


__all__ = ["AGAIN", "EASY", "GOOD", "HARD", "Status", "Verdict", "grade"]
