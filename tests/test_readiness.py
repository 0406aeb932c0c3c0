"""`kvdrill plan`: the day-by-day simulation to the interview and the recall it predicts,
checked against a synthetic user whose memory follows known FSRS parameters."""

import json
import random
from datetime import date, datetime, timedelta, timezone

from click.testing import CliRunner
from fsrs import Card, Rating, Scheduler
from synthetic_history import (
    FIRST_RATINGS,
    RECALLED_RATINGS,
    START,
    TRUE_PARAMETERS,
)
from synthetic_history import (
    simulate as synthetic_reviews,
)

from drill.cli import cli
from drill.srs import iso, make_scheduler, replay_rows, retrievability
from drill.study.days import UTC_DAYS
from drill.study.readiness import Deck, Policy, Setup, simulate

QUESTIONS = 90
HISTORY_DAYS = 20
NOW = START + timedelta(days=HISTORY_DAYS, hours=7)  # 2025-01-26 07:00 UTC
TARGET = date(2025, 2, 9)  # 14 days on


def _history():
    """The synthetic user's first 20 days: 4 new a day, some days skipped."""
    reviews = synthetic_reviews(
        TRUE_PARAMETERS, questions=QUESTIONS, days=HISTORY_DAYS, new_per_day=4, seed=5
    )
    rows = [(qid, iso(at), rating) for qid, at, rating in reviews]
    # their memory state under their own parameters: as `kvdrill optimize` would leave it
    return reviews, replay_rows(make_scheduler(fuzz=False, parameters=TRUE_PARAMETERS), rows)


def _truth(reviews, seed: int, new_per_day: int) -> float:
    """The synthetic user lives the 14 days: a session every day at 08:00-12:00, the quiz
    scheduling with their parameters at retention 0.9 (no fuzz), every due card and
    its same-day steps, then new questions; their answers drawn from their true recall
    with their own rating habits (Hard, Good, Easy when recalled). Returns their mean
    true recall at the start of the target day, an unseen question counting 0."""
    rng = random.Random(seed)
    quiz = Scheduler(TRUE_PARAMETERS, desired_retention=0.9, enable_fuzzing=False)
    cards: dict[str, Card] = {}
    for qid, at, rating in reviews:  # the history, replayed
        card = cards.get(qid) or Card(card_id=0, due=at)
        cards[qid] = quiz.review_card(card, Rating(rating), at)[0]
    waiting = [f"q{n:04d}" for n in range(QUESTIONS) if f"q{n:04d}" not in cards]
    day = NOW.date()
    while day < TARGET:
        now = datetime(day.year, day.month, day.day, 8, tzinfo=timezone.utc)
        now += timedelta(minutes=rng.uniform(0, 240))
        for _ in range(min(new_per_day, len(waiting))):
            qid = waiting.pop(0)
            cards[qid] = Card(card_id=0, due=now)
        end = datetime(day.year, day.month, day.day, tzinfo=timezone.utc) + timedelta(days=1)
        while True:
            due = sorted((c.due, q) for q, c in cards.items() if c.due < end)
            if not due:
                break
            when, qid = due[0]
            now = max(now, when)
            card = cards[qid]
            if card.last_review is None:
                rating = rng.choices(list(FIRST_RATINGS), weights=FIRST_RATINGS.values())[0]
            elif rng.random() < quiz.get_card_retrievability(card, now):
                rating = rng.choices(list(RECALLED_RATINGS), weights=RECALLED_RATINGS.values())[0]
            else:
                rating = 1
            cards[qid] = quiz.review_card(card, Rating(rating), now)[0]
            now += timedelta(seconds=40)
        day += timedelta(days=1)
    morning = datetime(TARGET.year, TARGET.month, TARGET.day, tzinfo=timezone.utc)
    total = 0.0
    for card in cards.values():
        row = {"last_review": iso(card.last_review), "stability": card.stability}
        total += retrievability(quiz, row, morning)
    return total / QUESTIONS


def test_the_plan_predicts_the_synthetic_users_recall_on_the_day():
    reviews, cards = _history()
    deck = Deck(
        tuple(f"q{n:04d}" for n in range(QUESTIONS)),
        {f"q{n:04d}": f"t{n % 3}" for n in range(QUESTIONS)},
    )
    assert len(cards) == 56  # 34 questions not seen yet
    setup = Setup(TRUE_PARAMETERS, UTC_DAYS, TARGET, first_good=0.75)
    for new_per_day in (1, 3):
        forecast = simulate(deck, cards, setup, Policy(new_per_day, 0.9), NOW, seed=0)
        truth = sum(_truth(reviews, seed, new_per_day) for seed in range(30)) / 30
        # the stated error: within 3 points of the truth's mean over 30 lives (it is
        # within 1 here; the plan's user answers Good where the truth's is sometimes
        # Easy or Hard, so the plan reads a little low)
        assert abs(forecast.recall - truth) < 0.03, (new_per_day, forecast.recall, truth)
        if new_per_day == 1:
            # 14 of the 34 unseen questions introduced: 70 of 90 seen
            assert round(forecast.seen, 1) == 70.0
            assert (round(forecast.recall, 3), round(truth, 3)) == (0.730, 0.737)
        else:
            assert round(forecast.seen, 1) == 90.0  # all 34 by the eleventh day
            assert (round(forecast.recall, 3), round(truth, 3)) == (0.941, 0.948)


# ------------------------------------------------------------------ the command, on a fixed deck and clock


def _plan_db(tmp_path, new_per_day: str):
    from dbstates import kvdrill_db

    db = kvdrill_db(tmp_path / "k.db")  # qf-kv-bytes answered easy on 11-20 09:00
    assert run("config", "new-per-day", new_per_day, "--db", db).exit_code == 0
    return db


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


FIXTURE = ["--topic", "quiz-fixture", "--now", "2026-11-21T12:00:00+00:00"]


def test_a_card_left_alone_keeps_the_recall_its_curve_gives(tmp_path):
    from dbstates import BANK_DIR

    db = _plan_db(tmp_path, "0")
    result = run("plan", "--db", db, "--bank", BANK_DIR, *FIXTURE, "--days", 4, "--json")
    assert result.exit_code == 0, result.output
    plan = json.loads(result.output)
    assert [d["reviews"] for d in plan["days"]] == [0, 0, 0, 0]
    # no new question a day, and qf-kv-bytes not due before 11-28: on 11-25 at 04:00
    # (UTC, rollover 4), 4 days 19 hours after its review at stability 8.2956 days,
    # (1 + 0.98034649 x 4.7917 / 8.2956) ** -0.1542 = 0.93315; the two questions never
    # seen count 0: 0.93315 / 3 = 0.31105
    day = plan["by_the_day"]
    assert (day["seen"], day["unseen"], day["recall"], day["recall_seen"]) == (
        1.0, 2.0, 0.3111, 0.9332,
    )  # fmt: skip
    assert day["unseen_topics"] == ["quiz-fixture"]
    assert plan["settings"]["seconds_per_review"] == 30.0  # no timed answers: the default


def test_the_plan_to_the_interview_reads_as_a_table(tmp_path):
    from dbstates import BANK_DIR

    db = _plan_db(tmp_path, "1")
    assert run("config", "interview-date", "2026-11-26", "--db", db,
               "--now", "2026-11-21T12:00:00+00:00").exit_code == 0  # fmt: skip
    result = run("plan", "--db", db, "--bank", BANK_DIR, *FIXTURE, "--minutes", 2)
    assert result.exit_code == 0, result.output
    assert result.output == (
        "Plan to the interview on 2026-11-26: 3 questions, 1 answered so far.\n"
        "Simulated with FSRS's default parameters (`kvdrill optimize` fits yours), 1 new a"
        " day, retention 0.90, 30 s a review (a default until 10 answers are timed); mean of"
        " 8 runs from seed 0.\n"
        "\n"
        "  day          reviews   new  minutes\n"
        "  2026-11-21      2.4   1.0      1.2\n"
        "  2026-11-22      3.2   1.0      1.6\n"
        "  2026-11-23      1.4   0.0      0.7\n"
        "  2026-11-24      1.2   0.0      0.6\n"
        "  2026-11-25      1.0   0.0      0.5\n"
        "\n"
        "By the interview (5 days) at 1 new a day: 3 of 3 questions seen, 0 never.\n"
        "Predicted recall on the morning of 2026-11-26: 96 % of the deck (unseen count as 0;"
        " 96 % of those seen).\n"
        "\n"
        "  topic         questions  seen  recall\n"
        "  quiz-fixture          3     3    96 %\n"
        "\n"
        "Suggested for 2 minutes a day: 1 new a day at retention 0.85 — every question seen"
        " by 2026-11-22, busiest day 1.6 minutes, predicted recall 96 % (`kvdrill config"
        " new-per-day`, `kvdrill config retention`).\n"
    )
    # the same database, time and seed: the same plan; another seed draws other answers
    assert run("plan", "--db", db, "--bank", BANK_DIR, *FIXTURE, "--minutes", 2).output == (
        result.output
    )
    other = run("plan", "--db", db, "--bank", BANK_DIR, *FIXTURE, "--minutes", 2, "--seed", 9)
    assert other.output != result.output


def test_without_an_interview_date_plan_asks_for_days(tmp_path):
    result = run("plan", "--db", tmp_path / "none.db", "--now", "2026-11-21T12:00:00+00:00")
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == (
        "Error: no interview date: set one with `kvdrill config interview-date YYYY-MM-DD`,"
        " or plan N days ahead with --days N (see `cli plan -h`)."
    )


def test_stats_shows_the_plan_to_the_interview(tmp_path):
    from dbstates import BANK_DIR

    db = _plan_db(tmp_path, "1")
    now = ["--now", "2026-11-21T12:00:00+00:00"]
    assert run("config", "interview-date", "2026-11-26", "--db", db, *now).exit_code == 0
    args = ["--db", db, "--bank", BANK_DIR, *now]
    plan = json.loads(run("stats", *args, "--json").output)["interview"]["plan"]
    # the whole deck in bank order (the built-in deck grows: its size is read back),
    # 1 new a day for 5 days and qf-kv-bytes seen already
    total = plan["questions"]
    assert (plan["by_the_day"]["seen"], plan["by_the_day"]["unseen"]) == (6.0, total - 6)
    assert "suggestion" not in plan
    line = (
        f"By the interview (5 days) at 1 new a day: 6 of {total} questions seen, {total - 6} never."
    )
    assert f"\n  {line}\n" in run("stats", *args).output
    assert run("stats", *args, "--html", tmp_path / "r.html").exit_code == 0
    assert f'<p class="note">{line}</p>' in (tmp_path / "r.html").read_text()


def test_the_plan_keeps_easy_days_light():
    from drill.study.load_balance import easy_day_loads

    _reviews, cards = _history()
    order = tuple(f"q{n:04d}" for n in range(QUESTIONS))
    deck = Deck(order, dict.fromkeys(order, "t"))
    weekend = []
    for easy in ("", "sat,sun"):
        setup = Setup(TRUE_PARAMETERS, UTC_DAYS, TARGET, easy_days=easy_day_loads(easy))
        forecast = simulate(deck, cards, setup, Policy(0, 0.9), NOW)
        weekend.append(round(sum(d.reviews for d in forecast.days[6:] if d.day.weekday() >= 5), 1))
    # no new questions; the weekend days after the first week, Sat 02-01, Sun 02-02 and
    # Sat 02-08 (Sun 01-26 is today, the same either way): cards land there only when fsrs's range holds no
    # other day (intervals under 3 days, relearning) or were due there already
    assert weekend == [35.8, 21.6]


def test_stats_and_plan_agree_on_the_days_to_the_interview(tmp_path):
    # one deck order for both, the quiz's (easier first): stats' section is the plan
    from dbstates import BANK_DIR

    db = _plan_db(tmp_path, "1")
    now = ["--now", "2026-11-21T12:00:00+00:00"]
    assert run("config", "interview-date", "2026-11-26", "--db", db, *now).exit_code == 0
    args = ["--db", db, "--bank", BANK_DIR, *now]
    from_stats = json.loads(run("stats", *args, "--json").output)["interview"]["plan"]
    from_plan = json.loads(run("plan", *args, "--json").output)
    from_plan.pop("suggestion")
    assert from_stats == from_plan


def test_planning_fewer_days_than_are_left_keeps_the_interview_in_view(tmp_path):
    # the quiz raises retention toward the date whatever day is planned to, so the first
    # days of `plan --days 2` are the first days of the plan to the interview
    from dbstates import BANK_DIR

    db = _plan_db(tmp_path, "1")
    now = ["--now", "2026-11-21T12:00:00+00:00"]
    assert run("config", "interview-date", "2026-11-26", "--db", db, *now).exit_code == 0
    args = ["--db", db, "--bank", BANK_DIR, *FIXTURE, *now, "--json"]
    whole = json.loads(run("plan", *args).output)
    two = json.loads(run("plan", *args, "--days", "2").output)
    assert two["interview"] is False and whole["interview"] is True
    assert two["days"] == whole["days"][:2]


def test_the_plan_wraps_its_sentences_at_the_terminals_width(tmp_path):
    from dbstates import BANK_DIR

    db = _plan_db(tmp_path, "1")
    args = ["plan", "--db", db, "--bank", BANK_DIR, *FIXTURE, "--days", "5", "--minutes", "2"]
    result = CliRunner().invoke(cli, [str(a) for a in args], env={"COLUMNS": "60"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[:2] == [
        "Plan for the 5 days to 2026-11-26: 3 questions, 1 answered",
        "so far.",
    ]
    # sentences within 60 columns, broken between words; the tables stay whole
    assert all(len(line) <= 60 or line.startswith("  ") for line in lines)
    assert "  day          reviews   new  minutes" in lines
    # piped without COLUMNS, nothing is wrapped
    plain = run(*args).output.splitlines()
    assert plain[0] == "Plan for the 5 days to 2026-11-26: 3 questions, 1 answered so far."
