"""The built-in deck's validated copy: fresh, equal to the source, and never served stale."""

from __future__ import annotations

import os
import pickle

import pytest

import question_bank
from drill.bank import deck_cache, make_deck, validated_deck
from drill.bank.loader import builtin_bank_files, load_bank, load_default_bank, read_bank
from drill.bank.misconceptions import CATALOGUE_PATH, load_misconception_catalogue

STALE = "question_bank/validated_deck.pickle is stale: run `make deck` and commit it"


@pytest.fixture(autouse=True)
def _fresh_caches():
    validated_deck.code_key.cache_clear()
    validated_deck._load_store.cache_clear()
    yield
    validated_deck.code_key.cache_clear()
    validated_deck._load_store.cache_clear()


def test_the_shipped_copy_is_fresh():
    files = validated_deck._load_store()
    assert files is not None, STALE
    names = [path.name for path in builtin_bank_files()]
    assert sorted(files) == sorted([*names, "misconceptions.yaml"]), STALE
    for name in files:
        assert files[name][0] == validated_deck.file_digest(question_bank.BANK_DIR / name), (
            f"{name}: {STALE}"
        )


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
    assert validated_deck.lookup(CATALOGUE_PATH)[2] == list(
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


@pytest.mark.parametrize(
    ("owner", "name", "value"),
    [
        (deck_cache, "ENTRY_FORMAT", deck_cache.ENTRY_FORMAT + 1),
        (deck_cache, "_READER_MODULES", (*deck_cache._READER_MODULES, "reader_added_later.py")),
    ],
    ids=["entry-format", "reader-modules"],
)
def test_a_copy_written_by_other_code_is_a_miss(bank_dir, monkeypatch, owner, name, value):
    monkeypatch.setattr(owner, name, value)
    validated_deck.code_key.cache_clear()
    validated_deck._load_store.cache_clear()
    assert source_read(load_bank([bank_dir / "shipped.yaml"]))


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
