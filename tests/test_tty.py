"""The quiz at a real terminal, driven through tmux: the answer line is edited with the
arrow keys and Ctrl-A, and what Enter sends is what the database keeps; the text is
wrapped to the terminal and coloured."""

import os
import shutil
import sqlite3
import subprocess
import sys
import time
from itertools import count
from pathlib import Path

import pytest
from test_session import T0  # noqa: I001

from drill.srs import iso

REPO = Path(__file__).resolve().parent.parent
BANK_DIR = Path(__file__).parent / "banks_quiz"
TMUX = shutil.which("tmux")
_servers = count()

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")


class Tmux:
    """A tmux server of our own running one command in an 80-column window."""

    def __init__(self, command: str, columns: int = 80):
        self.name = f"kvdrill-test-{os.getpid()}-{next(_servers)}"
        self.tmux("new-session", "-d", "-x", str(columns), "-y", "50", "-c", str(REPO), command)

    def tmux(self, *args: str) -> str:
        done = subprocess.run([TMUX, "-L", self.name, "-f", os.devnull, *args],
                              capture_output=True, text=True, timeout=30, check=True)
        return done.stdout

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "0", *keys)

    def screen(self, escapes: bool = False) -> str:
        return self.tmux("capture-pane", "-p", "-t", "0", *(["-e"] if escapes else []))

    def wait_for(self, text: str, times: int = 1, timeout_s: float = 60) -> str:
        deadline = time.monotonic() + timeout_s
        while True:
            shown = self.screen()
            if shown.count(text) >= times:
                return shown
            if time.monotonic() > deadline:
                raise AssertionError(f"no {text!r} x{times} on the screen:\n{shown}")
            time.sleep(0.1)

    def close(self) -> None:
        subprocess.run([TMUX, "-L", self.name, "kill-server"], capture_output=True, timeout=30)


@pytest.fixture
def quiz_at_a_terminal(tmp_path):
    db = tmp_path / "k.db"
    command = (
        f"env -u NO_COLOR KVDRILL_HOME={tmp_path / 'home'} TERM=xterm-256color "
        f"{sys.executable} -m drill quiz --db {db} --bank {BANK_DIR} --topic quiz-fixture "
        f"--seed 1 --now {iso(T0)} --tick 20 --no-fuzz; sleep 60"
    )
    term = Tmux(command)
    yield term, db
    term.close()


def test_arrow_keys_and_ctrl_a_edit_the_answer_that_is_stored(quiz_at_a_terminal):
    term, db = quiz_at_a_terminal
    term.wait_for("tokens?\n>")  # the prompt (tmux drops a line's trailing blanks)
    # "2 iB", two steps left, an M typed there: "2 MiB"
    term.keys("2 iB", "Left", "Left", "M", "Enter")
    term.wait_for("Rate:")
    screen = term.screen(escapes=True)
    assert "\x1b[32mRight: 2 MiB (2,097,152 bytes)." in screen  # green
    term.keys("Enter")
    term.wait_for("bandwidth?\n>")
    # "weights", Ctrl-A to the start, "all the " typed there
    term.keys("weights", "C-a", "all the ", "Enter")
    # the grader ticked the first point; 2 ticks the second too, then Enter keeps them
    term.wait_for("Ticks: Enter keeps them; numbers toggle points (1 3):")
    term.keys("2", "Enter")
    term.wait_for("These ticks suggest 3 good.")
    term.keys("Enter")
    term.wait_for("Rate:", times=2)
    term.keys("1", "Enter")
    term.wait_for("Saved: again.")
    term.keys("q", "Enter")
    screen = term.wait_for("── summary ──")
    # the question wrapped between words at 80 columns, under a position bar
    assert (
        "A model has 2 layers, 4 KV heads of dimension 64 and a 2-byte cache. How large\n"
        "is the KV cache of one request of 1,024 tokens?\n"
    ) in screen
    assert "[0 done, 3 left] " + "─" * 20 + " quiz-fixture · new" in screen
    conn = sqlite3.connect(db)
    try:
        stored = conn.execute(
            "select answer, rating, ticks from reviews order by reviewed_at"
        ).fetchall()
    finally:
        conn.close()
    assert stored == [("2 MiB", 3, None), ("all the weights", 1, "11")]
