"""What the grader works out once per question is keyed by everything it depends on.

The numeric grader reads what a question counts and the units a bare number is read in
once per draw (its text, units and answer), and a plain number without the evaluator;
the concept grader reads a question's cues once (points, cues and wrong claims). Each
test grades one question, then another that differs in one input only, and repeats, so
a result kept for one is never served for the other.
"""

from hypothesis import given
from hypothesis import strategies as st

from drill.bank.schema import Tolerance
from drill.kinds.cues import coverage
from drill.kinds.grade import grade
from drill.kinds.instance import Instance
from drill.quantities.expr import compile_expr
from drill.quantities.units import parse_answer


def numeric(expected, unit, show_as, text) -> Instance:
    return Instance(
        question_id="q", kind="numeric", seed=1, text=text, topic="t", difficulty=2,
        expected=expected, unit=unit, show_as=show_as, tolerance=Tolerance.default(),
    )  # fmt: skip


BLOCKS = numeric(16021, "count", None, "How many blocks does the pool hold?")
PAGES = numeric(16021, "count", None, "How many pages does the pool hold?")


def test_the_thing_counted_follows_the_question_text():
    for _ in range(2):
        assert grade(BLOCKS, "16,021 blocks").status == "correct"
        verdict = grade(PAGES, "16,021 blocks")
        assert (verdict.status, verdict.correct) == ("unit", False)
        assert verdict.feedback == (
            "You answered in blocks; the question counts pages: 16,021 pages."
        )


def test_the_thing_counted_follows_the_unit():
    tokens = numeric(16021, "tokens", None, "How long is the prompt?")
    plain = numeric(16021, "count", None, "How long is the prompt?")
    for _ in range(2):
        verdict = grade(tokens, "16,021 blocks")
        assert (verdict.status, verdict.correct) == ("unit", False)
        assert verdict.feedback == (
            "You answered in blocks; the question counts tokens: 16,021 tokens."
        )
        assert grade(plain, "16,021 blocks").status == "correct"


HALF_GIB = numeric(536_870_912, "bytes", "GiB", "How large is the cache?")
HALF_GIB_IN_MIB = numeric(536_870_912, "bytes", "MiB", "How large is the cache?")
ONE_GIB = numeric(1_073_741_824, "bytes", "GiB", "How large is the cache?")
STATED_MB = numeric(536_870_912, "bytes", "MiB", "A 536.870912 MB cache: how large is it?")


def test_bare_readings_follow_the_display_unit_and_the_answer():
    for _ in range(2):
        verdict = grade(HALF_GIB, "0.5")
        assert (verdict.status, verdict.correct, verdict.rating) == ("unit", True, 2)
        assert verdict.feedback == "Right number, but give the unit: 0.5 GiB."
        verdict = grade(HALF_GIB_IN_MIB, "0.5")
        assert (verdict.status, verdict.correct) == ("wrong", False)
        assert verdict.feedback == (
            "Give the unit: the answer is in MiB. A bare 0.5 is not the answer in MiB or "
            "bytes (it would be in GiB)."
        )
        verdict = grade(ONE_GIB, "0.5")
        assert (verdict.status, verdict.value) == ("magnitude", 536_870_912.0)


def test_bare_readings_follow_the_units_the_text_states():
    for _ in range(2):
        verdict = grade(STATED_MB, "536.870912")
        assert (verdict.status, verdict.correct) == ("unit", True)
        assert verdict.feedback == "Right number, but give the unit: 537 MB."
        assert grade(HALF_GIB_IN_MIB, "536.870912").status == "wrong"


def test_plain_numbers_read_as_the_evaluator_reads_them():
    assert parse_answer("536870912").value == 536_870_912.0
    assert parse_answer("9007199254740993 bytes").value == 9_007_199_254_740_992.0
    assert parse_answer("5.4e8").value == 540_000_000.0
    assert parse_answer("5.").value == 5.0
    assert parse_answer(".5").value == 0.5
    assert parse_answer("007.5").value == 7.5
    assert parse_answer("172").typed_precision == 0.5 / 172


_LITERALS = st.one_of(
    st.from_regex(r"(0|[1-9][0-9]{0,330})", fullmatch=True),
    st.from_regex(r"[0-9]{1,5}\.[0-9]{0,5}([eE][+-]?[0-9]{1,3})?", fullmatch=True),
    st.from_regex(r"\.[0-9]{1,5}([eE][+-]?[0-9]{1,3})?", fullmatch=True),
    st.from_regex(r"[0-9]{1,5}[eE][+-]?[0-9]{1,3}", fullmatch=True),
)


@given(_LITERALS)
def test_a_plain_number_reads_as_its_arithmetic(text):
    """Read without the evaluator, a plain number is the evaluator's number, exactly
    (an int stays an int); one the evaluator refuses is refused with its reason."""
    try:
        number = compile_expr(text).evaluate({})
    except Exception as exc:  # noqa: BLE001 - the refusal is compared below
        try:
            parse_answer(text)
        except Exception as refused:  # noqa: BLE001
            assert str(exc) in str(refused)
        else:
            raise AssertionError(f"{text!r} read although the evaluator refuses it") from None
        return
    parsed = parse_answer(text)
    assert parsed.value == float(number)
    assert parsed.number == float(number)
    assert type(parse_answer(text + " bytes").value) is float
    assert parse_answer(text + " bytes").value == float(number)


# the concept grader reads a question's cues once, keyed by every point, cue and claim
TTFT_POINTS = (("It lowers TTFT.", ("lower ttft", "ttft drops")),)


def test_a_question_reading_follows_its_cues():
    text = "Prefix caching makes TTFT drop for long prompts."
    for _ in range(2):
        assert coverage(text, TTFT_POINTS).covered == (True,)
        assert coverage(text, (("It lowers TTFT.", ("lower ttft",)),)).covered == (False,)
        assert coverage(text, (("It lowers TPOT.", ("tpot drops",)),)).covered == (False,)


def test_a_question_reading_follows_its_wrong_claims():
    text = "It speeds up prefill, so TTFT drops."
    claim = ((0, "It speeds up prefill.", ("speeds up prefill",)),)
    other = ((0, "It speeds up decode.", ("speeds up decode",)),)
    for _ in range(2):
        found = coverage(text, TTFT_POINTS, claim)
        assert (found.covered, found.wrong_claims, found.conflicted) == (
            (False,),
            ("It speeds up prefill.",),
            (True,),
        )
        found = coverage(text, TTFT_POINTS, other)
        assert (found.covered, found.wrong_claims, found.conflicted) == ((True,), (None,), (False,))
        # a claim about a point the question does not have is left out
        found = coverage(text, TTFT_POINTS, ((1, "It speeds up prefill.", ("speeds up prefill",)),))
        assert found.wrong_claims == (None,)


def test_a_point_said_the_other_way_follows_its_cues():
    text = "TTFT rises with a longer prompt."
    for _ in range(2):
        found = coverage(text, TTFT_POINTS)
        assert found.wrong_claims == ("the opposite of: It lowers TTFT.",)
        # "lower ttft" said the other way is "higher ttft", which the text does not say
        assert coverage(text, (("It lowers TTFT.", ("lower ttft",)),)).wrong_claims == (None,)
        assert coverage(text, (("It is the first token.", ("first token",)),)).wrong_claims == (
            None,
        )
