"""Loading bank files: where each question and field is, and one-line errors naming file:line."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drill.bank.loader import (
    builtin_bank_files,
    default_bank_paths,
    expand_bank_paths,
    load_bank,
    read_bank,
)
from drill.bank.schema import ChoiceQuestion, NumericQuestion
from drill.bank.yaml_lines import LineLoader
from drill.errors import BankError

BANKS = Path(__file__).parent / "banks"


@pytest.fixture
def in_banks(monkeypatch):
    """Run in tests/banks, so problems show the short relative paths a user types."""
    monkeypatch.chdir(BANKS)


CONCEPT = """\
  - id: {qid}
    kind: concept
    topic: kv-cache
    prompt: What is cached?
    answer: Keys and values.
    key_points: [{{point: both, cues: [keys]}}]
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def deck(*ids: str, name: str = "test-deck") -> str:
    return f"deck: {name}\nquestions:\n" + "".join(CONCEPT.format(qid=i) for i in ids)


def error_of(paths) -> str:
    with pytest.raises(BankError) as info:
        load_bank(paths)
    return str(info.value)


def test_good_fixtures_load_in_file_order_with_lines():
    bank = load_bank([BANKS / "good"])
    # a folder's files come sorted by path: more/mixed.yml, then worked_example.yaml
    assert bank.ids == [
        "fx-concurrent",
        "fx-why-cache",
        "fx-which-heads",
        "fx-request-path",
        "fx-kv-request",
    ]
    assert [deck.name for deck in bank.decks] == ["fixture-mixed", "fixture-worked"]
    kv_request, which_heads = bank.source("fx-kv-request"), bank.source("fx-which-heads")
    assert (kv_request.path, kv_request.line) == (BANKS / "good" / "worked_example.yaml", 4)
    assert (which_heads.path, which_heads.line) == (BANKS / "good" / "more" / "mixed.yml", 27)
    assert isinstance(bank.get("fx-kv-request"), NumericQuestion)
    assert isinstance(bank.get("fx-which-heads"), ChoiceQuestion)
    assert bank.source("fx-concurrent").deck == "fixture-mixed"
    assert bank.decks[0].description == "One question of each kind, with drawn numbers."
    assert bank.decks[1].question_ids == ("fx-kv-request",)


def test_field_line_finds_nested_fields():
    bank = load_bank([BANKS / "good" / "worked_example.yaml"])
    assert bank.field_line("fx-kv-request", "answer") == 21
    assert bank.field_line("fx-kv-request", "derived", "per_token") == 20
    assert bank.field_line("fx-kv-request", "solution", 1) == 26
    assert bank.field_line("fx-kv-request", "misconceptions", 1, "feedback") == 33
    # a field that is absent points at the question itself
    assert bank.field_line("fx-kv-request", "explanation") == 4


def test_unknown_id_suggests_close_ones():
    bank = load_bank([BANKS / "good"])
    with pytest.raises(BankError) as info:
        bank.get("fx-kv-requets")
    assert str(info.value) == (
        "unknown question id 'fx-kv-requets'; did you mean fx-kv-request, fx-request-path?"
    )
    with pytest.raises(BankError) as info:
        bank.get("zzz")
    assert str(info.value) == "unknown question id 'zzz'; `kvdrill bank list` shows them all"


def test_yaml_syntax_error_names_the_line_where_the_quote_opens(in_banks):
    assert error_of([Path("bad/syntax.yaml")]) == (
        "bad/syntax.yaml:6: YAML syntax error: found unexpected end of stream "
        "(while scanning a quoted scalar)"
    )


def test_bad_indentation_is_reported_at_the_offending_line(tmp_path):
    path = write(
        tmp_path / "indent.yaml",
        "deck: ab\nquestions:\n  - id: x1\n    kind: concept\n   topic: b\n",
    )
    message = error_of([path])
    assert message.startswith(f"{path}:5: YAML syntax error: ")
    assert "\n" not in message


def test_python_tags_are_refused_and_nothing_runs(tmp_path):
    marker = tmp_path / "executed"
    path = write(
        tmp_path / "evil.yaml",
        f"deck: evil\nquestions:\n  - !!python/object/apply:os.system ['touch {marker}']\n",
    )
    assert error_of([path]) == (
        f"{path}:3: YAML tag !!python/object/apply:os.system is not allowed; "
        "bank files hold plain data only"
    )
    assert not marker.exists()


def test_python_name_tag_is_refused(tmp_path):
    path = write(tmp_path / "evil.yaml", "deck: evil\nquestions: !!python/name:os.system\n")
    assert error_of([path]) == (
        f"{path}:2: YAML tag !!python/name:os.system is not allowed; bank files hold plain data only"
    )


def test_duplicate_key_in_one_mapping_is_an_error(tmp_path):
    path = write(
        tmp_path / "d.yaml", deck("q-one").replace("topic: kv-cache", "topic: a1\n    topic: b2")
    )
    assert error_of([path]) == (
        f"{path}:6: YAML syntax error: duplicate key 'topic' (first at line 5)"
    )


def test_unknown_field_names_field_line_and_suggestion(in_banks):
    assert error_of([Path("bad/unknown_field.yaml")]) == (
        "bad/unknown_field.yaml:11: fx-unknown-field: unknown field 'answr' (did you mean 'answer'?)"
    )


def test_nested_field_errors_name_the_field_and_its_line(tmp_path):
    text = """\
deck: nested
questions:
  - id: q-nested
    kind: numeric
    topic: kv-cache
    prompt: "{n}"
    params:
      n: {range: [1, 4], stepp: 1}
      m: {rang: [1, 2]}
    answer: n
    unit: bytes
    solution: ["{n}"]
    tolerance: {rel: 0.1, abs: 2}
"""
    path = write(tmp_path / "n.yaml", text)
    _, problems = read_bank([path])
    assert [str(p) for p in problems] == [
        f"{path}:8: q-nested: unknown field 'params.n.stepp'",
        f"{path}:9: q-nested: params.m: a param needs one of the keys range, choices, preset, gpu or run",
        f"{path}:13: q-nested: tolerance: tolerance needs exactly one of rel, abs, sig",
    ]


def test_an_unknown_gpu_key_names_its_file_and_line(tmp_path):
    text = """\
deck: gpus
questions:
  - id: q-gpu
    kind: numeric
    topic: latency
    prompt: "{g}"
    params:
      g:
        gpu:
          - h100
          - h1000
      m: {gpu: []}
    answer: g_memory
    unit: bytes
    solution: ["{g}"]
"""
    path = write(tmp_path / "g.yaml", text)
    _, problems = read_bank([path])
    assert [str(p) for p in problems] == [
        f"{path}:11: q-gpu: params.g.gpu[1]: unknown GPU 'h1000'; did you mean h100, h200, "
        "h100-nvl?",
        f"{path}:12: q-gpu: params.m.gpu: List should have at least 1 item after validation, "
        "not 0",
    ]


def test_missing_fields_and_wrong_kind(tmp_path):
    text = (
        "deck: kinds\nquestions:\n  - id: q-a\n    topic: t1\n    prompt: p\n"
        "  - id: q-b\n    kind: essay\n    topic: t1\n    prompt: p\n"
        "  - kind: concept\n    topic: t1\n    prompt: p\n    answer: a\n"
        "    key_points: [{point: p, cues: [c]}]\n"
    )
    path = write(tmp_path / "k.yaml", text)
    _, problems = read_bank([path])
    assert [str(p) for p in problems] == [
        f"{path}:3: q-a: missing field 'kind' (numeric, concept, choice or order)",
        f"{path}:7: q-b: kind 'essay' is not one of numeric, concept, choice, order",
        f"{path}:10: question #3: missing field 'id'",
    ]


def test_duplicate_ids_across_files_name_both_places(in_banks):
    folder = Path("bad/dup")
    assert error_of([folder]) == (
        "bad/dup/b.yaml:10: fx-same-id: duplicate id; first defined at bad/dup/a.yaml:3"
    )
    bank, _ = read_bank([folder])
    # the first definition is kept
    assert bank.get("fx-same-id").prompt == "First copy."
    same = bank.source("fx-same-id")
    assert (same.path, same.line) == (folder / "a.yaml", 3)


def test_top_level_problems(tmp_path):
    cases = {
        "empty.yaml": ("", "1: bank file is empty; expected the keys deck and questions"),
        "list.yaml": (
            "- a\n",
            "1: bank file is not a mapping; expected the keys deck and questions",
        ),
        "nodeck.yaml": ("questions: [1]\n", "1: missing key 'deck' (the deck's name)"),
        "extra.yaml": (
            "deck: ab\nquestions: []\nauthor: me\n",
            "2: questions is empty (and 1 more",
        ),
        "badname.yaml": (
            deck("q-x", name="Bad Name"),
            "1: deck name 'Bad Name' must be a lowercase slug like kv-basics",
        ),
    }
    for name, (text, expected) in cases.items():
        path = write(tmp_path / name, text)
        assert error_of([path]).startswith(f"{path}:{expected}"), name
    _, problems = read_bank([tmp_path / "extra.yaml"])
    assert [p.line for p in problems] == [2, 3]
    assert (
        problems[1].message
        == "unknown top-level key 'author' (expected deck, description, questions)"
    )


def test_not_utf8(tmp_path):
    path = tmp_path / "latin.yaml"
    path.write_bytes(b"deck: ab\nquestions: [\xff]\n")
    assert error_of([path]) == f"{path}:1: not UTF-8 text (byte 21)"


def test_load_error_counts_the_rest(tmp_path):
    path = write(tmp_path / "two.yaml", deck("q-one", "q-two").replace("answer:", "answr:"))
    assert error_of([path]) == (
        f"{path}:3: q-one: missing field 'answer' (and 3 more; `kvdrill bank lint` lists them)"
    )


def test_missing_path_is_an_error(tmp_path):
    assert error_of([tmp_path / "nope"]) == f"{tmp_path / 'nope'}: no such bank file or folder"


def test_folders_are_searched_recursively_for_yaml_and_yml(tmp_path):
    write(tmp_path / "b.yaml", deck("q-b", name="bb"))
    write(tmp_path / "sub" / "a.yml", deck("q-a", name="aa"))
    write(tmp_path / "notes.txt", "not a bank")
    write(tmp_path / "sub" / "c.json", "{}")
    files = expand_bank_paths([tmp_path, tmp_path / "b.yaml"])
    # sorted by path, each once even when named twice
    assert files == [tmp_path / "b.yaml", tmp_path / "sub" / "a.yml"]
    assert load_bank([tmp_path]).ids == ["q-b", "q-a"]


def test_builtin_files_skip_the_catalogue(tmp_path):
    write(tmp_path / "misconceptions.yaml", "forgot-kv-factor: {}\n")
    write(tmp_path / "z.yaml", deck("q-z"))
    write(tmp_path / "a.yaml", deck("q-a"))
    assert builtin_bank_files(tmp_path) == [tmp_path / "a.yaml", tmp_path / "z.yaml"]


def test_default_paths_are_builtin_then_env_then_extra(tmp_path, monkeypatch):
    env_file = write(tmp_path / "env.yaml", deck("q-env"))
    extra = write(tmp_path / "extra.yaml", deck("q-extra"))
    monkeypatch.setenv("KVDRILL_BANK", str(env_file))
    paths = default_bank_paths([extra])
    assert paths[-2:] == [env_file, extra]
    assert paths[:-2] == builtin_bank_files()


# ------------------------------------------------------------------ properties of the reader

_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=20),
    st.floats(allow_nan=False, allow_infinity=False),
)  # fmt: skip
_documents = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(min_size=1, max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_documents)
def test_reader_gives_the_same_data_as_safe_load(tmp_path, document):
    text = yaml.safe_dump(document, allow_unicode=True)
    assert yaml.load(text, Loader=LineLoader) == yaml.safe_load(text)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=300))
def test_any_text_is_a_bank_or_one_line_problems(tmp_path, text):
    path = tmp_path / "any.yaml"
    path.write_text(text, encoding="utf-8")
    _, problems = read_bank([path])
    for problem in problems:
        assert "\n" not in str(problem)
        assert str(problem).startswith(f"{path}:{problem.line}: ")
        assert 1 <= problem.line <= max(1, len(text.splitlines()) + 1)
