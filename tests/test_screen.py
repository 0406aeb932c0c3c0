"""The quiz at a terminal: wrapped text, colour, the position bar, the keys, and `q` at the
rating asking before it saves a rating the user did not choose."""

import re
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_session import BANK_DIR, FIXTURE, Terminal, no_evidence, reviews, run  # noqa: I001

from drill.bank.loader import load_bank
from drill.storage.database import open_db
from drill.study.days import UTC_DAYS
from drill.study.screen import PLAIN, Screen, paint, position_bar, verdict_roles, wrap_line
from drill.study.session import run_session

ANSI = re.compile(r"\x1b\[[0-9;]*m")
PROSE = (
    "A decoder-only transformer has 32 layers. Its attention is grouped: 56 query heads "
    "share 8 KV heads (7 query heads per KV head), and every head has dimension 128."
)


def test_a_long_line_breaks_between_words_within_the_width():
    lines = wrap_line(PROSE, 80)
    assert lines == [
        "A decoder-only transformer has 32 layers. Its attention is grouped: 56 query",
        "heads share 8 KV heads (7 query heads per KV head), and every head has dimension",
        "128.",
    ]
    assert " ".join(lines) == PROSE


def test_an_indented_or_listed_line_continues_under_its_text():
    solution = wrap_line("  Per token: " + "2 × 32 × 8 × 128 × 2 " * 4, 40)
    assert len(solution) == 3 and all(re.match(r"  \S", line) for line in solution)
    assert wrap_line("  3. " + "word " * 12, 30) == [
        "  3. word word word word word",
        "     word word word word word",
        "     word word",
    ]
    assert wrap_line("x" * 90, 80) == ["x" * 90]  # a word longer than the width stands alone


@given(st.lists(st.sampled_from(["kv", "cache", "2,097,152", "GiB", "decode-only", "—"]),
                min_size=1, max_size=60), st.integers(20, 120))
def test_wrapping_never_splits_a_word_nor_loses_one(words, width):
    line = " ".join(words)
    wrapped = wrap_line(line, width)
    assert " ".join(wrapped).split() == words
    assert all(len(piece) <= width or " " not in piece for piece in wrapped)


def test_colour_marks_right_wrong_and_the_named_mistake_only_when_on():
    lines = ["Wrong. Answer: 2 MiB.", "Mistake: forgot the K+V factor of 2.", "Solution:"]
    assert verdict_roles(lines, False) == ["wrong", "mistake", None]
    assert verdict_roles(["Right: 2 MiB."], True) == ["right"]
    assert verdict_roles(["Model answer:", 'Careful: "x" is wrong.'], None) == [None, "careful"]
    assert paint("Right", "right", True) == "\x1b[32mRight\x1b[0m"
    assert paint("Right", "right", False) == "Right"


def test_the_position_bar_fills_as_the_session_goes():
    assert position_bar(1, 4, 8) == ("", "─" * 8)
    assert position_bar(3, 4, 8) == ("━" * 4, "─" * 4)
    assert Screen(bar=True).header(3, 4, "kv-cache · new") == (
        "[2 done, 2 left] " + "━" * 10 + "─" * 10 + " kv-cache · new"
    )
    assert PLAIN.header(3, 4, "kv-cache · new") == "[2 done, 2 left] kv-cache · new"


@pytest.mark.parametrize("columns", [80, 200])
def test_a_session_at_a_terminal_is_wrapped_coloured_and_barred(tmp_path, columns):
    db = open_db(tmp_path / "k.db")
    screen = Screen(color=True, width=lambda: columns, bar=True)
    term = Terminal(["1 MiB", "", "q"])
    run_session(db, load_bank([BANK_DIR]), FIXTURE, replace(term.io(), screen=screen),
                days=UTC_DAYS, evidence_lines=no_evidence)
    shown = [ANSI.sub("", line) for line in term.text.splitlines()]
    assert max(len(line) for line in shown if not line.startswith("Rate:")) <= min(columns, 100)
    assert "\x1b[31mWrong. Answer: 2 MiB (2,097,152 bytes).\x1b[0m\n" in term.text
    assert "\x1b[1;33mMistake: forgot the K+V factor of 2.\x1b[0m\n" in term.text
    assert "\x1b[1m[0 done, 3 left]\x1b[0m \x1b[2m" + "─" * 20 + "\x1b[0m quiz-fixture · new\n" in term.text
    assert reviews(db)[0]["answer"] == "1 MiB"


def test_a_prompt_wider_than_the_terminal_breaks_between_words(tmp_path):
    db = open_db(tmp_path / "k.db")
    term = Terminal(["2 MiB", "q", ""])
    run_session(db, load_bank([BANK_DIR]), FIXTURE,
                replace(term.io(), screen=Screen(width=lambda: 80)),
                days=UTC_DAYS, evidence_lines=no_evidence)  # fmt: skip
    assert (
        "Quit: save this answer as 3 good? Enter saves it · 1-4 another rating · d\n"
        "discards the answer · n goes back: "
    ) in term.text
    assert [r["rating"] for r in reviews(db)] == [3]


def test_plain_output_is_unwrapped_and_uncoloured(tmp_path):
    _, term = run(open_db(tmp_path / "k.db"), ["1 MiB", "", "q"])
    assert "\x1b" not in term.text
    assert "\nA model has 2 layers, 4 KV heads of dimension 64 and a 2-byte cache. How large is " \
           "the KV cache of one request of 1,024 tokens?\n" in term.text


# --------------------------------------------------------------------------- keys


def test_question_mark_lists_the_keys_at_the_answer_and_at_the_rating(tmp_path):
    _, term = run(open_db(tmp_path / "k.db"), ["?", "2 MiB", "?", "", "q"])
    assert (
        "Keys:\n"
        "  Enter  send the answer typed\n"
        "  h      a hint; h again for the next one (any hint caps the rating at Hard)\n"
        "  s      skip this question\n"
        "  u      undo the last answer: it is taken back and its question asked again\n"
        "  !      suspend this question until `kvdrill unsuspend ID`\n"
        "  -      bury this question until tomorrow\n"
        "  q      end the session, with its summary\n"
        "  ?      this list\n"
    ) in term.text
    assert "  1-4    save 1 again, 2 hard, 3 good or 4 easy\n" in term.text


@pytest.mark.parametrize(
    ("lines", "stored", "ended_by"),
    [
        (["2 MiB", "q", ""], [3], "quit"),  # Enter: the suggestion
        (["2 MiB", "q", "1"], [1], "quit"),  # another rating
        (["2 MiB", "q", "d"], [], "quit"),  # discarded
        (["2 MiB", "q", "n", "4", "q"], [4], "quit"),  # back to the rating
        (["2 MiB", "q"], [3], "eof"),  # end of input keeps the suggestion
    ],
)
def test_q_at_the_rating_asks_which_rating_to_save(tmp_path, lines, stored, ended_by):
    db = open_db(tmp_path / "k.db")
    result, term = run(db, lines)
    assert "Quit: save this answer as 3 good? Enter saves it · 1-4 another rating · " in term.text
    assert [r["rating"] for r in reviews(db)] == stored
    assert result.ended_by == ended_by
    assert ("Not saved." in term.text) == (stored == [])
