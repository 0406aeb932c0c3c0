import time
from datetime import datetime, timedelta, timezone

import pytest

from drill.srs import (
    becomes_leech,
    iso,
    lapse_flags,
    make_scheduler,
    new_card_row,
    parse_iso,
    replay,
    replay_rows,
    retrievability,
    review_row,
    row_to_card,
)

T0 = datetime(2026, 11, 2, 8, 0, tzinfo=timezone.utc)


def test_good_on_a_new_card_moves_to_the_second_learning_step():
    s = make_scheduler(fuzz=False)
    row = review_row(s, new_card_row("q", T0), 3, T0)
    assert row["state"] == 1 and row["step"] == 1
    assert row["due"] == iso(T0 + timedelta(minutes=10))
    assert row["reps"] == 1 and row["lapses"] == 0


def test_easy_on_a_new_card_graduates_to_review_days_later():
    s = make_scheduler(fuzz=False)
    row = review_row(s, new_card_row("q", T0), 4, T0)
    assert row["state"] == 2
    assert row["due"] == iso(T0 + timedelta(days=8))


def test_again_in_review_counts_a_lapse_and_relearns():
    s = make_scheduler(fuzz=False)
    row = review_row(s, new_card_row("q", T0), 4, T0)
    later = T0 + timedelta(days=8)
    row = review_row(s, row, 1, later)
    assert row["state"] == 3
    assert row["lapses"] == 1 and row["reps"] == 2
    assert row["due"] == iso(later + timedelta(minutes=10))


def test_two_goods_graduate_a_new_card_and_replay_skips_cram():
    s = make_scheduler(fuzz=False)
    reviews = [
        {"question_id": "a", "reviewed_at": iso(T0), "rating": 3, "cram": 0},
        {"question_id": "a", "reviewed_at": iso(T0 + timedelta(minutes=11)), "rating": 3, "cram": 0},
        {"question_id": "a", "reviewed_at": iso(T0 + timedelta(minutes=12)), "rating": 1, "cram": 1},
    ]
    # Worked by hand from FSRS-6 with the default parameters w: the first Good gives
    # stability w2 = 2.3065 and difficulty w4 - e^(2 w5) + 1 = 2.11810397, and the second
    # learning step (10 min). The second Good, the same day, multiplies stability by
    # max(1, e^(w17 w18) 2.3065^-w19) = max(1, 0.99450) = 1, reverts difficulty to
    # w7 (w4 - e^(3 w5) + 1) + (1 - w7) 2.11810397 = 2.11121424, and graduates the card
    # with an interval of round(2.3065) = 2 days (at retention 0.9 the interval is S).
    graduated = {
        "question_id": "a",
        "state": 2,
        "step": None,
        "stability": 2.3065,
        "difficulty": pytest.approx(2.1112142357854),
        "due": iso(T0 + timedelta(days=2, minutes=11)),
        "last_review": iso(T0 + timedelta(minutes=11)),
        "reps": 2,
        "lapses": 0,
    }
    assert replay(s, reviews) == {"a": graduated}
    direct = review_row(s, new_card_row("a", T0), 3, T0)
    assert review_row(s, direct, 3, T0 + timedelta(minutes=11)) == graduated


def test_retrievability_is_zero_before_any_review_and_falls_with_time():
    s = make_scheduler(fuzz=False)
    fresh = new_card_row("q", T0)
    assert retrievability(s, fresh, T0) == 0.0
    row = review_row(s, fresh, 4, T0)  # Easy: stability w3 = 8.2956 days
    # (1 + F t / S) ** -w20 with w20 = 0.1542, F = 0.9 ** (-1 / w20) - 1 = 0.98034649
    assert retrievability(s, row, T0 + timedelta(days=1)) == pytest.approx(0.98292344)
    assert retrievability(s, row, T0 + timedelta(days=8)) == pytest.approx(0.90247330)
    assert retrievability(s, row, T0 + timedelta(days=30)) == pytest.approx(0.79177876)


def test_retention_outside_the_sane_range_is_refused():
    with pytest.raises(ValueError):
        make_scheduler(0.5)


# --- the wrapper's own rules, value by value -------------------------------------------


def test_the_scheduler_fuzzes_intervals_unless_told_not_to():
    assert make_scheduler().enable_fuzzing is True
    assert make_scheduler(fuzz=False).enable_fuzzing is False


@pytest.mark.parametrize("retention", [0.7, 0.9, 0.99])
def test_retention_from_70_to_99_percent_is_accepted(retention):
    assert make_scheduler(retention).desired_retention == retention


@pytest.mark.parametrize("retention", [0.69, 0.995, 1.0, 1.5])
def test_retention_outside_70_to_99_percent_says_the_range(retention):
    with pytest.raises(ValueError) as refused:
        make_scheduler(retention)
    assert str(refused.value) == "desired retention must be between 0.70 and 0.99"


def test_the_scheduler_takes_the_users_fitted_parameters():
    fitted = (0.5, 1.5, 3.0, 9.0, *make_scheduler().parameters[4:])
    assert make_scheduler(parameters=fitted).parameters == fitted
    assert make_scheduler().parameters[:4] == (0.212, 1.2931, 2.3065, 8.2956)


def test_a_naive_time_is_refused_with_the_reason():
    with pytest.raises(ValueError) as refused:
        iso(datetime(2026, 11, 2, 8, 0))
    assert str(refused.value) == "naive datetime: pass UTC-aware times"


@pytest.fixture
def machine_in_kolkata():
    """The machine's own time zone set to UTC+05:30 for one test."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TZ", "Asia/Kolkata")
        time.tzset()
        yield
    time.tzset()


def test_times_are_stored_in_utc_whatever_the_machines_zone(machine_in_kolkata):
    paris = timezone(timedelta(hours=1))
    assert iso(datetime(2026, 11, 2, 9, 0, tzinfo=paris)) == "2026-11-02T08:00:00.000000+00:00"
    assert iso(T0) == "2026-11-02T08:00:00.000000+00:00"


def test_a_stored_time_without_an_offset_is_read_as_utc():
    read = parse_iso("2026-11-02T08:00:00")
    assert read == T0 and read.tzinfo is timezone.utc


def test_a_stored_time_with_an_offset_keeps_it():
    read = parse_iso("2026-11-02T09:00:00+01:00")
    assert read.utcoffset() == timedelta(hours=1)
    assert read == T0


def test_a_card_row_becomes_the_fsrs_card_it_describes():
    row = {
        "question_id": "q", "state": 2, "step": None, "stability": 8.2956,
        "difficulty": 1.0, "due": "2026-11-10T08:00:00.000000+00:00",
        "last_review": "2026-11-02T08:00:00.000000+00:00", "reps": 1, "lapses": 0,
    }  # fmt: skip
    card = row_to_card(row)
    assert (int(card.state), card.step, card.stability, card.difficulty) == (2, None, 8.2956, 1.0)
    assert card.due == datetime(2026, 11, 10, 8, 0, tzinfo=timezone.utc)
    assert card.last_review == T0
    assert row_to_card(new_card_row("q", T0)).due == T0
    assert row_to_card(new_card_row("q", T0)).last_review is None


def test_again_on_a_new_card_is_no_lapse():
    s = make_scheduler(fuzz=False)
    row = review_row(s, new_card_row("q", T0), 1, T0)
    assert (row["state"], row["lapses"], row["reps"]) == (1, 0, 1)


def test_a_card_without_stability_or_last_review_has_no_recall():
    s = make_scheduler(fuzz=False)
    reviewed_no_stability = {"last_review": iso(T0), "stability": None}
    stability_never_reviewed = {"last_review": None, "stability": 8.2956}
    assert retrievability(s, reviewed_no_stability, T0 + timedelta(days=1)) == 0.0
    assert retrievability(s, stability_never_reviewed, T0 + timedelta(days=1)) == 0.0


def test_retrievability_counts_hours_not_whole_days():
    s = make_scheduler(fuzz=False)
    row = review_row(s, new_card_row("q", T0), 4, T0)  # stability 8.2956 days
    # (1 + 0.98034649 · 0.5 / 8.2956) ** -0.1542 after 12 hours
    assert retrievability(s, row, T0 + timedelta(hours=12)) == pytest.approx(0.99118668)
    # a clock behind the last review counts no time at all
    assert retrievability(s, row, T0 - timedelta(hours=1)) == 1.0


REVIEWED = [
    (iso(T0), 4),  # Easy: in review for 8 days
    (iso(T0 + timedelta(days=8)), 1),  # Again in review: a lapse
    (iso(T0 + timedelta(days=8, minutes=10)), 3),  # Good: back in review
    (iso(T0 + timedelta(days=12)), 3),
]


def test_lapse_flags_mark_again_on_a_card_in_review_only():
    s = make_scheduler(fuzz=False)
    reviews = [{"reviewed_at": at, "rating": rating} for at, rating in REVIEWED]
    assert lapse_flags(s, reviews) == [False, True, False, False]
    again_twice = [
        {"reviewed_at": iso(T0), "rating": 1},
        {"reviewed_at": iso(T0 + timedelta(minutes=1)), "rating": 1},
    ]
    assert lapse_flags(s, again_twice) == [False, False]


def test_a_replay_counts_every_lapse_of_a_card():
    s = make_scheduler(fuzz=False)
    rows = replay_rows(s, [("a", at, rating) for at, rating in REVIEWED])
    assert (rows["a"]["reps"], rows["a"]["lapses"], rows["a"]["state"]) == (4, 1, 2)
    assert rows["a"]["last_review"] == "2026-11-14T08:00:00.000000+00:00"
    assert rows["a"]["due"] == "2026-11-20T08:00:00.000000+00:00"
    two_lapses = [*REVIEWED, (iso(T0 + timedelta(days=20)), 1), (iso(T0 + timedelta(days=21)), 3)]
    rows = replay_rows(s, [("a", at, rating) for at, rating in two_lapses])
    assert (rows["a"]["reps"], rows["a"]["lapses"]) == (6, 2)


@pytest.mark.parametrize(
    ("before", "after", "threshold", "leech"),
    [
        (7, 8, 8, True),  # the threshold reached
        (3, 4, 8, False),  # below it
        (8, 9, 8, False),
        (11, 12, 8, True),  # then every half threshold: 12, 16, ...
        (9, 10, 8, False),
        (15, 16, 8, True),
        (8, 8, 8, False),  # no new lapse (an undo, a review that was no lapse)
        (9, 8, 8, False),  # a lapse taken back
        (6, 7, 7, True),  # seven: every 3 beyond it
        (7, 8, 7, False),
        (9, 10, 7, True),
        (4, 5, 5, True),  # five: every 2 beyond it
        (5, 6, 5, False),
        (6, 7, 5, True),
        (1, 2, 2, True),  # two and one: every lapse from the threshold on
        (2, 3, 2, True),
        (0, 1, 1, True),
        (1, 2, 1, True),
        (0, 1, 0, False),  # a threshold of 0 turns leeches off
        (40, 41, 0, False),
    ],
)
def test_a_card_becomes_a_leech_at_the_threshold_then_every_half_threshold(
    before, after, threshold, leech
):
    assert becomes_leech(before, after, threshold) is leech
