"""The words of the clause that makes a wrong claim are the claim's: a cue of the point
there is the claim's subject or object, not the point said right."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drill.kinds.concept import suggestion
from drill.kinds.cues import OPPOSITE, coverage

TTFT_POINTS = (
    ("TTFT runs from arrival to the first token.", ("ttft", "time to first token", "arrival")),
    ("TTFT includes the prefill.", ("prefill",)),
)
TTFT_WRONG = ((0, "TTFT is the gap between tokens", ("ttft ... between tokens",)),)
GAP_CLAIM = "TTFT is the gap between tokens"


def read(answer: str):
    found = coverage(answer, TTFT_POINTS, TTFT_WRONG)
    return found.covered, found.wrong_claims[0], found.conflicted[0]


@pytest.mark.parametrize(
    ("answer", "covered", "claim", "conflicted"),
    [
        # the claim's own subject is not the point said right
        ("TTFT is the gap between tokens", (False, False), GAP_CLAIM, False),
        # nor another cue of the point in the claim's clause
        ("the arrival TTFT is the gap between tokens", (False, False), GAP_CLAIM, False),
        # a cue of another point in that clause still counts for its own point
        ("TTFT is the prefill gap between tokens", (False, True), GAP_CLAIM, False),
        # the point said in another clause or sentence: found and contradicted at once
        ("TTFT is the gap between tokens, measured from arrival", (False, False), GAP_CLAIM,
         True),
        ("TTFT starts at arrival. TTFT is the gap between tokens", (False, False), GAP_CLAIM,
         True),
        ("time to first token starts at arrival and TTFT is the gap between tokens",
         (False, False), GAP_CLAIM, True),
        # no claim: the point's cues say it
        ("TTFT is the wait until the first token, prefill included", (True, True), None, False),
        # a denied claim is no claim, and leaves the point standing
        ("TTFT is not the gap between tokens", (True, False), None, False),
    ],
)  # fmt: skip
def test_a_cue_in_the_claims_clause_is_the_claims(answer, covered, claim, conflicted):
    assert read(answer) == (covered, claim, conflicted)


def test_a_point_found_only_inside_its_wrong_claim_suggests_again():
    covered, claim, conflicted = read("TTFT is the gap between tokens.")
    assert suggestion("TTFT is the gap between tokens.", covered, [claim], conflicted) == 1
    # the point also said right: a claim against no point found is still more wrong than right
    covered, claim, conflicted = read("It starts at arrival; TTFT is the gap between tokens.")
    assert (covered, conflicted) == ((False, False), True)
    assert suggestion("x", covered, [claim], conflicted) == 1
    assert suggestion("x", (False, True, True), [claim], conflicted) is None


LOAD_POINTS = (("Throughput grows with the batch.", ("throughput grows", "throughput")),)


@pytest.mark.parametrize(
    ("answer", "covered", "conflicted"),
    [
        # said the other way, the direction's subject is the claim's word too
        ("with a larger batch throughput falls", (False,), False),
        ("throughput grows, no wait, throughput falls", (False,), True),
    ],
)
def test_a_direction_said_the_other_way_owns_its_clause(answer, covered, conflicted):
    found = coverage(answer, LOAD_POINTS)
    assert found.covered == covered
    assert found.wrong_claims == (OPPOSITE + "Throughput grows with the batch.",)
    assert found.conflicted == (conflicted,)


WORDS = st.sampled_from("the server then really it measured usually here on average".split())


@given(before=st.lists(WORDS, max_size=4), middle=st.lists(WORDS, max_size=3))
def test_words_in_the_claims_clause_never_make_the_point_found(before, middle):
    answer = " ".join([*before, "TTFT is", *middle, "the gap between tokens"])
    covered, claim, conflicted = read(answer)
    assert (covered[0], claim, conflicted) == (False, GAP_CLAIM, False)


@given(filler=st.lists(WORDS, max_size=4))
def test_the_point_said_in_a_sentence_of_its_own_is_found_and_contradicted(filler):
    answer = " ".join(["TTFT starts at arrival.", *filler, "TTFT is the gap between tokens"])
    covered, claim, conflicted = read(answer)
    assert (covered[0], claim, conflicted) == (False, GAP_CLAIM, True)
