from datetime import datetime, timedelta, timezone

import pytest

from drill.srs import iso, make_scheduler, new_card_row, replay, retrievability, review_row

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
