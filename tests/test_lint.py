"""`kvdrill bank lint PATH`: every problem as one line `file:line: id: message`, exit 1."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from drill.bank import builtin_bank_files, display_path, load_bank
from drill.cli import cli
from drill.instance import InstanceError, make_instance
from drill.lint import lint_bank

BANKS = Path(__file__).parent / "banks"


@pytest.fixture(autouse=True)
def in_banks(monkeypatch):
    """Run in tests/banks so that problems name the relative paths given."""
    monkeypatch.chdir(BANKS)


def lint(*args: str):
    result = CliRunner().invoke(cli, ["bank", "lint", *args])
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result


def test_yaml_syntax_error():
    result = lint("bad/syntax.yaml")
    assert result.exit_code == 1
    assert result.stdout == (
        "bad/syntax.yaml:6: YAML syntax error: found unexpected end of stream "
        "(while scanning a quoted scalar)\n"
    )
    assert result.stderr == "Error: 1 problem in 1 file\n"


def test_python_object_tag_is_refused_and_not_run(tmp_path):
    marker = tmp_path / "created-by-payload"
    evil = tmp_path / "evil.yaml"
    evil.write_text(
        "deck: evil\n"
        "questions:\n"
        "  - id: fx-evil\n"
        f"    kind: !!python/object/apply:os.system ['touch {marker}']\n",
        encoding="utf-8",
    )
    result = lint(str(evil))
    assert result.exit_code == 1
    assert result.stdout == (
        f"{evil}:4: YAML tag !!python/object/apply:os.system is not allowed; "
        "bank files hold plain data only\n"
    )
    assert not marker.exists()


def test_unknown_field():
    result = lint("bad/unknown_field.yaml")
    assert result.exit_code == 1
    assert result.stdout == (
        "bad/unknown_field.yaml:11: fx-unknown-field: unknown field 'answr' "
        "(did you mean 'answer'?)\n"
    )


def test_duplicate_ids_across_two_files():
    result = lint("bad/dup/a.yaml", "bad/dup/b.yaml")
    assert result.exit_code == 1
    assert result.stdout == (
        "bad/dup/b.yaml:10: fx-same-id: duplicate id; first defined at bad/dup/a.yaml:3\n"
    )
    assert result.stderr == "Error: 1 problem in 1 file\n"


def test_expression_with_unknown_name():
    result = lint("bad/unknown_name.yaml")
    assert result.exit_code == 1
    assert result.stdout == (
        "bad/unknown_name.yaml:10: fx-unknown-name: derived.per_layer: "
        "'head_dim' is not a param or derived value\n"
    )


def test_division_by_zero_on_some_draws():
    result = lint("bad/div_zero.yaml")
    assert result.exit_code == 1
    assert result.stdout == (
        "bad/div_zero.yaml:10: fx-div-zero: answer: on seed 3: division by zero\n"
    )
    # worked from the draw rule (random.Random seeded with the first 8 bytes of
    # sha256("fx-div-zero:SEED"), total drawn before parts): seeds 0 to 3 draw
    # (1024, 2), (4096, 3), (1024, 2), (4096, 0), so seed 3 is the first to fail
    question = load_bank([Path("bad/div_zero.yaml")]).get("fx-div-zero")
    with pytest.raises(InstanceError):
        make_instance(question, 3)
    assert [make_instance(question, seed).expected for seed in range(3)] == [512, 4096 / 3, 512]


def test_semantic_checks_each_name_their_field():
    result = lint("bad/lint_semantics.yaml")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "bad/lint_semantics.yaml:12: fx-misconception-hits: params.unused: "
        "is never used by the answer, derived or misconceptions",
        "bad/lint_semantics.yaml:16: fx-misconception-hits: solution[0]: "
        "unknown placeholder {missing}",
        "bad/lint_semantics.yaml:19: fx-misconception-hits: misconceptions[0].expr: "
        "'forgot-kv-factor' gives the right answer (1024) on seed 0",
        "bad/lint_semantics.yaml:20: fx-misconception-hits: misconceptions[1].id: "
        "'no-such-misconception' is not in the catalogue",
        "bad/lint_semantics.yaml:27: fx-hidden-param: params.n: is not shown in the prompt",
        "bad/lint_semantics.yaml:30: fx-hidden-param: solution[0]: "
        "'GiZ' is neither a unit symbol nor a number format",
        "bad/lint_semantics.yaml:37: fx-bad-evidence: evidence[1]: unknown evidence "
        "'decode_is_magic' (known: batch_amortizes_decode, cache_beats_recompute, "
        "decode_memory_bound, kv_formula_exact, prefill_compute_bound)",
        "bad/lint_semantics.yaml:43: fx-wrong-show-as: params.m.preset[1]: "
        "unknown model preset 'no-such-model'",
        "bad/lint_semantics.yaml:46: fx-wrong-show-as: show_as: "
        "'ms' measures seconds, but the answer is in bytes",
        "bad/lint_semantics.yaml:54: fx-twin-options: options[1]: "
        "'kv  heads' appears twice; the options cannot be told apart",
    ]
    assert result.stderr == "Error: 10 problems in 1 file\n"


def test_a_folder_lists_every_file_problem():
    result = lint("bad")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    # every file of the folder is reported, each problem on its own line
    files = {line.split(":", 1)[0] for line in lines}
    assert files == {
        "bad/dup/b.yaml",
        "bad/syntax.yaml",
        "bad/unknown_field.yaml",
        "bad/div_zero.yaml",
        "bad/lint_semantics.yaml",
        "bad/unknown_name.yaml",
    }
    assert len(lines) == 15
    assert result.stderr == "Error: 15 problems in 6 files\n"


def test_good_bank_passes_with_a_summary():
    result = lint("good")
    assert result.exit_code == 0, result.output
    assert result.stdout == "ok: 5 questions in 2 files, 2 numeric templates × 200 draws\n"


def test_draws_option():
    result = lint("good/worked_example.yaml", "--draws", "7")
    assert result.stdout == "ok: 1 questions in 1 file, 1 numeric templates × 7 draws\n"


def test_missing_path_is_one_line():
    result = lint("nowhere.yaml")
    assert result.exit_code == 1
    assert result.output == "Error: nowhere.yaml: no such bank file or folder\n"


def test_lint_bank_api_returns_structured_errors():
    bank = load_bank([Path("bad/unknown_name.yaml")])
    (error,) = lint_bank(bank, draws=5)
    assert (error.path, error.line, error.question_id) == (
        "bad/unknown_name.yaml",
        10,
        "fx-unknown-name",
    )
    assert error.message == "derived.per_layer: 'head_dim' is not a param or derived value"


def test_misconception_only_sometimes_right_is_caught(tmp_path):
    # equal to the answer only when factor == 1, one draw in four
    path = tmp_path / "some.yaml"
    path.write_text(
        """\
deck: some
questions:
  - id: fx-sometimes
    kind: numeric
    topic: kv-cache
    prompt: "{base} bytes, {factor}x. Total?"
    params:
      base: {choices: [100, 200]}
      factor: {range: [1, 4]}
    answer: base * factor
    unit: bytes
    solution: ["{answer}"]
    misconceptions:
      - id: forgot-kv-factor
        expr: base
""",
        encoding="utf-8",
    )
    (error,) = lint_bank(load_bank([path]), draws=50)
    assert error.line == 15
    assert error.message.startswith("misconceptions[0].expr: 'forgot-kv-factor' gives the right")


def test_ids_must_not_clash_with_the_builtin_deck(tmp_path):
    builtin = load_bank(builtin_bank_files())
    taken = builtin.ids[0]
    where, line = builtin.location(taken)
    path = tmp_path / "mine.yaml"
    path.write_text(
        f"""\
deck: mine
questions:
  - id: {taken}
    kind: concept
    topic: kv-cache
    prompt: Mine.
    answer: Mine.
    key_points: [{{point: mine, cues: [mine]}}]
""",
        encoding="utf-8",
    )
    result = lint(str(path))
    assert result.exit_code == 1
    assert result.stdout == (
        f"{path}:3: {taken}: id already used by the built-in deck at {display_path(where)}:{line}\n"
    )
    # linting the built-in files themselves is no clash (one draw each: the suite draws
    # the deck hard once, in test_deck_stress)
    assert lint("--draws", "1", *map(str, builtin_bank_files())).exit_code == 0
