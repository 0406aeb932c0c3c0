"""Lists in concept answers, as properties: a bare list of six short terms or more that
names only some points is no answer (Again) however it is typed; any other list is left
to the user; and the suggestion's promises hold for any reading."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drill.kinds.concept import fragment_parts, suggestion, term_list
from drill.kinds.grade import grade
from drill.kinds.instance import Instance

# terms as a hurried user types them: one to three plain words, none of which claims,
# denies or moves anything
TERM_WORDS = st.sampled_from(
    "kv cache paged blocks prefill decode batch attention heads query group size ring "
    "softmax tiling sram hbm roofline ridge point fp8 scale weights experts router".split()
)
TERM = st.lists(TERM_WORDS, min_size=1, max_size=3).map(" ".join)
SEPARATORS = st.sampled_from([", ", "; ", "\n", "\n- ", " / ", " | "])

PREFIX = Instance(
    question_id="k", kind="concept", seed=1, topic="metrics", difficulty=2,
    text="Which latency metric does a prefix-cache hit improve, and what makes it up?",
    answer_text="TTFT: queueing plus prefill, and a hit skips the shared prefix's prefill.",
    key_points=(
        ("It lowers TTFT.", ("ttft", "time to first token")),
        ("Queueing is part of TTFT.", ("queue",)),
        ("The shared prefix's prefill is skipped.", ("skip prefill", "reuse")),
    ),
    wrong_claims=((0, "a prefix hit speeds up decode steps", ("speeds up decode",)),),
)  # fmt: skip


SEPARATORS_ALL = st.sampled_from([", ", "; ", "\n", "\n- ", "\n* ", " / ", " | "])
SOME = (True, False, True)


@given(st.lists(TERM, min_size=6, max_size=12), SEPARATORS_ALL)
def test_six_bare_terms_or_more_naming_some_points_are_no_answer(terms, separator):
    text = separator.join(terms)
    assert term_list(text)
    assert suggestion(text, SOME, (), 0) == 1
    assert suggestion(text, (False, False, False), ("wrong",), 0) == 1
    # naming every point, it may be a terse enumeration: the user rates
    assert suggestion(text, (True, True, True), (), 0) is None


@given(st.lists(TERM, min_size=3, max_size=5), SEPARATORS_ALL)
def test_three_to_five_bare_terms_are_left_to_the_user(terms, separator):
    text = separator.join(terms)
    assert (term_list(text), fragment_parts(text)) == (False, len(terms))
    assert suggestion(text, SOME, (), 0) is None


@given(
    st.lists(TERM, min_size=6, max_size=10),
    st.sampled_from([": ", " = ", " → ", ", not ", ", no ", " rather than ", " don't ",
                     " higher ", " + ", " × ", " (", " [", " ≈ "]),
)  # fmt: skip
def test_a_list_that_may_state_or_relate_is_left_to_the_user(terms, mark):
    text = terms[0] + mark + ", ".join(terms[1:])
    assert not term_list(text)
    assert suggestion(text, SOME, (), 0) in (None, 2)  # a list, or read as an answer


@given(st.lists(TERM, min_size=5, max_size=9), st.lists(TERM_WORDS, min_size=4, max_size=5))
def test_a_part_of_four_words_or_more_makes_no_bare_list(terms, long_part):
    text = ", ".join([*terms, " ".join(long_part)])
    assert not term_list(text)


@given(
    st.lists(
        st.one_of(TERM, st.sampled_from(["TTFT", "queueing", "hit rate", "radix tree"])),
        min_size=6, max_size=10,
    ),
    SEPARATORS_ALL,
)  # fmt: skip
def test_a_bare_list_gets_again_or_none_never_more(terms, separator):
    """However many of the points' words it names: Again while one is missing."""
    verdict = grade(PREFIX, separator.join(terms))
    assert verdict.rating == (None if all(verdict.covered) else 1)
    assert verdict.wrong_claims == (None, None, None)


@given(
    st.text(max_size=40),
    st.lists(st.booleans(), min_size=2, max_size=4),
    st.data(),
)
def test_good_only_with_every_point_and_no_wrong_claim(text, covered, data):
    claims = [c for c in (data.draw(st.sampled_from([None, "w"])) for _ in covered) if c]
    conflicted = data.draw(st.integers(0, len(claims)))
    rating = suggestion(text, covered, claims, conflicted)
    if rating == 3:
        assert all(covered) and not claims
    if claims:
        assert rating in (1, None)


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("- KV cache\n- paged blocks\n- prefill\n- decode\n- batch\n- heads", 6),
        ("KV cache / paged blocks / prefill", 3),
        ("KV cache, paged blocks", 0),  # two parts are no list
        ("KV cache, paged blocks, the prefill is compute bound", 0),  # a claim
        ("decode: memory bound, prefill, batch", 3),  # a note: a list, not a bare one
        ("tiling -> SRAM -> online softmax -> recompute", 4),  # arrows part a list...
    ],
)
def test_how_many_parts_a_list_has(text, parts):
    assert fragment_parts(text) == parts


def test_arrows_part_a_list_but_relate_its_terms():
    """... which is never a bare one: an arrow says one thing leads to the next."""
    text = "iteration level -> every step -> refill -> idle slots -> paged KV -> throughput"
    assert (fragment_parts(text), term_list(text)) == (6, False)
