"""A number typed without a unit: read in the units the question uses, and no other.

Exact verdicts for the cases a bare number raises: right in the display unit (right,
rated Hard, "give the unit"), right in a unit the question's text states, right in the
base unit (right), right only in a unit the question never uses (wrong, and the unit it
wants), a named mistake in the display unit, and a fraction asked as a fraction or as a
percentage, where the other reading is the percent-vs-fraction slip.
"""

import pytest

from drill.bank.misconceptions import load_misconception_catalogue
from drill.bank.schema import Tolerance
from drill.kinds.grade import grade
from drill.kinds.instance import Instance, MisconceptionValue
from drill.kinds.numeric_grade import stated_units

CATALOGUE = load_misconception_catalogue()


def wrong(mid: str, value: float) -> MisconceptionValue:
    return MisconceptionValue(mid, CATALOGUE[mid].name, value, CATALOGUE[mid].feedback)


def numeric(expected, unit, show_as, text, *misconceptions) -> Instance:
    return Instance(
        question_id="q", kind="numeric", seed=1, text=text, topic="t", difficulty=2,
        expected=expected, unit=unit, show_as=show_as, misconceptions=misconceptions,
        tolerance=Tolerance.default(),
    )  # fmt: skip


# 512 MiB, shown in its best fit (MiB); the text states no unit
KV = numeric(
    536_870_912, "bytes", None, "How much memory does one request's KV cache take?",
    wrong("off-by-1024", 524_288), wrong("forgot-kv-factor", 268_435_456),
)  # fmt: skip
KV_GIB = numeric(536_870_912, "bytes", "GiB", "How large is the cache?")
# 250 ms + 146 × 40 ms = 6,090 ms, shown in seconds; the text works in ms
E2E = numeric(
    6.09, "seconds", "s",
    "The first token comes after 250 ms and each later one 40 ms after the one before; the "
    "reply has 147 tokens. How long until the last one?",
    wrong("ms-vs-s", 6090),
)  # fmt: skip
TPOT = numeric(0.025, "seconds", "ms", "A user must see 40 tokens per second. Largest TPOT?")
USE_FRACTION = numeric(
    0.828, "fraction", "%", "What fraction of peak FLOP/s does the step use?",
    wrong("percent-vs-fraction", 82.8),
)  # fmt: skip
USE_PERCENT = numeric(0.828, "fraction", "%", "What percentage of peak FLOP/s does it use?")
BANDWIDTH = numeric(3.35e12, "bytes_per_s", "TB/s", "What bandwidth does the GPU have?")
TIMES = numeric(4, "count", "×", "How many times as many requests fit?")
FIT = numeric(12, "requests", None, "How many requests fit?")

GIVE = "Give the unit: the answer is in"
KV_HALF = CATALOGUE["forgot-kv-factor"].feedback
PERCENT = CATALOGUE["percent-vs-fraction"].feedback
GIB_GB = CATALOGUE["gb-vs-gib"].feedback
MS_S = CATALOGUE["ms-vs-s"].feedback

# instance, answer, status, correct, misconception, suggested rating, feedback
TABLE = [
    # the display unit (best fit when there is no show_as): right, Hard, give the unit
    (KV, "512", "unit", True, None, 2, "Right number, but give the unit: 512 MiB."),
    (KV_GIB, "0.5", "unit", True, None, 2, "Right number, but give the unit: 0.5 GiB."),
    (TPOT, "25", "unit", True, None, 2, "Right number, but give the unit: 25 ms."),
    (BANDWIDTH, "3.35", "unit", True, None, 2, "Right number, but give the unit: 3.35 TB/s."),
    # a unit the question's text states
    (E2E, "6090", "unit", True, None, 2, "Right number, but give the unit: 6,090 ms."),
    # the base unit: complete without a unit
    (KV, "536870912", "correct", True, None, 3, ""),
    (KV_GIB, "536,870,912", "correct", True, None, 3, ""),
    (E2E, "6.09", "correct", True, None, 3, ""),
    (TPOT, "0.025", "correct", True, None, 3, ""),
    (BANDWIDTH, "3.35e12", "correct", True, None, 3, ""),
    (TIMES, "4", "correct", True, None, 3, ""),
    (FIT, "12", "correct", True, None, 3, ""),
    # right only in a unit the question never uses: wrong, and the unit it wants
    (KV, "0.5", "wrong", False, None, 1,
     f"{GIVE} MiB. A bare 0.5 is not the answer in MiB or bytes (it would be in GiB)."),
    (KV, "524288", "wrong", False, None, 1,
     f"{GIVE} MiB. A bare 524,288 is not the answer in MiB or bytes (it would be in KiB)."),
    (KV_GIB, "512", "wrong", False, None, 1,
     f"{GIVE} GiB. A bare 512 is not the answer in GiB or bytes (it would be in MiB)."),
    (KV_GIB, "0.537", "wrong", False, None, 1,
     f"{GIVE} GiB. A bare 0.537 is not the answer in GiB or bytes (it would be in GB)."),
    (KV_GIB, "4294967296", "wrong", False, None, 1,
     f"{GIVE} GiB. A bare 4,294,967,296 is not the answer in GiB or bytes (it would be in "
     "bits)."),
    (E2E, "6090000", "wrong", False, None, 1,
     f"{GIVE} s. A bare 6,090,000 is not the answer in ms or s (it would be in µs)."),
    (TPOT, "25000", "wrong", False, None, 1,
     f"{GIVE} ms. A bare 25,000 is not the answer in ms or s (it would be in µs)."),
    (BANDWIDTH, "3350", "wrong", False, None, 1,
     f"{GIVE} TB/s. A bare 3,350 is not the answer in TB/s or B/s (it would be in GB/s)."),
    (KV_GIB, "100", "wrong", False, None, 1,
     f"{GIVE} GiB. A bare 100 is not the answer in GiB or bytes."),
    # a named mistake, in the display unit or the base unit
    (KV, "256", "misconception", False, "forgot-kv-factor", 1,
     f"{KV_HALF} Your 256 reads as 256 MiB; the answer is 512 MiB. Give the unit too."),
    (KV, "268435456", "misconception", False, "forgot-kv-factor", 1,
     f"{KV_HALF} Your 268,435,456 reads as 256 MiB; the answer is 512 MiB. Give the unit too."),
    # read in the base unit, a bare number means what it says: a slip of its conversion
    (KV_GIB, "576460752", "misconception", False, "gb-vs-gib", 1,
     f"{GIB_GB} Your 576,460,752 reads as 0.537 GiB; the answer is 0.5 GiB. Give the unit too."),
    # typed with its unit, a unit slip is a unit slip
    (E2E, "6090 s", "misconception", False, "ms-vs-s", 1,
     f"{MS_S} You gave 6,090 s; the answer is 6.09 s."),
    # near misses in the display unit
    (KV_GIB, "0.6", "magnitude", False, None, 1,
     "The right order of magnitude, but 20% too high. Your 0.6 reads as 0.6 GiB; the answer "
     "is 0.5 GiB. Give the unit too."),
    (KV_GIB, "5", "magnitude", False, None, 1,
     "Right digits, wrong power of ten (10^1 too large). Your 5 reads as 5 GiB; the answer is "
     "0.5 GiB. Give the unit too."),
    # a fraction asked as a fraction: 82.8 is the percentage without its sign
    (USE_FRACTION, "0.828", "correct", True, None, 3, ""),
    (USE_FRACTION, "82.8%", "correct", True, None, 3, ""),
    (USE_FRACTION, "82.8", "misconception", False, "percent-vs-fraction", 1,
     f"{PERCENT} You gave 82.8; the answer is 82.8%."),
    # asked as a percentage: 0.828 is the fraction, read as 0.828 %
    (USE_PERCENT, "82.8", "correct", True, None, 3, ""),
    (USE_PERCENT, "0.828", "misconception", False, "percent-vs-fraction", 1,
     f"{PERCENT} Your 0.828 reads as 0.828%; the answer is 82.8%."),
]


@pytest.mark.parametrize(
    ("instance", "answer", "status", "correct", "mid", "rating", "feedback"), TABLE
)
def test_bare_numbers(instance, answer, status, correct, mid, rating, feedback):
    verdict = grade(instance, answer, duration_ms=20_000)
    assert (verdict.status, verdict.correct, verdict.misconception, verdict.rating) == (
        status, correct, mid, rating,
    )  # fmt: skip
    assert verdict.feedback == feedback


def test_the_table_is_large_enough():
    assert len(TABLE) >= 25


def test_the_units_a_question_states():
    text = (
        "A GPU has 80 GB (10^9 bytes) and 4.8 TB/s; a 7B model takes 14 GB, the prompt "
        "4,096 tokens, and a step 12 ms."
    )
    assert [spec.symbol for spec in stated_units(text, "bytes")] == ["GB"]
    assert [spec.symbol for spec in stated_units(text, "bytes_per_s")] == ["TB/s"]
    assert [spec.symbol for spec in stated_units(text, "seconds")] == ["ms"]
    assert stated_units(text, "flop") == ()
