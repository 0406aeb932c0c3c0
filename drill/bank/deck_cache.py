"""A cache of validated deck files, so a warm start neither parses YAML nor imports pydantic.

One pickle per deck file under `user_dir()/cache/decks`, named by a hash of
what the validated questions depend on: the file's resolved path, size and
modification time, the kvdrill and Python versions, and the size and time of
the code that reads decks (so an edited schema is never served stale data).
An entry holds the deck's name and description and each question (a
`drill.bank.schema` dataclass) with its line. Only files without problems are
stored: a file with problems is read from source every time, so its errors
are always reported. The misconception catalogue is kept the same way, as the
quiz reads it (drill.bank.misconceptions), so a warm start does not load yaml.

The built-in deck's files seldom reach it: their validated copy, shipped with kvdrill
(drill.bank.validated_deck), serves them first while their bytes are unchanged.

The cache is a convenience: an entry that cannot be read or written is
ignored and the file is read from source. `kvdrill bank lint` never uses it.
The pickles are loaded only from the user's own kvdrill folder, which they
wrote themselves.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import sys
from pathlib import Path
from typing import Any

# bump when the layout of an entry changes
ENTRY_FORMAT = 2  # 2: the question classes moved to drill.bank.schema
# the modules whose code decides what a validated question (or catalogue entry) looks like
_READER_MODULES = ("schema.py", "loader.py", "deck_cache.py", "misconceptions.py")


def default_cache_dir() -> Path:
    from drill.paths import user_dir

    return user_dir() / "cache" / "decks"


def _code_stamp() -> tuple[tuple[int, int], ...]:
    """Size and time of the reader modules' files, as they were when this process first
    asked: a process that loaded the old code must not stamp its entries with the files
    an upgrade wrote meanwhile (a newer process would unpickle old-shaped questions)."""
    return _stamp_of(_READER_MODULES)


@functools.cache
def _stamp_of(names: tuple[str, ...]) -> tuple[tuple[int, int], ...]:
    here = Path(__file__).parent
    stamps = []
    for name in names:
        try:
            stat = (here / name).stat()
        except OSError:
            stamps.append((-1, -1))
        else:
            stamps.append((stat.st_size, stat.st_mtime_ns))
    return tuple(stamps)


def entry_key(path: Path) -> tuple[Any, ...] | None:
    """What an entry for `path` depends on; None when the file cannot be examined."""
    from drill import __version__

    try:
        resolved = path.resolve()
        stat = resolved.stat()
    except OSError:
        return None
    return (
        ENTRY_FORMAT,
        str(resolved),
        stat.st_size,
        stat.st_mtime_ns,
        __version__,
        sys.version,
        _code_stamp(),
    )


def entry_path(cache_dir: Path, key: tuple[Any, ...]) -> Path:
    digest = hashlib.sha256(repr(key).encode("utf-8")).hexdigest()[:32]
    return cache_dir / f"{digest}.pickle"


def read_entry(cache_dir: Path, key: tuple[Any, ...]) -> tuple[str, str | None, list] | None:
    """(deck name, description, [(question, line), ...]) stored for `key`, or None.

    Anything unexpected (no entry, a truncated or foreign file, a key that does
    not match) reads as a miss.
    """
    try:
        with open(entry_path(cache_dir, key), "rb") as file:
            stored = pickle.load(file)  # noqa: S301 - written by write_entry into the user's own folder
        stored_key, name, description, questions = stored
    except Exception:  # noqa: BLE001 - any unreadable entry is a miss, never an error
        return None
    if stored_key != key or not isinstance(name, str) or not isinstance(questions, list):
        return None
    return name, description, questions


def write_entry(
    cache_dir: Path, key: tuple[Any, ...], name: str, description: str | None, questions: list
) -> None:
    """Store an entry atomically (a temporary file, then a rename); failures are ignored."""
    target = entry_path(cache_dir, key)
    temporary = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        with open(temporary, "wb") as file:
            pickle.dump((key, name, description, questions), file, pickle.HIGHEST_PROTOCOL)
        os.replace(temporary, target)
    except Exception:  # noqa: BLE001 - a cache that cannot be written just stays cold
        try:
            temporary.unlink(missing_ok=True)
        except OSError:
            pass
