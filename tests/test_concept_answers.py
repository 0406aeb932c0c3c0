"""The built-in deck's concept questions against answers people type (tests/data/concept_answers.yaml):
for each, exactly the key points a human grader ticks, the wrong claims it makes and the rating."""

from pathlib import Path

import pytest
import yaml

from drill.bank.loader import load_default_bank
from drill.kinds import make_instance
from drill.kinds.grade import grade

ANSWERS = yaml.safe_load(
    (Path(__file__).parent / "data" / "concept_answers.yaml").read_text(encoding="utf-8")
)["answers"]


@pytest.fixture(scope="module")
def deck():
    return load_default_bank(cached=False)


def test_the_set_is_large_and_spread_over_the_deck(deck):
    questions = {entry["question"] for entry in ANSWERS}
    assert len(ANSWERS) >= 30 and len(questions) >= 8
    assert all(deck.get(qid).kind == "concept" for qid in questions)


@pytest.mark.parametrize(
    "entry", ANSWERS, ids=[f"{e['question']}-{i}" for i, e in enumerate(ANSWERS, 1)]
)
def test_the_grader_reads_the_answer_as_a_person_does(deck, entry):
    instance = make_instance(deck.get(entry["question"]), 1)
    verdict = grade(instance, entry["answer"])
    covered = [i for i, hit in enumerate(verdict.covered, 1) if hit]
    wrong = [i for i, claim in enumerate(verdict.wrong_claims, 1) if claim]
    assert (covered, wrong, verdict.rating) == (
        entry["covered"],
        entry.get("contradicted", []),
        entry["rating"],
    )
