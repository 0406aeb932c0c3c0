"""An answer never ends a session (issue 26): a busy or full database, SIGTERM and SIGHUP
at the rating prompt, arguments that are not UTF-8, and an interview report that cannot
be written.

Each test counts the reviews in the database before and after, with a second connection.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import drill.commands.terminal as terminal_module
import drill.storage.database
import drill.study.answer_keeper
from drill.bank.loader import load_bank
from drill.cli import cli
from drill.storage.database import open_db
from drill.storage.reviews import unsaved_path
from drill.study.days import UTC_DAYS
from drill.study.session import run_session
from drill.study.signals import Terminated, deferred_signals, ending_signals, raise_pending

HERE = Path(__file__).parent
BANK_QUIZ = HERE / "banks_quiz"
BANK_INTERVIEW = HERE / "banks" / "interview" / "interview.yaml"
REPO = HERE.parent
QUIZ_CLOCK = ["--now", "2026-11-02T08:00:00+00:00", "--tick", "20", "--no-fuzz", "--seed", "1"]
INTERVIEW = ["--topic", "iv-kv", "--seed", "1", "--n", "3", "--now", "2026-11-18T12:00:00+00:00",
             "--tick", "30", "--no-fuzz"]  # fmt: skip
WAITING = "The database is busy: another kvdrill is writing to it. Waiting..."
BUSY = "the database stayed busy (another kvdrill was writing to it)"

LOCK, UNLOCK = object(), object()


def reviews(db: Path) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("select answer, rating from reviews order by reviewed_at").fetchall()
    finally:
        conn.close()


def count(db: Path) -> int:
    return len(reviews(db)) if db.exists() else 0


class Locker:
    """Typed lines, some after LOCK (a second connection takes the write lock with
    BEGIN IMMEDIATE and holds it) or UNLOCK (it lets go)."""

    def __init__(self, db: Path, script: list):
        self.db = db
        self.script = list(script)
        self.conn: sqlite3.Connection | None = None

    def read_line(self, _stream=None) -> str | None:
        while self.script and self.script[0] in (LOCK, UNLOCK):
            if self.script.pop(0) is LOCK:
                self.conn = sqlite3.connect(self.db, isolation_level=None)
                self.conn.execute("BEGIN IMMEDIATE")
            else:
                self.release()
        return self.script.pop(0) if self.script else None

    def release(self) -> None:
        if self.conn is not None:
            self.conn.execute("ROLLBACK")
            self.conn.close()
            self.conn = None


@pytest.fixture
def short_busy_timeout(monkeypatch):
    """SQLite waits 50 ms for a lock rather than 10 s, so each test stays fast."""
    monkeypatch.setattr(drill.storage.database, "BUSY_TIMEOUT_MS", 50)


def quiz(db: Path, *extra: str, input: str = ""):
    args = ["quiz", "--db", str(db), "--bank", str(BANK_QUIZ), "--topic", "quiz-fixture"]
    return CliRunner().invoke(cli, [*args, *QUIZ_CLOCK, *extra], input=input, prog_name="kvdrill")


def locked_quiz(monkeypatch, db: Path, script: list):
    locker = Locker(db, script)
    monkeypatch.setattr(terminal_module, "read_input_line", locker.read_line)
    try:
        return quiz(db)
    finally:
        locker.release()


def new_database(path: Path) -> Path:
    open_db(path).conn.close()
    return path


# ----------------------------------------------------------------- a busy database


def test_a_locked_write_keeps_the_answer_beside_the_database_and_the_next_quiz_merges_it(
    tmp_path, monkeypatch, short_busy_timeout
):
    db = new_database(tmp_path / "k.db")
    kept = tmp_path / "k.db-unsaved.jsonl"
    assert count(db) == 0
    # another process holds the write lock from the rating of the first answer to the
    # second question
    result = locked_quiz(monkeypatch, db, ["2 MiB", LOCK, "", UNLOCK, "s", "q"])
    assert result.exit_code == 1
    assert (
        "Rate: 1 again · 2 hard · 3 good · 4 easy [Enter = 3 good] "
        f"{WAITING}\n"
        f"Not saved to the database: {BUSY}. Your answer is kept in {kept}; the next "
        "`kvdrill quiz` adds it.\n"
        "\n"
        "[1 done, 2 left] quiz-fixture · new\n"
    ) in result.stdout
    assert result.stdout.count(WAITING) == 1  # said once, however long it waits
    assert "> Skipped.\n" in result.stdout  # the session went on
    assert result.stdout.endswith(
        f"Not in the database yet: 1 answer, kept in {kept}; the next `kvdrill quiz` adds it.\n"
    )
    assert result.stderr == (
        f"Error: 1 answer could not be saved to the database and waits in {kept} (the next "
        "`kvdrill quiz` adds it)\n"
    )
    assert count(db) == 0
    (line,) = kept.read_text(encoding="utf-8").splitlines()
    assert {k: json.loads(line)[k] for k in ("question_id", "answer", "rating")} == {
        "question_id": "qf-kv-bytes", "answer": "2 MiB", "rating": 3,
    }  # fmt: skip

    again = quiz(db, input="q\n")
    assert again.exit_code == 0, again.output
    assert again.stdout.startswith(
        f"Merged 1 answer saved while the database could not be written (from {kept}).\n"
    )
    assert reviews(db) == [("2 MiB", 3)]  # exactly one more
    assert not kept.exists()

    # importing the same answer twice adds nothing
    kept.write_text(line + "\n", encoding="utf-8")
    third = quiz(db, input="q\n")
    assert third.exit_code == 0, third.output
    assert "Merged" not in third.stdout
    assert reviews(db) == [("2 MiB", 3)]
    assert not kept.exists()


def test_u_cannot_take_back_an_answer_the_database_refused(tmp_path, monkeypatch, short_busy_timeout):
    db = new_database(tmp_path / "k.db")
    kept = tmp_path / "k.db-unsaved.jsonl"
    result = locked_quiz(monkeypatch, db, [
        "2 MiB", "",  # saved
        "weights", "", LOCK, "", UNLOCK,  # kept beside the database
        "u", "q",
    ])  # fmt: skip
    assert result.exit_code == 1
    assert (
        "> Cannot undo: the last answer is not in the database (it waits in "
        f"{kept}), so there is nothing to take back.\n"
    ) in result.stdout
    # the answer before it was not taken back instead
    assert reviews(db) == [("2 MiB", 3)]
    assert len(kept.read_text(encoding="utf-8").splitlines()) == 1


def test_a_suspend_the_database_refuses_leaves_the_question_to_answer(
    tmp_path, monkeypatch, short_busy_timeout
):
    db = new_database(tmp_path / "k.db")
    result = locked_quiz(monkeypatch, db, [LOCK, "!", UNLOCK, "2 MiB", "", "q"])
    assert result.exit_code == 0, result.output
    assert (
        f"> {WAITING}\n"
        f"Not suspended: {BUSY}. The question is still yours to answer.\n"
        "> Right: 2 MiB (2,097,152 bytes).\n"
    ) in result.stdout
    assert reviews(db) == [("2 MiB", 3)]


# ----------------------------------------------------------------- a full disk


def test_a_full_disk_keeps_the_answer_and_the_next_quiz_merges_it(tmp_path):
    from test_disk_full import LONG_ANSWER, OPTIONS, FillingTerminal

    path = tmp_path / "k.db"
    db = open_db(path)
    term = FillingTerminal(db, ["2 MiB", "", LONG_ANSWER, "", "", "2", "", "q"])  # 2: prefill
    result = run_session(db, load_bank([BANK_QUIZ]), OPTIONS, term.io(), days=UTC_DAYS,
                         evidence_lines=lambda claims: [])  # fmt: skip
    db.conn.close()
    kept = tmp_path / "k.db-unsaved.jsonl"
    # the long answer needed pages the full disk did not have: it is kept, and the
    # session went on to the next question, whose short answer fit
    assert (result.ended_by, result.answered, result.unsaved) == ("quit", 3, 1)
    assert (
        f"Not saved to the database: the disk is full. Your answer is kept in {kept}; the next "
        "`kvdrill quiz` adds it.\n\n[2 done, 2 left] quiz-fixture · new\n"
    ) in term.text
    assert [answer for answer, _ in reviews(path)] == ["2 MiB", "2"]

    again = quiz(path, input="q\n")
    assert again.exit_code == 0, again.output
    assert again.stdout.startswith(
        f"Merged 1 answer saved while the database could not be written (from {kept}).\n"
    )
    assert [answer for answer, _ in reviews(path)] == ["2 MiB", LONG_ANSWER, "2"]  # one more
    assert not kept.exists()


# ----------------------------------------------------------------- the unsaved file


def test_a_bad_line_in_the_unsaved_file_is_one_warning_and_the_quiz_goes_on(tmp_path):
    db = new_database(tmp_path / "k.db")
    kept = tmp_path / "k.db-unsaved.jsonl"
    kept.write_bytes(b'{"not": "a review"}\n')
    result = quiz(db, input="2 MiB\n\nq\n")
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        f"Warning: {kept}:1: unknown field 'not'; the answers kept in that file were not merged, "
        "and it is left as it is (mend that line, then `kvdrill import` the file)\n"
    )
    assert "Saved: good." in result.stdout
    assert kept.read_bytes() == b'{"not": "a review"}\n'
    assert reviews(db) == [("2 MiB", 3)]


def test_the_unsaved_file_is_named_after_the_whole_database_name(tmp_path):
    assert unsaved_path(Path("/data/work.db")) == Path("/data/work.db-unsaved.jsonl")
    assert unsaved_path(Path("/data/work.sqlite")) == Path("/data/work.sqlite-unsaved.jsonl")
    assert unsaved_path(Path("/data/kvdrill.db")) == Path("/data/kvdrill.db-unsaved.jsonl")


def test_a_rescue_never_writes_into_a_file_a_merge_removed_meanwhile(tmp_path):
    from drill.storage.reviews import lock_file

    kept = tmp_path / "k.db-unsaved.jsonl"
    kept.write_text("")
    with kept.open("a") as waiting:  # opened, then the merge removed it before the lock
        kept.unlink()
        assert lock_file(waiting, kept) is False
        kept.write_text("")  # a new file of the same name is not the one held either
        assert lock_file(waiting, kept) is False
    with kept.open("a") as fresh:
        assert lock_file(fresh, kept) is True


def record_line(review_id: str, answer: str) -> str:
    return json.dumps({
        "id": review_id, "question_id": "qf-kv-bytes", "reviewed_at":
        "2026-11-01T08:00:00.000000+00:00", "rating": 3, "answer": answer,
    })  # fmt: skip


def test_the_older_stem_file_is_merged_only_for_a_database_named_stem_db(tmp_path):
    db = new_database(tmp_path / "work.db")
    legacy = tmp_path / "work-unsaved.jsonl"
    legacy.write_text(record_line("11111111-1111-4111-8111-111111111111", "old name") + "\n")
    result = quiz(db, input="q\n")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(
        f"Merged 1 answer saved while the database could not be written (from {legacy}).\n"
    )
    assert reviews(db) == [("old name", 3)]
    assert not legacy.exists()

    # work.sqlite has its own file; work-unsaved.jsonl is not its own
    other = new_database(tmp_path / "work.sqlite")
    legacy.write_text(record_line("22222222-2222-4222-8222-222222222222", "not mine") + "\n")
    result = quiz(other, input="q\n")
    assert result.exit_code == 0, result.output
    assert "Merged" not in result.stdout
    assert count(other) == 0
    assert legacy.exists()


# ----------------------------------------------------------------- SIGTERM and SIGHUP


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_at_the_rating_prompt_keeps_the_answer(tmp_path, signum):
    from test_durability import QUESTIONS, QuizProcess

    db = new_database(tmp_path / "k.db")
    assert count(db) == 0
    quiz_process = QuizProcess(db, "--seed", "7")
    quiz_process.wait_for(f"[0 done, {QUESTIONS} left]")
    quiz_process.send("a fixture answer", "")  # the answer, its ticks kept
    quiz_process.wait_for("Rate:")
    time.sleep(0.3)  # into the blocking read of the rating, as a person's signal finds it
    quiz_process.proc.send_signal(signum)
    quiz_process.wait_for("── summary ──")
    assert quiz_process.finish() == 0  # as after Ctrl-C
    assert "[Enter = 3 good] \nSaved: good.\n" in quiz_process.text
    assert "1 answered: 1 right, 0 wrong" in quiz_process.text
    assert reviews(db) == [("a fixture answer", 3)]  # the suggested rating
    conn = sqlite3.connect(db)
    assert conn.execute("select answered, ended_at is not null from sessions").fetchall() == [
        (1, 1)
    ]
    conn.close()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_signal_during_a_write_waits_for_its_end_and_the_handlers_come_back():
    before = signal.getsignal(signal.SIGTERM)
    with ending_signals():
        with deferred_signals():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)
            done = True  # not interrupted
        assert done
        with pytest.raises(Terminated):
            raise_pending()
        raise_pending()  # once
    assert signal.getsignal(signal.SIGTERM) is before


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigterm_while_an_answer_is_written_saves_it_then_ends_the_session(tmp_path, monkeypatch):
    from test_session import Terminal

    real = drill.study.answer_keeper.record_answer

    def terminated_meanwhile(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)
        return real(*args, **kwargs)

    monkeypatch.setattr(drill.study.answer_keeper, "record_answer", terminated_meanwhile)
    db = open_db(tmp_path / "k.db")
    term = Terminal(["2 MiB", "", "s", "q"])
    with ending_signals():
        result = run_session(db, load_bank([BANK_QUIZ]), drill.study.session.SessionOptions(
            topic="quiz-fixture", seed=1, fuzz=False), term.io(), days=UTC_DAYS)  # fmt: skip
    db.conn.close()
    assert (result.ended_by, result.answered) == ("interrupt", 1)
    # saved before the signal was acted on; the next question was never shown
    assert "[Enter = 3 good] Saved: good.\n\n\n── summary ──\n1 answered: 1 right, 0 wrong" in (
        term.text
    )
    assert "[1 done, " not in term.text
    assert reviews(tmp_path / "k.db") == [("2 MiB", 3)]


# ----------------------------------------------------------------- arguments


def test_a_drill_name_that_is_not_utf8_is_a_one_line_usage_error(tmp_path):
    result = quiz(tmp_path / "k.db", "--drill", "forgot\udcff\udcfe")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        "Error: Invalid value for '--drill': 'forgot\ufffd\ufffd' is not valid UTF-8 text (see "
        "`kvdrill quiz -h`).\n"
    )
    assert not (tmp_path / "k.db").exists()


def test_unsuspend_ids_that_are_not_utf8_are_a_one_line_usage_error(tmp_path):
    db = new_database(tmp_path / "k.db")
    result = CliRunner().invoke(
        cli, ["unsuspend", "qf-kv-bytes", "\udcff", "--db", str(db)], prog_name="kvdrill"
    )
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        "Error: Invalid value for '[ID]...': '\ufffd' is not valid UTF-8 text (see "
        "`kvdrill unsuspend -h`).\n"
    )


@pytest.mark.skipif(sys.platform == "win32", reason="bytes in argv")
def test_undecodable_bytes_on_a_real_command_line_are_one_line(tmp_path):
    env = {**os.environ, "KVDRILL_HOME": str(tmp_path / "home")}
    done = subprocess.run(
        [sys.executable, "-m", "drill", "unsuspend", b"bad\xff", "--db", str(tmp_path / "k.db")],
        capture_output=True, cwd=REPO, env=env, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr.decode() == (
        "Error: Invalid value for '[ID]...': 'bad\ufffd' is not valid UTF-8 text (see "
        "`kvdrill unsuspend -h`).\n"
    )


@pytest.mark.parametrize(
    ("minutes", "message"),
    [
        ("nan", "'nan' is not a number"),
        ("NaN", "'NaN' is not a number"),
        ("inf", "inf is not in the range 1<=x<=600"),
        ("-5", "-5.0 is not in the range 1<=x<=600"),
        ("0", "0.0 is not in the range 1<=x<=600"),
        ("1e300", "1e+300 is not in the range 1<=x<=600"),
    ],
)
def test_interview_minutes_it_cannot_count_with_are_one_line(tmp_path, minutes, message):
    result = CliRunner().invoke(
        cli, ["interview", "--db", str(tmp_path / "k.db"), "--minutes", minutes], input="q\n",
        prog_name="kvdrill",
    )
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        f"Error: Invalid value for '--minutes': {message} (see `kvdrill interview -h`).\n"
    )
    assert not (tmp_path / "k.db").exists()


# ----------------------------------------------------------------- the interview


def interview(db: Path, *extra: str, input: str = "512 MiB\n128 MiB\n1 GiB\n"):
    args = ["interview", "--bank", str(BANK_INTERVIEW), *INTERVIEW, "--db", str(db), *extra]
    return CliRunner().invoke(cli, args, input=input, prog_name="kvdrill")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_report_to_dev_full_goes_beside_the_database(tmp_path):
    db = tmp_path / "k.db"
    result = interview(db, "--report", "/dev/full")
    beside = tmp_path / "k.db-report-20261118-120130.md"
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: cannot write /dev/full: No space left on device; the report was written to "
        f"{beside} instead\n"
    )
    assert beside.read_text(encoding="utf-8").startswith("# kvdrill mock interview: report\n")
    assert "Interview report\n3 of 3 questions answered in 1:30 of 45:00" in result.stdout
    assert count(db) == 3  # every answer was saved


def test_a_report_no_file_can_take_is_printed(tmp_path, monkeypatch):
    import drill.storage.outfile
    from drill.errors import KvdrillError

    def full(path, text, protected=()):
        raise KvdrillError(f"cannot write {path}: No space left on device")

    monkeypatch.setattr(drill.storage.outfile, "write_text", full)
    db = tmp_path / "k.db"
    result = interview(db, "--report", str(tmp_path / "r.html"))
    beside = tmp_path / "k.db-report-20261118-120130.html"
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: cannot write {tmp_path / 'r.html'}: No space left on device, nor beside the "
        f"database (cannot write {beside}: No space left on device); the report was printed "
        "to standard output instead\n"
    )
    assert result.stdout.rstrip().endswith("</html>")
    assert "<!DOCTYPE html>" in result.stdout
    assert count(db) == 3


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("missing/r.md", "cannot write {tmp}/missing/r.md: there is no folder {tmp}/missing"),
        ("k.db", "refusing to write over {tmp}/k.db: it is kvdrill's database"),
    ],
)
def test_a_report_that_cannot_be_written_is_refused_before_the_interview(tmp_path, target,
                                                                         message):  # fmt: skip
    db = tmp_path / "k.db"
    result = interview(db, "--report", str(tmp_path / target))
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == f"Error: {message.format(tmp=tmp_path)}\n"
    assert not db.exists()  # nothing was asked


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes anywhere")
def test_a_report_in_a_folder_that_cannot_be_written_is_refused_before_the_interview(tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        result = interview(tmp_path / "k.db", "--report", str(folder / "r.md"))
    finally:
        folder.chmod(0o755)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (
        f"Error: cannot write {folder / 'r.md'}: its folder {folder} cannot be written\n"
    )


def test_an_interview_answer_the_database_refuses_is_kept_and_the_interview_goes_on(
    tmp_path, monkeypatch, short_busy_timeout
):
    db = new_database(tmp_path / "k.db")
    kept = tmp_path / "k.db-unsaved.jsonl"
    locker = Locker(db, ["512 MiB", LOCK, "128 MiB", UNLOCK, "1 GiB"])
    monkeypatch.setattr(terminal_module, "read_input_line", locker.read_line)
    try:
        result = interview(db, input="")
    finally:
        locker.release()
    assert result.exit_code == 1
    assert (
        f"> {WAITING}\n"
        f"Not saved to the database: {BUSY}. Your answer is kept in {kept}; the next "
        "`kvdrill quiz` adds it.\n"
    ) in result.stdout
    assert "Question 3 of 3" in result.stdout  # it went on
    assert "3 of 3 questions answered" in result.stdout
    assert result.stderr == (
        f"Error: 1 answer could not be saved to the database and waits in {kept} (the next "
        "`kvdrill quiz` adds it)\n"
    )
    assert count(db) == 2

    merged = quiz(db, input="q\n")
    assert merged.stdout.startswith(
        f"Merged 1 answer saved while the database could not be written (from {kept}).\n"
    )
    assert count(db) == 3  # exactly one more


def test_a_merge_rebuilds_only_the_cards_of_the_answers_it_adds(
    tmp_path, monkeypatch, short_busy_timeout
):
    """The other cards keep their schedule exactly (its fuzz, an interview date's cap)."""
    db = new_database(tmp_path / "k.db")
    result = locked_quiz(monkeypatch, db, ["2 MiB", "", "weights", "", LOCK, "", UNLOCK, "q"])
    assert result.exit_code == 1, result.output
    conn = sqlite3.connect(db)
    conn.execute(
        "update cards set due = '2026-11-30T08:00:00.000000+00:00', stability = 99.5"
    )  # as if capped before an interview
    conn.commit()
    before = conn.execute("select * from cards order by question_id").fetchall()
    conn.close()
    assert [row[0] for row in before] == ["qf-kv-bytes"]
    again = quiz(db, input="q\n")
    assert again.exit_code == 0, again.output
    conn = sqlite3.connect(db)
    after = conn.execute("select * from cards order by question_id").fetchall()
    conn.close()
    assert [row[0] for row in after] == ["qf-decode-bound", "qf-kv-bytes"]
    assert after[1] == before[0]  # the card whose answer was not in the file, untouched
    assert count(db) == 2
