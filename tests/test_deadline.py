"""Scheduling toward an interview date: cards brought back before it, retention raised."""

from datetime import date, datetime, timedelta, timezone

from click.testing import CliRunner
from dbstates import BANK_DIR, kvdrill_db
from test_session import Terminal

from drill.bank.loader import load_bank
from drill.cli import cli
from drill.srs import iso
from drill.storage.database import open_db
from drill.study.days import DayClock
from drill.study.deadline import capped_due, retention_toward
from drill.study.session import run_session
from drill.study.session_io import SessionOptions

UTC4 = DayClock(timezone.utc, 4)  # days in UTC that begin at 04:00
INTERVIEW = date(2027, 1, 15)


def at(day: str, hour: int = 12) -> datetime:
    return datetime.fromisoformat(f"{day}T{hour:02d}:00:00+00:00")


def run(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


# ------------------------------------------------------------------ the rules


def test_retention_rises_over_the_last_thirty_days():
    assert retention_toward(0.9, INTERVIEW, at("2026-12-01"), UTC4) == 0.9  # 45 days out
    assert retention_toward(0.9, INTERVIEW, at("2026-12-16"), UTC4) == 0.9023  # 30: 1/30
    # 10 days out: 21/30 of the way from 0.90 to 0.97
    assert retention_toward(0.9, INTERVIEW, at("2027-01-05"), UTC4) == 0.949
    assert retention_toward(0.9, INTERVIEW, at("2027-01-14"), UTC4) == 0.97  # the day before
    assert retention_toward(0.9, INTERVIEW, at("2027-01-15"), UTC4) == 0.9  # the day itself
    assert retention_toward(0.98, INTERVIEW, at("2027-01-14"), UTC4) == 0.98  # never lowered


def test_a_due_date_after_the_interview_moves_into_the_week_before_it():
    now = at("2027-01-01")
    late = at("2027-02-20")
    # sha256("kvdrill-interview:q-a") puts q-a 2 days before the last day before (01-12),
    # q-b 4 days before it (01-10); each day begins at 04:00
    assert capped_due(late, "q-a", now, now, INTERVIEW, UTC4) == at("2027-01-12", 4)
    assert capped_due(late, "q-b", now, now, INTERVIEW, UTC4) == at("2027-01-10", 4)
    # a due date before the interview day stays; the interview day's own start moves
    early = at("2027-01-15", 3)
    assert capped_due(early, "q-a", now, now, INTERVIEW, UTC4) == early
    assert capped_due(at("2027-01-15", 4), "q-a", now, now, INTERVIEW, UTC4) == at("2027-01-12", 4)


def test_a_card_reviewed_in_the_last_week_keeps_its_due_date():
    late = at("2027-02-20")
    # reviewed on 01-08 at 04:00 or later (the final seven days begin then): done
    reviewed = at("2027-01-08", 4)
    assert capped_due(late, "q-a", reviewed, reviewed, INTERVIEW, UTC4) == late
    just_before = at("2027-01-08", 3)
    assert capped_due(late, "q-a", just_before, just_before, INTERVIEW, UTC4) == at(
        "2027-01-12", 4
    )


def test_at_short_notice_the_cards_go_into_the_days_that_are_left():
    late = at("2027-02-20")
    long_ago = at("2026-11-01")
    # three days left: the last two days before it (q-a's hash modulo 2 is 0: 01-14)
    now = at("2027-01-12")
    assert capped_due(late, "q-a", long_ago, now, INTERVIEW, UTC4) == at("2027-01-14", 4)
    # the day before: there is no day left to move it to
    now = at("2027-01-14")
    assert capped_due(late, "q-a", long_ago, now, INTERVIEW, UTC4) == late


# ------------------------------------------------------------------ through the commands


def test_setting_the_date_brings_existing_cards_forward(tmp_path):
    db = kvdrill_db(tmp_path / "k.db")  # one card, answered easy on 11-20: due 11-28
    conn = open_db(db)
    conn.execute("update cards set due = '2027-03-01T09:00:00.000000+00:00'")
    conn.conn.close()
    result = run("config", "interview-date", "2027-01-15", "--db", db,
                 "--now", "2027-01-01T12:00:00+00:00")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.stdout == "interview-date = 2027-01-15\n"
    assert result.stderr == "1 card brought back before the interview.\n"
    conn = open_db(db)
    # qf-kv-bytes: sha256 spread 6 of 7 days back from 01-14, a day beginning 04:00 in the
    # --now zone (UTC)
    assert conn.execute("select due from cards").fetchone()[0] == (
        "2027-01-08T04:00:00.000000+00:00"
    )
    conn.conn.close()


def test_a_day_already_past_is_refused_and_nothing_changes(tmp_path):
    db = kvdrill_db(tmp_path / "k.db")
    now = "2027-01-16T03:00:00+00:00"  # before 04:00: still the user's 2027-01-15
    past = run("config", "interview-date", "2027-01-14", "--db", db, "--now", now)
    assert past.exit_code == 1
    assert past.output == (
        "Error: interview-date 2027-01-14 is before today (2027-01-15); nothing was changed\n")
    assert run("config", "interview-date", "--db", db).output == "interview-date = none\n"
    today = run("config", "interview-date", "2027-01-15", "--db", db, "--now", now)
    assert today.stdout == "interview-date = 2027-01-15\n"


def test_stats_says_how_ready_each_topic_is_for_the_day(tmp_path):
    db = kvdrill_db(tmp_path / "k.db")
    assert run("config", "interview-date", "2026-11-30", "--db", db,
               "--now", "2026-11-21T12:00:00+00:00").exit_code == 0  # fmt: skip
    bank = ["--bank", str(BANK_DIR)]
    result = run("stats", "--db", db, *bank, "--now", "2026-11-21T12:00:00+00:00", "--json")
    import json

    interview = json.loads(result.stdout)["interview"]
    assert {k: interview[k] for k in ("date", "days_left", "reviews_before")} == {
        "date": "2026-11-30",
        "days_left": 9,
        "reviews_before": 1,
    }
    assert [d["date"] for d in interview["workload"]][:2] == ["2026-11-21", "2026-11-22"]
    assert len(interview["workload"]) == 9
    (topic,) = interview["topics"]
    assert topic["topic"] == "quiz-fixture" and topic["questions"] == 1
    # the card was answered easy on 11-20 09:00 (stability 8.2956 days); the interview
    # day begins 11-30 04:00 (UTC, the --now zone), 9 days 19 hours = 9.7917 days later:
    # (1 + 0.98034649 × 9.7917 / 8.2956) ** -0.1542 = 0.88821
    assert round(topic["recall"], 4) == 0.8882
    text = run("stats", "--db", db, *bank, "--now", "2026-11-21T12:00:00+00:00")
    assert "Interview 2026-11-30, in 9 days" in text.output
    assert "  1 review due before it; the busiest day " in text.output


def test_the_html_report_has_the_interview_section(tmp_path):
    db = kvdrill_db(tmp_path / "k.db")
    now = ["--now", "2026-11-21T12:00:00+00:00"]
    assert run("config", "interview-date", "2026-11-30", "--db", db, *now).exit_code == 0
    bank = ["--bank", str(BANK_DIR)]
    out = tmp_path / "report.html"
    result = run("stats", "--db", db, *bank, *now, "--html", out)
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert "<h2>Interview on 2026-11-30, in 9 days</h2>" in page
    assert "1 review due before it; the busiest day 2026-11-" in page
    assert (
        '<tr><td class="text">quiz-fixture</td><td class="num">1</td>'
        '<td class="num">89%</td></tr>'
    ) in page
    assert 'aria-label="cards due each day before the interview"' in page
    # without a date, no such section
    assert run("config", "interview-date", "--unset", "--db", db, *now).exit_code == 0
    assert run("stats", "--db", db, *bank, *now, "--html", out).exit_code == 0
    assert "Interview on" not in out.read_text()


def test_a_month_of_sessions_reviews_every_card_in_the_week_before_the_interview(tmp_path):
    """Thirty concept questions answered right every day from a month out: each one comes
    back at least once in the last week, whatever its interval, and the daily load is
    reported."""
    bank_file = tmp_path / "deck.yaml"
    bank_file.write_text(
        "deck: sim\nquestions:\n"
        + "".join(
            f"  - {{id: sim-{n:02d}, kind: concept, topic: sim, difficulty: 1,"
            f" prompt: 'Question {n}?', answer: 'Say ready.', hint: 'Ready.',"
            " key_points: [{point: ready, cues: [ready]}]}\n"
            for n in range(30)
        )
    )
    bank = load_bank([bank_file])
    db = open_db(tmp_path / "k.db")
    interview = date(2027, 1, 15)
    reviewed: dict[str, list[str]] = {}
    workload = []
    day = date(2026, 12, 15)
    while day < interview:
        start = datetime(day.year, day.month, day.day, 9, tzinfo=timezone.utc)
        options = SessionOptions(
            seed=day.toordinal(), fuzz=False, new_limit=30, max_items=100,
            retention=retention_toward(0.9, interview, start, UTC4), interview=interview,
            learn_ahead=timedelta(0),
        )  # fmt: skip
        term = Terminal(["ready", ""] * 100, start=start, tick_s=5)
        result = run_session(db, bank, options, term.io(), days=UTC4,
                             evidence_lines=lambda claims: [])  # fmt: skip
        workload.append(result.answered)
        for (qid, when) in db.execute(
            "select question_id, reviewed_at from reviews where reviewed_at >= ?", [iso(start)]
        ):
            reviewed.setdefault(qid, []).append(when[:10])
        day += timedelta(days=1)
    last_week = {"2027-01-08", "2027-01-09", "2027-01-10", "2027-01-11", "2027-01-12",
                 "2027-01-13", "2027-01-14"}  # fmt: skip
    assert sorted(reviewed) == [f"sim-{n:02d}" for n in range(30)]
    assert [q for q, days in reviewed.items() if not last_week & set(days)] == []
    # reviews per day from 12-15 (pinned): learned on the first two days, one review at
    # FSRS's interval on 12-24, then each card once in the last week, spread by its id
    assert workload == [30, 30] + [0] * 7 + [30] + [0] * 14 + [6, 2, 6, 5, 5, 2, 4]
