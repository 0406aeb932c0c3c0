"""The expert-labelled concept answers (tests/data/expert_concept_answers.yaml): the set is
what it says it is, and how the grader's suggestions meet the expert's ratings is pinned,
so that any change to the grader or the deck's cues shows in its figures.

The set was written and labelled without the bank's cue lists and is never tuned against
answer by answer; `python benchmarks/concept_agreement.py` prints the figures with their
targets.
"""

import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "benchmarks"))

SET = yaml.safe_load((HERE / "data" / "expert_concept_answers.yaml").read_text(encoding="utf-8"))
ANSWERS = SET["answers"]


def test_the_set_covers_the_deck_with_every_kind_of_answer():
    from drill.bank.loader import load_default_bank

    bank = load_default_bank(())
    questions = {a["question"] for a in ANSWERS}
    assert len(ANSWERS) >= 200 and len(questions) >= 40
    assert all(bank.get(q).kind == "concept" for q in questions)
    assert Counter(a["kind"] for a in ANSWERS) == {
        "right": 43, "terse": 43, "partial": 43, "wrong": 43, "keywords": 43,
    }  # fmt: skip
    assert Counter(a["rating"] for a in ANSWERS) == {3: 85, 2: 44, 1: 86}
    assert all(set(a) == {"question", "kind", "answer", "rating", "note"} for a in ANSWERS)


@pytest.fixture(scope="module")
def graded():
    from concept_agreement import graded as grade_the_set

    return grade_the_set()


def test_the_graders_suggestions_against_the_experts_ratings(graded):
    """expert rating -> suggestion (None: the grader abstains), as counts."""
    confusion = Counter((r["rating"], r["suggested"]) for r in graded)
    assert dict(confusion) == {
        (1, 1): 30, (1, 2): 13, (1, None): 43,
        (2, 1): 6, (2, 2): 28, (2, 3): 6, (2, None): 4,
        (3, 2): 18, (3, 3): 62, (3, None): 5,
    }  # fmt: skip


def test_no_right_answer_is_suggested_again_and_no_wrong_one_good(graded):
    assert not [r for r in graded if r["rating"] == 3 and r["suggested"] == 1]
    assert not [r for r in graded if r["rating"] == 1 and r["suggested"] == 3]


HELD_OUT = yaml.safe_load(
    (HERE / "data" / "expert_concept_answers_heldout.yaml").read_text(encoding="utf-8")
)["answers"]


def test_the_held_out_set_is_what_it_says_it_is():
    from drill.bank.loader import load_default_bank

    bank = load_default_bank(())
    questions = {a["question"] for a in HELD_OUT}
    assert (len(HELD_OUT), len(questions)) == (220, 44)
    assert len(questions - {a["question"] for a in ANSWERS}) == 25
    assert all(bank.get(q).kind == "concept" for q in questions)
    assert set(Counter(a["kind"] for a in HELD_OUT).values()) == {44}
    assert Counter(a["rating"] for a in HELD_OUT) == {3: 78, 2: 54, 1: 88}


def test_guard_rails_on_the_held_out_set():
    """The set nobody tuned the cues against is not pinned answer by answer (a pin watched
    while tuning would stop it being held out): only guard rails, at the figures it gave
    when it was first measured against this grader (agreement 72.5 % of 138 rated,
    abstaining on 37.3 %, two wrong answers suggested Good), raised to those it gives now
    (81.4 % of 145 rated, abstaining on 34.1 %, one wrong answer suggested Good, after a
    third round of tuning answers and a review of its cues), then to those it gives with
    fewer than half the points read rated Hard, and none read in 25 words or more rated
    Again (81.4 % of 167 rated, abstaining on 24.1 %, one wrong answer suggested Good).
    benchmarks/concept_agreement.py --set heldout prints its figures."""
    from concept_agreement import SETS, figures
    from concept_agreement import graded as grade_the_set

    rows = grade_the_set(SETS["heldout"])
    found = figures(rows)
    assert found["right_suggested_again"] == 0
    assert sum(1 for r in rows if r["rating"] == 1 and r["suggested"] == 3) <= 1
    assert found["agreement"] >= 0.81
    assert found["abstain"] <= 0.25


THIRD = yaml.safe_load(
    (HERE / "data" / "expert_concept_answers_third.yaml").read_text(encoding="utf-8")
)["answers"]


def test_the_third_set_is_what_it_says_it_is():
    from drill.bank.loader import load_default_bank

    bank = load_default_bank(())
    questions = {a["question"] for a in THIRD}
    assert (len(THIRD), len(questions)) == (220, 44)
    assert all(bank.get(q).kind == "concept" for q in questions)
    assert Counter(a["kind"] for a in THIRD) == {
        "right": 44, "terse": 44, "partial": 44, "wrong": 44, "keywords": 44,
    }  # fmt: skip
    assert Counter(a["rating"] for a in THIRD) == {3: 73, 2: 59, 1: 88}
    assert Counter((a["kind"], a["rating"]) for a in THIRD)[("terse", 2)] == 15
    assert all(set(a) == {"question", "kind", "answer", "rating"} for a in THIRD)


def test_guard_rails_on_the_third_set():
    """The third set was written blind to the cues, the grader and the other sets. First
    measured at the commit that added it (a rule since taken back: six bare terms or more
    suggested Again), it gave agreement 85.8 % of 183 rated, abstaining on 16.8 %; with
    every list left to the user, as the issue asks, and the cues tuned against the tuning
    set in two rounds, it gives agreement 85.4 % of 144 rated, no wrong answer suggested
    Good, no right one suggested Again, and abstains on 34.5 % (its 44 keyword lists, a
    fifth of it, are lists); after a third round of tuning answers, 87.1 % of 147 rated,
    abstaining on 33.2 %; with fewer than half the points read rated Hard, and none read
    in 25 words or more rated Again, 83.3 % of 168 rated, abstaining on 23.6 %, which meets
    every target. It is not pinned answer by answer; these are guard rails at those
    figures."""
    from concept_agreement import SETS, figures
    from concept_agreement import graded as grade_the_set

    rows = grade_the_set(SETS["third"])
    found = figures(rows)
    assert found["right_suggested_again"] == 0
    assert sum(1 for r in rows if r["rating"] == 1 and r["suggested"] == 3) == 0
    assert found["agreement"] >= 0.83
    assert found["abstain"] <= 0.24
    lists = [r for r in rows if r["kind"] == "keywords"]
    assert sum(1 for r in lists if r["suggested"] is None) == 44
