"""A concept answer's ticks: the grader's, corrected by the user at the prompt, stored with the
review, carried through export and import, and reported by `kvdrill check --json`."""

import json
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from drill.cli import cli
from drill.srs import iso
from drill.study.ticks import toggled

BANK_DIR = Path(__file__).parent / "banks_quiz"
T0 = datetime(2026, 11, 2, 8, 0, tzinfo=timezone.utc)
# seed 1 asks qf-kv-bytes, qf-decode-bound (concept, two points), qf-choice
FIXED = ["--now", iso(T0), "--tick", "20", "--no-fuzz", "--seed", "1"]


def run(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


def quiz(db: Path, lines: list[str]):
    args = ["quiz", "--db", db, "--bank", BANK_DIR, "--topic", "quiz-fixture", *FIXED]
    return run(*args, input="".join(line + "\n" for line in lines))


def stored(db: Path) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(
            "select question_id, rating, ticks from reviews order by reviewed_at"
        ).fetchall()
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("ticks", "text", "expected"),
    [((True, False, False), "2 3", (True, True, True)),
     ((True, False), "1", (False, False)),
     ((True, False), "2,2", (True, False)),  # toggled twice
     ((True, False), " 1 ; 2 ", (False, True)),
     ((True, False), "3", None), ((True, False), "0", None), ((True, False), "x", None),
     ((True, False), "1 x", None), ((True, False), "", None)],
)  # fmt: skip
def test_numbers_toggle_points(ticks, text, expected):
    assert toggled(ticks, text) == expected


def test_toggling_ticks_at_the_piped_prompt_changes_what_is_stored_and_suggested(tmp_path):
    db = tmp_path / "k.db"
    # the grader ticks point 1 only ("weights"); 2 ticks point 2 as well, then Enter keeps
    # both and Enter takes the rating they now suggest
    result = quiz(db, ["s", "it reads the weights", "x", "2", "", "", "q"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert (
        "  [x] 1. every step reads all the weights\n"
        "  [ ] 2. little arithmetic per byte (low arithmetic intensity)\n"
    ) in out
    assert "Ticks: Enter keeps them; numbers toggle points (1 3): Type the numbers of the " \
        "points to toggle (1 to 2), or press Enter to keep the ticks.\n" in out
    assert (
        "  [x] 1. every step reads all the weights\n"
        "  [x] 2. little arithmetic per byte (low arithmetic intensity)\n"
        "These ticks suggest 3 good.\n"
    ) in out
    assert "[Enter = 3 good] Saved: good." in out
    assert stored(db) == [("qf-decode-bound", 3, "11")]


def test_ticks_the_user_leaves_alone_keep_the_graders_suggestion(tmp_path):
    db = tmp_path / "k.db"
    result = quiz(db, ["s", "it reads the weights", "", "", "q"])
    assert result.exit_code == 0, result.output
    assert "[Enter = 2 hard]" in result.output  # one point of two: the grader's Hard
    assert stored(db) == [("qf-decode-bound", 2, "10")]


def test_without_a_suggestion_enter_alone_rates_nothing(tmp_path):
    db = tmp_path / "k.db"
    # nothing of either point: the grader cannot tell; Enter, then a rating typed
    result = quiz(db, ["s", "no idea really", "", "", "3", "q"])
    assert result.exit_code == 0, result.output
    assert (
        "Rate: 1 again · 2 hard · 3 good · 4 easy [no suggestion: the grader cannot tell] "
        "Type 1, 2, 3 or 4: the grader cannot tell for this answer.\n"
    ) in result.output
    assert stored(db) == [("qf-decode-bound", 3, "00")]


def test_an_answer_without_a_suggestion_is_kept_at_the_end_of_input(tmp_path):
    db = tmp_path / "k.db"
    result = quiz(db, ["s", "no idea really", ""])  # input ends at the rating
    assert result.exit_code == 0, result.output
    assert stored(db) == [("qf-decode-bound", 1, "00")]  # what its ticks suggest


def test_unticking_every_point_suggests_again(tmp_path):
    db = tmp_path / "k.db"
    result = quiz(db, ["s", "low arithmetic intensity and it reads the weights", "1 2", "", "",
                       "q"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "These ticks suggest 1 again.\n" in result.output
    assert stored(db) == [("qf-decode-bound", 1, "00")]


def test_the_end_of_input_at_the_ticks_keeps_the_answer_with_its_ticks(tmp_path):
    db = tmp_path / "k.db"
    result = quiz(db, ["s", "it reads the weights", "2"])  # input ends at the ticks prompt
    assert result.exit_code == 0, result.output
    assert stored(db) == [("qf-decode-bound", 3, "11")]


def test_ticks_go_through_export_and_import(tmp_path):
    db = tmp_path / "k.db"
    assert quiz(db, ["s", "it reads the weights", "2", "", "4", "q"]).exit_code == 0
    assert quiz(db, ["s", "s", "s", "q"]).exit_code == 0
    for fmt in ("jsonl", "csv"):
        out = tmp_path / f"h.{fmt}"
        assert run("export", "--db", db, "-o", out).exit_code == 0
        fresh = tmp_path / f"fresh-{fmt}.db"
        result = run("import", out, "--db", fresh)
        assert result.exit_code == 0, result.output
        assert stored(fresh) == [("qf-decode-bound", 4, "11")]
    line = json.loads((tmp_path / "h.jsonl").read_text().splitlines()[0])
    assert line["ticks"] == "11"
    header, row = (tmp_path / "h.csv").read_text().splitlines()
    assert header.endswith(",cram,ticks") and row.endswith(",false,11")


def test_an_import_refuses_ticks_that_are_not_zeros_and_ones(tmp_path):
    path = tmp_path / "h.jsonl"
    record = {"id": "00000000-0000-4000-8000-000000000001", "question_id": "q",
              "reviewed_at": iso(T0), "rating": 3, "ticks": "1x1"}  # fmt: skip
    path.write_text(json.dumps(record) + "\n")
    result = run("import", path, "--db", tmp_path / "k.db")
    assert result.exit_code == 1
    assert result.output == (
        f"Error: {path}:1: ticks must be 1 to 16 characters of 0 and 1, not '1x1'\n"
    )


def test_check_json_reports_the_suggestion_and_the_ticks():
    result = run("check", "qf-decode-bound", "--seed", "1", "--answer", "it reads the weights",
                 "--bank", BANK_DIR, "--json")  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert (data["suggested_rating"], data["ticks"], data["covered"]) == (2, "10", [True, False])
    none = json.loads(run("check", "qf-decode-bound", "--seed", "1", "--answer", "no idea",
                          "--bank", BANK_DIR, "--json").output)  # fmt: skip
    assert (none["suggested_rating"], none["rating"], none["ticks"]) == (None, None, "00")
    numeric = json.loads(run("check", "qf-kv-bytes", "--seed", "1", "--answer", "2 MiB",
                             "--bank", BANK_DIR, "--json").output)  # fmt: skip
    assert (numeric["suggested_rating"], numeric["ticks"]) == (3, None)
