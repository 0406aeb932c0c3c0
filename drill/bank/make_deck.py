"""`make deck`: validate the built-in deck from source into its shipped copy
(drill.bank.validated_deck), refusing a deck with problems.

    python -m drill.bank.make_deck
"""

from __future__ import annotations

import os
import pickle
import sys
from pathlib import Path

from drill.bank.loader import builtin_bank_files, read_deck_file
from drill.bank.misconceptions import (
    CACHE_ENTRY_NAME,
    CATALOGUE_PATH,
    load_misconception_catalogue,
)
from drill.bank.validated_deck import code_key, file_digest, store_path


def build_store() -> dict[str, tuple[str, str, str | None, list]]:
    """Validate every built-in file from source: file name -> (digest, name, description,
    entries). Raises ValueError naming the first problem: a deck with problems is never stored."""

    files: dict[str, tuple[str, str, str | None, list]] = {}
    for path in builtin_bank_files():
        digest = file_digest(path)
        info, loaded, problems = read_deck_file(path)
        if problems or info is None or digest is None:
            raise ValueError(str(problems[0]) if problems else f"{path.name}: cannot be read")
        entries = [(item.question, item.line) for item in loaded]
        files[path.name] = (digest, info.name, info.description, entries)
    digest = file_digest(CATALOGUE_PATH)
    if digest is None:
        raise ValueError(f"{CATALOGUE_PATH.name}: cannot be read")
    catalogue = list(load_misconception_catalogue(CATALOGUE_PATH).values())
    files[CATALOGUE_PATH.name] = (digest, CACHE_ENTRY_NAME, None, catalogue)
    return files


def write_store() -> tuple[Path, int]:
    """Build the store and write it atomically (a temporary file, then a rename): its path
    and the number of files it holds."""
    target = store_path()
    files = build_store()
    temporary = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    with open(temporary, "wb") as file:
        pickle.dump((code_key(), files), file, pickle.HIGHEST_PROTOCOL)
    os.replace(temporary, target)
    return target, len(files)


def main() -> int:
    try:
        target, count = write_store()
    except ValueError as exc:
        print(f"the built-in deck has a problem, not stored: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {target.name}: {count} files validated")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
