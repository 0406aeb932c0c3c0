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
    ("TTFT", ONE, None, 1),
    ("ttft", ONE, None, 1),
    ("the time to the first token", ONE, None, 1),
    ("requests are queued", TWO, None, 1),
    ("queueing", TWO, None, 1),
    ("queuing delay", TWO, None, 1),
    ("the queues", TWO, None, 1),
    ("we skipped the prefill of the prefix", (False, False, True), None, 1),
    ("it reuses the stored K and V", (False, False, True), None, 1),
    ("TTFTs", ONE, None, 1),
    ("TTFTX or XTTFT", NONE, None, 1),  # a cue inside another word is not the cue
    # negation before the cue
    ("not TTFT", NONE, None, 1),
    ("TPOT, not TTFT", NONE, None, 1),
    ("TPOT not TTFT", NONE, None, 1),
    ("no queueing at all", NONE, None, 1),
    ("it doesn't include queueing", NONE, None, 1),
    ("it isn't really about the time to first token", NONE, None, 1),
    ("neither TTFT nor queueing", NONE, None, 1),
    ("without queueing", NONE, None, 1),
    ("it never touches TTFT", NONE, None, 1),
    # contrast
    ("TPOT rather than TTFT", NONE, None, 1),
    ("TPOT instead of TTFT", NONE, None, 1),
    ("TPOT as opposed to TTFT", NONE, None, 1),
    ("TTFT rather than TPOT", ONE, None, 1),
    # negation after the cue
    ("queueing is not included", NONE, None, 1),
    ("TTFT doesn't change", NONE, None, 1),
    ("queueing time is not included", NONE, None, 1),
    ("the queue wait time isn't counted", NONE, None, 1),
    ("queueing is excluded", NONE, None, 1),
    ("queue time is left out", NONE, None, 1),
    ("queueing delay is ignored", NONE, None, 1),
    ("TTFT is lowered", ONE, None, 1),
    ("TTFT really does not change", NONE, None, 1),
    ("it lowers TTFT since TPOT is not affected", ONE, None, 1),
    ("it lowers TTFT as decode is not affected", ONE, None, 1),
    ("TTFT drops, decode speed is not affected", ONE, None, 1),
    # negation reaches only so far (NEGATION_REACH: four words), and not across a clause
    ("it is not big big big big TTFT", NONE, None, 1),
    ("it is not big big big big big TTFT", ONE, None, 1),
    ("TTFT, not TPOT", ONE, None, 1),
    ("TTFT not TPOT", ONE, None, 1),
    ("not only TTFT but queueing too", (True, True, False), None, 2),
    ("No, it lowers TTFT", ONE, None, 1),
    ("No it lowers TTFT", ONE, None, 1),
    ("not decode but TTFT", ONE, None, 1),
    ("it is not TPOT; TTFT drops", ONE, None, 1),
    ("without a cache every request would queue", TWO, None, 1),
    ("TPOT is unchanged and TTFT drops", ONE, None, 1),
    # wrong claims: one found marks its point missed and suggests Again
    ("it speeds up decode", NONE, CLAIM, 1),
    ("TTFT drops and it speeds up decode too", NONE, CLAIM, 1),
    ("it improves TPOT, queueing and reuse", (False, True, True), CLAIM, 1),
    ("it does not speed up decode; TTFT drops", ONE, None, 1),
    ("rather than speeding up decode it cuts TTFT", ONE, None, 1),
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
        "Missed: It lowers TTFT.; The shared prefix's prefill is skipped.\n"
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
    assert grade(single, "TPOT").rating == 1


def test_the_stemmer_is_loaded_only_when_an_answer_is_read():
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from drill.bank.loader import load_default_bank\n"
        "from drill.kinds import make_instance\n"
        "question = load_default_bank().get('define-ttft')\n"
        "instance = make_instance(question, 1)\n"
        "print('snowballstemmer' in sys.modules)\n"
        "from drill.kinds.grade import grade\n"
        "grade(instance, 'queued')\n"
        "print('snowballstemmer' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]
