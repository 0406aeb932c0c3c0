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
from drill.kinds.grade import grade

BANK_QUIZ = Path(__file__).parent / "banks_quiz"
NOW = ["--now", "2026-11-02T08:00:00+00:00", "--tick", "20", "--no-fuzz", "--seed", "1"]


def run(*args: str, input: str | bytes | None = None):
    result = CliRunner().invoke(cli, list(args), input=input)
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


# --------------------------------------------------------------------------- 1. the grader


GIVE = "Give the unit: the answer is in MiB. A bare"


@pytest.mark.parametrize(
    ("answer", "feedback"),
    [
        ("1e308", f"{GIVE} 1e308 is not the answer in MiB or bytes."),
        ("1e303", f"{GIVE} 1e303 is not the answer in MiB or bytes."),
        ("1e-320", f"{GIVE} 9.99989e-321 is not the answer in MiB or bytes."),
        ("5e-324", f"{GIVE} 4.94066e-324 is not the answer in MiB or bytes."),
        ("-1e308", f"{GIVE} -1e308 is not the answer in MiB or bytes."),
        ("0", f"{GIVE} 0 is not the answer in MiB or bytes."),
        ("2**1000", f"{GIVE} 1.07151e301 is not the answer in MiB or bytes."),
        ("1e308 %", "The answer is a size in bytes (512 MiB), not a fraction or percentage."),
    ],
)
def test_check_grades_extreme_numbers(answer, feedback):
    result = run("check", "kv-bytes-per-request", "--seed", "2230", "--answer", answer)
    assert result.exit_code == 0
    assert result.stdout.splitlines()[:2] == [
        "Wrong. Answer: 512 MiB (536,870,912 bytes).",
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
    assert (
        "Wrong. Answer: 2 MiB (2,097,152 bytes).\n"
        "Give the unit: the answer is in MiB. A bare 1e303 is not the answer in MiB or bytes.\n"
    ) in result.stdout
    # the wrong answer's card comes back within the session; end of input ends it there
    assert "1 answered: 0 right, 1 wrong; 1 min." in result.stdout


@cache
def _builtin_instances():
    """Two draws of every built-in question, numeric ones first."""
    from drill.bank.loader import load_default_bank
    from drill.kinds import make_instance

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
    assert verdict.rating in (1, 2, 3, 4) or (verdict.rating is None and verdict.status == "self")
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
    result = quiz(db, b"s\n\xff\xfe x weights\n\n\nq\n", "--max", "2")
    assert result.exit_code == 0
    assert "  [x] 1. every step reads all the weights\n" in result.stdout
    # one key point of two covered: Again suggested, and taken with Enter; with nothing
    # else left the card comes back at once (learn-ahead), and q ends the session there
    assert "1 answered: 1 right, 0 wrong, 1 skipped; 1 min 40 s." in result.stdout  # Hard
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

    from drill.commands.terminal import read_input_line

    stream = io.StringIO("a\udcff b\n" + "x" * 70_000 + "\nlast")
    assert read_input_line(stream) == "a\ufffd b\n"
    assert read_input_line(stream) == "x" * 65_536
    assert read_input_line(stream) == "last"
    assert read_input_line(stream) is None


def test_a_session_never_stores_a_lone_surrogate(tmp_path):
    from drill.bank.loader import load_bank
    from drill.storage.database import open_db
    from drill.study.session import run_session
    from drill.study.session_io import SessionIO, SessionOptions

    lines = iter(["s", "\udcff weights", "", "", "q"])
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
    from drill.quantities.render import format_value, render

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


# --------------------------------------------------------------------------- 5, 7. import

REVIEW = (
    '{"id": "0b9f7c1e-3c43-4f1e-9a53-6d0c6b8f7a1%s", "question_id": "kv-bytes-per-token", '
    '"reviewed_at": "%s", "rating": %d%s}\n'
)


def review_line(n: int = 0, at: str = "2026-11-02T08:00:00+00:00", rating: int = 3, more=""):
    return REVIEW % (n, at, rating, more)


def import_file(folder: Path, name: str, data: str | bytes):
    path = folder / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return run("import", name, "--db", "k.db")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            review_line(more=', "question_id2": 1')[:-2] + "}\n",
            "h.jsonl:1: unknown field 'question_id2'",
        ),
        ("[" * 100_000 + "]" * 100_000 + "\n", "h.jsonl:1: not valid JSON (nested more than 64 levels deep)"),
        (
            review_line(more=', "params": ' + '{"a": ' * 70 + "1" + "}" * 70),
            "h.jsonl:1: not valid JSON (nested more than 64 levels deep)",
        ),
        (
            review_line(more=', "seed": 1' + "0" * 4400),
            "h.jsonl:1: not valid JSON (a number has more than 4,300 digits)",
        ),
        (review_line(more=', "expected": NaN'), "h.jsonl:1: not valid JSON (NaN is not a number JSON allows)"),
        (
            review_line().replace("kv-bytes-per-token", "kv\\ud800"),
            "h.jsonl:1: question_id holds a lone surrogate ('\\ud800') at character 3",
        ),
        (
            review_line().replace("kv-bytes-per-token", "kv\\u001b[31m"),
            "h.jsonl:1: question_id holds a control character ('\\x1b') at character 3",
        ),
        (
            review_line(more=', "answer": "a\\udfffb"'),
            "h.jsonl:1: answer holds a lone surrogate ('\\udfff') at character 2",
        ),
        (
            review_line(more=', "params": {"a": "\\ud800"}'),
            "h.jsonl:1: params holds a lone surrogate ('\\ud800')",
        ),
        (
            review_line(at="9999-12-31T00:00:00+00:00"),
            "h.jsonl:1: reviewed_at is in the year 9999; times must lie in 1970 to 9000",
        ),
        (
            review_line(at="0001-01-01T00:00:00"),
            "h.jsonl:1: reviewed_at is in the year 1; times must lie in 1970 to 9000",
        ),
        (
            review_line(at="9000-12-31T23:00:00-05:00"),
            "h.jsonl:1: reviewed_at is in the year 9001; times must lie in 1970 to 9000",
        ),
        (
            review_line(more=', "answer": "' + "x" * 10_001 + '"'),
            "h.jsonl:1: answer is 10,001 characters long; at most 10,000 are kept",
        ),
        (
            review_line(more=', "session_id": "' + "s" * 1_001 + '"'),
            "h.jsonl:1: session_id is 1,001 characters long; at most 1,000 are kept",
        ),
        (
            review_line() + '{"x": "' + "y" * (1024 * 1024) + '"}\n',
            "h.jsonl:2: the line is longer than 1 MiB",
        ),
        (
            review_line(0) + review_line(1) + review_line(2) + review_line(1)
            + review_line(2, rating=1) + review_line(0, rating=4),
            "h.jsonl:5: review id 0b9f7c1e-3c43-4f1e-9a53-6d0c6b8f7a12 also on line 3 "
            "with different content",
        ),
    ],
)  # fmt: skip
def test_import_refuses_with_file_and_line(tmp_path, monkeypatch, data, message):
    monkeypatch.chdir(tmp_path)
    result = import_file(tmp_path, "h.jsonl", data)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == f"Error: {message}\n"


def test_import_reads_a_record_repeated_exactly_once(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = import_file(tmp_path, "h.jsonl", review_line(0) + review_line(1) + review_line(0))
    assert result.exit_code == 0
    assert result.stdout == (
        "Imported 2 new reviews from h.jsonl (0 already present); rebuilt 1 cards.\n"
    )


def test_import_refuses_a_csv_line_over_1_mib(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    header = "id,question_id,reviewed_at,rating,answer\n"
    row = "0b9f7c1e-3c43-4f1e-9a53-6d0c6b8f7a10,q,2026-11-02T08:00:00+00:00,3,"
    result = import_file(tmp_path, "h.csv", header + row + "x" * (1024 * 1024) + "\n")
    assert (result.exit_code, result.stderr) == (
        1,
        "Error: h.csv:2: the line is longer than 1 MiB\n",
    )


def test_import_refuses_csv_params_nested_too_deep(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    header = "id,question_id,reviewed_at,rating,params\n"
    row = '0b9f7c1e-3c43-4f1e-9a53-6d0c6b8f7a10,q,2026-11-02T08:00:00+00:00,3,"'
    params = "[" * 20_000 + "]" * 20_000
    result = import_file(tmp_path, "h.csv", header + row + params + '"\n')
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: h.csv:2: params must be a JSON object (nested more than 64 levels deep)\n"
    )


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_import_refuses_dev_zero_after_one_bounded_read(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("import", "/dev/zero", "--db", "k.db")
    assert (result.exit_code, result.stderr) == (
        1,
        "Error: /dev/zero:1: the line is longer than 1 MiB\n",
    )


def test_import_help_states_the_limits():
    result = run("import", "-h")
    assert (
        "  Import refuses, naming FILE:LINE: a line longer than 1 MiB; JSON nested more\n"
        "  than 64 levels deep, or holding NaN or Infinity; an answer longer than 10,000\n"
    ) in result.stdout


def test_a_quiz_answer_is_stored_up_to_10000_characters(tmp_path):
    db = tmp_path / "k.db"
    result = quiz(db, b"s\n" + b"weights " * 2000 + b"\n\n\nq\n", "--max", "2")
    assert result.exit_code == 0
    (answer,) = stored_answers(db)
    assert answer == ("weights " * 2000)[:10_000]


# --------------------------------------------------------------------------- 6. flags


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--retention", "nan"], "Invalid value for '--retention': 'nan' is not a number"),
        (["--tick", "nan"], "Invalid value for '--tick': 'nan' is not a number"),
        (["--tick", "1e300"], "Invalid value for '--tick': 1e+300 is not in the range 0<=x<=86400"),
        (["--tick", "inf"], "Invalid value for '--tick': inf is not in the range 0<=x<=86400"),
        (
            ["--now", "0001-01-01"],
            "Invalid value for --now: '0001-01-01' is in the year 1; times must lie in 1970 to 9000",
        ),
        (
            ["--now", "9999-12-31T12:00:00"],
            "Invalid value for --now: '9999-12-31T12:00:00' is in the year 9999; "
            "times must lie in 1970 to 9000",
        ),
    ],
)
def test_quiz_refuses_flags_it_cannot_count_with(tmp_path, option, message):
    result = run("quiz", "--db", str(tmp_path / "k.db"), "--max", "1", *option, input="q\n")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.startswith(f"Error: {message}")
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize("now", ["0001-01-01", "9999-12-31"])
def test_stats_refuses_a_now_at_the_ends_of_the_calendar(tmp_path, now):
    result = run("stats", "--db", str(tmp_path / "k.db"), "--now", now)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: Invalid value for --now: '{now}' is in the year ")
    assert result.stderr.count("\n") == 1


# --------------------------------------------------------------------------- 8. sheets

HTML_BANK = """\
deck: evil
questions:
  - id: fx-html-choice
    kind: choice
    topic: evil-only
    prompt: "Which tag runs <script>alert(1)</script> & friends?"
    options:
      - text: "<img src=x onerror=alert(1)>"
        correct: true
        why: "It <b>runs</b>"
      - text: "plain > text"
  - id: fx-html-concept
    kind: concept
    topic: evil-only
    prompt: "Explain <iframe src=javascript:alert(1)>"
    answer: "Because <svg onload=alert(1)> is markup."
    key_points:
      - point: "<a href=x>points</a>"
        cues: [markup]
"""


def test_markdown_sheet_and_key_show_bank_html_as_text(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evil.yaml").write_text(HTML_BANK, encoding="utf-8")
    args = ["sheet", "--bank", "evil.yaml", "--topic", "evil-only", "-n", "2", "--seed", "1"]
    result = run(*args, "-o", "s.md")
    assert result.exit_code == 0
    assert (tmp_path / "s.md").read_text(encoding="utf-8") == (
        "# kvdrill mock interview\n\n"
        "Sheet 1 · 2 questions. Give every number with its unit and show your working.\n\n"
        "## Part 1. Explain\n\n"
        "### 1. evil-only · difficulty 2/3\n\n"
        "Explain &lt;iframe src=javascript:alert(1)&gt;\n\n"
        "Answer: ________________________________________\n\n"
        "## Part 2. Multiple choice\n\n"
        "### 2. evil-only · difficulty 2/3\n\n"
        "Which tag runs &lt;script&gt;alert(1)&lt;/script&gt; &amp; friends?\n\n"
        "- A. plain &gt; text\n"
        "- B. &lt;img src=x onerror=alert(1)&gt;\n\n"
        "*Choose every option that is right.*\n\n"
        "Answer: ________________________________________\n"
    )
    key = (tmp_path / "s.key.md").read_text(encoding="utf-8")
    assert "**Answer:** Because &lt;svg onload=alert(1)&gt; is markup.\n" in key
    assert "- &lt;a href=x&gt;points&lt;/a&gt;\n" in key
    assert "- B (right): &lt;img src=x onerror=alert(1)&gt; — It &lt;b&gt;runs&lt;/b&gt;\n" in key
    assert "<" not in key and ">" not in key


# --------------------------------------------------------------------------- 9. terminal

ESC_BANK = r"""deck: evil
questions:
  - id: fx-esc-num
    kind: numeric
    topic: evil-only
    tags: ["\e]0;pwned\a", "x"]
    prompt: "How much is {a}?\e]0;title\a\x9b2J\r"
    params:
      a: {choices: [3]}
    answer: a
    unit: count
    solution:
      - "It is \e]8;;http://evil\e\\{a}\e]8;;\e\\."
    hint: "Count \x07\x7fit."
    misconceptions:
      - id: forgot-kv-factor
        expr: a * 2
        feedback: "Twice\ec over."
  - id: fx-esc-concept
    kind: concept
    topic: evil-only
    prompt: "Explain\e]0;t\a this."
    answer: "Because\x9b31m so."
    key_points:
      - point: "\e]2;x\apoint"
        cues: [point]
"""

_CONTROLS = set(map(chr, [*range(0, 9), *range(11, 32), *range(127, 160)]))


def esc_bank(folder: Path) -> str:
    (folder / "evil.yaml").write_text(ESC_BANK, encoding="utf-8")
    return "evil.yaml"


def assert_printable(text: str) -> None:
    assert not _CONTROLS & set(text), sorted(_CONTROLS & set(text))


def test_ask_and_check_print_no_control_characters_from_a_bank(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = esc_bank(tmp_path)
    asked = run("ask", "fx-esc-num", "--seed", "1", "--bank", name)
    assert asked.exit_code == 0
    assert asked.stdout.splitlines()[2] == "How much is 3?"
    checked = run("check", "fx-esc-num", "--seed", "1", "--answer", "6", "--bank", name)
    assert checked.stdout == (
        "Wrong. Answer: 3.\n"
        "Mistake: forgot the K+V factor of 2.\n"
        "Twice over. You gave 6; the answer is 3.\n"
        "Solution:\n"
        "  It is 3.\n"
    )
    concept = run("check", "fx-esc-concept", "--seed", "1", "--answer", "a point", "--bank", name)
    assert "  Because so.\n" in concept.stdout
    for result in (asked, checked, concept):
        assert_printable(result.output)


def test_ask_json_escapes_del_and_c1_controls(tmp_path, monkeypatch):
    import json

    monkeypatch.chdir(tmp_path)
    result = run("ask", "fx-esc-num", "--seed", "1", "--bank", esc_bank(tmp_path), "--json")
    assert_printable(result.stdout)
    assert json.loads(result.stdout)["text"] == "How much is 3?\x1b]0;title\x07\x9b2J\r"


def test_quiz_prints_no_control_characters_from_a_bank(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["quiz", "--db", "k.db", "--bank", esc_bank(tmp_path), "--topic", "evil-only"]
    result = run(*args, *NOW, input="h\n6\n\npoint\n\n")
    assert result.exit_code == 0
    assert (
        "\nHow much is 3?\n> Hint 1 of 3: Count it.\n> Wrong. Answer: 3.\n"
        "Mistake: forgot the K+V factor of 2.\n"
        in (result.stdout)
    )
    assert "  [x] 1. point\n" in result.stdout
    assert_printable(result.output)


def test_bank_list_and_lint_print_no_control_characters(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = esc_bank(tmp_path)
    listed = run("bank", "list", "--bank", name, "--topic", "evil-only")
    assert listed.stdout.splitlines()[1].split()[-1] == "x"
    assert_printable(listed.output)
    (tmp_path / "bad.yaml").write_text(
        "deck: bad\nquestions:\n  - id: fx-bad\n    kind: concept\n    topic: tt\n"
        '    prompt: "?"\n    answer: "."\n    key_points: [{point: p, cues: [c]}]\n'
        '    "\\e]0;pwned\\a": 1\n',
        encoding="utf-8",
    )
    linted = run("bank", "lint", "bad.yaml")
    assert linted.stdout == "bad.yaml:9: fx-bad: unknown field ''\n"
    assert_printable(linted.output)


def test_a_sheet_on_standard_output_has_no_control_characters(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["--bank", esc_bank(tmp_path), "--topic", "evil-only", "-n", "2", "--seed", "1"]
    for fmt in ("md", "html"):
        result = run("sheet", *args, "--format", fmt)
        assert result.exit_code == 0
        assert "How much is 3?" in result.stdout
        assert_printable(result.output)


def test_printable_strips_escape_sequences_and_controls():
    from drill.text import printable

    assert printable("a\x1b[31mred\x1b[0m b") == "ared b"
    assert printable("x\x1b]0;title\x07y\x1b]8;;u\x1b\\z") == "xyz"
    assert printable("c1\x9b2Jz\x1bcq") == "c1zq"
    assert printable("tab\there\nnl\r\x7f\x00") == "tab\there\nnl"
    assert printable("q\ud800r é 中") == "q\ufffdr é 中"
    # bidirectional overrides and isolates would print text in another order than it reads
    assert printable("use \u202egnp.exe\u202c and \u2067x\u2069 עברית") == "use gnp.exe and x עברית"


# --------------------------------------------------------------------------- more limits


def test_a_sliding_window_pattern_over_two_billion_layers_is_counted_at_once(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = (
        '{"num_hidden_layers": 2000000000, "num_attention_heads": 4, "hidden_size": 256, '
        '"sliding_window": 10, "sliding_window_pattern": 3}'
    )
    result = run(
        "kv", "--config", write_config(tmp_path, text), "--seq", "100", "--dtype", "fp16", "--json"
    )
    assert result.exit_code == 0
    assert '"total_bytes": 81919999938560' in result.stdout


def test_bank_files_over_16_mib_are_refused_unread(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "big.yaml").write_bytes(b"#" * (16 * 1024 * 1024 + 1))
    result = run("bank", "lint", "big.yaml")
    assert (result.exit_code, result.stdout) == (1, "big.yaml:1: bank file is larger than 16 MiB\n")


def test_deeply_nested_yaml_is_a_problem_with_its_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "deep.yaml").write_text(
        "deck: x\nquestions: " + "[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8"
    )
    result = run("bank", "lint", "deep.yaml")
    assert result.exit_code == 1
    assert result.stdout == (
        "deep.yaml:2: YAML syntax error: exceeded maximum nesting depth "
        "(while increasing flow level)\n"
    )


@pytest.mark.parametrize("digits", [5000, 30])
def test_import_refuses_a_csv_seed_too_long_for_64_bits(tmp_path, monkeypatch, digits):
    monkeypatch.chdir(tmp_path)
    header = "id,question_id,reviewed_at,rating,seed\n"
    row = "0b9f7c1e-3c43-4f1e-9a53-6d0c6b8f7a10,q,2026-11-02T08:00:00+00:00,3,1" + "0" * digits
    result = import_file(tmp_path, "h.csv", header + row + "\n")
    shown = "'1" + "0" * 55 + "..." if digits > 50 else "1" + "0" * digits
    assert result.stderr == f"Error: h.csv:2: seed does not fit in 64 bits: {shown}\n"


def test_a_sheet_refuses_a_bank_beyond_the_bounds(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = write_bank(tmp_path, "{range: [1, 1e19]}")
    result = run("sheet", "--bank", name, "--topic", "evil-only", "--seed", "1")
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (
        "Error: evil.yaml:8: fx-evil: params.a.range[1]: "
        "1e19 is too large: a param is at most 1e15 in size\n"
    )


@pytest.mark.parametrize("value", [10**15, 1e15, 2**70])
def test_a_character_format_of_a_large_number_is_a_bank_error(value):
    # format(10**15, "c") raises OverflowError, which escaped as an internal error
    from drill.errors import BankError
    from drill.quantities.render import format_value

    with pytest.raises(BankError, match=r"^'c' is neither a unit nor a number format for "):
        format_value(value, "c")
