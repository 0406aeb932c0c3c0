"""The grader: verdicts, named mistakes and suggested ratings for every kind of item."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drill.bank.misconceptions import MisconceptionInfo, load_misconception_catalogue
from drill.bank.schema import Tolerance
from drill.errors import BankError
from drill.kinds.grade import Verdict, grade
from drill.kinds.instance import Instance, MisconceptionValue
from drill.quantities.units import ANSWER_EXAMPLES, format_quantity

GIB, MIB = 2**30, 2**20
CATALOGUE = load_misconception_catalogue()


def wrong(mid: str, value: float, feedback: str | None = None) -> MisconceptionValue:
    info = CATALOGUE[mid]
    return MisconceptionValue(mid, info.name, value, feedback or info.feedback)


def numeric(expected, unit, show_as=None, misconceptions=(), tolerance=None) -> Instance:
    return Instance(
        question_id="q",
        kind="numeric",
        seed=7,
        text="?",
        topic="kv-cache",
        difficulty=2,
        expected=expected,
        unit=unit,
        show_as=show_as,
        misconceptions=tuple(misconceptions),
        tolerance=tolerance or Tolerance.default(),
    )


# The lesson's worked example: 32 layers, 8 KV heads, head dim 128, 4096 tokens, FP16:
# 2 * 32 * 8 * 128 * 4096 * 2 bytes = 0.5 GiB per request.
KV = numeric(
    2 * 32 * 8 * 128 * 4096 * 2,
    "bytes",
    "GiB",
    [
        wrong("forgot-kv-factor", 32 * 8 * 128 * 4096 * 2),
        wrong("query-heads", 2 * 32 * 32 * 128 * 4096 * 2, "You used 32 query heads, not 8."),
        wrong("forgot-layers", 2 * 8 * 128 * 4096 * 2),
    ],
)
# a decode step: 14 GB of weights at 3.35 TB/s is about 4.18 ms; forgetting KV reads
STEP = numeric(0.02, "seconds", "ms", [wrong("forgot-kv-reads", 0.0042)])
BANDWIDTH = numeric(3.35e12, "bytes_per_s", "TB/s")
WASTE = numeric(0.75, "fraction", "%", [wrong("percent-vs-fraction", 75)])
PREFILL = numeric(2 * 7e9 * 2048, "flop", "TFLOP")  # 2 FLOPs per parameter per token
PEAK = numeric(989e12, "flop_per_s", "TFLOP/s")
TIMES = numeric(4, "count", "×", [wrong("inverted-ratio", 0.25)])
FIT = numeric(12, "requests", None, [wrong("forgot-weights", 19)], tolerance=Tolerance(abs=0.5))
TOKENS = numeric(4096, "tokens", None, [wrong("per-token-not-total", 1)])
SIG = numeric(536870912, "bytes", "GiB", tolerance=Tolerance(sig=2))
KIB = numeric(100 * 1024, "bytes", "KiB")
WIDE = numeric(512 * MIB, "bytes", "MiB", tolerance=Tolerance(rel=0.05))
INSTANCES = {
    "kv": KV,
    "step": STEP,
    "bw": BANDWIDTH,
    "waste": WASTE,
    "prefill": PREFILL,
    "peak": PEAK,
    "times": TIMES,
    "fit": FIT,
    "tokens": TOKENS,
    "sig": SIG,
    "kib": KIB,
    "wide": WIDE,
}

TABLE = [
    # instance, answer, status, correct, misconception id, value read (base units)
    ("kv", "0.5 GiB", "correct", True, None, GIB / 2),
    ("kv", "0.5GiB", "correct", True, None, GIB / 2),
    ("kv", "536870912", "correct", True, None, 536870912),
    ("kv", "536,870,912", "correct", True, None, 536870912),
    ("kv", "536 870 912 bytes", "correct", True, None, 536870912),
    ("kv", "2*32*8*128*4096*2", "correct", True, None, 536870912),
    ("kv", "2^29 B", "correct", True, None, 536870912),
    ("kv", "512 MiB", "correct", True, None, GIB / 2),
    ("kv", "537 MB", "correct", True, None, 537e6),
    ("kv", "0.537 GB", "correct", True, None, 537e6),
    ("kv", "5.37e8", "correct", True, None, 537e6),
    ("kv", "4 Gib", "correct", True, None, GIB / 2),  # bits, converted correctly
    ("kv", "0.5", "unit", True, None, GIB / 2),
    ("kv", "0.5 GiB/s", "unit", False, "rate-vs-count", GIB / 2),
    ("kv", "0.5 ms", "unit", False, None, 0.0005),
    ("kv", "0.25 GiB", "misconception", False, "forgot-kv-factor", GIB / 4),
    ("kv", "268435456", "misconception", False, "forgot-kv-factor", GIB / 4),
    ("kv", "0.25", "misconception", False, "forgot-kv-factor", GIB / 4),
    ("kv", "2 GiB", "misconception", False, "query-heads", 2 * GIB),
    ("kv", "2147483648 bytes", "misconception", False, "query-heads", 2 * GIB),
    ("kv", "16 MiB", "misconception", False, "forgot-layers", 16 * MIB),
    ("kv", "0.5 GB", "misconception", False, "gb-vs-gib", 5e8),
    ("kv", "0.537", "wrong", False, None, 0.537 * GIB),  # right in GB: no unit, no slip
    ("kv", "0.5 Gib", "misconception", False, "bits-vs-bytes", GIB / 16),
    ("kv", "4294967296", "wrong", False, None, 4294967296 * GIB),  # right in bits
    ("kv", "512 GiB", "misconception", False, "off-by-1024", 512 * GIB),
    ("kv", "0.5 TiB", "misconception", False, "off-by-1024", 512 * GIB),
    ("kv", "512", "wrong", False, None, 512 * GIB),  # right in MiB, a unit it never shows
    ("kv", "0.5 MiB", "misconception", False, "off-by-1024", MIB / 2),
    ("kv", "5 GiB", "magnitude", False, None, 5 * GIB),
    ("kv", "0.05 GiB", "magnitude", False, None, 0.05 * GIB),
    ("kv", "0.6 GiB", "magnitude", False, None, 0.6 * GIB),
    ("kv", "0.51 GiB", "magnitude", False, None, 0.51 * GIB),  # 2% off: not a GB/GiB slip
    # the number right in MB or GB, written with the binary prefix
    ("kv", "536.9 MiB", "misconception", False, "gb-vs-gib", 536.9 * MIB),
    ("kv", "537 MiB", "misconception", False, "gb-vs-gib", 537 * MIB),
    ("kv", "0.537 GiB", "misconception", False, "gb-vs-gib", 0.537 * GIB),
    ("kv", "0.54 GiB", "misconception", False, "gb-vs-gib", 0.54 * GIB),  # within 1% of 0.537
    ("kv", "0.55 GiB", "magnitude", False, None, 0.55 * GIB),
    ("kv", "536,871 KiB", "misconception", False, "gb-vs-gib", 536871 * 1024),
    ("kv", "100 GiB", "wrong", False, None, 100 * GIB),
    ("kv", "-0.5 GiB", "wrong", False, None, -GIB / 2),
    ("kv", "half a gig", "unreadable", False, None, None),
    ("kv", "0.5 furlongs", "unreadable", False, None, None),
    ("kv", "", "unreadable", False, None, None),
    ("step", "20 ms", "correct", True, None, 0.02),
    ("step", "0.02 s", "correct", True, None, 0.02),
    ("step", "20000 us", "correct", True, None, 0.02),
    ("step", "0.02", "correct", True, None, 0.02),
    ("step", "20", "unit", True, None, 0.02),
    ("step", "20 s", "misconception", False, "ms-vs-s", 20),
    ("step", "20 µs", "misconception", False, "ms-vs-s", 2e-5),
    ("step", "4.2 ms", "misconception", False, "forgot-kv-reads", 0.0042),
    ("step", "20 GB", "unit", False, None, 2e10),
    ("bw", "3.35 TB/s", "correct", True, None, 3.35e12),
    ("bw", "3350 GB per second", "correct", True, None, 3.35e12),
    ("bw", "3.35", "unit", True, None, 3.35e12),
    ("bw", "3.35 TiB/s", "misconception", False, "gb-vs-gib", 3.35 * 2**40),
    ("bw", "3.05 TB/s", "misconception", False, "gb-vs-gib", 3.05e12),  # right in TiB/s
    ("bw", "3.2 TB/s", "magnitude", False, None, 3.2e12),
    ("bw", "3.05 GB/ms", "magnitude", False, None, 3.05e12),  # 3.05 GiB/ms is not it either
    ("sig", "0.52 GiB", "magnitude", False, None, 0.52 * GIB),  # 0.52 GB misses 2 sig. digits
    ("kib", "102.4 KiB", "misconception", False, "gb-vs-gib", 102.4 * 1024),
    ("kib", "101.4 KiB", "magnitude", False, None, 101.4 * 1024),  # 101.4 kB is 1% off too
    # a 5% tolerance takes 537 MiB for 512 MiB: it cannot tell MB from MiB apart
    ("wide", "5.4e2 MiB", "magnitude", False, None, 540 * MIB),
    ("bw", "26.8 Tbps", "correct", True, None, 3.35e12),
    ("bw", "3.35 Tbps", "misconception", False, "bits-vs-bytes", 3.35e12 / 8),
    ("bw", "3.35 GB/s", "misconception", False, "off-by-1000", 3.35e9),
    ("bw", "3.35 TB", "unit", False, "rate-vs-count", 3.35e12),
    ("waste", "75%", "correct", True, None, 0.75),
    ("waste", "75 %", "correct", True, None, 0.75),
    ("waste", "0.75", "correct", True, None, 0.75),
    ("waste", "3/4", "correct", True, None, 0.75),
    ("waste", "75", "misconception", False, "percent-vs-fraction", 75),
    ("waste", "7500%", "misconception", False, "percent-vs-fraction", 75),
    ("waste", "0.75%", "misconception", False, "percent-vs-fraction", 0.0075),
    ("waste", "25%", "misconception", False, "complement-fraction", 0.25),
    ("waste", "1/4", "misconception", False, "complement-fraction", 0.25),
    ("waste", "80%", "magnitude", False, None, 0.8),
    ("prefill", "28.7 TFLOP", "correct", True, None, 28.7e12),
    ("prefill", "2*7e9*2048", "correct", True, None, 2.8672e13),
    ("prefill", "14.3 TFLOP", "misconception", False, "flops-2x", 14.3e12),
    ("prefill", "28.7 GFLOP", "misconception", False, "off-by-1000", 28.7e9),
    ("prefill", "28.7 TFLOP/s", "unit", False, "rate-vs-count", 28.7e12),
    ("peak", "989 TFLOPS", "correct", True, None, 989e12),
    ("peak", "989 TFLOP/s", "correct", True, None, 989e12),
    ("peak", "989 TFLOPs", "correct", True, None, 989e12),  # ambiguous spelling, a rate asked
    ("peak", "0.989 PFLOPS", "correct", True, None, 989e12),
    ("times", "4", "correct", True, None, 4),
    ("times", "4x", "correct", True, None, 4),
    ("times", "4×", "correct", True, None, 4),
    ("times", "4 requests", "correct", True, None, 4),
    ("times", "0.25", "misconception", False, "inverted-ratio", 0.25),
    ("fit", "12", "correct", True, None, 12),
    ("fit", "12 requests", "correct", True, None, 12),
    ("fit", "12.4", "correct", True, None, 12.4),
    ("fit", "19", "misconception", False, "forgot-weights", 19),
    ("fit", "13", "magnitude", False, None, 13),
    ("fit", "12 tokens", "unit", False, None, 12),
    ("tokens", "4,096 tokens", "correct", True, None, 4096),
    ("tokens", "4096", "correct", True, None, 4096),
    ("tokens", "1 token", "misconception", False, "per-token-not-total", 1),
    ("sig", "0.5 GiB", "correct", True, None, GIB / 2),
    ("sig", "540 MB", "correct", True, None, 540e6),  # 5.4e8 to 2 significant figures
    ("sig", "0.5 GB", "misconception", False, "gb-vs-gib", 5e8),
]


@pytest.mark.parametrize(("name", "answer", "status", "correct", "mid", "value"), TABLE)
def test_numeric_table(name, answer, status, correct, mid, value):
    verdict = grade(INSTANCES[name], answer, duration_ms=20_000)
    assert (verdict.status, verdict.correct, verdict.misconception) == (status, correct, mid)
    if value is None:
        assert verdict.value is None
    else:
        assert verdict.value == pytest.approx(value, rel=1e-9)
    assert verdict.expected == INSTANCES[name].expected
    assert verdict.unit == INSTANCES[name].unit
    assert verdict.rating == (2 if status == "unit" and correct else 3 if correct else 1)
    if mid is not None:
        assert verdict.misconception_name == CATALOGUE[mid].name


def test_table_is_large_enough():
    assert len(TABLE) >= 50


def test_question_feedback_overrides_the_catalogue_and_shows_the_answer():
    verdict = grade(KV, "2 GiB")
    assert (
        verdict.feedback == "You used 32 query heads, not 8. You gave 2 GiB; the answer is 0.5 GiB."
    )
    verdict = grade(KV, "0.25 GiB")
    assert verdict.feedback.startswith(CATALOGUE["forgot-kv-factor"].feedback)
    assert verdict.feedback.endswith("You gave 0.25 GiB; the answer is 0.5 GiB.")


def test_feedback_for_unit_slips():
    assert grade(KV, "0.5").feedback == "Right number, but give the unit: 0.5 GiB."
    assert grade(WASTE, "75").feedback == (
        "A fraction of 0.75 is 75 percent. Write either 0.75 (or 3/4) or 75%; a bare 75 means "
        "seventy-five, not seventy-five percent. You gave 75; the answer is 75%."
    )
    assert grade(KV, "0.5 GiB/s").feedback == (
        "GiB/s is a rate, per second; the question asks for a size in bytes: 0.5 GiB."
    )


def test_bare_number_feedback_says_how_it_was_read():
    feedback = grade(KV, "268435456").feedback
    assert feedback.endswith(
        "Your 268,435,456 reads as 0.25 GiB; the answer is 0.5 GiB. Give the unit too."
    )
    assert grade(KV, "100").feedback == (
        "Give the unit: the answer is in GiB. A bare 100 is not the answer in GiB or bytes."
    )


def test_magnitude_feedback():
    assert grade(KV, "5 GiB").feedback == (
        "Right digits, wrong power of ten (10^1 too large). You gave 5 GiB; the answer is 0.5 GiB."
    )
    assert grade(KV, "0.6 GiB").feedback == (
        "The right order of magnitude, but 20% too high. You gave 0.6 GiB; the answer is 0.5 GiB."
    )


def test_unreadable_answer_gives_examples_and_is_not_right():
    verdict = grade(KV, "half a gig")
    assert verdict.status == "unreadable"
    assert verdict.correct is False
    assert verdict.rating == 1
    assert ANSWER_EXAMPLES in verdict.feedback


def test_huge_answers_are_refused():
    assert grade(KV, "9**9**9**9").status == "unreadable"
    verdict = grade(KV, "1+" * 100_000 + "1")
    assert verdict.status == "unreadable"
    assert "too long (200,001 characters" in verdict.feedback


def test_a_misconception_equal_to_the_answer_never_fires():
    same = numeric(100, "tokens", None, [wrong("forgot-layers", 100)])
    assert grade(same, "100").status == "correct"
    assert grade(same, "50").misconception is None


def test_question_misconceptions_come_before_generic_slips():
    # the question names 'forgot the request count' for a value that is also 1000x off
    instance = numeric(8e9, "bytes", "GB", [wrong("forgot-requests", 8e6)])
    assert grade(instance, "8 MB").misconception == "forgot-requests"
    assert grade(instance, "8 TB").misconception == "off-by-1000"


@pytest.mark.parametrize(
    ("duration_ms", "hinted", "rating"),
    [(20_000, False, 3), (5_000, False, 4), (None, False, 3), (5_000, True, 2), (20_000, True, 2)],
)
def test_ratings_for_a_right_answer(duration_ms, hinted, rating):
    assert grade(KV, "0.5 GiB", duration_ms=duration_ms, hinted=hinted).rating == rating


def test_fast_threshold_is_adjustable():
    assert grade(KV, "0.5 GiB", duration_ms=5_000, fast_ms=3_000).rating == 3
    assert grade(KV, "0.5 GiB", duration_ms=2_000, fast_ms=3_000).rating == 4


def test_unit_slip_and_wrong_answers_are_never_easy():
    assert grade(KV, "0.5", duration_ms=100).rating == 2
    assert grade(KV, "2 GiB", duration_ms=100).rating == 1
    assert grade(KV, "nonsense", duration_ms=100).rating == 1


def test_verdict_to_json():
    data = grade(KV, "2 GiB", duration_ms=1000).to_json()
    assert json.loads(json.dumps(data)) == data
    assert data["status"] == "misconception"
    assert data["misconception"] == "query-heads"
    assert data["correct"] is False
    assert data["value"] == 2 * GIB
    assert data["expected"] == 536870912
    assert data["unit"] == "bytes"
    assert data["rating"] == 1
    assert data["covered"] == []
    assert set(data) == set(Verdict.__dataclass_fields__)


# --- choice --------------------------------------------------------------------------

CHOICE = Instance(
    question_id="c",
    kind="choice",
    seed=1,
    text="What limits a decode step?",
    topic="prefill-decode",
    difficulty=1,
    options=("HBM bandwidth", "Peak tensor FLOPs", "PCIe", "Disk"),
    option_why=(None, "That limits prefill.", None, None),
    correct_options=(0,),
)
MULTI = Instance(
    question_id="m",
    kind="choice",
    seed=1,
    text="Which help decode?",
    topic="prefill-decode",
    difficulty=1,
    options=("w", "x", "y", "z"),
    correct_options=(0, 2),
)


@pytest.mark.parametrize(
    ("instance", "answer", "status"),
    [
        (CHOICE, "1", "correct"),
        (CHOICE, "a", "correct"),
        (CHOICE, "A", "correct"),
        (CHOICE, "(a)", "correct"),
        (CHOICE, "hbm bandwidth", "correct"),
        (CHOICE, "2", "wrong"),
        (CHOICE, "b", "wrong"),
        (CHOICE, "1,2", "wrong"),
        (CHOICE, "5", "unreadable"),
        (CHOICE, "e", "unreadable"),
        (CHOICE, "", "unreadable"),
        (CHOICE, "the first", "unreadable"),
        (MULTI, "a,c", "correct"),
        (MULTI, "1 3", "correct"),
        (MULTI, "c and a", "correct"),
        (MULTI, "a", "wrong"),
        (MULTI, "a b c", "wrong"),
    ],
)
def test_choice(instance, answer, status):
    verdict = grade(instance, answer, duration_ms=20_000)
    assert verdict.status == status
    assert verdict.correct is (status == "correct")
    assert verdict.rating == (3 if status == "correct" else 1)


def test_choice_feedback():
    assert grade(CHOICE, "b").feedback == "You chose 2; the answer is 1. That limits prefill."
    assert grade(MULTI, "a").feedback == "You chose 1; the answer is 1 and 3. Missed 3."
    assert grade(CHOICE, "9").feedback.startswith(
        "Cannot read that: '9' is not one of 1-4 (or a-d)"
    )
    assert grade(CHOICE, "a", duration_ms=3_000).rating == 4


# --- order ---------------------------------------------------------------------------

ORDER = Instance(
    question_id="o",
    kind="order",
    seed=1,
    text="Put the decode loop in order.",
    topic="prefill-decode",
    difficulty=1,
    items=("Sample", "Read KV", "Append", "Attend"),
    correct_order=(1, 3, 0, 2),
)


@pytest.mark.parametrize(
    ("answer", "status"),
    [
        ("2 4 1 3", "correct"),
        ("2,4,1,3", "correct"),
        ("2, 4, 1, 3", "correct"),
        ("b d a c", "correct"),
        ("2413", "correct"),
        ("bdac", "correct"),
        ("2 > 4 > 1 > 3", "correct"),
        ("1 2 3 4", "wrong"),
        ("2 4 3 1", "wrong"),
        ("2 4 1", "unreadable"),
        ("2 2 1 3", "unreadable"),
        ("2 4 1 5", "unreadable"),
        ("", "unreadable"),
    ],
)
def test_order(answer, status):
    verdict = grade(ORDER, answer, duration_ms=20_000)
    assert verdict.status == status
    assert verdict.correct is (status == "correct")


def test_order_feedback_counts_items_in_place():
    assert grade(ORDER, "2 4 3 1").feedback == "2 of 4 in the right place. Right order: 2 4 1 3."
    assert grade(ORDER, "1 2 3 4").feedback == "0 of 4 in the right place. Right order: 2 4 1 3."
    assert "each of the numbers 1-4 exactly once" in grade(ORDER, "2 2 1 3").feedback


# --- concept -------------------------------------------------------------------------

CONCEPT = Instance(
    question_id="k",
    kind="concept",
    seed=1,
    text="Why does decode not speed up with more FLOPs?",
    topic="prefill-decode",
    difficulty=2,
    answer_text="...",
    key_points=(
        ("Each step reads the KV cache and weights", ("kv cache", "reads the weights", "K+V")),
        ("Decode is bandwidth-bound", ("bandwidth-bound", "memory bound", "HBM")),
        ("GQA shrinks the cache", ("kv heads", "grouped-query")),
    ),
)


@pytest.mark.parametrize(
    ("answer", "covered", "rating"),
    [
        ("It is memory-bound and reads the KV-cache", (True, True, False), 2),
        (
            "bandwidth bound; K+V; grouped query attention with fewer KV heads",
            (True, True, True),
            3,
        ),
        ("HBMs", (False, True, False), None),  # one point of three: the grader cannot tell
        ("kvcache", (True, False, False), None),
        ("", (False, False, False), 1),  # nothing said
        ("no idea", (False, False, False), None),
        ("membound", (False, False, False), None),
        ("SHBM", (False, False, False), None),  # a cue inside another word does not count
    ],
)
def test_concept_coverage(answer, covered, rating):
    verdict = grade(CONCEPT, answer)
    assert verdict.status == "self"
    assert verdict.correct is None
    assert verdict.covered == covered
    assert verdict.rating == rating


def test_concept_feedback_and_hint_cap():
    verdict = grade(CONCEPT, "it is memory bound as it reads the kv cache; kv heads", hinted=True)
    assert verdict.rating == 2
    assert verdict.feedback == (
        "Covered: Each step reads the KV cache and weights; Decode is bandwidth-bound; "
        "GQA shrinks the cache"
    )
    assert grade(CONCEPT, "HBM").feedback == (
        "Covered: Decode is bandwidth-bound\n"
        "Missed: Each step reads the KV cache and weights; GQA shrinks the cache"
    )


# --- catalogue -----------------------------------------------------------------------

REQUIRED = """forgot-kv-factor query-heads gb-vs-gib bits-vs-bytes forgot-requests off-by-1024
hidden-size wrong-dtype-bytes forgot-layers per-token-not-total off-by-1000 forgot-weights
used-full-context flops-2x ms-vs-s percent-vs-fraction complement-fraction""".split()


def test_catalogue_has_the_named_mistakes():
    assert set(REQUIRED) <= set(CATALOGUE)
    for mid, info in CATALOGUE.items():
        assert isinstance(info, MisconceptionInfo)
        assert info.id == mid
        assert info.name and len(info.name) <= 60
        assert info.feedback and "{" not in info.feedback


def test_catalogue_is_a_copy_each_time():
    first = load_misconception_catalogue()
    first.pop("gb-vs-gib")
    assert "gb-vs-gib" in load_misconception_catalogue()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: [1, 2\n", r"bad\.yaml:\d+: the misconception catalogue is not valid YAML"),
        ("- just a list\n", "must map ids"),
        ("Bad_Id: {name: x, feedback: y}\n", "'Bad_Id' is not an id"),
        ("ok-id: {name: x}\n", "'ok-id' needs exactly the fields name and feedback"),
        ("ok-id: {name: x, feedback: '  '}\n", "non-empty"),
    ],
)
def test_catalogue_errors_name_the_file(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BankError, match=message):
        load_misconception_catalogue(path)


# --- properties ------------------------------------------------------------------------

ALL = [*INSTANCES.values(), CHOICE, MULTI, ORDER, CONCEPT]


@settings(max_examples=300)
@given(st.sampled_from(ALL), st.text(max_size=60))
def test_any_text_gets_a_verdict(instance, text):
    verdict = grade(instance, text, duration_ms=1000)
    # a concept answer's reading may be too uncertain to suggest a rating
    assert verdict.rating in (1, 2, 3, 4) or (verdict.rating is None and verdict.status == "self")
    if verdict.correct:
        assert verdict.status in ("correct", "unit")
    if verdict.status in ("unreadable", "wrong", "magnitude", "misconception"):
        assert verdict.correct is False and verdict.rating == 1
    assert (verdict.misconception is not None) == (verdict.status == "misconception")


_SYMBOLS = {
    "bytes": ["GiB", "MiB", "GB", "KiB", "TB", "bytes"],
    "seconds": ["ms", "us", "s", "ns", "seconds"],
    "bytes_per_s": ["TB/s", "GB/s", "GiB/s", "bytes_per_s"],
    "flop": ["TFLOP", "GFLOP", "flop"],
    "flop_per_s": ["TFLOP/s", "PFLOP/s", "flop_per_s"],
    "fraction": ["%", "fraction"],
    "tokens_per_s": ["tokens/s"],
}


@settings(max_examples=300)
@given(st.data(), st.floats(min_value=1e-6, max_value=1e16), st.integers(3, 6))
def test_the_expected_value_as_shown_is_graded_right(data, magnitude, digits):
    unit = data.draw(st.sampled_from(sorted(_SYMBOLS)))
    if unit == "fraction":
        magnitude = magnitude / (1 + magnitude)
    show_as = data.draw(st.sampled_from(_SYMBOLS[unit]))
    instance = numeric(magnitude, unit, show_as)
    verdict = grade(instance, format_quantity(magnitude, show_as, digits=digits))
    assert (verdict.status, verdict.correct) == ("correct", True)


@settings(max_examples=200)
@given(
    st.sampled_from([16, 24, 32, 40, 80]),
    st.sampled_from([1, 2, 4, 8]),
    st.sampled_from([64, 128]),
    st.integers(1, 64).map(lambda k: k * 512),
    st.sampled_from([1, 2]),
)
def test_forgetting_the_kv_factor_is_named_on_any_draw(layers, kv_heads, head_dim, seq, dtype):
    total = 2 * layers * kv_heads * head_dim * seq * dtype
    instance = numeric(total, "bytes", "GiB", [wrong("forgot-kv-factor", total / 2)])
    verdict = grade(instance, format_quantity(total / 2, "GiB"))
    assert verdict.misconception == "forgot-kv-factor"
    assert grade(instance, format_quantity(total, "MiB")).status == "correct"


def test_bare_number_in_the_best_fit_unit_when_no_show_as():
    instance = numeric(536870912, "bytes")  # best fit: 512 MiB
    verdict = grade(instance, "512")
    assert (verdict.status, verdict.correct, verdict.rating) == ("unit", True, 2)
    assert verdict.feedback == "Right number, but give the unit: 512 MiB."


@pytest.mark.parametrize("text", [">", ",", " , ; ", "->"])
def test_separators_alone_are_unreadable(text):
    assert grade(CHOICE, text).status == "unreadable"
    assert grade(ORDER, text).status == "unreadable"


def test_a_far_off_answer_is_shown_in_its_own_unit():
    per_token = numeric(61440, "bytes", "KiB")
    near = grade(per_token, "120 KiB")
    far = grade(per_token, "1 GiB")
    assert near.feedback.endswith("You gave 120 KiB; the answer is 60 KiB.")
    assert far.feedback.endswith("You gave 1 GiB; the answer is 60 KiB.")


@pytest.mark.parametrize(
    ("expected", "unit", "answer"),
    [(1e300, "bytes", "7 GiB"), (1e300, "bytes", "5"), (1.7e308, "bytes", "1 B"),
     (1e305, "seconds", "3 s"), (1e306, "flop", "1 FLOP")],
)  # fmt: skip
def test_a_slip_ratio_that_overflows_names_no_slip(expected, unit, answer):
    # the answer times 1024^4 (or 1000^4, or 8) is inf, which every number is "near"
    verdict = grade(numeric(expected, unit), answer)
    assert (verdict.correct, verdict.status, verdict.misconception) == (False, "wrong", None)


def test_an_answer_off_by_less_than_a_percent_is_told_how_far_and_the_tolerance():
    # 3.03 s is 3 significant figures of 3,025 ms; the question wants it to ±0.5 ms
    e2e = numeric(3.025, "seconds", "ms", tolerance=Tolerance(abs=0.0005))
    verdict = grade(e2e, "3.03 s")
    assert (verdict.correct, verdict.status) == (False, "magnitude")
    assert verdict.feedback == (
        "The right order of magnitude, but 0.2% too high. Accepted within ±0.5 ms. "
        "You gave 3,030 ms; the answer is 3,025 ms."
    )
    four_figures = numeric(0.02, "seconds", "ms", tolerance=Tolerance(sig=4))
    assert grade(four_figures, "19.9 ms").feedback == (
        "The right order of magnitude, but 0.5% too low. Accepted to 4 significant figures. "
        "You gave 19.9 ms; the answer is 20 ms."
    )


# ------------------------------------------------------------------ mistakes typed rounded


def test_a_mistake_typed_to_three_digits_is_named_under_a_tight_tolerance():
    # 0.2 %: 172 ms is 0.23 % off the mistake worth 172.4 ms, but half a digit of "172"
    # is 0.29 %: typed to its precision, it is that mistake
    tight = Tolerance(rel=0.002)
    instance = numeric(
        0.19808, "seconds", "ms",
        [wrong("forgot-kv-factor", 0.1724), wrong("query-heads", 0.18008)], tight,
    )  # fmt: skip
    for answer in ("172 ms", "0.172 s", "1.72e2 ms"):
        verdict = grade(instance, answer)
        assert (verdict.correct, verdict.misconception) == (False, "forgot-kv-factor"), answer
    # two digits are too coarse to tell a mistake by
    assert grade(instance, "0.17 s").misconception is None
    assert grade(instance, "170 ms").misconception is None  # 1.4 % off: not typed so


def test_a_rounding_that_fits_the_right_answer_names_no_mistake():
    # "100" may be 100.3 rounded as well as 100.4: no mistake is named for it
    instance = numeric(
        100.3, "seconds", "s", [wrong("forgot-kv-factor", 100.4)], Tolerance(rel=0.0005)
    )
    verdict = grade(instance, "100 s")
    assert (verdict.correct, verdict.misconception) == (False, None)
    assert grade(instance, "100.4 s").misconception == "forgot-kv-factor"


def test_of_two_mistakes_within_the_tolerance_the_nearer_is_named():
    # decode-tpot-tp-preset, seed 0: 10.82 ms and 10.93 ms are 1 % apart
    instance = numeric(
        0.015612, "seconds", "ms",
        [wrong("forgot-kv-factor", 0.010818), wrong("query-heads", 0.010928)],
    )  # fmt: skip
    assert grade(instance, "10.9 ms").misconception == "query-heads"
    assert grade(instance, "10.8 ms").misconception == "forgot-kv-factor"
    # equally near: the first listed
    same = numeric(
        0.015612, "seconds", "ms", [wrong("forgot-kv-factor", 0.0109), wrong("query-heads", 0.0109)]
    )
    assert grade(same, "10.9 ms").misconception == "forgot-kv-factor"


@pytest.mark.parametrize(
    "instance, answer, tail",
    [
        ("kv", "536.9 MiB", "You wrote 536.9 MiB; 536.9 MB would be right (the answer is 0.5 GiB)."),
        ("kv", "536,871 KiB", "You wrote 536,871 KiB; 536,871 kB would be right (the answer is 0.5 GiB)."),
        ("bw", "3.05 TB/s", "You wrote 3.05 TB/s; 3.05 TiB/s would be right (the answer is 3.35 TB/s)."),
    ],
)
def test_the_other_prefix_is_named_with_the_unit_that_would_be_right(instance, answer, tail):
    verdict = grade(INSTANCES[instance], answer)
    assert verdict.misconception == "gb-vs-gib"
    assert verdict.feedback.endswith(" Keep the prefix the question uses. " + tail)
