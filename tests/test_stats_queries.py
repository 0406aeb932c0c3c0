"""Stats figures counted in one query each: true retention per day (all the window's days in
one grouped query), the due counts and the forecast (one pass over the cards each), and the
per-question figures read as plain rows. The figures are the ones the day-by-day queries gave
on the same small histories (the literals below were checked against them)."""

import uuid
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from drill.reports.stats import due_counts, forecast, question_figures, retention_by_day
from drill.srs import iso, make_scheduler, new_card_row
from drill.storage.database import open_db
from drill.study.days import UTC_DAYS, DayClock

NOW = datetime(2026, 11, 18, 15, 0, tzinfo=timezone.utc)
BERLIN_4AM = DayClock(ZoneInfo("Europe/Berlin"), 4)


@pytest.fixture
def db(tmp_path):
    return open_db(tmp_path / "stats.db")


_counter = iter(range(10**9))


def add(db, qid, when, rating, *, cram=0):
    db["reviews"].insert(
        {
            "id": str(uuid.UUID(int=next(_counter))),
            "question_id": qid,
            "reviewed_at": iso(when),
            "rating": rating,
            "cram": cram,
        }
    )


def utc(day, hour, minute=0, second=0, micro=0):
    return datetime(2026, 11, day, hour, minute, second, micro, tzinfo=timezone.utc)


def test_retention_by_day_counts_each_day_of_the_window_in_its_own_row(db):
    add(db, "a", utc(1, 9), 3)
    add(db, "a", utc(10, 9), 3)  # young pass (9 days)
    add(db, "a", utc(10, 10), 1)  # the same day again: not counted
    add(db, "a", utc(11, 9), 1)  # young fail
    add(db, "b", utc(1, 9), 3)
    add(db, "b", utc(11, 9), 3)  # 11 Nov: young pass (10 days)
    add(db, "c", utc(1, 12), 3)
    add(db, "c", utc(22, 12), 4)  # exactly 21 days later: mature; after now, not counted
    add(db, "d", utc(2, 8), 2)
    add(db, "d", utc(12, 7), 1, cram=1)  # cram: neither counted nor a previous review
    add(db, "d", utc(12, 8), 2)  # young pass (10 days after 2 Nov)
    add(db, "e", utc(12, 8), 3)  # a first review: not counted
    add(db, "f", utc(3, 6), 3)
    add(db, "f", utc(18, 6), 1)  # young fail today
    rows = retention_by_day(db, utc(5, 0), NOW, UTC_DAYS)
    assert rows == [
        ("2026-11-10", False, 1, 1),
        ("2026-11-11", False, 2, 1),
        ("2026-11-12", False, 1, 1),
        ("2026-11-18", False, 1, 0),
    ]


def test_retention_by_day_puts_mature_reviews_apart_and_stops_at_now(db):
    add(db, "a", utc(1, 12), 3)
    add(db, "a", utc(16, 12), 3)  # young pass
    add(db, "b", utc(1, 12), 3)
    add(db, "b", utc(16, 12, 0, 0, 1), 4)  # 15 days: young
    add(db, "c", utc(1, 12), 3)
    add(db, "c", utc(16, 12), 1)
    add(db, "d", datetime(2026, 10, 26, 12, tzinfo=timezone.utc), 3)
    add(db, "d", utc(16, 12), 1)  # 21 days exactly: a mature fail
    add(db, "e", datetime(2026, 10, 1, 12, tzinfo=timezone.utc), 3)
    add(db, "e", utc(16, 13), 3)  # mature pass
    add(db, "f", datetime(2026, 10, 1, 12, tzinfo=timezone.utc), 3)
    add(db, "f", utc(18, 15, 0, 0, 1), 3)  # a microsecond after now
    assert retention_by_day(db, utc(16, 0), NOW, UTC_DAYS) == [
        ("2026-11-16", False, 3, 2),
        ("2026-11-16", True, 2, 1),
    ]


def test_retention_by_day_follows_the_users_days_across_the_clock_change(db):
    # Berlin leaves summer time at 01:00 UTC on 25 Oct 2026; with days that begin at
    # 04:00 local time, the user's 24 Oct runs from 02:00 UTC to 03:00 UTC the next day
    start = datetime(2026, 10, 20, 12, tzinfo=timezone.utc)
    for qid in ("a", "b", "c"):
        add(db, qid, start, 3)
    add(db, "a", datetime(2026, 10, 25, 2, 30, tzinfo=timezone.utc), 3)  # still 24 Oct
    add(db, "a", datetime(2026, 10, 25, 3, 30, tzinfo=timezone.utc), 1)  # 25 Oct: counts
    add(db, "b", datetime(2026, 10, 24, 2, 30, tzinfo=timezone.utc), 1)  # 24 Oct
    add(db, "b", datetime(2026, 10, 25, 2, 59, tzinfo=timezone.utc), 3)  # 24 Oct again
    add(db, "c", datetime(2026, 10, 24, 1, 59, tzinfo=timezone.utc), 4)  # 23 Oct
    since = BERLIN_4AM.start_of(datetime(2026, 10, 23).date())
    assert retention_by_day(db, since, NOW, BERLIN_4AM) == [
        ("2026-10-23", False, 1, 1),
        ("2026-10-24", False, 2, 1),
        ("2026-10-25", False, 1, 0),
    ]


def test_retention_by_day_starting_within_a_day_still_sees_that_days_earlier_review(db):
    add(db, "a", utc(1, 9), 3)
    add(db, "a", utc(10, 9), 3)  # before the window's start, the same day
    add(db, "a", utc(10, 15), 1)  # in the window, but not the day's first review
    add(db, "b", utc(1, 9), 3)
    add(db, "b", utc(10, 15), 1)  # the day's first: a young fail
    assert retention_by_day(db, utc(10, 12), NOW, UTC_DAYS) == [("2026-11-10", False, 1, 0)]


def test_retention_by_day_without_reviews_has_no_rows(db):
    assert retention_by_day(db, utc(1, 0), NOW, UTC_DAYS) == []


def card(db, qid, due, **fields):
    row = new_card_row(qid, due)
    row.update(fields)
    db["cards"].insert(row)


def test_due_counts_and_forecast_count_buried_cards_when_their_bury_ends(db):
    card(db, "overdue", NOW - timedelta(days=2), reps=3)
    card(db, "buried-to-tomorrow", NOW - timedelta(days=1), reps=2,
         buried_until=iso(utc(19, 0)))  # fmt: skip
    card(db, "buried-to-tonight", NOW - timedelta(days=1), reps=2,
         buried_until=iso(utc(18, 20)))  # fmt: skip
    card(db, "buried-new", NOW - timedelta(days=1), reps=0,
         buried_until=iso(utc(18, 20)))  # new: its bury hides it until it is due  # fmt: skip
    card(db, "buried-before-due", utc(20, 9), reps=2,
         buried_until=iso(utc(18, 9)))  # bury over before it is due: counts on its due day  # fmt: skip
    card(db, "suspended", NOW - timedelta(days=1), reps=2, suspended_at=iso(utc(17, 0)))
    card(db, "later-today", utc(18, 23), reps=1)
    card(db, "not-in-bank", NOW - timedelta(days=1), reps=1)
    card(db, "in-three-days", utc(21, 12), reps=1)
    bank = sorted(["overdue", "buried-to-tomorrow", "buried-to-tonight", "buried-new",
                   "buried-before-due", "suspended", "later-today", "in-three-days"])  # fmt: skip
    assert due_counts(db, NOW, bank) == {"now": 1, "later_today": 2}
    assert due_counts(db, NOW) == {"now": 2, "later_today": 2}
    assert [d["due"] for d in forecast(db, NOW, bank)] == [3, 1, 1, 1, 0, 0, 0]
    assert [d["due"] for d in forecast(db, NOW)] == [4, 1, 1, 1, 0, 0, 0]
    assert forecast(db, NOW, bank, count=2) == [
        {"date": "2026-11-18", "due": 3},
        {"date": "2026-11-19", "due": 1},
    ]
    assert forecast(db, NOW, bank, count=0) == []


def test_question_figures_reads_cards_and_counts_into_one_figure_per_question(db):
    card(db, "q1", NOW + timedelta(days=3), state=2, stability=10.0,
         last_review=iso(NOW - timedelta(days=5)), lapses=2, reps=4)  # fmt: skip
    card(db, "q2", NOW, state=3, stability=3.0,
         last_review=iso(NOW - timedelta(hours=2)), lapses=1, reps=3)  # fmt: skip
    card(db, "never", NOW)  # no review yet: no figure
    add(db, "q1", NOW - timedelta(days=5), 3)
    add(db, "q1", NOW - timedelta(days=9), 1)
    add(db, "q2", NOW - timedelta(hours=2), 1)
    add(db, "gone", NOW - timedelta(days=1), 4)  # history without a card
    figures = question_figures(db, NOW, {"q1": "kv", "q2": "kv"}, make_scheduler(fuzz=False))
    assert [
        (f["question_id"], f["topic"], round(f["retrievability"], 6), f["accuracy"],
         f["reviews"], f["lapses"], f["learning"])
        for f in figures
    ] == [
        ("gone", "(removed)", 0.0, 1.0, 1, 0, False),
        ("q1", "kv", 0.940344, 0.5, 2, 2, False),
        ("q2", "kv", 0.957336, 0.0, 1, 1, True),
    ]  # fmt: skip
