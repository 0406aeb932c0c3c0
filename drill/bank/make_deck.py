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
from drill.bank.misconceptions import CATALOGUE_PATH, load_misconception_catalogue
from drill.bank.validated_deck import CATALOGUE, DECKS, code_key, file_digest, store_path
from drill.errors import BankError


def build_store() -> dict[str, dict[str, tuple]]:
    """Validate every built-in file from source, as drill.bank.validated_deck stores them.
    Raises ValueError naming the first problem: a deck with problems is never stored."""
    decks: dict[str, tuple] = {}
    for path in builtin_bank_files():
        digest = file_digest(path)
        info, loaded, problems = read_deck_file(path)
        if problems or info is None or digest is None:
            raise ValueError(str(problems[0]) if problems else f"{path.name}: cannot be read")
        questions = [(item.question, item.line) for item in loaded]
        decks[path.name] = (digest, info.name, info.description, questions)
    digest = file_digest(CATALOGUE_PATH)
    if digest is None:
        raise ValueError(f"{CATALOGUE_PATH.name}: cannot be read")
    entries = list(load_misconception_catalogue(CATALOGUE_PATH).values())
    return {DECKS: decks, CATALOGUE: {CATALOGUE_PATH.name: (digest, entries)}}


def store_bytes(contents: dict[str, dict[str, tuple]] | None = None) -> bytes:
    """The store as make deck writes it (of `contents`, or of the deck built now)."""
    contents = build_store() if contents is None else contents
    return pickle.dumps((code_key(), contents), pickle.HIGHEST_PROTOCOL)


def write_store() -> tuple[Path, int]:
    """Build the store and write it atomically (a temporary file, then a rename): its path
    and the number of files it holds."""
    target = store_path()
    contents = build_store()
    temporary = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    temporary.write_bytes(store_bytes(contents))
    os.replace(temporary, target)
    return target, sum(map(len, contents.values()))


def main() -> int:
    try:
        target, count = write_store()
    except (ValueError, BankError) as exc:  # a deck's problem, or the catalogue's
        print(f"the built-in deck has a problem, not stored: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {target.name}: {count} files validated")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
