"""`kvdrill quiz` end to end: scripted input through click, a real database file."""

import sqlite3
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from drill.cli import cli
from drill.serving.evidence import HOW_TO_MEASURE
from drill.srs import iso
from drill.storage.database import APPLICATION_ID, SCHEMA_VERSION, open_db
from drill.storage.engine_runs import save_engine_run

BANK_DIR = Path(__file__).parent / "banks_quiz"
REPO = Path(__file__).resolve().parent.parent
T0 = datetime(2026, 11, 2, 8, 0, tzinfo=timezone.utc)
FIXED = ["--now", iso(T0), "--tick", "20", "--no-fuzz", "--seed", "1"]


def quiz(db_path, lines, *extra):
    args = ["quiz", "--db", str(db_path), "--bank", str(BANK_DIR), "--topic", "quiz-fixture"]
    text = "".join(line + "\n" for line in lines)
    return CliRunner().invoke(cli, [*args, *FIXED, *extra], input=text)


def rows(db_path, sql):
    conn = sqlite3.connect(db_path)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute(sql)]
    finally:
        conn.close()


def test_a_right_numeric_answer_then_quit(tmp_path):
    db = tmp_path / "k.db"
    result = quiz(db, ["2 MiB", "", "q"])
    assert result.exit_code == 0, result.output
    assert "[0 done, 3 left] quiz-fixture · new" in result.output
    assert "Right: 2 MiB (2,097,152 bytes)." in result.output
    assert "Saved: good." in result.output
    assert "1 answered: 1 right, 0 wrong; 1 min." in result.output
    assert "Next due: in 9 min 40 s; 1 due within a day." in result.output
    answered_at = T0 + timedelta(seconds=40)
    review = rows(db, "select question_id, reviewed_at, rating, correct, answer, duration_ms, "
                      "cram from reviews")
    assert review == [{
        "question_id": "qf-kv-bytes", "reviewed_at": iso(answered_at), "rating": 3, "correct": 1,
        "answer": "2 MiB", "duration_ms": 20_000, "cram": 0,
    }]  # fmt: skip
    card = rows(db, "select question_id, state, step, due, reps from cards")
    assert card == [{
        "question_id": "qf-kv-bytes", "state": 1, "step": 1,
        "due": iso(answered_at + timedelta(minutes=10)), "reps": 1,
    }]  # fmt: skip


def test_h_shows_the_next_hint_each_time_and_caps_the_rating(tmp_path):
    db = tmp_path / "k.db"
    result = quiz(db, ["h", "h", "h", "h", "2 MiB", "", "q"])
    assert result.exit_code == 0, result.output
    # the fixture's own hint, then its formula in words and with the draw's numbers
    # (2 layers, 4 KV heads of dimension 64, 2-byte elements, 1,024 tokens)
    assert (
        "> Hint 1 of 3: K and V, in every layer, for every KV head.\n"
        "> Hint 2 of 3: The formula: 2 (K and V) × layers × KV heads × head_dim × bytes per "
        "element × tokens, in bytes.\n"
        "> Hint 3 of 3: With this draw's numbers: 2 × 2 × 4 × 64 × 2 × 1,024.\n"
        "> No more hints.\n"
        "> Right: 2 MiB (2,097,152 bytes).\n"
    ) in result.output
    assert "[Enter = 2 hard]" in result.output
    assert rows(db, "select rating, correct from reviews") == [{"rating": 2, "correct": 1}]


def test_a_wrong_answer_is_told_its_misconception(tmp_path):
    db = tmp_path / "k.db"
    result = quiz(db, ["1 MiB", "", "q"])
    assert result.exit_code == 0, result.output
    assert "Wrong. Answer: 2 MiB (2,097,152 bytes).\nMistake: forgot the K+V factor of 2.\n" in (
        result.output
    )
    assert "Half of it: the cache stores a K and a V vector" in result.output
    assert rows(db, "select rating, correct, misconception from reviews") == [
        {"rating": 1, "correct": 0, "misconception": "forgot-kv-factor"}
    ]
    assert rows(db, "select due, state, step from cards") == [
        {"due": iso(T0 + timedelta(seconds=40, minutes=1)), "state": 1, "step": 0}
    ]


def test_a_concept_answer_is_self_rated_and_quotes_the_missing_measurement(tmp_path):
    db = tmp_path / "k.db"
    result = quiz(db, ["s", "low arithmetic intensity and it reads the weights", "", "", "q"])
    assert result.exit_code == 0, result.output
    assert "  [x] 1. every step reads all the weights" in result.output
    assert "  [x] 2. little arithmetic per byte (low arithmetic intensity)" in result.output
    assert HOW_TO_MEASURE in result.output
    assert "[Enter = 3 good]" in result.output
    assert rows(db, "select question_id, rating, correct, ticks from reviews") == [
        {"question_id": "qf-decode-bound", "rating": 3, "correct": None, "ticks": "11"}
    ]
    assert rows(db, "select due from cards") == [
        {"due": iso(T0 + timedelta(seconds=80, minutes=10))}
    ]


def test_a_concept_answer_quotes_the_latest_engine_run(tmp_path):
    db_path = tmp_path / "k.db"
    db = open_db(db_path)
    run = {
        "device_name": "Test GPU",
        "claims": {"decode_memory_bound": {"text": "decode reached 81% of peak bandwidth"}},
    }
    save_engine_run(db, run, T0 - timedelta(days=1))
    db.conn.close()
    result = quiz(db_path, ["s", "", "1", "q"])
    assert result.exit_code == 0, result.output
    assert "Your last engine run, on Test GPU" in result.output
    assert "decode reached 81% of peak bandwidth." in result.output
    # point 1 ticked by the user, one of two: right as far as it goes
    assert rows(db_path, "select rating, answer from reviews") == [{"rating": 2, "answer": ""}]


def test_skip_and_quit_keep_the_session_row_and_store_no_review(tmp_path):
    db = tmp_path / "k.db"
    result = quiz(db, ["s", "q"])
    assert result.exit_code == 0, result.output
    assert "Skipped." in result.output
    assert "0 answered: 0 right, 0 wrong, 1 skipped; 40 s." in result.output
    assert rows(db, "select count(*) as n from reviews") == [{"n": 0}]
    (session,) = rows(db, "select started_at, ended_at, mode, answered from sessions")
    assert session == {
        "started_at": iso(T0), "ended_at": iso(T0 + timedelta(seconds=40)),
        "mode": "review", "answered": 0,
    }  # fmt: skip


def test_piped_answer_and_enter_on_the_built_in_deck_use_the_default_database(_isolated_home):
    result = CliRunner().invoke(cli, ["quiz", "--max", "1", "--seed", "1"], input="0.5 GiB\n\n")
    assert result.exit_code == 0, result.output
    assert "[0 done, 1 left]" in result.output
    assert "── summary ──" in result.output
    db = _isolated_home / "kvdrill.db"
    assert [r["answer"] for r in rows(db, "select answer from reviews")] == ["0.5 GiB"]


def test_end_of_input_before_any_answer_ends_cleanly(tmp_path):
    db = tmp_path / "k.db"
    result = quiz(db, [])
    assert result.exit_code == 0, result.output
    assert "No answers this time." in result.output
    assert rows(db, "select count(*) as n from reviews") == [{"n": 0}]


def test_cram_changes_no_card(tmp_path):
    db = tmp_path / "k.db"
    quiz(db, ["1 MiB", "", "q"])  # wrong: the weakest question for cram
    cards = rows(db, "select * from cards")
    result = quiz(db, ["2 MiB", "", "q"], "--cram", "--max", "1")
    assert result.exit_code == 0, result.output
    assert "Cram: 1 question, practice only" in result.output
    assert rows(db, "select * from cards") == cards
    assert rows(db, "select cram, correct from reviews order by rowid") == [
        {"cram": 0, "correct": 0}, {"cram": 1, "correct": 1},
    ]  # fmt: skip


def _one_line_error(result):
    assert result.exit_code != 0
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("Error: ")
    return lines[0]


def test_a_corrupt_database_is_refused_with_one_line_and_left_untouched(tmp_path):
    db = tmp_path / "k.db"
    garbage = b"\x00not sqlite at all\n" * 300
    db.write_bytes(garbage)
    line = _one_line_error(quiz(db, ["2 MiB", ""]))
    assert "not a kvdrill database" in line
    assert db.read_bytes() == garbage
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.db"]


def test_a_truncated_sqlite_file_is_refused_untouched(tmp_path):
    db = tmp_path / "k.db"
    open_db(db).conn.close()
    broken = db.read_bytes()[:100] + b"\xff" * 3000
    db.write_bytes(broken)
    _one_line_error(quiz(db, ["2 MiB", ""]))
    assert db.read_bytes() == broken


def test_a_database_from_a_newer_kvdrill_is_refused_untouched(tmp_path):
    db = tmp_path / "k.db"
    conn = sqlite3.connect(db)
    conn.execute("create table cards (question_id text)")
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    before = db.read_bytes()
    line = _one_line_error(quiz(db, ["2 MiB", ""]))
    assert "newer kvdrill" in line
    assert db.read_bytes() == before


def test_an_unknown_topic_is_one_line(tmp_path):
    result = CliRunner().invoke(
        cli, ["quiz", "--db", str(tmp_path / "k.db"), "--bank", str(BANK_DIR), "--topic", "nope"]
    )
    line = _one_line_error(result)
    assert "no questions with topic 'nope'" in line and "quiz-fixture" in line


@pytest.mark.parametrize("value", ["0.5", "1.2", "high"])
def test_retention_out_of_range_is_a_usage_error(tmp_path, value):
    result = CliRunner().invoke(
        cli, ["quiz", "--db", str(tmp_path / "k.db"), "--retention", value]
    )
    assert result.exit_code == 2
    assert "--retention" in result.output
    assert not (tmp_path / "k.db").exists()


def test_help_lists_the_options_but_not_the_test_clock():
    result = CliRunner().invoke(cli, ["quiz", "--help"])
    assert result.exit_code == 0
    for option in ("--topic", "--new", "--max", "--seed", "--cram", "--bank", "--db",
                   "--retention"):
        assert option in result.output
    assert "--now" not in result.output and "--no-fuzz" not in result.output


def test_the_quiz_shows_its_questions_without_loading_the_stemmer(tmp_path):
    # the stemmer that reads concept answers loads with the first one graded, not before
    script = (
        "import sys\n"
        "from drill.cli import cli\n"
        f"cli.main(['quiz', '--db', {str(tmp_path / 'k.db')!r}, '--topic', 'metrics',\n"
        "          '--max', '30', '--new', '30', '--seed', '3'],\n"
        "         prog_name='kvdrill', standalone_mode=False)\n"
        "print('STEMMER LOADED' if 'snowballstemmer' in sys.modules else 'NO STEMMER')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        input="s\n" * 30,
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "What is TTFT and which mechanisms make it up?" in done.stdout  # a concept question
    assert done.stdout.rstrip().endswith("NO STEMMER")


def test_the_quiz_never_imports_torch(tmp_path):
    script = (
        "import sys\n"
        "from drill.cli import cli\n"
        f"cli.main(['quiz', '--db', {str(tmp_path / 'k.db')!r}, '--max', '2', '--seed', '3'],\n"
        "         prog_name='kvdrill', standalone_mode=False)\n"
        "print('TORCH LOADED' if 'torch' in sys.modules else 'NO TORCH')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        input="1 GiB\n\ns\n",
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "[0 done, 2 left]" in done.stdout and "Saved:" in done.stdout
    assert done.stdout.rstrip().endswith("NO TORCH")
