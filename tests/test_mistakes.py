"""`kvdrill mistakes`: the catalogue of named mistakes with the user's counts and when
each was last made, on a fixed clock."""

import json
from datetime import timedelta

from click.testing import CliRunner
from test_session import BANK_DIR, T0, run

from drill.cli import cli
from drill.reports.mistakes import Tally, mistake_rows, render_mistakes
from drill.srs import iso
from drill.storage.database import open_db


class Named:
    def __init__(self, mid):
        self.id = mid


class Template:
    def __init__(self, *mids):
        self.misconceptions = [Named(m) for m in mids]


CATALOGUE = {"forgot-kv-factor": "forgot the K+V factor of 2", "gb-vs-gib": "GB read as GiB",
             "query-heads": "used query heads"}  # fmt: skip


def test_rows_put_the_most_made_first_then_the_latest_then_the_catalogue_order():
    tallies = {
        "gb-vs-gib": Tally(2, "2026-11-02T08:00:00.000000+00:00"),
        "query-heads": Tally(2, "2026-11-03T08:00:00.000000+00:00"),
        "own-mistake": Tally(1, "2026-11-01T08:00:00.000000+00:00"),  # not in the catalogue
    }
    questions = [Template("forgot-kv-factor", "query-heads"), Template("forgot-kv-factor"),
                 object()]  # fmt: skip
    rows = mistake_rows(CATALOGUE, questions, tallies)
    assert [(r["id"], r["count"], r["questions"]) for r in rows] == [
        ("query-heads", 2, 1),  # made as often as gb-vs-gib, but later
        ("gb-vs-gib", 2, 0),
        ("own-mistake", 1, 0),
        ("forgot-kv-factor", 0, 2),
    ]
    assert rows[2]["name"] == "own mistake"
    assert render_mistakes(rows, 4, lambda text: text[:10]) == (
        "3 of 4 mistakes made, 5 times in all; `kvdrill quiz --drill ID` practises one.\n"
        "\n"
        "  made  last        id                mistake\n"
        "     2  2026-11-03  query-heads       used query heads\n"
        "     2  2026-11-02  gb-vs-gib         GB read as GiB\n"
        "     1  2026-11-01  own-mistake       own mistake\n"
        "     -  -           forgot-kv-factor  forgot the K+V factor of 2\n"
    )
    assert render_mistakes([], 4, str) == "None of the 4 mistakes made yet.\n"


def test_the_command_counts_the_users_mistakes_with_the_time_last_made(tmp_path):
    path = tmp_path / "k.db"
    db = open_db(path)
    run(db, ["1 MiB", "", "q"])  # forgot the K+V factor, answered at 08:00:40
    run(db, ["1 MiB", "", "q"], start=T0 + timedelta(hours=3))  # again at 11:00:40
    db.conn.close()
    args = ["mistakes", "--db", str(path), "--bank", str(BANK_DIR), "--now",
            iso(T0 + timedelta(days=1))]  # fmt: skip
    made = CliRunner().invoke(cli, [*args, "--made"])
    assert made.exit_code == 0, made.output
    assert made.output.startswith("1 of ")
    assert made.output.split("\n")[2:] == [
        "  made  last              id                mistake",
        "     2  2026-11-02 11:00  forgot-kv-factor  forgot the K+V factor of 2",
        "",
    ]
    listed = json.loads(CliRunner().invoke(cli, [*args, "--json"]).output)
    # how many questions name it depends on the built-in deck (counted in the test above)
    questions = listed[0].pop("questions")
    assert listed[0] == {
        "id": "forgot-kv-factor", "name": "forgot the K+V factor of 2", "count": 2,
        "last_seen": "2026-11-02T11:00:40.000000+00:00",
    }  # fmt: skip
    assert questions > 1  # the fixture's qf-kv-bytes and the deck's templates
    assert {row["count"] for row in listed[1:]} == {0}
    # the day before the first answer, nothing was made
    before = CliRunner().invoke(cli, [*args[:-1], iso(T0 - timedelta(days=1)), "--made"])
    assert before.output.startswith("None of the ")


def test_without_a_database_the_catalogue_is_listed_and_no_file_is_made(tmp_path):
    result = CliRunner().invoke(cli, ["mistakes", "--db", str(tmp_path / "none.db")])
    assert result.exit_code == 0
    assert result.output.startswith("None of the ")
    assert "     -  -     forgot-kv-factor  " in result.output
    assert not (tmp_path / "none.db").exists()


def test_did_you_mean_compares_without_case_and_shows_the_known_spelling():
    from drill.errors import did_you_mean

    known = ["query-heads", "forgot-layers", "A100-80GB"]
    assert did_you_mean("QUERY-HEADS", known) == "did you mean query-heads?"
    assert did_you_mean("a100", known) == "did you mean A100-80GB?"
    assert did_you_mean("astrology", known) is None
