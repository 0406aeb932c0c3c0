"""The numeric grader at its edges (drill.kinds.numeric_grade), verdict by verdict: which
mistake a value is named as, how a bare number is read, and the exact words the user is
told. The everyday verdicts are in test_grade.py and test_wrong_answers.py."""

import dataclasses

import pytest

from drill.bank.misconceptions import load_misconception_catalogue
from drill.bank.schema import Tolerance
from drill.errors import BankError
from drill.kinds.grade import grade
from drill.kinds.instance import Instance, MisconceptionValue
from drill.kinds.numeric_grade import mistake_for_value, plural_of

GIB, MIB = 2**30, 2**20
CATALOGUE = load_misconception_catalogue()


def wrong(mid: str, value: float) -> MisconceptionValue:
    info = CATALOGUE[mid]
    return MisconceptionValue(mid, info.name, value, info.feedback)


def numeric(expected, unit, show_as=None, misconceptions=(), tolerance=None, text="?"):
    return Instance(
        question_id="q",
        kind="numeric",
        seed=7,
        text=text,
        topic="kv-cache",
        difficulty=2,
        expected=expected,
        unit=unit,
        show_as=show_as,
        misconceptions=tuple(misconceptions),
        tolerance=tolerance or Tolerance.default(),
    )


# 2 · 32 layers · 8 KV heads · 128 · 4096 tokens · 2 bytes = 0.5 GiB
KV = numeric(2**29, "bytes", "GiB", [wrong("forgot-kv-factor", 2**28)])
STEP = numeric(0.02, "seconds", "ms", [wrong("forgot-kv-reads", 0.0042)])
TIMES = numeric(4, "count", "×", [wrong("inverted-ratio", 0.25)])
WASTE = numeric(0.75, "fraction", "%")
PEAK = numeric(989e12, "flop_per_s", "TFLOP/s")


def feedback(instance: Instance, answer: str) -> str:
    return grade(instance, answer).feedback


# --- the mistake a value is named as (bank lint and coverage ask this) ------------------


@pytest.mark.parametrize(
    ("instance", "value", "mistake"),
    [
        (KV, 0.5 * GIB, None),  # right
        (KV, 2**28, "forgot-kv-factor"),  # the question's own
        (KV, 0.5e9, "gb-vs-gib"),
        (KV, 512 * GIB, "off-by-1024"),
        (KV, 0.5 * GIB / 1024**4, "off-by-1024"),
        (KV, 4 * GIB, "bits-vs-bytes"),
        (KV, 3 * GIB, None),
        (STEP, 20, "ms-vs-s"),
        (STEP, 0.0042, "forgot-kv-reads"),
        (TIMES, 4000, "off-by-1000"),
        (TIMES, 0.25, "inverted-ratio"),
        (numeric(4, None), 4000, "off-by-1000"),  # no unit: a count
        (WASTE, 0.25, "complement-fraction"),
        (WASTE, 75, "percent-vs-fraction"),
        (PEAK, 2 * 989e12, "flops-2x"),
    ],
)
def test_the_mistake_a_value_is_named_as(instance, value, mistake):
    assert mistake_for_value(instance, value) == mistake


def test_an_instance_without_an_expected_value_names_no_slip_but_its_own_mistakes():
    unknown = dataclasses.replace(KV, expected=None)
    assert mistake_for_value(unknown, 5) is None
    assert mistake_for_value(unknown, 0.5e9) is None
    assert mistake_for_value(unknown, 2**28) == "forgot-kv-factor"


@pytest.mark.parametrize(
    ("value", "mistake"),
    [
        (3 * GIB, "off-by-1024"),  # the question lists it under a unit slip's id: still named
        (2**27, None),  # a quarter of the answer: nothing the grader knows
    ],
)
def test_only_the_questions_own_values_and_known_ratios_are_named(value, mistake):
    instance = numeric(2**29, "bytes", "GiB", [wrong("off-by-1024", 3 * GIB)])
    assert mistake_for_value(instance if mistake else KV, value) == mistake


def test_an_absolute_tolerance_sets_how_near_a_slip_must_be():
    fit = numeric(12, "requests", tolerance=Tolerance(abs=0.5))  # ±0.5 of 12: about 4 %
    assert mistake_for_value(fit, 12_300) == "off-by-1000"
    verdict = grade(fit, "12300")
    assert (verdict.status, verdict.misconception) == ("misconception", "off-by-1000")


# --- a verdict, field by field ----------------------------------------------------------


def verdict_of(instance: Instance, answer):
    v = grade(instance, answer)
    return v.status, v.correct, v.value, v.misconception, v.feedback


def test_a_right_answer_gets_no_feedback():
    assert verdict_of(KV, "0.5 GiB") == ("correct", True, 2**29, None, "")
    assert verdict_of(numeric(4, None), "4") == ("correct", True, 4.0, None, "")


def test_an_answer_that_is_not_text_is_read_as_empty():
    assert grade(KV, None).feedback == (
        "the answer is empty; try 0.5 GiB, 536,870,912, 2*32*8*128*4096*2 or 75%"
    )


def test_an_instance_without_an_expected_value_cannot_be_graded():
    with pytest.raises(BankError) as refused:
        grade(dataclasses.replace(KV, expected=None), "1")
    assert str(refused.value) == "q: a numeric instance needs an expected value"


def test_a_unit_of_the_wrong_kind_is_wrong_and_says_which_kind_is_asked():
    assert verdict_of(KV, "5 ms") == (
        "wrong", False, 0.005, None, "The answer is a size in bytes (0.5 GiB), not a time.",
    )  # fmt: skip


def test_the_right_number_in_a_unit_of_the_wrong_kind_is_a_unit_mistake():
    assert verdict_of(KV, "0.5 ms") == (
        "unit", False, 0.0005, None,
        "The number is right but ms is a time; the answer is a size in bytes: 0.5 GiB.",
    )  # fmt: skip
    # right in base units of another kind: 536,870,912 FLOP
    assert verdict_of(KV, "536.870912 MFLOP")[4] == (
        "The number is right but MFLOP is a FLOP count; the answer is a size in bytes: 0.5 GiB."
    )


# --- a bare number ---------------------------------------------------------------------


def test_a_bare_number_right_in_another_unit_says_which():
    assert verdict_of(KV, "512") == (
        "wrong", False, 512 * GIB, None,
        "Give the unit: the answer is in GiB. A bare 512 is not the answer in GiB or bytes "
        "(it would be in MiB).",
    )  # fmt: skip
    assert grade(KV, "536.870912").feedback == (
        "Give the unit: the answer is in GiB. A bare 536.871 is not the answer in GiB or bytes "
        "(it would be in MB)."
    )


def test_a_bare_number_right_in_no_unit_lists_every_unit_it_was_read_in():
    assert verdict_of(KV, "500") == (
        "wrong", False, 500 * GIB, None,
        "Give the unit: the answer is in GiB. A bare 500 is not the answer in GiB or bytes.",
    )  # fmt: skip
    stated = numeric(2**29, "bytes", "GiB", text="A 7b model: 4,096 MiB of cache, 64 KiB a token")
    assert grade(stated, "9").feedback == (
        "Give the unit: the answer is in GiB. A bare 9 is not the answer in GiB, MiB, KiB or bytes."
    )
    assert grade(numeric(512, "bytes"), "3").feedback == (
        "Give the unit: the answer is in B. A bare 3 is not the answer in bytes."
    )
    assert grade(KV, "1e15").feedback == (
        "Give the unit: the answer is in GiB. A bare 1e15 is not the answer in GiB or bytes."
    )


def test_a_whole_bare_number_is_echoed_with_thousands_separated():
    assert grade(KV, "12345").feedback == (
        "Give the unit: the answer is in GiB. A bare 12,345 is not the answer in GiB or bytes."
    )


@pytest.mark.parametrize(
    ("instance", "tried"),
    [
        (numeric(3e-9, "seconds", "ns"), "ns or s"),
        (numeric(989e12, "flop_per_s", "TFLOP/s"), "TFLOP/s or FLOP/s"),
        (numeric(2e13, "flop", "TFLOP"), "TFLOP or FLOP"),
        (numeric(3.35e12, "bytes_per_s", "TB/s"), "TB/s or B/s"),
    ],
)
def test_the_base_unit_is_named_as_people_write_it(instance, tried):
    assert grade(instance, "123456").feedback.endswith(f"is not the answer in {tried}.")


def test_a_bare_number_read_in_the_display_unit_is_shown_that_way():
    assert verdict_of(KV, "0.4123456") == (
        "magnitude", False, 442752716.6623744, None,
        "The right order of magnitude, but 18% too low. Your 0.412346 reads as 0.412 GiB; "
        "the answer is 0.5 GiB. Give the unit too.",
    )  # fmt: skip
    assert grade(KV, "3").feedback == (
        "The right order of magnitude, but 500% too high. Your 3 reads as 3 GiB; "
        "the answer is 0.5 GiB. Give the unit too."
    )


def test_a_bare_number_that_overflows_in_one_unit_is_still_read_in_the_next():
    # 1e300 GiB is past the largest float; 1e300 KiB (a unit the text states) is not
    stated = numeric(2**29, "bytes", "GiB", text="64 KiB a token")
    assert verdict_of(stated, "1e300") == (
        "wrong", False, 1e300 * 1024, None,
        "Give the unit: the answer is in GiB. A bare 1e300 is not the answer in GiB, KiB or bytes.",
    )  # fmt: skip


def test_a_unit_slip_is_named_for_a_bare_number_only_as_it_reads_in_bytes():
    verdict = grade(KV, "67108864")  # 64 MiB: the answer in bits
    assert verdict.misconception == "bits-vs-bytes"
    assert verdict.feedback.endswith(
        " Your 67,108,864 reads as 0.0625 GiB; the answer is 0.5 GiB. Give the unit too."
    )
    verdict = grade(KV, "500000000")  # 0.5 GB
    assert verdict.misconception == "gb-vs-gib"
    assert verdict.feedback.endswith(
        " Your 500,000,000 reads as 0.466 GiB; the answer is 0.5 GiB. Give the unit too."
    )


def test_a_rate_asked_in_a_rate_takes_a_bare_number_in_its_unit():
    assert verdict_of(PEAK, "989") == (
        "unit", True, 989e12, None, "Right number, but give the unit: 989 TFLOP/s.",
    )  # fmt: skip
    verdict = grade(PEAK, "1978")  # read in TFLOP/s, twice the answer
    assert verdict.misconception == "flops-2x"
    assert verdict.feedback.endswith(
        " Your 1978 reads as 1,978 TFLOP/s; the answer is 989 TFLOP/s. Give the unit too."
    )


def test_a_bare_number_is_a_percentage_when_the_question_asks_for_one():
    asks = numeric(0.75, "fraction", "%", text="What percentage of the cache is wasted?")
    assert verdict_of(asks, "75") == ("correct", True, 0.75, None, "")
    assert grade(WASTE, "75").misconception == "percent-vs-fraction"
    tight = numeric(0.75, "fraction", "%", tolerance=Tolerance(rel=1e-3))
    assert grade(tight, "75").misconception == "percent-vs-fraction"  # exactly 100 times


def test_the_questions_own_mistake_is_named_with_its_own_words():
    own = MisconceptionValue("bits-vs-bytes", "Bits for bytes", 2**26, "You counted bits.")
    verdict = grade(numeric(2**29, "bytes", "GiB", [own]), "67108864")
    assert (verdict.misconception, verdict.misconception_name) == ("bits-vs-bytes", "Bits for bytes")
    assert verdict.feedback == (
        "You counted bits. Your 67,108,864 reads as 0.0625 GiB; the answer is 0.5 GiB. "
        "Give the unit too."
    )


def test_the_questions_own_mistake_without_words_takes_the_catalogues():
    bare = MisconceptionValue("forgot-kv-factor", "", 2**28, "")
    verdict = grade(numeric(2**29, "bytes", "GiB", [bare]), "256 MiB")
    assert verdict.misconception_name == "forgot the K+V factor of 2"
    assert verdict.feedback.startswith("Every layer caches two tensors per token")
    assert verdict.feedback.endswith(" You gave 0.25 GiB; the answer is 0.5 GiB.")


def test_a_unit_slip_the_question_lists_is_not_named_for_a_bare_number_read_in_a_unit():
    listed = numeric(2**29, "bytes", "GiB", [MisconceptionValue("off-by-1000", "", 500 * GIB, "")])
    assert grade(listed, "500").feedback == (
        "Give the unit: the answer is in GiB. A bare 500 is not the answer in GiB or bytes."
    )


# --- mistakes with a unit ---------------------------------------------------------------


def test_a_bit_unit_around_the_bytes_asked_for_is_bits_vs_bytes():
    verdict = grade(KV, "0.5 Gib")
    assert (verdict.misconception, verdict.value) == ("bits-vs-bytes", 2**26)
    assert verdict.feedback.endswith(" You gave 0.0625 GiB; the answer is 0.5 GiB.")
    assert grade(KV, "64 MiB").misconception == "bits-vs-bytes"  # an eighth, in bytes
    # bits that are not an eighth, and an eighth of a time, are no bits-vs-bytes slip
    assert grade(KV, "3 Gib").feedback == (
        "The right order of magnitude, but 25% too low. You gave 0.375 GiB; the answer is 0.5 GiB."
    )
    assert grade(STEP, "2.5 ms").feedback == (
        "The right order of magnitude, but 88% too low. You gave 2.5 ms; the answer is 20 ms."
    )


def test_the_other_kind_of_prefix_is_named_by_the_slip_not_the_would_be_right_unit():
    verdict = grade(KV, "0.5 GB")
    assert verdict.misconception == "gb-vs-gib"
    assert verdict.feedback.endswith(" You gave 0.466 GiB; the answer is 0.5 GiB.")
    verdict = grade(numeric(512, "bytes"), "0.5 kB")  # shown in plain bytes: any prefix differs
    assert verdict.misconception == "gb-vs-gib"
    assert verdict.feedback.endswith(" You gave 500 B; the answer is 512 B.")


def test_plain_bytes_are_no_prefix_slip():
    assert grade(KV, "500000000 bytes").feedback == (
        "The right order of magnitude, but 7% too low. You gave 0.466 GiB; the answer is 0.5 GiB."
    )


def test_the_same_kind_of_prefix_is_read_with_the_other_within_the_tolerance_or_as_typed():
    named = " You wrote 536.9 MiB; 536.9 MB would be right (the answer is 0.5 GiB)."
    assert grade(KV, "536.9*1 MiB").feedback.endswith(named)  # arithmetic: by the tolerance
    # typed "100": right only within half its last digit, 100 ± 0.5 MB
    assert grade(numeric(100_500_000, "bytes", "MiB"), "100 MiB").feedback.endswith(
        " You wrote 100 MiB; 100 MB would be right (the answer is 95.8 MiB)."
    )
    assert grade(numeric(100_800_000, "bytes", "MiB"), "100 MiB").feedback == (
        "The right order of magnitude, but 4% too high. You gave 100 MiB; the answer is 96.1 MiB."
    )


def test_no_prefix_slip_is_named_where_the_tolerance_would_take_it():
    # ±4.7 % takes 512 MiB / 1.048576 (4.6 % off), so the MB reading names nothing
    wide = numeric(2**29, "bytes", "GiB", tolerance=Tolerance(rel=0.047))
    assert grade(wide, "536.9 MiB").feedback == (
        "The right order of magnitude, but 5% too high. You gave 0.524 GiB; the answer is 0.5 GiB."
    )


def test_no_prefix_slip_is_named_where_significant_figures_take_it_one_way():
    # to 2 figures 147.7 MB is 150 MB, and so is 147.7 MiB (154.9 MB); 148 MiB (155.2 MB)
    # misses by its rounding, and is not named as read with the wrong prefix
    two_figures = numeric(147_700_000, "bytes", "MiB", tolerance=Tolerance(sig=2))
    assert grade(two_figures, "148 MiB").feedback == (
        "The right order of magnitude, but 5% too high. You gave 148 MiB; the answer is 141 MiB."
    )


def test_a_flop_rate_is_never_read_with_a_binary_prefix():
    # 899.5 "TiB/s" would be 989e12: a FLOP unit has no binary twin
    assert grade(PEAK, "899.5 TFLOP/s").feedback == (
        "The right order of magnitude, but 9% too low. You gave 900 TFLOP/s; "
        "the answer is 989 TFLOP/s."
    )


def test_a_prefix_slip_needs_a_whole_prefix_step():
    three_figures = numeric(2**29, "bytes", "GiB", tolerance=Tolerance(sig=3))
    verdict = grade(three_figures, "0.5345 GB")
    assert (verdict.status, verdict.misconception) == ("magnitude", None)


def test_a_thousand_times_is_off_by_1000_at_every_step():
    assert grade(numeric(4, "count"), "4e6").misconception == "off-by-1000"
    tight = numeric(0.02, "seconds", "ms", tolerance=Tolerance(rel=1e-4))
    assert grade(tight, "20 s").misconception == "ms-vs-s"


def test_off_by_1024_is_named_up_to_four_steps_and_no_further():
    # 1024^2 up (0.5 PiB), 1024^4 up and down; 1024^5 up (2^29 · 2^50 bytes) is no slip
    assert grade(KV, "0.5 PiB").misconception == "off-by-1024"
    assert grade(KV, "604462909807314587353088 bytes").feedback == (
        "You gave 536,870,912 PiB; the answer is 0.5 GiB."
    )
    # within ±0.1 %: 1024^4 and 1024^-4 exactly, where 1025^4 would be 0.4 % off
    tight = numeric(2**29, "bytes", "GiB", tolerance=Tolerance(rel=1e-3))
    assert grade(tight, "512 EiB").misconception == "off-by-1024"
    assert grade(tight, "0.00048828125 bytes").feedback.endswith(
        " You gave 0.000488 B; the answer is 0.5 GiB."
    )
    assert grade(tight, "0.00048828125 bytes").misconception == "off-by-1024"


def test_gb_vs_gib_is_named_up_to_five_prefix_steps_and_no_further():
    # 0.619 GB is 1.024^6 times 0.5 GiB: no prefix step explains it
    assert grade(KV, "0.619 GB").feedback == (
        "The right order of magnitude, but 15% too high. You gave 0.576 GiB; the answer is 0.5 GiB."
    )


def test_a_thousandth_to_the_fourth_is_off_by_1000_within_a_tight_tolerance():
    tight = numeric(4, "count", tolerance=Tolerance(rel=1e-3))
    assert grade(tight, "4e-12").misconception == "off-by-1000"


def test_a_slip_is_named_at_the_very_edge_of_the_tolerance():
    # ±0.5 of 12 is ±4.17 %: 12,500 is exactly that far from 12,000
    fit = numeric(12, "requests", tolerance=Tolerance(abs=0.5))
    assert grade(fit, "12500").misconception == "off-by-1000"
    assert grade(fit, "12501").feedback == "You gave 12501; the answer is 12 requests."


def test_a_negative_answer_names_no_ratio_slip_even_within_a_wide_tolerance():
    # ±10 of -5 is ±200 %: 1,000 would be "near" -5,000 by that ratio
    assert grade(numeric(-5, "count", tolerance=Tolerance(abs=10)), "1000").feedback == (
        "You gave 1000; the answer is -5."
    )


def test_a_value_is_shown_in_the_answers_unit_from_a_thousandth_to_a_thousand_times():
    assert grade(STEP, "20 s").feedback.endswith(" You gave 20,000 ms; the answer is 20 ms.")
    assert grade(STEP, "0.02 ms").feedback.endswith(" You gave 0.02 ms; the answer is 20 ms.")
    assert grade(STEP, "20.01 s").feedback.endswith(" You gave 20 s; the answer is 20 ms.")


def test_flops_with_a_lowercase_s_answer_a_rate_as_a_rate_and_a_count_as_a_count():
    assert verdict_of(PEAK, "989 TFLOPs") == ("correct", True, 989e12, None, "")
    assert grade(PEAK, "900 TFLOPs").feedback == (
        "The right order of magnitude, but 9% too low. You gave 900 TFLOP/s; "
        "the answer is 989 TFLOP/s."
    )
    assert grade(numeric(2.8672e13, "flop", "TFLOP"), "28.672 TFLOPs").status == "correct"


def test_a_mistake_typed_to_four_figures_is_named_in_flops_with_a_lowercase_s():
    # 1,235 typed is 1,235 ± 0.5: the mistake's 1,234.56 within it, not within ±0.01 %
    heads = MisconceptionValue("query-heads", "", 1234.56e12, "")
    tight = numeric(989e12, "flop_per_s", "TFLOP/s", [heads], tolerance=Tolerance(rel=1e-4))
    assert grade(tight, "1,235 TFLOPs").misconception == "query-heads"


@pytest.mark.parametrize(
    ("mistake", "answer", "named"),
    [
        (100.4, "100", True),  # within 100 ± 0.5 as typed, not within ±0.1 %
        (100.5, "100", True),  # at the edge of what "100" may mean
    ],
)
def test_a_mistake_is_named_within_the_precision_it_was_typed_at(mistake, answer, named):
    instance = numeric(50, "count", None, [wrong("forgot-kv-factor", mistake)], Tolerance(rel=1e-3))
    assert (grade(instance, answer).misconception == "forgot-kv-factor") is named


def test_a_typed_value_that_may_be_the_right_answer_rounded_names_no_mistake():
    # "100" may mean 100.5, the answer: the mistake 100.3 is not named
    instance = numeric(100.5, "count", None, [wrong("forgot-kv-factor", 100.3)], Tolerance(rel=1e-3))
    assert grade(instance, "100").feedback == (
        "The right order of magnitude, but 0.5% too low. Accepted within ±0.1 %. "
        "You gave 100; the answer is 101."
    )


def test_a_mistake_the_tolerance_cannot_tell_from_the_answer_is_never_named():
    # 100.9 is within 1 % of 100: the grader cannot tell that mistake from the answer
    instance = numeric(100, "count", None, [wrong("forgot-kv-factor", 100.9)])
    assert grade(instance, "101.8").feedback == (
        "The right order of magnitude, but 2% too high. You gave 101.8; the answer is 100."
    )


# --- the complement of a fraction ------------------------------------------------------


@pytest.mark.parametrize(
    ("instance", "answer", "feedback"),
    [
        (numeric(0.25, "count"), "0.75", "The right order of magnitude, but 200% too high. "
         "You gave 0.75; the answer is 0.25."),  # a count has no complement
        (numeric(0, "fraction", "%"), "100%", "You gave 100%; the answer is 0%."),
        (numeric(1, "fraction", "%"), "0%", "You gave 0%; the answer is 100%."),
        (numeric(1.5, "fraction", "%"), "-50%", "You gave -50%; the answer is 150%."),
        # within the tolerance of a half, the complement is too near the answer to name
        (numeric(0.505, "fraction", "%"), "49.5%", "The right order of magnitude, but 2% too "
         "low. You gave 49.5%; the answer is 50.5%."),
        (numeric(0.75, "fraction", "%", tolerance=Tolerance(rel=0.25)), "25%",
         "The right order of magnitude, but 67% too low. You gave 25%; the answer is 75%."),
    ],
)
def test_the_complement_is_named_only_for_a_fraction_strictly_between_0_and_1(
    instance, answer, feedback
):
    assert grade(instance, answer).feedback == feedback


# --- the size of a miss ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "status", "feedback"),
    [
        ("2e13 s", "magnitude", "Right digits, wrong power of ten (10^15 too large). "
         "You gave 20,000,000,000,000 s; the answer is 20 ms."),
        ("2e16 s", "magnitude", "Right digits, wrong power of ten (10^18 too large). "
         "You gave 2e16 s; the answer is 20 ms."),
        ("2e17 s", "wrong", "You gave 2e17 s; the answer is 20 ms."),  # past 10^18
        ("0.002 s", "magnitude", "Right digits, wrong power of ten (10^1 too small). "
         "You gave 2 ms; the answer is 20 ms."),
        ("0.21 s", "wrong", "You gave 210 ms; the answer is 20 ms."),  # 10.5 times
        ("0.0203 s", "magnitude", "The right order of magnitude, but 1% too high. "
         "You gave 20.3 ms; the answer is 20 ms."),
        ("0 s", "wrong", "You gave 0 ns; the answer is 20 ms."),  # no size for nothing
    ],
)
def test_how_far_off_a_time_is_said(answer, status, feedback):
    verdict = grade(STEP, answer)
    assert (verdict.status, verdict.feedback) == (status, feedback)


def test_a_negative_answer_is_wrong_without_a_size_of_miss():
    assert grade(numeric(-5, None), "7").feedback == "You gave 7; the answer is -5."


# --- a size asked as a count of bits or bytes ------------------------------------------

BYTES_EACH = numeric(2, "count", text="How many bytes does one FP16 element take?")
BITS_EACH = numeric(5, "count", text="How many bits does one element take?")


@pytest.mark.parametrize(
    ("instance", "answer", "verdict"),
    [
        (BYTES_EACH, "2 bytes", ("correct", True, 2.0, None, "")),
        (BYTES_EACH, "16 bits", (
            "unit", True, 2.0, None, "Right, but the question counts bytes: 2 bytes.")),
        (numeric(1, "count", text="How many bytes does one FP8 element take?"), "8 bits", (
            "unit", True, 1.0, None, "Right, but the question counts bytes: 1 byte.")),
        (BYTES_EACH, "2 bits", ("misconception", False, 0.25, "bits-vs-bytes",
         CATALOGUE["bits-vs-bytes"].feedback + " You gave 2 bits; the answer is 2 bytes.")),
        (BITS_EACH, "0.625 bits", ("misconception", False, 0.625, "bits-vs-bytes",
         CATALOGUE["bits-vs-bytes"].feedback + " You gave 0.625 bits; the answer is 5 bits.")),
    ],
)  # fmt: skip
def test_a_size_is_counted_in_the_unit_the_question_counts(instance, answer, verdict):
    assert verdict_of(instance, answer) == verdict


def test_a_mistake_typed_to_three_figures_is_named_for_a_count_of_bits():
    # 4.02 typed is 4.02 ± 0.005: the mistake's 4.021 within it, not within ±0.01 %
    scales = numeric(
        5, "count", None, [wrong("forgot-quant-scales", 4.021)], Tolerance(rel=1e-4),
        text="How many bits does one element take?",
    )  # fmt: skip
    assert grade(scales, "4.02 bits").misconception == "forgot-quant-scales"
    # the question's own bits-vs-bytes, matched as typed, speaks before the catalogue's
    own = MisconceptionValue("bits-vs-bytes", "", 0.6254, "You counted bytes.")
    counted = numeric(
        5, "count", None, [own], Tolerance(rel=1e-4), text="How many bits does one element take?"
    )
    assert grade(counted, "0.625 bits").feedback == (
        "You counted bytes. You gave 0.625; the answer is 5."
    )


@pytest.mark.parametrize(
    ("noun", "many"),
    [("block", "blocks"), ("gpu", "GPUs"), ("bit", "bits"), ("FLOP", "FLOPs"),
     ("widget", "widgets")],
)  # fmt: skip
def test_a_thing_counted_is_named_in_the_plural_as_the_answers_spell_it(noun, many):
    assert plural_of(noun) == many
