"""A cue with a gap ("TTFT ... between tokens"): its parts in order, in one clause, a
few words apart, none of them negated; how a wrong claim written so marks its point."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drill.kinds import cues
from drill.kinds.cues import GAP_REACH, Answer, coverage, cue_forms


@pytest.fixture(autouse=True)
def _cues_read_afresh():
    for value in vars(cues).values():
        if callable(getattr(value, "cache_clear", None)):
            value.cache_clear()


def finds(answer: str, cue: str) -> bool:
    return Answer(answer).finds(cue)


def test_the_parts_are_found_in_order_with_words_between():
    assert finds("TTFT is the gap between tokens", "ttft ... between tokens") is True
    assert finds("TTFT is measured as the average gap between tokens", "ttft ... between tokens")
    assert finds("tokens between TTFT", "ttft ... between tokens") is False


def test_a_negated_part_is_not_found():
    assert finds("TTFT is not the gap between tokens", "ttft ... between tokens") is False
    assert finds("no KV cache stores the logits", "kv cache ... logits") is False
    assert finds("the KV cache never stores logits", "kv cache ... logits") is False


def test_the_parts_stand_in_one_clause():
    cue = "ttft ... between tokens"
    assert finds("TTFT covers the prompt, and TPOT the gap between tokens", cue) is False
    assert finds("TTFT covers the prompt. TPOT is the gap between tokens", cue) is False
    assert finds("TTFT covers the prompt while TPOT is the gap between tokens", cue) is False


def test_the_parts_stand_at_most_gap_reach_words_apart():
    assert GAP_REACH == 6
    six = "TTFT one two three four five six between tokens"
    seven = "TTFT one two three four five six seven between tokens"
    assert finds(six, "ttft ... between tokens") is True
    assert finds(seven, "ttft ... between tokens") is False


def test_each_part_is_read_in_its_shared_phrasings():
    assert finds("time to first token is the gap between tokens", "ttft ... between tokens")
    assert ("ttft", "...", "between", "token") in cue_forms("TTFT ... between tokens")


def test_two_gaps_and_a_gap_at_either_end():
    assert finds("the cache holds for each layer only the keys", "cache ... hold ... keys")
    assert finds("the cache holds, for each layer, only the keys", "cache ... hold ... keys") is False
    assert finds("the cache holds only the keys for each layer", "cache ... hold ... keys")
    assert finds("keys the cache holds", "cache ... hold ... keys") is False
    assert cue_forms("... ttft ...") == cue_forms("ttft")


def test_an_ellipsis_in_an_answer_ends_a_sentence():
    assert finds("TTFT ... the gap between tokens", "ttft is the gap") is False
    assert finds("TTFT... the gap between tokens", "ttft ... between tokens") is False


def test_a_wrong_claim_with_a_gap_marks_its_point_and_owns_its_words():
    points = [("TTFT is the wait for the first token", ["ttft", "first token"])]
    claims = [(0, "TTFT is the gap between tokens", ["ttft ... between tokens"])]
    wrong = coverage("TTFT is the average gap between tokens.", points, claims)
    assert (wrong.covered, wrong.wrong_claims, wrong.conflicted) == (
        (False,), ("TTFT is the gap between tokens",), (False,),
    )  # fmt: skip
    right = coverage("TTFT is not the gap between tokens: it ends at the first token.",
                     points, claims)  # fmt: skip
    assert (right.covered, right.wrong_claims) == ((True,), (None,))


WORDS = st.sampled_from(
    "ttft tpot the is not gap between tokens first token, and . no queue".split()
)


@given(st.lists(WORDS, max_size=14))
def test_a_cue_with_a_gap_is_found_only_where_each_part_is(words):
    answer = Answer(" ".join(words))
    if answer.finds("ttft ... between tokens"):
        assert answer.finds("ttft") and answer.finds("between tokens")
