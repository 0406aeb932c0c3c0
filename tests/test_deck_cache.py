"""The deck cache: warm loads give the same questions; edits, new code, garbage, lint bypass it."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest
from click.testing import CliRunner

import drill
from drill.bank import deck_cache, validated_deck
from drill.bank.loader import builtin_bank_files, load_bank, load_default_bank, read_bank
from drill.cli import cli

NUMERIC = """\
deck: cached
questions:
  - id: q-cached
    kind: numeric
    topic: kv-cache
    prompt: "{n} layers"
    params:
      n: {range: [1, 4]}
    answer: n * 2
    unit: bytes
    solution: ["{n} times two"]
    misconceptions:
      - {id: forgot-factor-two, expr: n}
"""


@pytest.fixture(autouse=True)
def _no_validated_copy(monkeypatch):
    """These tests are of the user's deck cache: the built-in deck's validated copy
    (tests/test_validated_deck.py) would serve the built-in files before it."""
    monkeypatch.setattr(validated_deck, "_load_store", lambda: None)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def entries(cache_dir: Path) -> list[Path]:
    return sorted(cache_dir.glob("*.pickle")) if cache_dir.exists() else []


def test_a_warm_load_returns_the_questions_of_a_cold_one(tmp_path):
    cache_dir = tmp_path / "cache"
    files = builtin_bank_files()
    from_source = load_bank(files)
    cold = load_bank(files, cache_dir)
    assert len(entries(cache_dir)) == len(files)
    warm = load_bank(files, cache_dir)
    assert warm.ids == from_source.ids
    assert list(warm) == list(from_source)
    assert warm.decks == from_source.decks
    for qid in from_source.ids:
        assert (warm.source(qid).path, warm.source(qid).line) == (
            from_source.source(qid).path, from_source.source(qid).line
        )
    # the warm questions came from the pickles: they carry no parsed YAML
    assert {cold.source(qid).raw is None for qid in cold.ids} == {False}
    assert {warm.source(qid).raw is None for qid in warm.ids} == {True}


def test_field_lines_of_a_cached_question_are_read_from_the_file(tmp_path):
    path = write(tmp_path / "deck.yaml", NUMERIC)
    load_bank([path], tmp_path / "cache")
    warm = load_bank([path], tmp_path / "cache")
    assert warm.source("q-cached").raw is None
    assert warm.field_line("q-cached", "misconceptions", 0, "expr") == 13
    assert warm.field_line("q-cached", "params", "n") == 8


def test_an_edited_file_is_read_again(tmp_path):
    cache_dir = tmp_path / "cache"
    path = write(tmp_path / "deck.yaml", NUMERIC)
    assert load_bank([path], cache_dir).get("q-cached").prompt == "{n} layers"
    stat = path.stat()
    write(path, NUMERIC.replace("{n} layers", "{n} decoder layers"))
    # even with the old modification time, the size differs
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert load_bank([path], cache_dir).get("q-cached").prompt == "{n} decoder layers"
    # the same size, a newer time
    write(path, NUMERIC.replace("{n} layers", "{n} encoder layers"))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    assert load_bank([path], cache_dir).get("q-cached").prompt == "{n} encoder layers"


def test_a_garbage_entry_falls_back_to_the_file_and_is_rewritten(tmp_path):
    cache_dir = tmp_path / "cache"
    path = write(tmp_path / "deck.yaml", NUMERIC)
    expected = list(load_bank([path]))
    load_bank([path], cache_dir)
    (entry,) = entries(cache_dir)
    for garbage in (b"", b"not a pickle", pickle.dumps(("a", "tuple")), pickle.dumps(None)):
        entry.write_bytes(garbage)
        bank, problems = read_bank([path], cache_dir)
        assert problems == []
        assert list(bank) == expected
        assert bank.source("q-cached").raw is not None  # read from source
    # the last fallback stored a good entry again
    assert list(load_bank([path], cache_dir)) == expected
    assert load_bank([path], cache_dir).source("q-cached").raw is None


def test_files_with_problems_are_not_cached(tmp_path):
    cache_dir = tmp_path / "cache"
    path = write(tmp_path / "deck.yaml", NUMERIC.replace("answer:", "answr:"))
    _, problems = read_bank([path], cache_dir)
    assert [p.message for p in problems] == [
        "missing field 'answer'",
        "unknown field 'answr' (did you mean 'answer'?)",
    ]
    assert entries(cache_dir) == []


def test_an_unwritable_cache_is_ignored(tmp_path):
    blocker = write(tmp_path / "cache", "a file where the folder should be")
    path = write(tmp_path / "deck.yaml", NUMERIC)
    assert load_bank([path], blocker).ids == ["q-cached"]
    assert blocker.read_text(encoding="utf-8") == "a file where the folder should be"


def test_the_default_bank_uses_the_cache_in_the_kvdrill_home(_isolated_home):
    cache_dir = _isolated_home / "cache" / "decks"
    assert deck_cache.default_cache_dir() == cache_dir
    load_default_bank()
    assert len(entries(cache_dir)) == len(builtin_bank_files())
    warm, uncached = load_default_bank(), load_default_bank(cached=False)
    assert list(warm) == list(uncached)
    assert {warm.source(qid).raw is None for qid in warm.ids} == {True}
    assert {uncached.source(qid).raw is None for qid in uncached.ids} == {False}


def test_lint_reads_the_source_even_when_a_cache_entry_claims_it_is_fine(_isolated_home, tmp_path):
    path = write(tmp_path / "deck.yaml", NUMERIC)
    good = load_bank([path])
    write(path, NUMERIC.replace("answer:", "answr:"))
    # plant an entry that says the now broken file is the good one
    key = deck_cache.entry_key(path)
    stored = [(question, good.source(question.id).line) for question in good]
    for cache_dir in (deck_cache.default_cache_dir(), tmp_path / "cache"):
        deck_cache.write_entry(cache_dir, key, "cached", None, stored)
    # the cached read would believe it...
    assert read_bank([path], tmp_path / "cache")[1] == []
    # ...lint does not
    result = CliRunner().invoke(cli, ["bank", "lint", str(path)])
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        f"{path}:3: q-cached: missing field 'answer'",
        f"{path}:9: q-cached: unknown field 'answr' (did you mean 'answer'?)",
    ]


def same_size_and_time(path: Path, old: str, new: str) -> None:
    """Edit `path` so that neither its size nor its modification time changes."""
    assert len(old.encode()) == len(new.encode())
    stat = path.stat()
    write(path, path.read_text(encoding="utf-8").replace(old, new))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


# what an entry's key records about the code that wrote it: the entry layout, the
# kvdrill version, and the reader modules (a module added to the list stamps differently)
NEW_LOADER = [
    pytest.param(deck_cache, "ENTRY_FORMAT", deck_cache.ENTRY_FORMAT + 1, id="entry-format"),
    pytest.param(drill, "__version__", f"{drill.__version__}.post1", id="kvdrill-version"),
    pytest.param(
        deck_cache,
        "_READER_MODULES",
        (*deck_cache._READER_MODULES, "reader_added_later.py"),
        id="reader-modules",
    ),
]


@pytest.mark.parametrize(("owner", "name", "value"), NEW_LOADER)
def test_a_new_loader_version_reads_and_validates_the_file_again(
    tmp_path, monkeypatch, owner, name, value
):
    cache_dir = tmp_path / "cache"
    path = write(tmp_path / "deck.yaml", NUMERIC)
    load_bank([path], cache_dir)
    # break the file without changing its size or time: the entry still matches it,
    # and the same loader believes the entry...
    same_size_and_time(path, "    answer: n * 2", "    answr:  n * 2")
    bank, problems = read_bank([path], cache_dir)
    assert problems == []
    assert bank.get("q-cached").answer == "n * 2"
    assert bank.source("q-cached").raw is None
    # ...a new one does not: it reads the file and finds what is wrong with it
    monkeypatch.setattr(owner, name, value)
    bank, problems = read_bank([path], cache_dir)
    assert [(p.line, p.message) for p in problems] == [
        (3, "missing field 'answer'"),
        (9, "unknown field 'answr' (did you mean 'answer'?)"),
    ]
    assert bank.ids == []
    # mended, the file is read from source once, then served from a new entry
    same_size_and_time(path, "    answr:  n * 2", "    answer: n + 2")
    assert load_bank([path], cache_dir).source("q-cached").raw is not None
    warm = load_bank([path], cache_dir)
    assert warm.source("q-cached").raw is None
    assert warm.get("q-cached").answer == "n + 2"
    assert len(entries(cache_dir)) == 2


# --------------------------------------------------------------------------- the catalogue

CATALOGUE = """\
forgot-kv-factor:
  name: forgot the K+V factor of 2
  feedback: Keys and values are both cached.
"""


@pytest.fixture
def fresh_catalogue_reads():
    """Each read below goes to the cache or the file, not to this process's memory."""
    from drill.bank import misconceptions

    misconceptions._load_catalogue.cache_clear()
    yield misconceptions
    misconceptions._load_catalogue.cache_clear()


def test_the_quiz_reads_the_catalogue_through_the_cache_and_sees_an_edit(
    _isolated_home, tmp_path, fresh_catalogue_reads
):
    catalogue = write(tmp_path / "misconceptions.yaml", CATALOGUE)
    load = fresh_catalogue_reads.load_misconception_catalogue
    first = load(catalogue, cached=True)
    assert first["forgot-kv-factor"].name == "forgot the K+V factor of 2"
    stored = entries(deck_cache.default_cache_dir())
    assert len(stored) == 1
    # an edited file (another size and time) is read again, and stored anew
    fresh_catalogue_reads._load_catalogue.cache_clear()
    catalogue.write_text(CATALOGUE.replace("both cached.", "both kept."), encoding="utf-8")
    edited = load(catalogue, cached=True)
    assert edited["forgot-kv-factor"].feedback == "Keys and values are both kept."
    assert len(entries(deck_cache.default_cache_dir())) == 2
    fresh_catalogue_reads._load_catalogue.cache_clear()
    assert load(catalogue, cached=True) == edited


def test_a_cached_catalogue_read_twice_comes_from_its_entry(
    _isolated_home, tmp_path, fresh_catalogue_reads
):
    catalogue = write(tmp_path / "misconceptions.yaml", CATALOGUE)
    load = fresh_catalogue_reads.load_misconception_catalogue
    load(catalogue, cached=True)
    [stored] = entries(deck_cache.default_cache_dir())
    key, name, description, infos = pickle.loads(stored.read_bytes())
    doctored = infos[0].__class__(infos[0].id, "a name only the cache holds", "x")
    stored.write_bytes(pickle.dumps((key, name, description, [doctored])))
    fresh_catalogue_reads._load_catalogue.cache_clear()
    assert load(catalogue, cached=True)["forgot-kv-factor"].name == "a name only the cache holds"
    # a reader that does not ask for the cache reads the file itself
    assert load(catalogue)["forgot-kv-factor"].name == "forgot the K+V factor of 2"


def test_a_catalogue_with_a_problem_is_reported_and_never_cached(
    _isolated_home, tmp_path, fresh_catalogue_reads
):
    from drill.errors import BankError

    catalogue = write(tmp_path / "misconceptions.yaml", "Bad-Id:\n  name: x\n  feedback: y\n")
    with pytest.raises(BankError, match="'Bad-Id' is not an id"):
        fresh_catalogue_reads.load_misconception_catalogue(catalogue, cached=True)
    assert entries(deck_cache.default_cache_dir()) == []
    fresh_catalogue_reads.load_misconception_catalogue(
        write(tmp_path / "other.yaml", CATALOGUE)
    )
    assert entries(deck_cache.default_cache_dir()) == []
