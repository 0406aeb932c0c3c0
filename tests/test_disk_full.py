"""A database that stops taking writes mid-session: the answer is kept elsewhere, the session
goes on and is closed."""

import json
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_session import T0, Terminal  # noqa: I001

import drill.study.answer_keeper
from drill.bank.loader import load_bank
from drill.cli import cli
from drill.srs import iso
from drill.storage.database import open_db
from drill.study.days import UTC_DAYS
from drill.study.session import run_session
from drill.study.session_io import SessionOptions

BANK_DIR = Path(__file__).parent / "banks_quiz"
OPTIONS = SessionOptions(topic="quiz-fixture", seed=1, fuzz=False)
LONG_ANSWER = "the weights are read every step " * 250  # 8,000 characters: needs new pages


class FillingTerminal(Terminal):
    """Fills the disk (as SQLite sees it) just before the second answer is read."""

    def __init__(self, db, lines):
        super().__init__(lines)
        self.db = db
        self.reads = 0

    def read_line(self):
        self.reads += 1
        if self.reads == 3:
            pages = self.db.execute("pragma page_count").fetchone()[0]
            self.db.execute(f"pragma max_page_count = {pages}")
        return super().read_line()


def session_until_full(tmp_path):
    db = open_db(tmp_path / "k.db")
    term = FillingTerminal(db, ["2 MiB", "", LONG_ANSWER, "", "", "q"])  # answer, ticks, rating
    result = run_session(db, load_bank([BANK_DIR]), OPTIONS, term.io(), days=UTC_DAYS,
                         evidence_lines=lambda claims: [])  # fmt: skip
    return db, term, result


def test_a_refused_answer_is_written_beside_the_database_and_the_session_goes_on(tmp_path):
    db, term, result = session_until_full(tmp_path)
    rescue = tmp_path / "k.db-unsaved.jsonl"
    assert (
        f"Not saved to the database: the disk is full. Your answer is kept in {rescue}; the "
        "next `kvdrill quiz` adds it.\n\n[2 done, 2 left] quiz-fixture · new\n"
    ) in term.text
    assert (result.ended_by, result.answered, result.unsaved, result.unsaved_file) == (
        "quit", 2, 1, str(rescue))
    assert term.text.endswith(
        f"Not in the database yet: 1 answer, kept in {rescue}; the next `kvdrill quiz` adds it.\n"
    )
    (line,) = rescue.read_text(encoding="utf-8").splitlines()
    record = json.loads(line)
    fields = ("question_id", "reviewed_at", "rating", "correct", "cram", "ticks")
    assert {k: record[k] for k in fields} == {
        "question_id": "qf-decode-bound",
        "reviewed_at": iso(T0 + timedelta(seconds=100)),  # after the answer, ticks, rating
        "rating": 2,  # one key point of two covered: half, Hard
        "correct": None,
        "cram": False,
        "ticks": "10",  # the ticks go with the kept answer
    }
    assert record["answer"] == LONG_ANSWER
    # the first answer is in; the session row is closed when the session ends
    assert [r["question_id"] for r in db.query("select question_id from reviews")] == [
        "qf-kv-bytes"
    ]
    assert list(db.query("select answered, ended_at from sessions")) == [
        {"answered": 1, "ended_at": iso(T0 + timedelta(seconds=120))}  # the q at the next question
    ]
    db.conn.close()
    # once there is room again, import brings the answer back
    result = CliRunner().invoke(cli, ["import", str(rescue), "--db", str(tmp_path / "k.db")])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"Imported 1 new reviews from {rescue} (0 already present)")


def test_when_nothing_can_be_written_the_answer_is_shown_to_keep(tmp_path, monkeypatch):
    def no_room(db, review):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(drill.study.answer_keeper, "rescue_review", no_room)
    _db, term, result = session_until_full(tmp_path)
    lines = term.text.splitlines()
    # (the scripted terminal echoes no Enter, so the message follows the rating prompt)
    at = next(i for i, line in enumerate(lines) if line.endswith(
        "Your answer could not be saved, nor written beside the database. Keep this"))
    assert lines[at + 1] == "line in a file and add it later with `kvdrill import FILE`:"
    record = json.loads(lines[at + 2])
    assert record["question_id"] == "qf-decode-bound"
    assert record["answer"] == LONG_ANSWER
    assert not (tmp_path / "k.db-unsaved.jsonl").exists()
    # the session went on; its summary says where the answer is
    assert lines[at + 4] == "[2 done, 2 left] quiz-fixture · new"
    assert (result.unsaved, result.unsaved_shown) == (0, 1)
    assert lines[-1] == (
        "Saved nowhere: 1 answer, printed above; `kvdrill import FILE` adds a file holding "
        "those lines."
    )



class FullTerminal(Terminal):
    """Standard output fills up at its first write, or once the first answer is saved."""

    def __init__(self, lines, after):
        super().__init__(lines)
        self.after = after

    def io(self):
        def write(text):
            if self.after in "".join(self.out):
                raise OSError(28, "No space left on device")
            self.out.append(text)

        return drill.study.session.SessionIO(self.read_line, write, lambda: self.clock)


@pytest.mark.parametrize(
    ("after", "reviews", "session"),
    [
        ("", [], {"answered": 0, "ended_at": iso(T0)}),
        ("Saved:", ["qf-kv-bytes"], {"answered": 1, "ended_at": iso(T0 + timedelta(seconds=40))}),
    ],
)
def test_a_full_output_closes_the_session_row_and_keeps_the_answers(
    tmp_path, after, reviews, session
):
    db = open_db(tmp_path / "k.db")
    term = FullTerminal(["2 MiB", "", "prefill is compute bound", "", "q"], after)
    with pytest.raises(OSError, match="No space left on device"):
        run_session(db, load_bank([BANK_DIR]), OPTIONS, term.io(), days=UTC_DAYS,
                    evidence_lines=lambda claims: [])  # fmt: skip
    assert [r["question_id"] for r in db.query("select question_id from reviews")] == reviews
    assert list(db.query("select answered, ended_at from sessions")) == [session]
