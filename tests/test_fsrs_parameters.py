"""The fsrs-parameters setting: FSRS's weights fitted to the user, stored in the
database, and the one scheduler every command makes for the user from them."""

import json

import pytest
from click.testing import CliRunner
from dbstates import kvdrill_db
from fsrs.scheduler import DEFAULT_PARAMETERS

from drill.cli import cli
from drill.storage.database import open_db
from drill.study.settings import SettingError, Settings, parse_value

# fsrs's defaults with the initial stability after Easy (w3) at 20 days instead of 8.3
EASY_20 = (*DEFAULT_PARAMETERS[:3], 20.0, *DEFAULT_PARAMETERS[4:])


def run(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


def card(db_path):
    db = open_db(db_path, write=False)
    row = db.execute("select stability, difficulty, due, state, reps from cards").fetchone()
    db.conn.close()
    return row


def test_parameters_are_read_as_a_json_list_of_21_numbers():
    assert parse_value("fsrs-parameters", json.dumps(EASY_20)) == EASY_20
    assert parse_value("fsrs-parameters", " none ") is None
    assert parse_value("fsrs-parameters", "default") is None


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("[1, 2, 3]", ""),
        ("0.2, 1.3", ""),
        (json.dumps([*DEFAULT_PARAMETERS[:20], 0.9]), " (w20 from 0.1 to 0.8)"),
        (json.dumps([*DEFAULT_PARAMETERS[:20], "0.1"]), ""),
        ("[" + "NaN, " * 20 + "NaN]", ""),
    ],
)
def test_parameters_out_of_fsrs_bounds_are_refused(text, why):
    with pytest.raises(SettingError) as caught:
        parse_value("fsrs-parameters", text)
    assert str(caught.value) == (
        f"fsrs-parameters must be a JSON list of 21 numbers within FSRS's bounds, or none"
        f"{why}, not {text[:40]!r}"
    )


def test_the_users_scheduler_has_their_parameters_and_retention():
    assert Settings().scheduler().parameters == DEFAULT_PARAMETERS
    mine = Settings(retention=0.85, fsrs_parameters=EASY_20).scheduler(fuzz=False)
    assert (mine.parameters, mine.desired_retention, mine.enable_fuzzing) == (EASY_20, 0.85, False)
    assert Settings(fsrs_parameters=EASY_20).scheduler(0.8).desired_retention == 0.8


def test_config_stores_shows_and_unsets_parameters_and_the_cards_follow(tmp_path):
    db = kvdrill_db(tmp_path / "k.db")  # one question answered Easy on 11-20
    before = card(db)
    assert before == (8.2956, 1.0, "2026-11-28T09:00:00.000000+00:00", 2, 1)
    result = run("config", "fsrs-parameters", json.dumps(EASY_20), "--db", db)
    assert result.output == "fsrs-parameters = fitted (21): 0.212 1.29 2.31 20 ... 0.154\n"
    assert "fsrs-parameters  fitted (21): 0.212 1.29 2.31 20 ... 0.154  (changed)\n" in (
        run("config", "--db", db).output
    )
    assert json.loads(run("config", "--json", "--db", db).output)["fsrs-parameters"] == list(
        EASY_20
    )
    # the card's memory state is the new parameters' (w3 after Easy); its due date stays
    assert card(db) == (20.0, 1.0, "2026-11-28T09:00:00.000000+00:00", 2, 1)
    assert run("config", "--unset", "fsrs-parameters", "--db", db).output == (
        "fsrs-parameters = none\n"
    )
    assert card(db) == before


# ------------------------------------------------------- every scheduler is the user's


def with_parameters(db_path, parameters):
    open_db(db_path).conn.close()
    result = run("config", "fsrs-parameters", json.dumps(parameters), "--db", db_path)
    assert result.exit_code == 0, result.output


def test_the_quiz_schedules_with_the_stored_parameters(tmp_path):
    db = tmp_path / "k.db"
    with_parameters(db, EASY_20)
    kvdrill_db(db)  # the question answered Easy on 11-20: 20 days' stability, due in 20
    assert card(db) == (20.0, 1.0, "2026-12-10T09:00:00.000000+00:00", 2, 1)


def test_import_and_doctor_rebuild_cards_with_the_stored_parameters(tmp_path):
    history = tmp_path / "h.jsonl"
    history.write_text(
        '{"id": "00000000-0000-4000-8000-000000000001", "question_id": "q",'
        ' "reviewed_at": "2026-11-20T09:00:00+00:00", "rating": 4}\n'
    )
    db = tmp_path / "k.db"
    with_parameters(db, EASY_20)
    assert run("import", history, "--db", db).exit_code == 0
    assert card(db)[:2] == (20.0, 1.0)
    conn = open_db(db).conn
    conn.execute("delete from cards")
    conn.close()
    repaired = run("doctor", "--repair", "--db", db)
    assert "rebuilt the card of 1 question(s) from their history" in repaired.output
    assert card(db) == (20.0, 1.0, "2026-12-10T09:00:00.000000+00:00", 2, 1)


def test_stats_recall_follows_the_stored_forgetting_curve(tmp_path):
    db = kvdrill_db(tmp_path / "k.db")  # stability 8.2956 days since 11-20 09:00
    a_month_later = ["--now", "2026-12-20T09:00:00+00:00"]

    def recall():
        result = run("stats", "--json", "--db", db, *a_month_later)
        assert result.exit_code == 0, result.output
        (topic,) = json.loads(result.output)["topics"]  # the fixture's question alone
        return round(topic["retrievability"], 4)

    # 30 days on: (1 + F * 30 / 8.2956) ** -decay, F = 0.9 ** (-1 / decay) - 1
    assert recall() == 0.7918  # fsrs's decay, 0.1542
    with_parameters(db, (*DEFAULT_PARAMETERS[:20], 0.5))
    assert recall() == 0.7356
