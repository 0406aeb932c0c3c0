import json
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from click.testing import CliRunner

from drill.cli import cli
from drill.reports.stats import (
    REMOVED_TOPIC,
    collect_stats,
    due_counts,
    forecast,
    frequent_misconceptions,
    heatmap_level,
    question_figures,
    retention,
    reviews_per_day,
    streak,
    topic_mastery,
    weakest,
    weekly_retention,
)
from drill.reports.stats_text import render_heatmap, render_text
from drill.srs import iso, make_scheduler, new_card_row
from drill.storage.database import open_db
from drill.study.days import DayClock

# Wednesday 18 November 2026, 15:00 UTC; the heatmap's first Monday is 3 August.
NOW = datetime(2026, 11, 18, 15, 0, tzinfo=timezone.utc)


def at(days_ago: int, hour: int = 10, minute: int = 0) -> datetime:
    day = NOW - timedelta(days=days_ago)
    return day.replace(hour=hour, minute=minute)


@pytest.fixture
def db(tmp_path):
    return open_db(tmp_path / "stats.db")


_counter = iter(range(10**9))


def add(db, qid, when, rating, *, correct=None, cram=0, misconception=None, ticks=None):
    db["reviews"].insert(
        {
            "id": str(uuid.UUID(int=next(_counter))),
            "question_id": qid,
            "reviewed_at": iso(when),
            "rating": rating,
            "correct": correct,
            "cram": cram,
            "misconception": misconception,
            "ticks": ticks,
        }
    )


def add_card(db, qid, due, last_review=None):
    row = new_card_row(qid, due)
    row["last_review"] = iso(last_review) if last_review else None
    db["cards"].insert(row)


# ---------------------------------------------------------------------- streak


def test_streak_counts_back_from_today_and_stops_at_a_gap(db):
    for days_ago in (0, 1, 2, 4, 5):
        add(db, "a", at(days_ago), 3)
    assert streak(db, NOW) == {"days": 3, "reviewed_today": True}


def test_streak_without_a_review_today_still_stands_from_yesterday(db):
    for days_ago in (1, 2):
        add(db, "a", at(days_ago, hour=23, minute=59), 3)
    assert streak(db, NOW) == {"days": 2, "reviewed_today": False}


def test_streak_is_broken_by_a_missed_yesterday_and_ignores_future_reviews(db):
    add(db, "a", at(2), 3)
    add(db, "a", NOW + timedelta(hours=1), 3)  # later today: not yet happened at NOW
    assert streak(db, NOW) == {"days": 0, "reviewed_today": False}


def test_streak_uses_utc_days(db):
    # 00:30 UTC today and 23:30 UTC the day before are two days
    add(db, "a", at(0, hour=0, minute=30), 3)
    add(db, "a", at(1, hour=23, minute=30), 3)
    assert streak(db, NOW)["days"] == 2


# ------------------------------------------------------------------- retention


def test_true_retention_counts_the_first_review_per_day_of_questions_seen_before(db):
    add(db, "a", at(40), 3)  # outside the window, but makes day -5 mature
    add(db, "a", at(5), 3)  # counts: pass
    add(db, "a", at(5, hour=11), 1)  # second review that day: ignored
    add(db, "a", at(2), 1)  # counts: fail
    add(db, "a", at(1), 1, cram=1)  # cram: ignored
    add(db, "b", at(3), 1)  # learned that day: not mature
    add(db, "b", at(3, hour=12), 3)  # same day: not mature
    add(db, "b", at(1), 3)  # counts: pass
    add(db, "c", at(10), 3, cram=1)  # a cram review does not make c mature
    add(db, "c", at(4), 3)  # first scheduled review: not counted
    add(db, "d", at(31), 3)
    add(db, "d", at(30), 1)  # 30 days ago is outside a 30-day window (today is day 1)
    add(db, "d", at(29), 4)  # counts: pass
    add(db, "e", at(40), 3, cram=1)  # only crammed before the window
    add(db, "e", at(2), 1)  # so this first scheduled review is not counted
    # a's pass at day -5 came 35 days after its last review (mature, at least 21); the other
    # three came 1 to 3 days after the previous one (young)
    assert retention(db, NOW) == {
        "window_days": 30,
        "since": "2026-10-20",
        "reviews": 4,
        "passed": 3,
        "rate": 0.75,
        "young": {"reviews": 3, "passed": 2, "rate": 2 / 3},
        "mature": {"reviews": 1, "passed": 1, "rate": 1.0},
    }


def test_retention_without_reviews_of_questions_seen_before_has_no_rate(db):
    add(db, "a", at(1), 3)
    assert retention(db, NOW)["rate"] is None
    assert retention(db, NOW)["reviews"] == 0


def test_weekly_retention_counts_each_review_in_its_week(db):
    # the history of the 30-day test above; over 16 weeks d's fail of 19 Oct counts too
    add(db, "a", at(40), 3)  # 9 Oct: a's first review, not counted
    add(db, "a", at(5), 3)  # Fri 13 Nov: pass, mature (35 days after 9 Oct)
    add(db, "a", at(5, hour=11), 1)  # second review that day: ignored
    add(db, "a", at(2), 1)  # Mon 16 Nov: fail, young
    add(db, "a", at(1), 1, cram=1)  # cram: ignored
    add(db, "b", at(3), 1)  # Sun 15 Nov: first review
    add(db, "b", at(1), 3)  # Tue 17 Nov: pass, young
    add(db, "d", at(31), 3)  # Sun 18 Oct: first review
    add(db, "d", at(30), 1)  # Mon 19 Oct: fail, young
    add(db, "d", at(29), 4)  # Tue 20 Oct: pass, young
    weeks = weekly_retention(db, NOW)
    assert [w["week"] for w in weeks[:2]] == ["2026-08-03", "2026-08-10"]
    assert len(weeks) == 16
    empty = {"reviews": 0, "passed": 0, "rate": None}
    one_of_two_young = {"reviews": 2, "passed": 1, "rate": 0.5}
    assert weeks[11] == {
        "week": "2026-10-19",
        **one_of_two_young,
        "young": one_of_two_young,
        "mature": empty,
    }
    assert weeks[14] == {
        "week": "2026-11-09",
        "reviews": 1,
        "passed": 1,
        "rate": 1.0,
        "young": empty,
        "mature": {"reviews": 1, "passed": 1, "rate": 1.0},
    }
    assert weeks[15] == {
        "week": "2026-11-16",
        **one_of_two_young,
        "young": one_of_two_young,
        "mature": empty,
    }
    others = [w for i, w in enumerate(weeks) if i not in (11, 14, 15)]
    assert all(w["reviews"] == 0 and w["rate"] is None for w in others)


def test_weekly_retention_puts_a_review_before_the_rollover_in_the_day_before(db):
    # Monday 16 Nov at 02:00 UTC is still Sunday 15 Nov for days that begin at 04:00
    add(db, "a", datetime(2026, 11, 12, 9, tzinfo=timezone.utc), 3)
    add(db, "a", datetime(2026, 11, 16, 2, tzinfo=timezone.utc), 3)
    by_utc_days = weekly_retention(db, NOW)
    by_user_days = weekly_retention(db, NOW, days=DayClock(timezone.utc, 4))
    assert [w["reviews"] for w in by_utc_days[14:]] == [0, 1]
    assert [w["reviews"] for w in by_user_days[14:]] == [1, 0]


# ---------------------------------------------------------------- due/forecast


def test_due_counts_and_seven_day_forecast(db):
    add_card(db, "overdue", NOW - timedelta(days=3))
    add_card(db, "exactly-now", NOW)
    add_card(db, "tonight", NOW + timedelta(hours=8, minutes=59))  # 23:59 today
    add_card(db, "tomorrow-midnight", NOW + timedelta(hours=9))  # 00:00 tomorrow
    add_card(db, "in-six-days", NOW + timedelta(days=6))
    add_card(db, "in-seven-days", NOW + timedelta(days=7))  # beyond the forecast
    assert due_counts(db, NOW) == {"now": 2, "later_today": 1}
    assert forecast(db, NOW) == [
        {"date": "2026-11-18", "due": 3},
        {"date": "2026-11-19", "due": 1},
        {"date": "2026-11-20", "due": 0},
        {"date": "2026-11-21", "due": 0},
        {"date": "2026-11-22", "due": 0},
        {"date": "2026-11-23", "due": 0},
        {"date": "2026-11-24", "due": 1},
    ]


def test_due_counts_skip_questions_not_in_the_bank(db):
    add_card(db, "kept", NOW - timedelta(days=1))
    add_card(db, "gone", NOW - timedelta(days=1))
    assert due_counts(db, NOW, ["kept"]) == {"now": 1, "later_today": 0}
    assert forecast(db, NOW, ["kept"])[0] == {"date": "2026-11-18", "due": 1}


# --------------------------------------------------------------------- heatmap


def test_heatmap_levels_are_quarters_of_the_busiest_day():
    assert [heatmap_level(n, 8) for n in (0, 1, 2, 3, 4, 5, 6, 7, 8)] == [0, 1, 1, 2, 2, 3, 3, 4, 4]
    assert heatmap_level(0, 0) == 0


def test_heatmap_plain_rendering_of_a_known_history(db):
    # 3 Aug (first cell, a Monday): 1; 12 Aug (Wed, week 2): 2;
    # 1 Oct (Thu, week 9): 3; today (Wed 18 Nov, week 16): 4
    for when, n in (
        (datetime(2026, 8, 3, 9, tzinfo=timezone.utc), 1),
        (datetime(2026, 8, 12, 9, tzinfo=timezone.utc), 2),
        (datetime(2026, 10, 1, 9, tzinfo=timezone.utc), 3),
        (datetime(2026, 11, 18, 9, tzinfo=timezone.utc), 4),
    ):
        for i in range(n):
            add(db, "a", when + timedelta(minutes=i), 3)
    add(db, "a", datetime(2026, 8, 2, 9, tzinfo=timezone.utc), 3)  # before the window
    per_day = reviews_per_day(db, NOW)
    assert per_day[0] == {"date": "2026-08-03", "reviews": 1}
    assert per_day[-1] == {"date": "2026-11-18", "reviews": 4}
    assert len(per_day) == 15 * 7 + 3
    assert render_heatmap(per_day) == [
        "    Aug       Sep     Oct     Nov",
        "Mon .",
        "Tue",
        "Wed   :" + " " * 27 + "#",
        "Thu" + " " * 17 + "*",
        "Fri",
        "Sat",
        "Sun",
    ]


def test_heatmap_colour_draws_every_past_day_and_leaves_the_future_blank(db):
    add(db, "a", at(0), 3)
    lines = render_heatmap(reviews_per_day(db, NOW), color=True)
    assert lines[3].count("\x1b[38;5;40m") == 1  # today, the busiest day
    assert lines[1].count("\x1b[38;5;238m") == 16  # every Monday so far, no reviews
    assert lines[4].count("\x1b[38;5;") == 15  # Thursday: this week's is still to come


# --------------------------------------------------------------------- mastery


def review_card(qid, last_review, stability, reps, lapses=0):
    """A card in the Review state, last reviewed at `last_review`, of `stability` days."""
    row = new_card_row(qid, last_review)
    row.update(state=2, step=None, stability=stability, difficulty=5.0, reps=reps, lapses=lapses)
    row["last_review"] = iso(last_review)
    return row


# Recall now, worked by hand from the FSRS-6 forgetting curve with the default w20 = 0.1542:
# R = (1 + F · t / S) ** -w20, F = 0.9 ** (-1 / w20) - 1 = 0.98034649..., t in days since
# the last review, fractions included: each review was at 10:00 and now is 15:00, 5/24 of
# a day later. t = 5 5/24, S = 5: 2.02119395 ** -0.1542 = 0.89717102; t = 1 5/24, S = 10:
# 1.11845852 ** -0.1542 = 0.98288524; t = 9 5/24, S = 3: 4.00911887 ** -0.1542 = 0.80725334.
GONE_RECALL = 0.8971710216655288
STRONG_RECALL = 0.98288523994943
SHAKY_RECALL = 0.8072533401076686


def test_topic_mastery_weakest_and_removed_questions(db):
    history = [
        ("strong", at(3), 4, 1),
        ("strong", at(1), 3, 1),
        ("shaky", at(20), 3, 1),
        ("shaky", at(10), 1, 0),
        ("shaky", at(9), 3, None),  # self-rated Good: right
        ("gone", at(5), 2, 0),
    ]
    for qid, when, rating, correct in history:
        add(db, qid, when, rating, correct=correct)
    # each card last reviewed at its question's last review: 1, 9 and 5 whole days ago
    db["cards"].insert_all(
        [
            review_card("strong", at(1), stability=10.0, reps=2),
            review_card("shaky", at(9), stability=3.0, reps=3, lapses=1),
            review_card("gone", at(5), stability=5.0, reps=1),
        ]
    )
    topics = {"strong": "kv-cache", "shaky": "kv-cache", "never": "paging"}

    figures = question_figures(db, NOW, topics, make_scheduler(fuzz=False))
    assert figures == [
        {
            "question_id": "gone",
            "topic": REMOVED_TOPIC,
            "retrievability": pytest.approx(GONE_RECALL),
            "accuracy": 0.0,
            "reviews": 1,
            "lapses": 0,
            "learning": False,
        },
        {
            "question_id": "shaky",
            "topic": "kv-cache",
            "retrievability": pytest.approx(SHAKY_RECALL),
            "accuracy": pytest.approx(2 / 3),
            "reviews": 3,
            "lapses": 1,
            "learning": False,
        },
        {
            "question_id": "strong",
            "topic": "kv-cache",
            "retrievability": pytest.approx(STRONG_RECALL),
            "accuracy": 1.0,
            "reviews": 2,
            "lapses": 0,
            "learning": False,
        },
    ]

    mastery = topic_mastery(figures)
    assert [t["topic"] for t in mastery] == ["kv-cache", REMOVED_TOPIC]
    assert mastery[0]["questions"] == 2 and mastery[0]["reviews"] == 5
    assert mastery[0]["accuracy"] == pytest.approx(4 / 5)
    # (0.98288524 + 0.80725334) / 2
    assert mastery[0]["retrievability"] == pytest.approx(0.8950692900285493)

    # weakness is the mean of recall and accuracy: shaky 0.737, strong 0.991
    assert [w["question_id"] for w in weakest(figures)] == ["shaky", "strong"]


def learning_card(qid, last_review, stability, state=3):
    """A card in Relearning (state 3), failed at `last_review`, of `stability` days."""
    row = review_card(qid, last_review, stability, reps=3, lapses=1)
    row.update(state=state, step=0, due=iso(last_review + timedelta(minutes=10)))
    return row


# A card failed a moment ago has a recall near 100 % by the curve, which says nothing; its
# recall a day after the failure does. By hand, as above, with S = 0.5 day:
# a day later (1 + 0.98034649 · 1 / 0.5) ** -0.1542 = 2.96069299 ** -0.1542 = 0.84588465;
# three days later 6.88207897 ** -0.1542 = 0.74271745; five minutes later (a card in
# review, left as it is) 1.00680797 ** -0.1542 = 0.99895432.
FAILED_A_DAY_ON = 0.8458846451494336
FAILED_THREE_DAYS_AGO = 0.742717453487897
REVIEWED_FIVE_MINUTES_AGO = 0.9989543167247568


def test_recall_of_a_card_still_in_learning_is_its_recall_a_day_after_its_last_answer(db):
    db["cards"].insert_all([
        learning_card("failed", NOW - timedelta(minutes=5), stability=0.5),
        learning_card("failed-long-ago", NOW - timedelta(days=3), stability=0.5),
        review_card("reviewed", NOW - timedelta(minutes=5), stability=0.5, reps=1),
    ])  # fmt: skip
    figures = question_figures(db, NOW, None, make_scheduler(fuzz=False))
    assert [(f["question_id"], f["learning"]) for f in figures] == [
        ("failed", True), ("failed-long-ago", True), ("reviewed", False),
    ]  # fmt: skip
    assert [f["retrievability"] for f in figures] == [
        pytest.approx(FAILED_A_DAY_ON),
        pytest.approx(FAILED_THREE_DAYS_AGO),  # its day has passed: recall now
        pytest.approx(REVIEWED_FIVE_MINUTES_AGO),
    ]


def test_the_weakest_table_marks_a_card_in_learning_and_says_what_its_recall_is(tmp_path):
    path = tmp_path / "k.db"
    db = open_db(path)
    add(db, "kv-bytes-per-request", NOW - timedelta(minutes=5), 1, correct=0)
    add(db, "prefix-cache-hit-metrics", NOW - timedelta(minutes=5), 3, correct=1)
    db["cards"].insert_all([
        learning_card("kv-bytes-per-request", NOW - timedelta(minutes=5), stability=0.5),
        review_card("prefix-cache-hit-metrics", NOW - timedelta(minutes=5), stability=0.5, reps=1),
    ])  # fmt: skip
    db.conn.close()
    result = CliRunner().invoke(cli, ["stats", "--db", str(path), "--now", iso(NOW)])
    section = result.output.split("Weakest questions\n", 1)[1].split("\n\n", 1)[0]
    assert section.splitlines() == [
        "  question                     topic  recall now  accuracy  reviews",
        "  kv-bytes-per-request      kv-cache        85%*        0%        1",
        "  prefix-cache-hit-metrics   metrics        100%      100%        1",
        "  * still learning (failed, or new): recall a day after its last answer, since right "
        "after one it is near 100%",
    ]


def test_frequent_misconceptions_with_names(db):
    for _ in range(3):
        add(db, "a", at(1), 1, correct=0, misconception="forgot-kv")
    add(db, "a", at(1), 1, correct=0, misconception="gb-vs-gib")
    add(db, "a", at(1), 3, correct=1)
    names = {"forgot-kv": "forgot the K+V factor"}
    assert frequent_misconceptions(db, NOW, names) == [
        {"id": "forgot-kv", "name": "forgot the K+V factor", "count": 3},
        {"id": "gb-vs-gib", "name": "gb-vs-gib", "count": 1},
    ]


def test_suspended_cards_are_never_due_and_are_counted_with_the_leeches(db):
    add_card(db, "held", NOW - timedelta(days=1))
    add_card(db, "free", NOW - timedelta(days=1))
    db.execute(
        "update cards set suspended_at = ?, leech_at = ? where question_id = 'held'",
        [iso(NOW - timedelta(hours=1)), iso(NOW - timedelta(hours=1))],
    )
    figures = collect_stats(db, NOW)
    assert figures["due"] == {"now": 1, "later_today": 0}
    assert figures["forecast"][0]["due"] == 1
    assert figures["totals"] == {
        "cards": 2, "reviews": 0, "suspended": 1, "buried": 0, "leeches": 1,
    }  # fmt: skip
    assert "\nHeld back: 1 suspended, 0 buried; leeches: 1 (`kvdrill unsuspend --list` shows " \
           "them)\n" in render_text(figures)


def test_collect_stats_has_every_documented_key(db):
    add(db, "a", at(0), 3)
    figures = collect_stats(db, NOW, topics={"a": "kv-cache"})
    assert list(figures) == [
        "now",
        "days",
        "due",
        "forecast",
        "streak",
        "heatmap",
        "retention",
        "topics",
        "weakest",
        "misconceptions",
        "missed_points",
        "mock_interviews",
        "totals",
    ]
    assert figures["totals"] == {
        "cards": 0, "reviews": 1, "suspended": 0, "buried": 0, "leeches": 0,
    }  # fmt: skip
    assert figures["now"] == "2026-11-18T15:00:00.000000+00:00"


# ------------------------------------------------------------------------- CLI


def test_stats_cli_json_and_text(tmp_path):
    path = tmp_path / "cli.db"
    db = open_db(path)
    for days_ago in (0, 1):
        add(db, "nowhere-in-the-bank", at(days_ago), 3)
    db.conn.close()
    runner = CliRunner()
    args = ["stats", "--db", str(path), "--now", "2026-11-18T15:00:00Z"]
    result = runner.invoke(cli, [*args, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["streak"] == {"days": 2, "reviewed_today": True}
    assert data["topics"][-1]["topic"] == REMOVED_TOPIC
    text = runner.invoke(cli, args)
    assert text.exit_code == 0, text.output
    assert "Streak: 2 days (reviewed today)" in text.output
    assert "Wed" in text.output and "\x1b[" not in text.output


def test_stats_cli_names_misconceptions_from_the_catalogue(tmp_path):
    path = tmp_path / "cli.db"
    db = open_db(path)
    add(db, "a", at(1), 1, correct=0, misconception="forgot-kv-factor")
    add(db, "a", at(1), 1, correct=0, misconception="not-in-the-catalogue")
    add(db, "a", at(2), 1, correct=0, misconception="not-in-the-catalogue")
    db.conn.close()
    args = ["stats", "--db", str(path), "--now", "2026-11-18T15:00:00Z", "--json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["misconceptions"] == [
        {"id": "not-in-the-catalogue", "name": "not-in-the-catalogue", "count": 2},
        # the name question_bank/misconceptions.yaml gives it
        {"id": "forgot-kv-factor", "name": "forgot the K+V factor of 2", "count": 1},
    ]


def test_stats_cli_rejects_a_bad_now():
    result = CliRunner().invoke(cli, ["stats", "--now", "yesterday"])
    assert result.exit_code == 2
    assert "not an ISO-8601 time" in result.output


def test_reviews_after_now_do_not_count(db):
    add(db, "a", at(1), 3, correct=1)
    add(db, "a", at(1, hour=11), 1, correct=0)
    before = question_figures(db, NOW, None)
    assert [(f["reviews"], f["accuracy"]) for f in before] == [(2, 0.5)]
    add(db, "a", NOW + timedelta(minutes=5), 1, correct=0)
    assert question_figures(db, NOW, None) == before
    assert collect_stats(db, NOW)["totals"] == {
        "cards": 0, "reviews": 2, "suspended": 0, "buried": 0, "leeches": 0,
    }  # fmt: skip


def test_ids_from_an_old_database_reach_the_terminal_without_escapes(tmp_path):
    from click.testing import CliRunner

    from drill.cli import cli

    db = open_db(tmp_path / "k.db")
    db.execute(
        "insert into reviews (id, question_id, reviewed_at, rating, correct, misconception, cram)"
        " values ('r1', 'q\x1b[2J\x9bx', '2026-11-19T09:00:00.000000+00:00', 1, 0,"
        " 'slip\x1b]0;title\x07', 0)"
    )
    db.conn.close()
    args = ["stats", "--db", str(tmp_path / "k.db"), "--now", "2026-11-20T09:00:00+00:00"]
    text = CliRunner().invoke(cli, args)
    assert text.exit_code == 0
    assert "\x1b" not in text.output and "\x9b" not in text.output and "\x07" not in text.output
    assert text.output.endswith("Most frequent mistakes\n  1x  slip\n")
    as_json = CliRunner().invoke(cli, [*args, "--json"])
    assert '"id": "slip\\u001b]0;title\\u0007"' in as_json.output


# ---------------------------------------------------------------------- key points


POINTS = {
    "gqa": ("KV heads are shared", "the cache shrinks by the group size", "queries all score"),
    "ttft": ("queueing counts", "prefill counts"),
}


def test_the_key_points_missed_most_are_counted_from_the_ticks(db):
    add(db, "gqa", at(3), 2, ticks="101")
    add(db, "gqa", at(2), 2, ticks="001")
    add(db, "gqa", at(1), 3, ticks="111")
    add(db, "ttft", at(2), 1, ticks="00")
    add(db, "ttft", at(1), 2, ticks="01")
    add(db, "ttft", at(1, hour=11), 2, ticks="0")  # ticked against one point: not counted
    add(db, "gone", at(1), 2, ticks="00")  # no longer in the bank
    add(db, "gqa", at(0, hour=16), 1, ticks="000")  # after now
    add(db, "kv", at(1), 3)  # a numeric answer: no ticks
    # gqa: point 1 unticked once of 3, point 2 twice; ttft: point 1 twice of 2, point 2 once
    assert collect_stats(db, NOW, key_points=POINTS)["missed_points"] == [
        {"question_id": "ttft", "point": 1, "text": "queueing counts", "missed": 2, "reviews": 2},
        {"question_id": "gqa", "point": 2, "text": "the cache shrinks by the group size",
         "missed": 2, "reviews": 3},
        {"question_id": "ttft", "point": 2, "text": "prefill counts", "missed": 1, "reviews": 2},
        {"question_id": "gqa", "point": 1, "text": "KV heads are shared", "missed": 1,
         "reviews": 3},
    ]  # fmt: skip


def test_the_stats_text_names_the_key_points_missed_most(tmp_path):
    from click.testing import CliRunner

    from drill.cli import cli

    path = tmp_path / "k.db"
    db = open_db(path)
    add(db, "prefix-cache-hit-metrics", at(1), 2, ticks="10")
    add(db, "prefix-cache-hit-metrics", at(0), 2, ticks="00")
    db.conn.close()
    result = CliRunner().invoke(cli, ["stats", "--db", str(path), "--now", iso(NOW)])
    assert result.exit_code == 0, result.output
    section = result.output.split("Key points missed most\n", 1)[1].split("\n\n", 1)[0]
    assert section.splitlines() == [
        "  2 of 2  prefix-cache-hit-metrics 2. The shared prefix's prefill is skipped because its "
        "KV is reused; how often depends on the cache's matching and eviction.",
        "  1 of 2  prefix-cache-hit-metrics 1. It lowers TTFT.",
    ]


def test_stats_wraps_between_words_at_the_terminal_width(tmp_path):
    path = tmp_path / "k.db"
    db = open_db(path)
    add(db, "prefix-cache-hit-metrics", at(1), 2, ticks="10")
    add(db, "prefix-cache-hit-metrics", at(0), 2, ticks="00")
    db.conn.close()
    args = ["stats", "--db", str(path), "--now", iso(NOW)]
    result = CliRunner().invoke(cli, args, env={"COLUMNS": "60"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[1:3] == [
        "Next 7 days: 11-18 0  11-19 0  11-20 0  11-21 0  11-22 0",
        "11-23 0  11-24 0",
    ]
    section = result.output.split("Key points missed most\n", 1)[1].split("\n\n", 1)[0]
    assert section.splitlines() == [
        "  2 of 2  prefix-cache-hit-metrics 2. The shared prefix's",
        "  prefill is skipped because its KV is reused; how often",
        "  depends on the cache's matching and eviction.",
        "  1 of 2  prefix-cache-hit-metrics 1. It lowers TTFT.",
    ]
    # the tables and the heatmap are kept whole; every other line fits
    assert [line for line in lines if len(line) > 60] == [
        "  question                    topic  recall now  accuracy  reviews",
        "  prefix-cache-hit-metrics  metrics          0%      100%        2",
    ]
    # piped without COLUMNS, nothing is wrapped
    piped = CliRunner().invoke(cli, args).output.splitlines()
    assert "11-24 0" in piped[1] and len(piped) == len(lines) - 3
