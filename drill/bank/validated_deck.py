"""The built-in deck validated when it was written, so that a first start does not validate it.

`question_bank/validated_deck.pickle` holds every built-in deck file and the misconception
catalogue as the loader validates them, each under the SHA-256 of the file's bytes, and the
whole store under the entry layout, the kvdrill version and the SHA-256 of the source of the
code that reads decks (`deck_cache._READER_MODULES` and this module). It is what `.pyc`
files are to modules: made once, from the same files, by `make deck` (`python -m
drill.bank.make_deck`), and `tests/test_validated_deck.py` fails while it is stale.

A built-in file is served from it only when its bytes hash to the stored digest and the
code that reads decks is the code that wrote the store. Anything else (an edited file, a
deck of the user's, new code, a missing or damaged store) misses, and the file is read
from source through the user's deck cache (drill.bank.deck_cache) as before. `kvdrill bank
lint` never uses either. The store is loaded only from the installed package, beside the
code that reads it.
"""

from __future__ import annotations

import functools
import hashlib
import pickle
from pathlib import Path
from typing import Any

STORE_NAME = "validated_deck.pickle"
# the modules that read and write the store, beside deck_cache's reader modules
_STORE_MODULES = ("validated_deck.py", "make_deck.py")


def store_path() -> Path:
    from question_bank import BANK_DIR

    return BANK_DIR / STORE_NAME


@functools.cache
def code_key() -> tuple[Any, ...]:
    """What the store depends on besides the files: the entry layout, the kvdrill version
    and the source of the reader modules, read once per process."""
    from drill import __version__
    from drill.bank.deck_cache import _READER_MODULES, ENTRY_FORMAT

    digest = hashlib.sha256()
    here = Path(__file__).parent
    for name in (*_READER_MODULES, *_STORE_MODULES):
        digest.update(name.encode())
        try:
            digest.update((here / name).read_bytes())
        except OSError:
            digest.update(b"\0missing")
    return (ENTRY_FORMAT, __version__, digest.hexdigest())


def file_digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


@functools.cache
def _load_store() -> dict[str, tuple[str, str, str | None, list]] | None:
    """file name -> (digest, name, description, entries), or None when the store is absent,
    unreadable or written by other code."""
    try:
        with open(store_path(), "rb") as file:
            stored = pickle.load(file)  # noqa: S301 - written by make deck, shipped beside this code
        key, files = stored
    except Exception:  # noqa: BLE001 - any unreadable store is a miss, never an error
        return None
    if key != code_key() or not isinstance(files, dict):
        return None
    return files


def lookup(path: Path) -> tuple[str, str | None, list] | None:
    """(name, description, entries) stored for the built-in file `path` as its bytes are now,
    or None. A deck's entries are (question, line) pairs; the catalogue's are its entries."""
    from question_bank import BANK_DIR

    try:
        resolved = path.resolve()
    except OSError:
        return None
    if resolved.parent != BANK_DIR:
        return None
    files = _load_store()
    if files is None or resolved.name not in files:
        return None
    digest, name, description, entries = files[resolved.name]
    if digest != file_digest(resolved) or not isinstance(entries, list):
        return None
    return name, description, entries
