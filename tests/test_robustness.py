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


# --------------------------------------------------------------------------- 3. bank bounds


def write_bank(folder: Path, param: str, prompt: str = "How much is {a}?", more: str = "") -> str:
    """A one-question bank with param `a` on line 8; returns its name (relative to folder)."""
    (folder / "evil.yaml").write_text(
        "deck: evil\n"
        "questions:\n"
        "  - id: fx-evil\n"
        "    kind: numeric\n"
        "    topic: evil-only\n"
        f'    prompt: "{prompt}"\n'
        "    params:\n"
        f"      a: {param}\n"
        "    answer: a\n"
        "    unit: count\n"
        "    solution:\n"
        '      - "It is {a}."\n' + more,
        encoding="utf-8",
    )
    return "evil.yaml"


BOUNDS = [
    ("{range: [1, 1e19]}", "params.a.range[1]: 1e19 is too large: a param is at most 1e15 in size"),
    (
        "{range: [1, 1e308]}",
        "params.a.range[1]: 1e308 is too large: a param is at most 1e15 in size",
    ),
    (
        "{range: [-1e16, 1]}",
        "params.a.range[0]: -1e16 is too large: a param is at most 1e15 in size",
    ),
    ("{range: [1, .inf]}", "params.a.range[1]: inf is not a finite number"),
    ("{range: [.nan, 1]}", "params.a.range[0]: nan is not a finite number"),
    ("{range: [1, 2], step: .nan}", "params.a.step: nan is not a finite number"),
    (
        "{range: [1, 2], step: 1e-300}",
        "params.a: range [1, 2] in steps of 1e-300 holds more than 1,000,000 values; "
        "use a larger step",
    ),
    (
        "{range: [0, 1000000]}",
        "params.a: range [0, 1e+06] in steps of 1 holds more than 1,000,000 values; "
        "use a larger step",
    ),
    ("{choices: [2, .inf]}", "params.a.choices: the choice inf is not a finite number"),
    (
        "{choices: [20000000000000000000]}",
        "params.a.choices: the choice 2e19 is too large: a param is at most 1e15 in size",
    ),
]


@pytest.mark.parametrize(("param", "message"), BOUNDS)
def test_bank_lint_refuses_params_beyond_the_bounds(tmp_path, monkeypatch, param, message):
    monkeypatch.chdir(tmp_path)
    result = run("bank", "lint", write_bank(tmp_path, param))
    assert result.exit_code == 1
    assert result.stdout == f"evil.yaml:8: fx-evil: {message}\n"
    assert result.stderr.endswith("1 problem in 1 file\n")  # the summary


@pytest.mark.parametrize(("param", "message"), BOUNDS[:3])
def test_ask_and_quiz_refuse_a_bank_beyond_the_bounds(tmp_path, monkeypatch, param, message):
    monkeypatch.chdir(tmp_path)
    name = write_bank(tmp_path, param)
    asked = run("ask", "fx-evil", "--seed", "1", "--bank", name)
    assert (asked.exit_code, asked.stdout) == (1, "")
    assert asked.stderr == f"Error: evil.yaml:8: fx-evil: {message}\n"
    quizzed = run("quiz", "--db", "k.db", "--bank", name, "--topic", "evil-only", input="1\n\n")
    assert (quizzed.exit_code, quizzed.stderr) == (1, asked.stderr)


def test_bank_lint_refuses_an_integer_of_4400_digits(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("bank", "lint", write_bank(tmp_path, "{choices: [1" + "0" * 4400 + "]}"))
    assert result.exit_code == 1
    assert result.stdout == (
        "evil.yaml:8: YAML syntax error: an integer of 4,401 digits is too long (at most 100)\n"
    )


@pytest.mark.parametrize(
    ("prompt", "more", "line", "message"),
    [
        (
            "How much is {a:>100000000}?", "", 6,
            "prompt: {a:>100000000}: '>100000000' is wider than 40 characters",
        ),
        ("How much is {a:.500f}?", "", 6, "prompt: {a:.500f}: '.500f' asks for more than 20 digits"),
        ("How much is {a:,.21f}?", "", 6, "prompt: {a:,.21f}: ',.21f' asks for more than 20 digits"),
        (
            "How much is {a}?", '      - "{a:x^41}"\n', 13,
            "solution[1]: {a:x^41}: 'x^41' is wider than 40 characters",
        ),
        (
            "How much is {a}?", '    hint: "{a:099999999999999999999}"\n', 13,
            "hint: {a:099999999999999999999}: '099999999999999999999' is wider than 40 characters",
        ),
    ],
)  # fmt: skip
def test_bank_lint_refuses_huge_number_formats(tmp_path, monkeypatch, prompt, more, line, message):
    monkeypatch.chdir(tmp_path)
    result = run("bank", "lint", write_bank(tmp_path, "{choices: [3]}", prompt, more))
    assert result.exit_code == 1
    assert result.stdout == f"evil.yaml:{line}: fx-evil: {message}\n"


def test_rendering_refuses_a_huge_width_even_without_the_schema():
    from drill.errors import BankError
    from drill.render import format_value, render

    with pytest.raises(BankError, match=r"^'>100000000' is wider than 40 characters$"):
        format_value(3, ">100000000")
    assert render("{a:>40}|", {"a": 3}) == " " * 39 + "3|"


@pytest.mark.parametrize(
    ("tolerance", "message"),
    [
        ("{sig: -1000000}", "tolerance sig must be 1 to 15 figures, not -1000000"),
        ("{sig: 0}", "tolerance sig must be 1 to 15 figures, not 0"),
        ("{rel: .nan}", "tolerance rel must be a finite number >= 0, not nan"),
        ("{abs: -1}", "tolerance abs must be a finite number >= 0, not -1.0"),
    ],
)
def test_bank_lint_refuses_tolerances_the_grader_cannot_use(
    tmp_path, monkeypatch, tolerance, message
):
    monkeypatch.chdir(tmp_path)
    result = run(
        "bank", "lint", write_bank(tmp_path, "{choices: [3]}", more=f"    tolerance: {tolerance}\n")
    )
    assert result.exit_code == 1
    assert result.stdout == f"evil.yaml:13: fx-evil: tolerance: {message}\n"


def test_an_answer_beyond_64_bits_is_stored_as_a_float(tmp_path, monkeypatch):
    import sqlite3

    monkeypatch.chdir(tmp_path)
    name = write_bank(tmp_path, "{choices: [1000000000000000]}", "What is {a} cubed?")
    text = (tmp_path / name).read_text(encoding="utf-8").replace("answer: a\n", "answer: a**3\n")
    (tmp_path / name).write_text(text, encoding="utf-8")
    assert run("bank", "lint", name).exit_code == 0
    result = run(
        "quiz", "--db", "k.db", "--bank", name, "--topic", "evil-only", *NOW, input="1e45\n\n"
    )
    assert result.exit_code == 0
    assert "> Right: 1e45.\n" in result.stdout
    conn = sqlite3.connect(tmp_path / "k.db")
    assert conn.execute("select answer, expected from reviews").fetchall() == [("1e45", 1e45)]
    conn.close()


# --------------------------------------------------------------------------- 4, 5. JSON in


def write_config(folder: Path, text: str) -> str:
    (folder / "config.json").write_text(text, encoding="utf-8")
    return "config.json"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested more than 64 levels deep"),
        ('{"a": ' * 65 + "1" + "}" * 65, "nested more than 64 levels deep"),
        ('{"num_hidden_layers": 1' + "0" * 4400 + "}", "a number has more than 4,300 digits"),
        ('{"num_hidden_layers": NaN}', "NaN is not a number JSON allows"),
        ('{"num_hidden_layers": -Infinity}', "-Infinity is not a number JSON allows"),
        ('{"num_hidden_layers": 1e999}', "the number 1e999 is too large"),
        ('{"num_hidden_layers": ', "line 1, column 23: Expecting value"),
    ],
)
def test_kv_refuses_a_config_it_cannot_read(tmp_path, monkeypatch, text, reason):
    monkeypatch.chdir(tmp_path)
    result = run("kv", "--config", write_config(tmp_path, text), "--seq", "1")
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == f"Error: config.json is not valid JSON ({reason})\n"


def test_kv_reads_a_config_nested_64_deep(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    fields = '"num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 256'
    text = "{" + fields + ', "deep": ' + "[" * 63 + "]" * 63 + "}"
    result = run("kv", "--config", write_config(tmp_path, text), "--seq", "1", "--dtype", "fp16")
    assert result.exit_code == 0
    assert "total        2,048 bytes (2 KiB = 2.05 kB) for 1 request" in result.stdout


def test_kv_refuses_a_config_over_4_mib_without_reading_it_all(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_config(tmp_path, " " * (4 * 1024 * 1024 + 1) + "{}")
    result = run("kv", "--config", "config.json", "--seq", "1")
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == "Error: config.json is larger than 4 MiB; a config.json is a few KiB\n"


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_kv_refuses_dev_zero_as_a_config():
    result = run("kv", "--config", "/dev/zero", "--seq", "1")
    assert result.exit_code == 1
    assert result.stderr == "Error: /dev/zero is larger than 4 MiB; a config.json is a few KiB\n"


@pytest.mark.parametrize(
    ("digits", "message"),
    [
        ("1" + "0" * 4400, "--seq has 4,401 digits: absurdly large (the limit is 2,147,483,648)"),
        (
            "-1" + "0" * 4400,
            "--seq must be at least 1, got '-100000000000000000000000000000000000...'",
        ),
        ("0" * 50 + "4096", None),
    ],
)
def test_kv_reads_or_refuses_counts_of_thousands_of_digits(digits, message):
    result = run(
        "kv", "--layers", "32", "--kv-heads", "8", "--head-dim", "128", "--seq", digits, "--json"
    )
    if message is None:
        assert result.exit_code == 0
        assert '"total_bytes": 536870912' in result.stdout
    else:
        assert (result.exit_code, result.stderr) == (1, f"Error: {message}\n")
