"""The built-in deck validated when it was written, so that a first start does not validate it.

`question_bank/validated_deck.pickle` holds every built-in deck file and the misconception
catalogue as the loader validates them, each under the SHA-256 of the file's bytes, and the
whole store under the entry layout, the kvdrill version and the SHA-256 of the code a
validated question depends on (CODE_FILES). It is what `.pyc` files are to modules: made
once, from the same files, by `make deck` (`python -m drill.bank.make_deck`), and
`tests/test_validated_deck.py` fails while it differs from what make deck would write.

A built-in file is served from it only when its bytes hash to the stored digest and the
code in CODE_FILES is the code that wrote the store. Anything else (an edited file, a
deck of the user's, new code, a missing or damaged store) misses, and the file is read
from source through the user's deck cache (drill.bank.deck_cache) as before. `kvdrill bank
lint` never uses either. The store is loaded only from the installed package, beside the
code that reads it, and loading it builds only the bank's own question classes.
"""

from __future__ import annotations

import functools
import hashlib
import pickle
from pathlib import Path
from typing import Any

STORE_NAME = "validated_deck.pickle"
# the code a validated question depends on, relative to the drill package: what reads,
# validates and stores a deck, and what validation consults (units and templates, GPU
# names and figures, model presets, run fields); an edit to any of it misses the store
CODE_FILES = (
    "bank/schema.py",
    "bank/loader.py",
    "bank/yaml_lines.py",
    "bank/deck_cache.py",
    "bank/misconceptions.py",
    "bank/validated_deck.py",
    "bank/make_deck.py",
    "quantities/*.py",
    "serving/gpus.py",
    "serving/measured.py",
    "serving/presets.yaml",
    "text.py",
)
# the modules whose dataclasses a store may hold (with builtin containers and values):
# loading it builds these and nothing else, so the file cannot make the loader run other code
_CLASS_MODULES = ("drill.bank.schema", "drill.bank.misconceptions")
DECKS, CATALOGUE = "decks", "catalogue"


def store_path() -> Path:
    from question_bank import BANK_DIR

    return BANK_DIR / STORE_NAME


def code_files() -> list[Path]:
    """The files of CODE_FILES, in a fixed order."""
    package = Path(__file__).resolve().parent.parent
    files: list[Path] = []
    for pattern in CODE_FILES:
        found = sorted(package.glob(pattern)) if "*" in pattern else [package / pattern]
        files.extend(found)
    return files


@functools.cache
def code_key() -> tuple[Any, ...]:
    """What the store depends on besides the deck's files: the entry layout, the kvdrill
    version and the bytes of the code in CODE_FILES, read once per process (a process that
    loaded the old code must not take a store written for the code an upgrade put there
    meanwhile for its own)."""
    from drill import __version__
    from drill.bank.deck_cache import ENTRY_FORMAT

    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in code_files():
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        try:
            digest.update(hashlib.sha256(path.read_bytes()).digest())
        except OSError:
            digest.update(b"missing")
    return (ENTRY_FORMAT, __version__, digest.hexdigest())


def file_digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


@functools.cache
def allowed_classes() -> dict[tuple[str, str], type]:
    """(module, name) -> class, for every dataclass defined in _CLASS_MODULES."""
    import dataclasses
    import importlib

    allowed = {}
    for module_name in _CLASS_MODULES:
        for name, value in vars(importlib.import_module(module_name)).items():
            if isinstance(value, type) and dataclasses.is_dataclass(value):
                if value.__module__ == module_name and value.__qualname__ == name:
                    allowed[module_name, name] = value
    return allowed


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        # looked up by exact name, never by attribute path ("X.__init__.__class__")
        found = allowed_classes().get((module, name))
        if found is None:
            raise pickle.UnpicklingError(f"{module}.{name} is not a class a store may hold")
        return found


def read_store(path: Path) -> tuple[Any, Any]:
    """(code key, contents) of the store at `path`, building only the allowed classes;
    raises OSError or pickle.UnpicklingError (or another error for a damaged file)."""
    with open(path, "rb") as file:
        key, contents = _Unpickler(file).load()
    return key, contents


@functools.cache
def _load_store() -> dict[str, dict[str, tuple]] | None:
    """{DECKS: {file name: (digest, name, description, [(question, line), ...])},
    CATALOGUE: {file name: (digest, [entry, ...])}}, or None when the store is absent,
    unreadable, holds what it may not, or was written by other code."""
    try:
        key, contents = read_store(store_path())
    except Exception:  # noqa: BLE001 - any unreadable store is a miss, never an error
        return None
    if key != code_key() or not isinstance(contents, dict):
        return None
    if not all(isinstance(contents.get(section), dict) for section in (DECKS, CATALOGUE)):
        return None
    return contents


def _stored(path: Path, section: str) -> tuple | None:
    """The store's entry for the built-in file `path` in `section`, if it was made from the
    bytes the file holds now."""
    from question_bank import BANK_DIR

    try:
        resolved = path.resolve()
    except OSError:
        return None
    if resolved.parent != BANK_DIR:
        return None
    contents = _load_store()
    entry = None if contents is None else contents[section].get(resolved.name)
    if not isinstance(entry, tuple) or not entry or entry[0] != file_digest(resolved):
        return None
    return entry


def lookup_deck(path: Path) -> tuple[str, str | None, list] | None:
    """(name, description, [(question, line), ...]) stored for the built-in deck file `path`
    as its bytes are now, or None."""
    entry = _stored(path, DECKS)
    if entry is None or len(entry) != 4 or not isinstance(entry[3], list):
        return None
    _, name, description, questions = entry
    return name, description, questions


def lookup_catalogue(path: Path) -> list | None:
    """The entries stored for the built-in misconception catalogue `path` as its bytes are
    now, or None."""
    entry = _stored(path, CATALOGUE)
    if entry is None or len(entry) != 2 or not isinstance(entry[1], list):
        return None
    return entry[1]
