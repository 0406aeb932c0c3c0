"""The built-in deck's validated copy: fresh, equal to the source, and never served stale."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from collections import Counter, OrderedDict
from pathlib import Path

import pytest
import tomllib

import question_bank
from drill.bank import deck_cache, make_deck, validated_deck
from drill.bank.loader import builtin_bank_files, load_bank, load_default_bank, read_bank
from drill.bank.misconceptions import CATALOGUE_PATH, load_misconception_catalogue
from drill.bank.schema import _param_kind, question_adapter

STALE = "question_bank/validated_deck.pickle is stale: run `make deck` and commit it"


@pytest.fixture(autouse=True)
def _fresh_caches():
    validated_deck.code_key.cache_clear()
    validated_deck._load_store.cache_clear()
    yield
    validated_deck.code_key.cache_clear()
    validated_deck._load_store.cache_clear()


def test_the_shipped_copy_is_fresh():
    contents = validated_deck._load_store()
    assert contents is not None, STALE
    names = [path.name for path in builtin_bank_files()]
    assert sorted(contents["decks"]) == names, STALE
    assert list(contents["catalogue"]) == ["misconceptions.yaml"], STALE
    # byte for byte what make deck writes from the source now: the file is verified, not trusted
    assert validated_deck.store_path().read_bytes() == make_deck.store_bytes(), STALE


def test_the_shipped_copy_holds_what_the_source_validates_to(tmp_path):
    files = builtin_bank_files()
    from_source = load_bank(files)
    served = load_bank(files, tmp_path / "cache")
    assert served.ids == from_source.ids
    assert list(served) == list(from_source)
    assert served.decks == from_source.decks
    assert [served.source(qid).line for qid in served.ids] == [
        from_source.source(qid).line for qid in from_source.ids
    ]
    assert {served.source(qid).raw is None for qid in served.ids} == {True}
    assert not (tmp_path / "cache").exists()
    assert validated_deck.lookup_catalogue(CATALOGUE_PATH) == list(
        load_misconception_catalogue(CATALOGUE_PATH).values()
    )


def test_a_first_start_reads_no_yaml_and_writes_no_cache(_isolated_home):
    bank = load_default_bank()
    assert bank.ids == load_default_bank(cached=False).ids
    assert {bank.source(qid).raw is None for qid in bank.ids} == {True}
    assert not (_isolated_home / "cache").exists()


DECK = """\
deck: shipped
questions:
  - id: q-shipped
    kind: numeric
    topic: kv-cache
    prompt: "{n} layers"
    params:
      n: {range: [1, 4]}
    answer: n * 2
    unit: bytes
    solution: ["{n} times two"]
"""


@pytest.fixture
def bank_dir(tmp_path, monkeypatch):
    """A built-in deck of one file in a folder of its own, with its validated copy."""
    folder = tmp_path / "bank"
    folder.mkdir()
    (folder / "shipped.yaml").write_text(DECK, encoding="utf-8")
    monkeypatch.setattr(question_bank, "BANK_DIR", folder)
    make_deck.write_store()
    validated_deck._load_store.cache_clear()
    return folder


def source_read(bank) -> bool:
    return bank.source("q-shipped").raw is not None


def test_a_file_as_it_was_validated_is_served_from_the_copy(bank_dir, tmp_path):
    bank = load_bank([bank_dir / "shipped.yaml"], tmp_path / "cache")
    assert bank.ids == ["q-shipped"]
    assert not source_read(bank)
    assert not (tmp_path / "cache").exists()


def test_an_edit_of_the_same_size_and_time_is_read_from_source(bank_dir, tmp_path):
    path = bank_dir / "shipped.yaml"
    stat = path.stat()
    path.write_text(DECK.replace("    answer: n * 2", "    answr:  n * 2"), encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    bank, problems = read_bank([path], tmp_path / "cache")
    assert [(p.line, p.message) for p in problems] == [
        (3, "missing field 'answer'"),
        (9, "unknown field 'answr' (did you mean 'answer'?)"),
    ]
    assert bank.ids == []


def test_the_same_file_outside_the_built_in_folder_is_not_served(bank_dir, tmp_path):
    copy = tmp_path / "mine" / "shipped.yaml"
    copy.parent.mkdir()
    copy.write_bytes((bank_dir / "shipped.yaml").read_bytes())
    assert source_read(load_bank([copy], tmp_path / "cache"))


@pytest.mark.parametrize(
    "garbage",
    [b"", b"not a pickle", pickle.dumps(("a", "tuple")), pickle.dumps(None)],
    ids=["empty", "text", "foreign", "none"],
)
def test_a_damaged_copy_is_a_miss(bank_dir, tmp_path, garbage):
    (bank_dir / "validated_deck.pickle").write_bytes(garbage)
    validated_deck._load_store.cache_clear()
    bank = load_bank([bank_dir / "shipped.yaml"])
    assert bank.ids == ["q-shipped"]
    assert source_read(bank)


def test_a_missing_copy_is_a_miss(bank_dir):
    (bank_dir / "validated_deck.pickle").unlink()
    validated_deck._load_store.cache_clear()
    assert source_read(load_bank([bank_dir / "shipped.yaml"]))


def test_the_code_it_depends_on_includes_what_validation_consults():
    package = Path(validated_deck.__file__).resolve().parent.parent
    names = {path.relative_to(package).as_posix() for path in validated_deck.code_files()}
    assert {
        "bank/schema.py",
        "bank/loader.py",
        "bank/yaml_lines.py",
        "bank/make_deck.py",
        "quantities/render.py",
        "quantities/units.py",
        "serving/gpus.py",
        "serving/measured.py",
        "serving/presets.yaml",
    } <= names
    assert all(path.exists() for path in validated_deck.code_files())


@pytest.mark.parametrize(
    ("owner", "name", "value"),
    [
        (deck_cache, "ENTRY_FORMAT", deck_cache.ENTRY_FORMAT + 1),
        (validated_deck, "CODE_FILES", (*validated_deck.CODE_FILES, "bank/added_later.py")),
    ],
    ids=["entry-format", "code-files"],
)
def test_a_copy_written_by_other_code_is_a_miss(bank_dir, monkeypatch, owner, name, value):
    monkeypatch.setattr(owner, name, value)
    validated_deck.code_key.cache_clear()
    validated_deck._load_store.cache_clear()
    assert source_read(load_bank([bank_dir / "shipped.yaml"]))


@pytest.mark.parametrize(
    "foreign",
    [OrderedDict(), question_adapter, _param_kind, print, Counter],
    ids=[
        "a-collections-class",
        "a-schema-function",
        "a-private-one",
        "a-builtin",
        "a-dict-subclass",
    ],
)
def test_a_copy_holding_anything_but_question_classes_is_refused(bank_dir, foreign):
    store = bank_dir / "validated_deck.pickle"
    key, contents = validated_deck.read_store(store)
    store.write_bytes(pickle.dumps((key, {**contents, "extra": foreign}), protocol=4))
    with pytest.raises(pickle.UnpicklingError, match="is not a class a store may hold"):
        validated_deck.read_store(store)
    validated_deck._load_store.cache_clear()
    assert source_read(load_bank([bank_dir / "shipped.yaml"]))


def _stack_global(module: str, name: str) -> bytes:
    """A protocol 4 pickle of the object `module`.`name` names, dotted names followed."""

    def text(value: str) -> bytes:
        data = value.encode()
        return pickle.SHORT_BINUNICODE + bytes([len(data)]) + data

    return pickle.PROTO + b"\x04" + text(module) + text(name) + pickle.STACK_GLOBAL + pickle.STOP


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("drill.bank.schema", "RangeParam.__init__.__class__"),  # the function type
        ("drill.bank.schema", "RangeParam.__init__.__code__.__class__"),  # the code type
        ("drill.bank.schema", "TypeAdapter"),  # imported there, not defined there
        ("drill.bank.schema", "question_adapter"),
        ("builtins", "eval"),
        ("os", "system"),
    ],
)
def test_only_the_banks_own_classes_are_named_by_exact_name(tmp_path, module, name):
    store = tmp_path / "store.pickle"
    store.write_bytes(_stack_global(module, name))
    with pytest.raises(pickle.UnpicklingError, match="is not a class a store may hold"):
        validated_deck.read_store(store)


def test_the_classes_a_store_may_hold():
    allowed = validated_deck.allowed_classes()
    assert ("drill.bank.schema", "NumericQuestion") in allowed
    assert ("drill.bank.misconceptions", "MisconceptionInfo") in allowed
    assert {module for module, _name in allowed} == {
        "drill.bank.schema", "drill.bank.misconceptions"
    }  # fmt: skip
    assert all("." not in name for _module, name in allowed)


def test_the_catalogue_given_as_a_deck_is_read_as_one(bank_dir):
    # served by name it would be a catalogue in place of a deck; it is read, and refused
    bank, problems = read_bank([CATALOGUE_PATH], Path(bank_dir / "cache"))
    assert bank.ids == []
    assert (problems[0].line, problems[0].message) == (
        17,
        "unknown top-level key 'forgot-kv-factor' (expected deck, description, questions)",
    )


def test_a_link_in_the_built_in_folder_to_a_file_elsewhere_is_read_from_source(bank_dir, tmp_path):
    elsewhere = tmp_path / "elsewhere.yaml"
    elsewhere.write_bytes((bank_dir / "shipped.yaml").read_bytes())
    (bank_dir / "shipped.yaml").unlink()
    (bank_dir / "shipped.yaml").symlink_to(elsewhere)
    assert source_read(load_bank([bank_dir / "shipped.yaml"]))


def test_a_first_start_imports_neither_yaml_nor_pydantic(_isolated_home):
    code = (
        "import sys\n"
        "from drill.bank.loader import load_default_bank\n"
        "from drill.bank.misconceptions import load_misconception_catalogue\n"
        "load_default_bank(); load_misconception_catalogue(cached=True)\n"
        "print(sorted(m for m in ('yaml', 'pydantic') if m in sys.modules))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ
    )
    assert run.stdout == "[]\n"
    assert not (_isolated_home / "cache").exists()


def test_the_copy_is_packaged():
    with open(Path(question_bank.__file__).parent.parent / "pyproject.toml", "rb") as file:
        config = tomllib.load(file)
    assert "validated_deck.pickle" in config["tool"]["setuptools"]["package-data"]["question_bank"]


def test_make_deck_refuses_a_catalogue_with_problems(bank_dir, monkeypatch, tmp_path, capsys):
    catalogue = tmp_path / "misconceptions.yaml"
    catalogue.write_text("forgot-kv-factor: [not, a, mapping]\n", encoding="utf-8")
    monkeypatch.setattr(make_deck, "CATALOGUE_PATH", catalogue)
    before = (bank_dir / "validated_deck.pickle").read_bytes()
    assert make_deck.main() == 1
    err = capsys.readouterr().err
    assert err.startswith("the built-in deck has a problem, not stored: misconceptions.yaml")
    assert err.count("\n") == 1
    assert (bank_dir / "validated_deck.pickle").read_bytes() == before


def test_make_deck_refuses_a_deck_with_problems(bank_dir, capsys):
    store = bank_dir / "validated_deck.pickle"
    before = store.read_bytes()
    (bank_dir / "shipped.yaml").write_text(DECK.replace("answer:", "answr:"), encoding="utf-8")
    assert make_deck.main() == 1
    assert capsys.readouterr().err == (
        "the built-in deck has a problem, not stored: "
        f"{bank_dir / 'shipped.yaml'}:3: q-shipped: missing field 'answer'\n"
    )
    assert store.read_bytes() == before
    assert [p.name for p in bank_dir.iterdir()] == sorted(["shipped.yaml", "validated_deck.pickle"])
