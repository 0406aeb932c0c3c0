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


def test_replay_equals_reviewing_in_order_and_skips_cram():
    s = make_scheduler(fuzz=False)
    reviews = [
        {"question_id": "a", "reviewed_at": iso(T0), "rating": 3, "cram": 0},
        {"question_id": "a", "reviewed_at": iso(T0 + timedelta(minutes=11)), "rating": 3, "cram": 0},
        {"question_id": "a", "reviewed_at": iso(T0 + timedelta(minutes=12)), "rating": 1, "cram": 1},
    ]
    direct = review_row(s, new_card_row("a", T0), 3, T0)
    direct = review_row(s, direct, 3, T0 + timedelta(minutes=11))
    assert replay(s, reviews) == {"a": direct}


def test_retrievability_is_zero_before_any_review_and_falls_with_time():
    s = make_scheduler(fuzz=False)
    fresh = new_card_row("q", T0)
    assert retrievability(s, fresh, T0) == 0.0
    row = review_row(s, fresh, 4, T0)
    assert retrievability(s, row, T0 + timedelta(days=1)) > retrievability(
        s, row, T0 + timedelta(days=30)
    )


def test_retention_outside_the_sane_range_is_refused():
    with pytest.raises(ValueError):
        make_scheduler(0.5)
