"""Nothing lost, nothing crashes: hostile answers, files and flags end in a clear message.

Every case here once ended in a traceback (or ran away with time or memory). Each now
gives a verdict, a one-line `Error: ...` with a non-zero exit, or, in the quiz, a message
and the same question again.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone
from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from drill.cli import cli
from drill.errors import AnswerError
from drill.grade import grade

BANK_QUIZ = Path(__file__).parent / "banks_quiz"
NOW = ["--now", "2026-11-02T08:00:00+00:00", "--tick", "20", "--no-fuzz", "--seed", "1"]


def run(*args: str, input: str | bytes | None = None):
    result = CliRunner().invoke(cli, list(args), input=input)
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


# --------------------------------------------------------------------------- 1. the grader


@pytest.mark.parametrize(
    ("answer", "feedback"),
    [
        ("1e308", "You gave 1e308; the answer is 512 MiB. Give the unit too."),
        ("1e303", "You gave 1e303; the answer is 512 MiB. Give the unit too."),
        ("1e-320", "You gave 9.99989e-321; the answer is 512 MiB. Give the unit too."),
        ("5e-324", "You gave 4.94066e-324; the answer is 512 MiB. Give the unit too."),
        ("-1e308", "You gave -1e308; the answer is 512 MiB. Give the unit too."),
        ("0", "You gave 0; the answer is 512 MiB. Give the unit too."),
        ("2**1000", "You gave 1.07151e301; the answer is 512 MiB. Give the unit too."),
        ("1e308 %", "The answer is a size in bytes (512 MiB), not a fraction or percentage."),
    ],
)
def test_check_grades_extreme_numbers(answer, feedback):
    result = run("check", "kv-bytes-per-request", "--seed", "2230", "--answer", answer)
    assert result.exit_code == 0
    assert result.stdout.splitlines()[:3] == [
        "Not quite.",
        "Answer: 512 MiB (536,870,912 bytes)",
        feedback,
    ]


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("inf", "there is no number in it"),
        ("nan", "there is no number in it"),
        ("1e309", "the result is not a finite number (overflow or inf/nan)"),
        ("1e308*10", "the result is not a finite number (overflow or inf/nan)"),
        ("2**5000", "the number is too large to work with"),
    ],
)
def test_check_refuses_numbers_it_cannot_hold(answer, reason):
    result = run("check", "kv-bytes-per-request", "--seed", "2230", "--answer", answer)
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: cannot read {answer!r}: {reason}; "
        "try 0.5 GiB, 536,870,912, 2*32*8*128*4096*2 or 75%\n"
    )


def test_quiz_grades_an_overflowing_answer_and_goes_on(tmp_path):
    db = tmp_path / "k.db"
    args = ["quiz", "--db", str(db), "--bank", str(BANK_QUIZ), "--topic", "quiz-fixture"]
    result = run(*args, *NOW, "--max", "1", input="1e303\n\n")
    assert result.exit_code == 0
    assert "Wrong.\nYou gave 1e303; the answer is 2 MiB. Give the unit too.\n" in result.stdout
    assert "1 answered: 0 right, 1 wrong; 40 s." in result.stdout


@cache
def _builtin_instances():
    """Two draws of every built-in question, numeric ones first."""
    from drill.bank import load_default_bank
    from drill.instance import make_instance

    questions = sorted(load_default_bank(cached=False), key=lambda q: q.kind != "numeric")
    return [make_instance(q, seed) for q in questions for seed in (0, 1)]


_UNITS = ["", " GiB", " GB", "GiB", " MiB", " KiB", " B", " bytes", " Gb", " bits", " %",
          " ms", " us", " s", " ns", " h", " TB/s", " GB/s", " Gbps", " TFLOPS", " TFLOP",
          " PFLOP/s", " FLOP/B", " tokens", " tokens/s", " requests", "x", " per request"]  # fmt: skip
_FLOAT_TEXT = st.builds(
    lambda x, form, unit: format(x, form) + unit,
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["", "g", "e", ".3e", "f", ",", "_"]),
    st.sampled_from(_UNITS),
)
_EXPR_TEXT = st.builds(
    lambda a, op, b, unit: f"{a}{op}{b}{unit}",
    st.sampled_from(["1e308", "2", "10", "1e-320", "-1e308", "0", "9**9", "2**1000", "1e15"]),
    st.sampled_from(["*", "/", "**", "+", "-", "//", "%", " x 10^"]),
    st.sampled_from(["1e308", "10", "0", "-3", "1000", "0.5", "1e-300", "307", "400"]),
    st.sampled_from(_UNITS),
)


@settings(max_examples=500, deadline=None)
@given(st.data(), st.one_of(st.text(max_size=80), _FLOAT_TEXT, _EXPR_TEXT))
def test_grading_any_text_gives_a_verdict(data, text):
    instance = data.draw(st.sampled_from(_builtin_instances()))
    try:
        verdict = grade(instance, text, duration_ms=1000)
    except AnswerError:
        return
    assert verdict.rating in (1, 2, 3, 4)
    assert verdict.value is None or math.isfinite(verdict.value)


# --------------------------------------------------------------------------- 2. typed input


def quiz(db: Path, data: bytes, *extra: str):
    args = ["quiz", "--db", str(db), "--bank", str(BANK_QUIZ), "--topic", "quiz-fixture"]
    return run(*args, *NOW, *extra, input=data)


def stored_answers(db: Path) -> list[str]:
    import sqlite3

    conn = sqlite3.connect(db)
    try:
        return [row[0] for row in conn.execute("select answer from reviews order by reviewed_at")]
    finally:
        conn.close()


def test_quiz_stores_a_concept_answer_that_is_not_utf8(tmp_path):
    db = tmp_path / "k.db"
    result = quiz(db, b"s\n\xff\xfe x weights\n\nq\n", "--max", "2")
    assert result.exit_code == 0
    assert "  [x] every step reads all the weights\n" in result.stdout
    assert "1 answered: 1 right, 0 wrong, 1 skipped; 1 min." in result.stdout
    assert stored_answers(db) == ["\ufffd\ufffd x weights"]


def test_quiz_asks_again_after_bytes_that_are_not_utf8(tmp_path):
    db = tmp_path / "k.db"
    result = quiz(db, b"\xff\xfe GiB\n2 MiB\n\n", "--max", "1")
    assert result.exit_code == 0
    assert (
        "> Cannot read '\ufffd\ufffd GiB': cannot read '\ufffd\ufffd' as arithmetic; "
        "try 0.5 GiB, 536,870,912, 2*32*8*128*4096*2 or 75%\n"
        "> Right: 2 MiB (2,097,152 bytes).\n"
    ) in result.stdout
    assert stored_answers(db) == ["2 MiB"]


def test_quiz_keeps_64_kib_of_an_over_long_line_and_asks_again(tmp_path):
    db = tmp_path / "k.db"
    result = quiz(db, b"7" * 100_000 + b"\n2 MiB\n\n", "--max", "1")
    assert result.exit_code == 0
    assert (
        "> That answer is too long (65,536 characters; at most 2,000); "
        "try 0.5 GiB, 536,870,912, 2*32*8*128*4096*2 or 75%\n"
        "> Right: 2 MiB (2,097,152 bytes).\n"
    ) in result.stdout


def test_input_lines_from_a_text_stream_lose_their_surrogates():
    import io

    from drill.commands.quiz import read_input_line

    stream = io.StringIO("a\udcff b\n" + "x" * 70_000 + "\nlast")
    assert read_input_line(stream) == "a\ufffd b\n"
    assert read_input_line(stream) == "x" * 65_536
    assert read_input_line(stream) == "last"
    assert read_input_line(stream) is None


def test_a_session_never_stores_a_lone_surrogate(tmp_path):
    from drill.bank import load_bank
    from drill.session import SessionIO, SessionOptions, run_session
    from drill.store import open_db

    lines = iter(["s", "\udcff weights", "", "q"])
    clock = datetime(2026, 11, 2, 8, tzinfo=timezone.utc)
    db = open_db(tmp_path / "k.db")
    bank = load_bank([BANK_QUIZ])
    io_ = SessionIO(lambda: next(lines, None), lambda text: None, lambda: clock)
    run_session(db, bank, SessionOptions(topic="quiz-fixture", seed=1, fuzz=False), io_)
    db.conn.close()
    assert stored_answers(tmp_path / "k.db") == ["\ufffd weights"]
