"""Lists in concept answers, as properties: a list of short fragments with no sentence is
left to the user however it is typed (words alone cannot tell a list of buzzwords from a
terse answer in note form), unless it makes a wrong claim, which is Again, list or not;
and the suggestion's promises hold for any reading."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drill.kinds.concept import fragment_parts, suggestion
from drill.kinds.grade import grade
from drill.kinds.instance import Instance

# terms as a hurried user types them: one to three plain words, none of which claims
TERM_WORDS = st.sampled_from(
    "kv cache paged blocks prefill decode batch attention heads query group size ring "
    "softmax tiling sram hbm roofline ridge point fp8 scale weights experts router".split()
)
TERM = st.lists(TERM_WORDS, min_size=1, max_size=3).map(" ".join)
SEPARATORS = st.sampled_from(
    [", ", "; ", "\n", "\n- ", "\n* ", "\n• ", " / ", " | ", " -> ", " → ", ". "]
)

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
LIST_NOTE = (
    "A list of short fragments: from the words alone the grader cannot tell what you know, "
    "so rate it yourself (and say what each does, and why)."
)


@given(st.lists(TERM, min_size=3, max_size=12), SEPARATORS)
def test_a_list_of_terms_is_left_to_the_user_however_it_is_typed(terms, separator):
    text = separator.join(terms)
    assert fragment_parts(text) == len(terms)
    for covered in ((True, True, True), (True, False, False), (False, False, False)):
        assert suggestion(text, covered, (), 0) is None


@given(st.lists(TERM, min_size=3, max_size=12), SEPARATORS)
def test_a_wrong_claim_in_a_list_is_again_unless_its_point_is_also_said(terms, separator):
    text = separator.join(terms)
    assert suggestion(text, (False, True, False), ("wrong",), 0) == 1
    assert suggestion(text, (True, True, False), ("wrong",), 1) is None


@given(
    st.lists(
        st.one_of(TERM, st.sampled_from(["TTFT", "queueing", "prefix reuse", "radix tree"])),
        min_size=3, max_size=10,
    ),
    SEPARATORS,
)  # fmt: skip
def test_a_list_naming_every_points_words_is_never_suggested_good(terms, separator):
    verdict = grade(PREFIX, separator.join(terms))
    assert verdict.rating is None
    assert verdict.feedback.splitlines()[-1] == LIST_NOTE


def test_a_wrong_claim_in_a_list_is_named_and_again():
    verdict = grade(PREFIX, "speeds up decode, radix tree, hit rate, warm cache")
    assert verdict.rating == 1
    assert verdict.feedback.splitlines() == [
        "Missed: It lowers TTFT; Queueing is part of TTFT; The shared prefix's prefill is "
        "skipped.",
        'Careful: "a prefix hit speeds up decode steps" is wrong.',
    ]
    # said right as well ("TTFT" names the point): more right than wrong, the user rates
    assert grade(PREFIX, "TTFT, speeds up decode, queueing, hit rate").rating is None


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
        ("- KV cache\n- paged blocks\n- prefill\n- decode", 4),
        ("KV cache / paged blocks / prefill", 3),
        ("holes. beam search. paging.", 3),  # full stops part a list too
        ("iteration level -> every step -> refill -> idle slots", 4),
        ("holes ➡ beam search ➡ paging", 3),
        ("碎片，束搜索、分页", 3),  # full-width commas
        ("KV cache, paged blocks", 0),  # two parts are no list
        ("KV cache, paged blocks, the prefill is compute bound", 0),  # a claim
        # a slash in a unit or a pair, and a decimal point, part nothing
        ("2 all-reduces/layer, NVLink 900 GB/s, IB 50 GB/s", 3),
        ("K/V, FP16/BF16, 3.35 TB/s", 3),
        ("HBM 3.35 TB/s", 0),
        ("bytes = 2·L·H_kv·d_head·T·b", 0),  # a middle dot multiplies
    ],
)
def test_how_many_parts_a_list_has(text, parts):
    assert fragment_parts(text) == parts


def test_a_chain_of_terms_is_a_list_not_a_sentence():
    """Joined by arrows or full stops, terms that name every point are no longer read as a
    sentence that says them all (they were suggested Good)."""
    for text in (
        "TTFT -> queueing -> prefix reuse -> radix tree",
        "TTFT. queueing. prefix reuse.",
        "TTFT ⟶ queueing ⟶ prefix reuse",
    ):
        assert grade(PREFIX, text).rating is None


def test_a_sign_between_terms_says_something_of_them_and_an_arrow_parts_a_list():
    from drill.kinds.concept import fragment_parts

    assert fragment_parts("K, V each [B, H_kv, S, D] per layer; H_kv = KV heads") == 0
    assert fragment_parts("waste = 1 - live/reserved; bytes/token factor cancels; done") == 0
    assert fragment_parts("decode -> memory bound -> batch it") == 3
    assert fragment_parts("decode => memory bound => batch it") == 3
