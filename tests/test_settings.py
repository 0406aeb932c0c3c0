"""Settings kept in the database (`kvdrill config`) and the user's days."""

import time
from dataclasses import fields
from datetime import date, datetime, timezone
from zoneinfo import ZoneInfo

import pytest
from click.testing import CliRunner
from dbstates import QUIZ, kvdrill_db

from drill.cli import cli
from drill.storage.database import open_db
from drill.study.days import DayClock
from drill.study.settings import SETTINGS, SettingError, Settings, parse_value, settings_from


def run(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


# ------------------------------------------------------------------ days


def test_a_day_begins_at_the_rollover_hour_in_the_zone():
    berlin = DayClock(ZoneInfo("Europe/Berlin"), 4)
    # 01:30 in Berlin (00:30 UTC in winter) still belongs to the day before
    late = datetime(2026, 12, 1, 0, 30, tzinfo=timezone.utc)
    assert berlin.day_of(late) == date(2026, 11, 30)
    assert berlin.day_start(late) == datetime(2026, 11, 30, 3, 0, tzinfo=timezone.utc)
    assert berlin.next_day_start(late) == datetime(2026, 12, 1, 3, 0, tzinfo=timezone.utc)
    # 04:00 Berlin is a new day
    assert berlin.day_of(datetime(2026, 12, 1, 3, 0, tzinfo=timezone.utc)) == date(2026, 12, 1)


def test_days_follow_daylight_saving_time():
    berlin = DayClock(ZoneInfo("Europe/Berlin"), 4)
    # summer: 04:00 Berlin is 02:00 UTC
    assert berlin.start_of(date(2026, 7, 1)) == datetime(2026, 7, 1, 2, 0, tzinfo=timezone.utc)
    assert berlin.start_of(date(2026, 1, 1)) == datetime(2026, 1, 1, 3, 0, tzinfo=timezone.utc)


def test_utc_days_with_no_rollover_are_calendar_days():
    clock = DayClock(timezone.utc, 0)
    assert clock.day_of(datetime(2026, 12, 1, 23, 59, tzinfo=timezone.utc)) == date(2026, 12, 1)
    assert clock.day_of(datetime(2026, 12, 1, 0, 0, tzinfo=timezone.utc)) == date(2026, 12, 1)


def test_a_day_begins_at_4_am_unless_the_user_says_otherwise():
    """Anki's rollover: a review at 3:59 counts for the day before."""
    for clock in (DayClock(timezone.utc), Settings(timezone="UTC").day_clock()):
        assert clock.day_of(datetime(2026, 12, 1, 3, 59, tzinfo=timezone.utc)) == date(2026, 11, 30)
        assert clock.day_of(datetime(2026, 12, 1, 4, 0, tzinfo=timezone.utc)) == date(2026, 12, 1)
        assert clock.start_of(date(2026, 12, 1)) == datetime(2026, 12, 1, 4, tzinfo=timezone.utc)


@pytest.fixture
def machine_in_kolkata():
    """The machine's own time zone set to UTC+05:30 for one test."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TZ", "Asia/Kolkata")
        time.tzset()
        yield
    time.tzset()


def test_with_no_zone_set_days_are_the_machines_and_their_starts_are_given_in_utc(
    machine_in_kolkata,
):
    clock = DayClock(None, 4)
    # 04:00 in Kolkata (UTC+05:30) is 22:30 UTC the evening before
    start = clock.start_of(date(2026, 12, 1))
    assert start.isoformat() == "2026-11-30T22:30:00+00:00"
    assert clock.day_of(datetime(2026, 11, 30, 22, 29, tzinfo=timezone.utc)) == date(2026, 11, 30)
    assert clock.day_of(datetime(2026, 11, 30, 22, 30, tzinfo=timezone.utc)) == date(2026, 12, 1)
    berlin = DayClock(ZoneInfo("Europe/Berlin"), 4)
    assert berlin.start_of(date(2026, 12, 1)).isoformat() == "2026-12-01T03:00:00+00:00"


# ------------------------------------------------------------------ settings


def test_every_setting_has_a_field_and_a_default_in_one_place():
    assert [f.name for f in fields(Settings)] == [s.attribute for s in SETTINGS.values()]
    assert {s.key: s.default for s in SETTINGS.values()} == {
        "retention": 0.9, "new-per-day": 10, "max-per-session": 20, "learn-ahead": 20,
        "leech-threshold": 8, "rollover-hour": 4, "timezone": "local", "interview-date": None,
        "easy-days": "", "fsrs-parameters": None,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("key", "text", "value"),
    [
        ("retention", "0.85", 0.85),
        ("retention", "85%", 0.85),
        ("new-per-day", "0", 0),
        ("new_per_day", " 25 ", 25),
        ("rollover-hour", "23", 23),
        ("learn-ahead", "0", 0),
        ("leech-threshold", "4", 4),
        ("timezone", "Asia/Kolkata", "Asia/Kolkata"),
        ("timezone", "LOCAL", "local"),
        ("easy-days", "Sun, sat", "sat,sun"),
        ("easy-days", "sunday:0.5,mon:1", "sun:0.5"),
        ("easy-days", "none", ""),
    ],
)
def test_values_are_read_from_text(key, text, value):
    assert parse_value(key, text) == value


@pytest.mark.parametrize(
    ("key", "text", "message"),
    [
        ("retention", "nan", "retention must be a probability from 0.70 to 0.99 (or 70% to "
                             "99%), not 'nan'"),
        ("retention", "1", "retention must be a probability from 0.70 to 0.99 (or 70% to 99%),"
                           " not '1'"),
        ("max-per-session", "0", "max-per-session must be a whole number from 1 to 9999, not '0'"),
        ("rollover-hour", "-1", "rollover-hour must be a whole number from 0 to 23, not '-1'"),
        ("learn-ahead", "1441", "learn-ahead must be a whole number from 0 to 1440, not '1441'"),
        ("leech-threshold", "100", "leech-threshold must be a whole number from 0 to 99, not "
                                   "'100'"),
        ("timezone", "../../etc/passwd", "timezone must be an IANA time zone such as "
                                         "Europe/Berlin, or local, not '../../etc/passwd'"),
        ("colour", "red", "no setting called 'colour'; settings: retention, new-per-day, "
                          "max-per-session, learn-ahead, leech-threshold, rollover-hour, "
                          "timezone, interview-date, easy-days, fsrs-parameters"),
        ("new-per-dya", "5", "no setting called 'new-per-dya'; did you mean new-per-day?"),
        ("easy-days", "weekend", "easy-days must be days of the week such as sat,sun or "
                                 "sun:0.5 (a load from 0 to 1), or none, not 'weekend'"),
        ("easy-days", "sun:2", "easy-days must be days of the week such as sat,sun or "
                               "sun:0.5 (a load from 0 to 1), or none, not 'sun:2'"),
        ("interview-date", "15 Jan", "interview-date must be a date such as 2027-01-15, or "
                                     "none, not '15 Jan'"),
    ],
)  # fmt: skip
def test_bad_values_name_what_the_setting_takes(key, text, message):
    with pytest.raises(SettingError) as caught:
        parse_value(key, text)
    assert str(caught.value) == message


def test_stored_values_a_newer_kvdrill_wrote_fall_back_to_defaults():
    stored = {"retention": "0.8", "new-per-day": "lots", "colour": "red"}
    assert settings_from(stored) == Settings(retention=0.8)


def test_config_sets_shows_and_unsets(tmp_path):
    db = kvdrill_db(tmp_path / "k.db")
    assert run("config", "retention", "0.8", "--db", db).output == "retention = 0.8\n"
    assert run("config", "timezone", "Europe/Berlin", "--db", db).exit_code == 0
    listing = run("config", "--db", db)
    # each setting with its value, then what it does under the value
    assert listing.output == (
        "retention        0.8  (changed)\n"
        "                 chance of recall FSRS aims for when a card is due\n"
        "new-per-day      10\n"
        "                 new questions a day\n"
        "max-per-session  20\n"
        "                 questions in one quiz session\n"
        "learn-ahead      20\n"
        "                 minutes ahead a learning card is shown when nothing else is left\n"
        "leech-threshold  8\n"
        "                 lapses that make a card a leech, suspended (0: never)\n"
        "rollover-hour    4\n"
        "                 local hour at which a new day begins\n"
        "timezone         Europe/Berlin  (changed)\n"
        "                 IANA zone of your days (Europe/Berlin), or local\n"
        "interview-date   none\n"
        "                 YYYY-MM-DD: bring every card back before it, raising retention "
        "(none: off)\n"
        "easy-days        none\n"
        "                 days of the week with fewer reviews: sat,sun (none) or sun:0.5 (half a"
        " load)\n"
        "fsrs-parameters  none\n"
        "                 FSRS's weights, fitted by `kvdrill optimize` (none: FSRS's defaults)\n"
    )
    assert run("config", "--json", "--db", db).output == (
        '{"retention": 0.8, "new-per-day": 10, "max-per-session": 20, "learn-ahead": 20, '
        '"leech-threshold": 8, "rollover-hour": 4, "timezone": "Europe/Berlin", '
        '"interview-date": null, "easy-days": null, "fsrs-parameters": null}\n'
    )
    assert run("config", "--unset", "retention", "--db", db).output == "retention = 0.9\n"
    bad = run("config", "rollover-hour", "25", "--db", db)
    assert bad.exit_code == 1
    assert bad.output == "Error: rollover-hour must be a whole number from 0 to 23, not '25'\n"


def test_a_negative_value_is_read_as_a_value(tmp_path):
    bad = run("config", "new-per-day", "-1", "--db", tmp_path / "k.db")
    assert (bad.exit_code, bad.output) == (
        1, "Error: new-per-day must be a whole number from 0 to 9999, not '-1'\n")  # fmt: skip


def test_config_without_a_database_shows_the_defaults_and_creates_nothing(tmp_path):
    result = run("config", "new-per-day", "--db", tmp_path / "none.db")
    assert result.output == "new-per-day = 10\n"
    assert not (tmp_path / "none.db").exists()


def test_the_quiz_takes_its_limits_from_the_settings(tmp_path):
    db = kvdrill_db(tmp_path / "k.db")  # one of the three fixture questions is started
    assert run("config", "new-per-day", "2", "--db", db).exit_code == 0
    # the day's second new question is the last one allowed; --new overrides for a session
    result = run("quiz", "--db", db, *QUIZ, input="q\n")
    assert "1 question: 0 due, 1 new." in result.output
    result = run("quiz", "--db", db, *QUIZ, "--new", "3", input="q\n")
    assert "2 questions: 0 due, 2 new." in result.output


def test_the_daily_new_limit_counts_the_users_day(tmp_path):
    db = kvdrill_db(tmp_path / "k.db")  # a question started at 09:00 UTC on 11-20
    assert run("config", "new-per-day", "1", "--db", db).exit_code == 0
    assert run("config", "timezone", "America/New_York", "--db", db).exit_code == 0
    base = [a for a in QUIZ if a not in ("--now", "2026-11-20T09:00:00+00:00")]
    # 05:00 UTC on 11-21 is 00:00 in New York: still 11-20 there, the limit is spent
    at_midnight = run("quiz", "--db", db, *base, "--now", "2026-11-21T05:00:00+00:00",
                      input="q\n")  # fmt: skip
    assert "Nothing due and no new questions left for today." in at_midnight.output
    # 09:00 UTC is 04:00 in New York: a new day there
    at_rollover = run("quiz", "--db", db, *base, "--now", "2026-11-21T09:00:00+00:00",
                      input="q\n")  # fmt: skip
    assert "0 due, 1 new." in at_rollover.output


def test_settings_live_in_a_table_of_their_own(tmp_path):
    db = open_db(tmp_path / "k.db")
    assert [r[1] for r in db.execute("pragma table_info(settings)")] == ["key", "value"]
    db.conn.close()



def test_import_replays_the_history_at_the_stored_retention(tmp_path):
    history = tmp_path / "h.jsonl"
    # one question answered Good three times, three days apart
    history.write_text(
        "".join(
            f'{{"id": "00000000-0000-4000-8000-00000000000{n}", "question_id": "q",'
            f' "reviewed_at": "2026-11-{10 + 3 * n:02d}T09:00:00+00:00", "rating": 3}}\n'
            for n in range(3)
        )
    )
    dues = {}
    for retention in ("0.9", "0.7"):
        db = tmp_path / f"k{retention}.db"
        open_db(db).conn.close()
        assert run("config", "retention", retention, "--db", db).exit_code == 0
        assert run("import", history, "--db", db).exit_code == 0
        conn = open_db(db, write=False)
        dues[retention] = conn.execute("select due from cards").fetchone()[0]
        conn.conn.close()
    # last review 11-16: at 0.9 the card comes back in about 25 days, at 0.7 in about
    # 8 months (import's replay fuzzes intervals by a few percent, as the quiz does)
    assert "2026-12-06" <= dues["0.9"][:10] <= "2026-12-16"
    assert "2027-05-01" <= dues["0.7"][:10] <= "2027-09-01"
