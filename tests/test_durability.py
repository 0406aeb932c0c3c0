"""Nothing answered is lost: real processes, a real database file, kill -9, two at once."""

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

BANK_DIR = Path(__file__).parent / "banks_quiz"
REPO = Path(__file__).resolve().parent.parent
QUESTIONS = 6  # the durability fixture deck: concept questions any text answers

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="uses SIGKILL")


def _default_signals() -> None:
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        signal.signal(getattr(signal, name), signal.SIG_DFL)


class QuizProcess:
    """`python -m drill quiz` on piped stdin, with its stdout collected as it comes."""

    def __init__(self, db: Path, *extra: str):
        command = [
            sys.executable, "-m", "drill", "quiz", "--db", str(db), "--bank", str(BANK_DIR),
            "--topic", "durability", "--new", "20", "--max", "20", "--no-fuzz", *extra,
        ]  # fmt: skip
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=REPO,
            # a runner started in the background may hand down SIGINT ignored (and one under
            # nohup SIGHUP), and the quiz rightly leaves an ignored signal ignored: give it
            # the defaults, as a terminal does
            preexec_fn=_default_signals,
        )
        self.out = bytearray()
        self.changed = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        while chunk := os.read(self.proc.stdout.fileno(), 65536):
            with self.changed:
                self.out += chunk
                self.changed.notify_all()
        with self.changed:
            self.changed.notify_all()

    @property
    def text(self) -> str:
        return self.out.decode("utf-8", errors="replace")

    def wait_for(self, marker: str, count: int = 1, timeout_s: float = 60) -> None:
        """Until `marker` has appeared `count` times on stdout."""
        deadline = time.monotonic() + timeout_s
        with self.changed:
            while self.text.count(marker) < count:
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and not self.reader.is_alive()):
                    err = self.proc.stderr.read().decode() if self.proc.poll() is not None else ""
                    raise AssertionError(f"no {marker!r} x{count} in:\n{self.text}\n{err}")
                self.changed.wait(min(left, 0.5))

    def send(self, *lines: str) -> None:
        self.proc.stdin.write("".join(line + "\n" for line in lines).encode())
        self.proc.stdin.flush()

    def finish(self, timeout_s: float = 120) -> int:
        self.proc.stdin.close()
        code = self.proc.wait(timeout_s)
        self.reader.join(timeout_s)
        return code


def query(db: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_kill_9_mid_session_keeps_every_answered_review(tmp_path):
    db = tmp_path / "k.db"
    quiz = QuizProcess(db, "--seed", "5")
    quiz.wait_for(f"[0 done, {QUESTIONS} left]")
    quiz.send("first fixture answer", "", "")  # the answer, its ticks kept, the rating
    # shown only after the first answer is committed; that card, rated Good, is in
    # learning and comes back in the session, so the session holds one more
    quiz.wait_for(f"[1 done, {QUESTIONS} left]")
    quiz.send("second fixture answer", "", "4")
    quiz.wait_for(f"[2 done, {QUESTIONS - 1} left]")
    quiz.send("third answer, never rated", "")
    quiz.wait_for("Rate:", count=3)
    quiz.proc.send_signal(signal.SIGKILL)
    assert quiz.proc.wait(30) == -signal.SIGKILL

    assert query(db, "PRAGMA integrity_check") == [("ok",)]
    assert query(db, "select answer, rating, cram from reviews order by reviewed_at") == [
        ("first fixture answer", 3, 0),
        ("second fixture answer", 4, 0),
    ]
    assert query(db, "select count(*), sum(reps) from cards") == [(2, 2)]
    # the session row counts both answers; it never got its end time
    assert query(db, "select answered, correct, ended_at from sessions") == [(2, 2, None)]

    # the next session carries on from there: only the four unseen questions are new, and
    # the card in learning comes back within it
    again = QuizProcess(db, "--seed", "6")
    again.wait_for("5 questions: 0 due, 4 new, 1 learning.")
    assert again.finish() == 0
    assert query(db, "select count(*) from reviews") == [(2,)]


def test_two_sessions_answering_at_once_keep_every_answer(tmp_path):
    db = tmp_path / "k.db"
    first = QuizProcess(db, "--seed", "1")
    second = QuizProcess(db, "--seed", "2")
    for quiz in (first, second):
        # both planned all six new questions before either answered
        quiz.wait_for(f"[0 done, {QUESTIONS} left]")
    for name, quiz in (("A", first), ("B", second)):
        quiz.send(*[line for i in range(QUESTIONS) for line in (f"{name}{i} fixture", "", "")])
    assert first.finish() == 0, first.proc.stderr.read().decode()
    assert second.finish() == 0, second.proc.stderr.read().decode()

    answers = sorted(a for (a,) in query(db, "select answer from reviews"))
    assert answers == sorted(f"{n}{i} fixture" for n in "AB" for i in range(QUESTIONS))
    assert query(db, "select answered, correct from sessions") == [(6, 6), (6, 6)]
    # every card saw both answers (Good twice: learning, then graduated to review)
    assert sorted(query(db, "select question_id, reps, state from cards")) == [
        (f"dur-{i}", 2, 2) for i in range(1, QUESTIONS + 1)
    ]
    for quiz in (first, second):
        assert "6 answered: 6 right, 0 wrong" in quiz.text


def test_ctrl_c_in_a_real_process_ends_with_the_summary_and_keeps_the_answers(tmp_path):
    db = tmp_path / "k.db"
    quiz = QuizProcess(db, "--seed", "7")
    quiz.wait_for(f"[0 done, {QUESTIONS} left]")
    quiz.send("a fixture answer", "", "")
    quiz.wait_for(f"[1 done, {QUESTIONS} left]")  # the first card, in learning, comes back later
    # Let it settle into the blocking read of the answer, as a person's Ctrl-C finds it. A
    # signal landing in the microseconds between the prompt and the read() call is a race
    # no blocking reader can close (the read starts after the signal and waits on).
    time.sleep(0.3)
    quiz.proc.send_signal(signal.SIGINT)
    quiz.wait_for("── summary ──")
    assert quiz.finish() == 0
    assert "1 answered: 1 right, 0 wrong" in quiz.text
    assert query(db, "select answer from reviews") == [("a fixture answer",)]
    (ended_at,) = query(db, "select ended_at from sessions")[0]
    assert ended_at is not None
