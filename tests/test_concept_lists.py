"""Lists in concept answers, as properties: a bare list of six terms or more is no answer
(Again, nothing ticked) however it is typed; a list that states or denies something is
read as an answer; and the suggestion's promises hold for any reading."""

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


@given(st.lists(TERM, min_size=6, max_size=12), SEPARATORS)
def test_six_bare_terms_or_more_are_no_answer_however_they_are_typed(terms, separator):
    text = separator.join(terms)
    assert term_list(text)
    assert suggestion(text, (True, True, True), (None, None, None), 0) == 1


@given(st.lists(TERM, min_size=3, max_size=5), SEPARATORS)
def test_three_to_five_bare_terms_are_left_to_the_user(terms, separator):
    text = separator.join(terms)
    assert (term_list(text), fragment_parts(text)) == (False, len(terms))
    assert suggestion(text, (True, True, True), (None, None, None), 0) is None


@given(
    st.lists(TERM, min_size=6, max_size=10),
    st.sampled_from([": ", " = ", " -> ", " → ", ", not ", ", no ", " rather than "]),
)
def test_a_list_that_states_or_denies_is_read_as_an_answer(terms, mark):
    text = terms[0] + mark + ", ".join(terms[1:])
    assert (term_list(text), fragment_parts(text)) == (False, 0)
    assert suggestion(text, (True, True, True), (None, None, None), 0) == 3


@given(st.lists(TERM, min_size=6, max_size=10), st.sampled_from(["higher", "+", "(x)", "[a]"]))
def test_a_list_that_may_relate_its_terms_is_not_bare(terms, mark):
    text = ", ".join(terms[:-1]) + f", {terms[-1]} {mark}"
    assert not term_list(text)
    assert suggestion(text, (True, True, True), (None, None, None), 0) is None


@given(
    st.lists(
        st.one_of(TERM, st.sampled_from(["TTFT", "queueing", "prefix reuse", "skip prefill"])),
        min_size=6, max_size=10,
    ),
    SEPARATORS,
)  # fmt: skip
def test_a_term_list_never_has_a_point_ticked_nor_a_wrong_claim(terms, separator):
    """However many of the points' words it names."""
    verdict = grade(PREFIX, separator.join(terms))
    assert (verdict.covered, verdict.wrong_claims, verdict.rating) == (
        (False, False, False), (None, None, None), 1,
    )  # fmt: skip


@given(
    st.text(max_size=40),
    st.lists(st.booleans(), min_size=2, max_size=4),
    st.data(),
)
def test_good_only_with_every_point_and_no_wrong_claim(text, covered, data):
    claims = tuple(
        data.draw(st.sampled_from([None, None, "wrong"])) for _ in covered
    )
    conflicted = data.draw(st.integers(0, sum(1 for c in claims if c)))
    rating = suggestion(text, covered, claims, conflicted)
    if rating == 3:
        assert all(covered) and not any(claims)
    if any(claims) and rating is not None and not term_list(text) and text.strip():
        assert rating in (1, 2)
    if rating == 2 and any(claims):  # one detail off: never about the first point
        assert claims[0] is None and sum(1 for c in claims if c) == 1


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("- KV cache\n- paged blocks\n- prefill\n- decode\n- batch\n- heads", 6),
        ("KV cache / paged blocks / prefill", 3),
        ("KV cache, paged blocks", 0),  # two parts are no list
        ("KV cache, paged blocks, the prefill is compute bound", 0),  # a claim
        ("decode: memory bound, prefill, batch", 0),  # a colon states
    ],
)
def test_how_many_parts_a_list_has(text, parts):
    assert fragment_parts(text) == parts
