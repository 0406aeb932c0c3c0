"""Load balancing and easy days: a review card's due day chosen within fsrs's fuzz range,
toward the lighter day, away from easy days, the same every time for the same history."""

import random
from collections import Counter
from datetime import date, datetime, timedelta, timezone

import pytest
from dbstates import BANK_DIR, kvdrill_db, run
from fsrs import Scheduler

from drill.srs import iso
from drill.storage.database import open_db
from drill.storage.reviews import due_counts
from drill.study.days import UTC_DAYS
from drill.study.load_balance import (
    LoadBalancer,
    easy_day_factors,
    easy_day_loads,
    fuzz_bounds,
    parse_easy_days,
    weighted_pick,
)

AT = datetime(2026, 3, 2, 9, tzinfo=timezone.utc)  # a Monday
TEN_DAYS = {"question_id": "q", "state": 2, "step": None, "due": iso(AT + timedelta(days=10))}


def card(question_id: str, days: int = 10) -> dict:
    return {**TEN_DAYS, "question_id": question_id, "due": iso(AT + timedelta(days=days))}


def march(day: int) -> date:
    return date(2026, 3, day)


# ------------------------------------------------------------------ the range and the weights


def test_the_range_is_fsrs_own_fuzz_range():
    # delta = 1 + 0.15 x (min(i, 7) - 2.5) + 0.1 x (min(i, 20) - 7) + 0.05 x (i - 20)
    assert fuzz_bounds(2, 36500) == (2, 2)  # under 2.5 days: no fuzz
    assert fuzz_bounds(3, 36500) == (2, 4)  # delta 1.075
    assert fuzz_bounds(10, 36500) == (8, 12)  # delta 1.975
    assert fuzz_bounds(100, 36500) == (93, 107)  # delta 6.975
    assert fuzz_bounds(100, 100) == (93, 100)  # never past the longest interval
    # fsrs's own random fuzz of 10 days: 8 to 12, and 13 when its draw over [8, 13)
    # rounds up past the range it computed; the balancer keeps to the range
    random.seed(7)
    scheduler = Scheduler(enable_fuzzing=True)
    seen = {scheduler._get_fuzzed_interval(interval=timedelta(days=10)).days for _ in range(400)}
    assert seen == {8, 9, 10, 11, 12, 13}


def test_weighted_pick_cuts_the_unit_interval_in_proportion():
    assert [weighted_pick([1.0, 3.0], f) for f in (0.0, 0.249, 0.25, 0.999)] == [0, 0, 1, 1]


def test_learning_steps_and_short_intervals_are_left_alone():
    balancer = LoadBalancer(UTC_DAYS)
    learning = {**TEN_DAYS, "state": 1, "due": iso(AT + timedelta(minutes=10))}
    assert balancer.place(learning, AT, {}) == learning
    two_days = card("q", days=2)
    assert balancer.place(two_days, AT, {}) == two_days


# ------------------------------------------------------------------ the lighter day


def test_the_lighter_day_is_chosen():
    balancer = LoadBalancer(UTC_DAYS)
    # fsrs says 10 days: 03-12; the range is 03-10 .. 03-14. With no card due anywhere
    # the seeded draw for prefix-caching (0.83) falls on the fifth day, 03-14
    assert balancer.place(card("prefix-caching"), AT, {})["due"] == (
        "2026-03-14T09:00:00.000000+00:00"
    )
    # four cards due on each day but 03-13, which has one: weights 1/(16 x 8), 1/(16 x 9),
    # 1/(16 x 10), 1/11 and 1/(16 x 12); 03-13 takes 78 % of the draw and the card
    assert balancer.place(
        card("prefix-caching"), AT, {march(10): 4, march(11): 4, march(12): 4, march(13): 1,
                                     march(14): 4},
    )["due"] == "2026-03-13T09:00:00.000000+00:00"  # fmt: skip
    # two candidate days, both empty but one: kv-bytes lands on 03-12 unloaded, and
    # moves to the one empty day when the others carry two cards each
    assert balancer.place(card("kv-bytes"), AT, {})["due"][:10] == "2026-03-12"
    loaded = {march(10): 2, march(11): 2, march(12): 2, march(13): 2}
    assert balancer.place(card("kv-bytes"), AT, loaded)["due"][:10] == "2026-03-14"


def test_the_same_card_and_time_give_the_same_day_and_cards_spread():
    balancer = LoadBalancer(UTC_DAYS)
    first = balancer.place(card("kv-bytes"), AT, {march(12): 3})
    assert all(balancer.place(card("kv-bytes"), AT, {march(12): 3}) == first for _ in range(5))
    # a thousand cards answered together, no load: spread over all five days
    spread = Counter(balancer.place(card(f"q{n}"), AT, {})["due"][:10] for n in range(1000))
    assert spread == {"2026-03-10": 203, "2026-03-11": 203, "2026-03-12": 205,
                      "2026-03-13": 188, "2026-03-14": 201}  # fmt: skip


def test_long_intervals_are_spread_but_not_balanced():
    balancer = LoadBalancer(UTC_DAYS)
    # 100 days: 93 .. 107; a heavy load on the chosen day does not move the card
    due = balancer.place(card("kv-bytes", days=100), AT, {})["due"]
    heavy = {datetime.fromisoformat(due).date(): 50}
    assert balancer.place(card("kv-bytes", days=100), AT, heavy)["due"] == due


# ------------------------------------------------------------------ easy days


@pytest.mark.parametrize(
    ("text", "canonical", "loads"),
    [
        ("sat,sun", "sat,sun", (1, 1, 1, 1, 1, 0, 0)),
        ("Sunday:0.5, sat", "sat,sun:0.5", (1, 1, 1, 1, 1, 0, 0.5)),
        ("wed:1", "", (1,) * 7),
        ("none", "", (1,) * 7),
    ],
)
def test_easy_days_are_read_as_days_and_loads(text, canonical, loads):
    assert parse_easy_days(text) == canonical
    assert easy_day_loads(text) == loads


@pytest.mark.parametrize("text", ["weekend", "sat;sun", "sun:1.5", "sun:-0", "sun:x", "sa"])
def test_easy_days_that_are_not_days_are_refused(text):
    if text == "sun:-0":  # -0 is 0: a day off, as "sun"
        assert parse_easy_days(text) == "sun"
        return
    with pytest.raises(ValueError, match="days of the week such as sat,sun"):
        parse_easy_days(text)


def test_an_easy_day_is_avoided():
    plain = LoadBalancer(UTC_DAYS)
    weekend = LoadBalancer(UTC_DAYS, easy_day_loads("sat,sun"))
    # prefix-caching lands on Saturday 03-14 with no easy day; with the weekend off it
    # goes to the Friday, though every day is empty
    assert plain.place(card("prefix-caching"), AT, {})["due"][:10] == "2026-03-14"
    assert weekend.place(card("prefix-caching"), AT, {})["due"][:10] == "2026-03-13"
    spread = Counter(weekend.place(card(f"q{n}"), AT, {})["due"][:10] for n in range(1000))
    assert spread == {"2026-03-10": 259, "2026-03-11": 248, "2026-03-12": 241,
                      "2026-03-13": 252}  # fmt: skip


def test_a_reduced_day_takes_cards_until_it_holds_its_share():
    loads = easy_day_loads("sat:0.5")
    weekdays = [1, 2, 3, 4, 5]  # Tuesday .. Saturday
    # Saturday at half a load: 2 cards count as 4 against an average of 2 elsewhere
    assert easy_day_factors(loads, weekdays, [2, 2, 2, 2, 2]) == [1, 1, 1, 1, 0.0001]
    # one card counts as 2: not over, Saturday stays open
    assert easy_day_factors(loads, weekdays, [2, 2, 2, 2, 1]) == [1, 1, 1, 1, 1]
    half = LoadBalancer(UTC_DAYS, loads)
    busy = {march(d): 2 for d in range(10, 15)}
    assert half.place(card("kv-bytes"), AT, {**busy, march(14): 1})["due"][:10] == "2026-03-14"
    assert half.place(card("kv-bytes"), AT, busy)["due"][:10] == "2026-03-12"


# ------------------------------------------------------------------ in the database and the quiz


def test_day_counts_come_from_the_cards_table(tmp_path):
    db = open_db(tmp_path / "k.db")
    rows = [("a", "2026-03-10T08:00:00.000000+00:00", None),
            ("b", "2026-03-10T23:59:59.000000+00:00", None),
            ("c", "2026-03-11T00:00:00.000000+00:00", None),
            ("d", "2026-03-11T05:00:00.000000+00:00", "2026-03-01T00:00:00.000000+00:00"),
            ("e", "2026-03-12T00:00:00.000000+00:00", None)]  # fmt: skip
    with db.conn:
        for qid, due, suspended in rows:
            db.execute(
                "insert into cards (question_id, state, due, reps, lapses, suspended_at)"
                " values (?, 2, ?, 1, 0, ?)", [qid, due, suspended],
            )  # fmt: skip
    bounds = ["2026-03-10T00:00:00.000000+00:00", "2026-03-11T00:00:00.000000+00:00",
              "2026-03-12T00:00:00.000000+00:00"]  # fmt: skip
    # d is suspended, e is past the last bound, b is the card being placed
    assert due_counts(db, bounds, exclude="b") == [1, 1]
    assert due_counts(db, bounds, exclude="zz") == [2, 1]


def _loaded(path, quiet_day: str | None):
    """The one-card database; with `quiet_day`, two other cards due on each day of the
    card's range (2027-01-28 .. 02-07) but that one."""
    kvdrill_db(path)
    if quiet_day is None:
        return path
    db = open_db(path)
    with db.conn:
        for n in range(11):
            day = (date(2027, 1, 28) + timedelta(days=n)).isoformat()
            for copy in range(2 if day != quiet_day else 0):
                db.execute(
                    "insert into cards (question_id, state, due, reps, lapses)"
                    " values (?, 2, ?, 1, 0)", [f"other-{n}-{copy}", f"{day}T10:00:00.000000+00:00"],
                )  # fmt: skip
    db.conn.close()
    return path


def _quiz_due(path) -> str:
    result = run("quiz", "--db", path, "--bank", BANK_DIR, "--topic", "quiz-fixture", "--seed", 1,
                 "--now", "2026-11-28T09:00:00+00:00", input="2 MiB\n\nq\n")  # fmt: skip
    assert result.exit_code == 0, result.output
    db = open_db(path)
    (due,) = db.execute("select due from cards where question_id = 'qf-kv-bytes'").fetchone()
    db.conn.close()
    return due


def test_the_quiz_places_an_answer_on_the_lighter_day(tmp_path):
    # qf-kv-bytes, answered easy on 11-20, is answered easy again on 11-28: fsrs says 66
    # days (02-02), the range is 61 .. 71 days (01-28 .. 02-07)
    assert _quiz_due(_loaded(tmp_path / "a.db", None)) == "2027-01-29T09:00:00.000000+00:00"
    assert _quiz_due(_loaded(tmp_path / "b.db", None)) == "2027-01-29T09:00:00.000000+00:00"
    quiet = _loaded(tmp_path / "c.db", "2027-02-03")
    assert _quiz_due(quiet) == "2027-02-03T09:00:00.000000+00:00"


def test_the_quiz_keeps_easy_days_free(tmp_path):
    path = _loaded(tmp_path / "a.db", None)
    assert run("config", "easy-days", "fri", "--db", path).exit_code == 0
    # 01-29 is a Friday: the card goes to another day of the range
    assert _quiz_due(path) == "2027-01-30T09:00:00.000000+00:00"


def test_an_import_gives_the_same_due_dates_every_time(tmp_path):
    source = kvdrill_db(tmp_path / "k.db")  # qf-kv-bytes answered easy on 11-20: 8 days
    history = tmp_path / "history.jsonl"
    assert run("export", "--db", source, "-o", history).exit_code == 0
    dues = []
    for name in ("a.db", "b.db", "c.db"):
        assert run("import", history, "--db", tmp_path / name).exit_code == 0
        db = open_db(tmp_path / name)
        dues.append(db.execute("select due from cards").fetchone()[0])
        db.conn.close()
    # fsrs's 8 days within 6 .. 10; the seeded draw for the review of 11-20 09:00 (0.507)
    # takes the middle day, 11-28, every time (fsrs's own fuzz would draw each anew)
    assert dues == ["2026-11-28T09:00:00.000000+00:00"] * 3


def test_an_import_of_a_quizs_history_gives_the_cards_the_quiz_left(tmp_path):
    # answered easy on 11-20 and again on 11-28: the quiz placed the second due date in
    # fsrs's range (01-28 .. 02-07) on 01-29; the import's replay of the two reviews
    # gives the same card, the same due date included
    source = _loaded(tmp_path / "k.db", None)
    assert _quiz_due(source) == "2027-01-29T09:00:00.000000+00:00"
    history = tmp_path / "history.jsonl"
    assert run("export", "--db", source, "-o", history).exit_code == 0
    assert run("import", history, "--db", tmp_path / "imported.db").exit_code == 0
    rows = []
    for path in (source, tmp_path / "imported.db"):
        db = open_db(path)
        rows.append(db.execute("select * from cards").fetchall())
        db.conn.close()
    assert rows[0] == rows[1]
    assert rows[1][0][0] == "qf-kv-bytes" and rows[1][0][5:8] == (
        "2027-01-29T09:00:00.000000+00:00", "2026-11-28T09:00:00.000000+00:00", 2,
    )  # fmt: skip


def test_answers_kept_aside_are_merged_onto_the_same_days(tmp_path):
    source = kvdrill_db(tmp_path / "k.db")
    history = tmp_path / "history.jsonl"
    assert run("export", "--db", source, "-o", history).exit_code == 0
    dues = []
    for name in ("a.db", "b.db"):
        target = tmp_path / name
        kept = history.read_text()
        assert run("config", "new-per-day", "0", "--db", target).exit_code == 0
        (tmp_path / f"{name}-unsaved.jsonl").write_text(kept)
        quiz = run("quiz", "--db", target, "--bank", BANK_DIR, "--topic", "quiz-fixture",
                   "--now", "2026-11-21T09:00:00+00:00", input="q\n")  # fmt: skip
        assert "Merged 1 answer" in quiz.output
        db = open_db(target)
        dues.append(db.execute("select due from cards").fetchone()[0])
        db.conn.close()
    # as the import places it: the seeded draw's middle day of 6 .. 10, 11-28
    assert dues == ["2026-11-28T09:00:00.000000+00:00"] * 2
