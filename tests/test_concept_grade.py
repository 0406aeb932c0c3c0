"""The concept grader: cues read as words in any form, negation and contrast, wrong claims,
and the rating that follows from what an answer covers (drill.kinds.cues, drill.kinds.concept)."""

import pytest

from drill.kinds import kind_of
from drill.kinds.grade import grade
from drill.kinds.instance import Instance

# a prefix-cache hit: three key points, and a wrong claim about the first
PREFIX = Instance(
    question_id="k",
    kind="concept",
    seed=1,
    text="Which latency metric does a prefix-cache hit improve, and what makes up that metric?",
    topic="metrics",
    difficulty=2,
    answer_text="TTFT: queueing plus prefill, and a hit skips the shared prefix's prefill.",
    key_points=(
        ("It lowers TTFT.", ("ttft", "time to first token")),
        ("Queueing is part of TTFT.", ("queue",)),
        ("The shared prefix's prefill is skipped.", ("skip prefill", "reuse")),
    ),
    wrong_claims=(
        (0, "a prefix hit speeds up decode steps", ("speeds up decode", "improves tpot")),
    ),
)

NONE, ONE, TWO, THREE = (False,) * 3, (True, False, False), (False, True, False), (True,) * 3
CLAIM = "a prefix hit speeds up decode steps"

# answer, covered, wrong claim about the first point (or None), suggested rating
TABLE = [
    # word forms and spelling
    ("TTFT", ONE, None, None),
    ("ttft", ONE, None, None),
    ("the time to the first token", ONE, None, None),
    ("requests are queued", TWO, None, None),
    ("queueing", TWO, None, None),
    ("queuing delay", TWO, None, None),
    ("the queues", TWO, None, None),
    ("we skipped the prefill of the prefix", (False, False, True), None, None),
    ("it reuses the stored K and V", (False, False, True), None, None),
    ("TTFTs", ONE, None, None),
    ("TTFTX or XTTFT", NONE, None, None),  # a cue inside another word is not the cue
    # negation before the cue
    ("not TTFT", NONE, None, None),
    ("TPOT, not TTFT", NONE, None, None),
    ("TPOT not TTFT", NONE, None, None),
    ("no queueing at all", NONE, None, None),
    ("it doesn't include queueing", NONE, None, None),
    ("it isn't really about the time to first token", NONE, None, None),
    ("neither TTFT nor queueing", NONE, None, None),
    ("without queueing", NONE, None, None),
    ("it never touches TTFT", NONE, None, None),
    # contrast
    ("TPOT rather than TTFT", NONE, None, None),
    ("TPOT instead of TTFT", NONE, None, None),
    ("TPOT as opposed to TTFT", NONE, None, None),
    ("TTFT rather than TPOT", ONE, None, None),
    # negation after the cue
    ("queueing is not included", NONE, None, None),
    ("TTFT doesn't change", NONE, None, None),
    ("queueing time is not included", NONE, None, None),
    ("the queue wait time isn't counted", NONE, None, None),
    ("queueing is excluded", NONE, None, None),
    ("queue time is left out", NONE, None, None),
    ("queueing delay is ignored", NONE, None, None),
    ("TTFT is lowered", ONE, None, None),
    ("TTFT really does not change", NONE, None, None),
    ("it lowers TTFT since TPOT is not affected", ONE, None, None),
    ("it lowers TTFT as decode is not affected", ONE, None, None),
    ("TTFT drops, decode speed is not affected", ONE, None, None),
    # negation reaches only so far (NEGATION_REACH: four words), and not across a clause
    ("it is not big big big big TTFT", NONE, None, None),
    ("it is not big big big big big TTFT", ONE, None, None),
    ("TTFT, not TPOT", ONE, None, None),
    ("TTFT not TPOT", ONE, None, None),
    ("not only TTFT but queueing too", (True, True, False), None, 2),
    ("No, it lowers TTFT", ONE, None, None),
    ("No it lowers TTFT", ONE, None, None),
    ("not decode but TTFT", ONE, None, None),
    ("it is not TPOT; TTFT drops", ONE, None, None),
    ("without a cache every request would queue", TWO, None, None),
    ("TPOT is unchanged and TTFT drops", ONE, None, None),
    # wrong claims: one found marks its point missed and suggests Again
    ("it speeds up decode", NONE, CLAIM, 1),
    # the point said right and wrong at once: more wrong than right with nothing else found,
    # uncertain where more points are found than claims made
    ("TTFT drops and it speeds up decode too", NONE, CLAIM, 1),
    ("TTFT drops as the queue is shorter and the prefill reused; it speeds up decode too",
     (False, True, True), CLAIM, None),
    ("it improves TPOT, queueing and reuse", (False, True, True), CLAIM, 1),
    ("it does not speed up decode; TTFT drops", ONE, None, None),
    ("rather than speeding up decode it cuts TTFT", ONE, None, None),
    # polarity beyond "not": the cue that follows or precedes the denial is denied
    ("queueing has nothing to do with it", NONE, None, None),
    ("it has nothing to do with queueing", NONE, None, None),
    ("TTFT is irrelevant here", NONE, None, None),
    ("queueing plays no role", NONE, None, None),
    ("TTFT is the same regardless of queueing", ONE, None, None),
    ("independent of queueing, TTFT drops and the prefix's KV is reused", (True, False, True),
     None, 2),
    # coverage decides the rest
    ("", NONE, None, 1),
    ("TTFT, because we reuse the cached prefix", (True, False, True), None, 2),
    ("TTFT: queueing plus prefill, and the hit reuses the prefix's KV", THREE, None, 3),
]


@pytest.mark.parametrize(("answer", "covered", "claim", "rating"), TABLE)
def test_concept_table(answer, covered, claim, rating):
    verdict = grade(PREFIX, answer)
    assert (verdict.status, verdict.correct) == ("self", None)
    assert verdict.covered == covered
    assert verdict.wrong_claims == (claim, None, None)
    assert verdict.rating == rating


def test_the_table_is_large_enough():
    assert len(TABLE) >= 30


def test_a_wrong_claim_is_named_in_the_feedback_and_the_checklist():
    verdict = grade(PREFIX, "it speeds up decode, and queueing counts")
    assert verdict.feedback == (
        "Covered: Queueing is part of TTFT.\n"
        "Missed: It lowers TTFT; The shared prefix's prefill is skipped.\n"
        'Careful: "a prefix hit speeds up decode steps" is wrong.'
    )
    assert kind_of("concept").verdict_lines(PREFIX, verdict) == [
        "Model answer:",
        "  TTFT: queueing plus prefill, and a hit skips the shared prefix's prefill.",
        "Key points:",
        "  [!] 1. It lowers TTFT.",
        "  [x] 2. Queueing is part of TTFT.",
        "  [ ] 3. The shared prefix's prefill is skipped.",
        'Careful: "a prefix hit speeds up decode steps" is wrong.',
    ]


def test_a_hint_caps_a_full_answer_at_hard():
    full = "TTFT: queueing plus prefill, and the hit reuses the prefix's KV"
    assert grade(PREFIX, full).rating == 3
    assert grade(PREFIX, full, hinted=True).rating == 2
    assert grade(PREFIX, "it speeds up decode", hinted=True).rating == 1


def test_one_key_point_covered_is_good_when_it_is_the_only_one():
    single = Instance(
        question_id="s", kind="concept", seed=1, text="?", topic="t", difficulty=1,
        answer_text="TTFT", key_points=(("TTFT", ("ttft",)),),
    )  # fmt: skip
    assert grade(single, "TTFT").rating == 3
    assert grade(single, "TPOT").rating is None  # nothing found: it cannot tell


def test_the_stemmer_is_loaded_only_when_an_answer_is_read():
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from drill.bank.loader import load_default_bank\n"
        "from drill.kinds import make_instance\n"
        "question = load_default_bank().get('define-ttft')\n"
        "instance = make_instance(question, 1)\n"
        "loaded = lambda: 'snowballstemmer' in sys.modules or 'Stemmer' in sys.modules\n"
        "print(loaded())\n"
        "from drill.kinds.grade import grade\n"
        "grade(instance, 'queued')\n"
        "print(loaded())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]


# --------------------------------------------------------------------------- direction

# the latency a hit lowers, said either way
LATENCY = Instance(
    question_id="k",
    kind="concept",
    seed=1,
    text="What does a larger decode batch do to per-token latency and to throughput?",
    topic="metrics",
    difficulty=2,
    answer_text="Per-token latency rises a little; throughput grows much more.",
    key_points=(
        ("Per-token latency rises.", ("latency rises", "higher latency", "slower tokens")),
        ("Throughput grows.", ("throughput grows", "more throughput", "higher throughput")),
    ),
)


@pytest.mark.parametrize(
    ("answer", "covered", "claims", "rating"),
    [
        ("latency rises and throughput grows", (True, True), (None, None), 3),
        ("latency rises, throughput falls", (True, False),
         (None, "the opposite of: Throughput grows."), 1),
        ("lower latency and less throughput", (False, False),
         ("the opposite of: Per-token latency rises.", "the opposite of: Throughput grows."), 1),
        ("faster tokens and higher throughput", (False, True),
         ("the opposite of: Per-token latency rises.", None), 1),
        # negated, the other way is no claim
        ("latency does not fall, and throughput grows", (False, True), (None, None), 2),
        # a direction word alone, without its subject, says nothing of either point
        ("it rises", (False, False), (None, None), None),
        # said both ways at once, and nothing else right: more wrong than right
        ("throughput grows, no wait, throughput falls", (False, False),
         (None, "the opposite of: Throughput grows."), 1),
    ],
)  # fmt: skip
def test_a_direction_said_the_other_way_contradicts_its_point(answer, covered, claims, rating):
    verdict = grade(LATENCY, answer)
    assert (verdict.covered, verdict.wrong_claims, verdict.rating) == (covered, claims, rating)


def test_a_point_said_the_other_way_is_named_in_the_verdict():
    verdict = grade(LATENCY, "latency rises, throughput falls")
    assert kind_of("concept").verdict_lines(LATENCY, verdict)[-1] == (
        'Careful: the answer says the opposite of "Throughput grows.".'
    )


# --------------------------------------------------------------------------- suggestion


@pytest.mark.parametrize(
    ("text", "covered", "claims", "conflicted", "rating"),
    [
        ("", (False, False), (), False, 1),  # nothing said
        ("a b c", (True, True), (), False, 3),
        ("a b c", (True, False), (), False, 2),  # half
        ("a b c", (True, False, False), (), False, None),  # under half, short: cannot tell
        # an answer of 25 words or more: under half is right as far as it goes, and no
        # point at all is Again, as the checklist rates those ticks; 24 words is short
        (" ".join(["word"] * 25), (True, False, False), (), False, 2),
        (" ".join(["word"] * 25), (False, False, False), (), False, 1),
        (" ".join(["word"] * 24), (False, False, False), (), False, None),
        (" ".join(["word"] * 24), (True, False, False), (), False, None),
        (" ".join(["word"] * 24), (True, True, False), (), False, 2),  # half: any length
        (", ".join(["a b"] * 13), (False, False, False), (), False, None),  # a long list
        ("a b c", (True, True, False, False), (), False, 2),
        ("a b c", (True, True, True), ("wrong",), False, 1),
        ("a b c", (True, True, True), ("wrong",), True, None),  # found and contradicted
        ("KV cache, GQA, paging, FlashAttention", (True, True), (), False, None),  # a list
        ("KV cache, GQA", (True, True), (), False, 3),  # two parts are no list
        ("KV heads are shared, cache shrinks, queries unchanged", (True, True), (), False, 3),
        # a list, however long and whatever it names, the user rates; a wrong claim in it
        # is Again, unless its point is said right too
        ("a, b, c, d, e, f word word", (True, False), (), False, None),
        ("a, b, c, d, e, f word word", (False, False), (), False, None),
        ("a, b, c, d, e, f word word", (False, False), ("wrong",), False, 1),
        ("a, b, c, d, e, f word word", (True, False), ("wrong",), True, None),
        ("a: b, c, d, e, f word word", (True, False), (), False, None),
        ("a -> b -> c -> d", (True, False), (), False, None),  # arrows part a list
        ("a. b c. d e.", (True, True), (), False, None),  # and full stops
        ("a, b, c, d, e, f six words in this part", (True,), (), False, 3),  # a long part
    ],
)  # fmt: skip
def test_the_suggestion_says_when_it_cannot_tell(text, covered, claims, conflicted, rating):
    from drill.kinds.concept import suggestion

    assert suggestion(text, covered, claims, conflicted) == rating


def test_a_list_of_terms_is_left_to_the_user_and_the_verdict_says_why():
    verdict = grade(PREFIX, "TTFT, queueing, prefix reuse, radix tree")
    assert verdict.rating is None
    assert verdict.feedback.splitlines()[-1] == (
        "A list of short fragments: from the words alone the grader cannot tell what you "
        "know, so rate it yourself (and say what each does, and why)."
    )


@pytest.mark.parametrize(
    "text",
    [
        "TTFT, queueing, prefix hit, radix tree, prefill, hit rate",  # some points named
        "TTFT, queueing, prefix reuse, radix tree, prefill, hit rate",  # every point
        "- TTFT\n- queueing\n- prefix reuse\n- radix tree",
        "TTFT: lower; queue: part of it; prefix: reuse, radix, hits, prefill",  # a note
        "TTFT, not TPOT, queueing, radix tree, hit rate, prefill",
        "TTFT -> queueing -> radix tree -> hit rate -> prefill -> p99",
    ],
)
def test_any_list_is_left_to_the_user(text):
    verdict = grade(PREFIX, text)
    assert verdict.rating is None
    assert verdict.feedback.splitlines()[-1] == (
        "A list of short fragments: from the words alone the grader cannot tell what you "
        "know, so rate it yourself (and say what each does, and why)."
    )


# --------------------------------------------------------------------------- phrasings


def test_a_cue_finds_every_phrasing_of_its_group():
    from drill.kinds.cues import Answer

    answer = Answer("prefill of the whole prompt runs as one batched forward pass")
    assert answer.finds("a single forward pass")
    assert Answer("L = λW, arrival rate × residence time").finds(
        "arrival rate times time in system"
    )
    assert Answer("throughput times latency").finds("λ × w")
    assert not Answer("by Little's law").finds("arrival rate times time in system")
    assert not Answer("two forward passes").finds("one forward pass")


def test_the_phrasings_file_is_checked():
    from drill.errors import BankError
    from drill.kinds.phrasings import equivalents_table, load_groups

    table = equivalents_table([["a b", "c"], ["c", "d e"]], lambda t: tuple(t.split()))
    assert table[("c",)] == (("a", "b"), ("c",), ("d", "e"))
    assert table[("a", "b")] == (("a", "b"), ("c",))
    assert len(load_groups()) >= 2
    for bad in ("groups: 3", "groups: [[one]]", "groups: [[a, 2]]", "- a", ":"):
        import tempfile
        from pathlib import Path as P

        with tempfile.TemporaryDirectory() as folder:
            path = P(folder) / "phrasings.yaml"
            path.write_text(bad)
            with pytest.raises(BankError, match=r"^phrasings.yaml: "):
                load_groups(path)


def test_key_points_in_one_line_never_read_full_stop_semicolon():
    from drill.kinds.concept import points_text

    assert points_text(["It lowers TTFT.", "The prefill is skipped."]) == (
        "It lowers TTFT; The prefill is skipped."
    )
    assert points_text(["Decode is bandwidth-bound", "GQA shrinks the cache"]) == (
        "Decode is bandwidth-bound; GQA shrinks the cache"
    )
    assert points_text(["One point."]) == "One point."
    assert points_text([]) == ""


@pytest.mark.parametrize(
    ("ticks", "rating"),
    [
        ((False, False, False), 1),
        ((True, False, False), 2),  # one of three: right as far as it goes
        ((False, True, False, False), 2),
        ((True, True, False), 2),
        ((True, True, True), 3),
        ((True,), 3),
        ((False,), 1),
    ],
)
def test_the_checklist_rates_its_ticks(ticks, rating):
    from drill.kinds.concept import rating_from_ticks

    assert rating_from_ticks(ticks) == rating
