"""The misconception catalogue: the named mistakes the grader can diagnose.

`question_bank/misconceptions.yaml` maps each id to a short `name` ("forgot the
K+V factor of 2") and a default `feedback`. Questions name these ids in their
`misconceptions`, with the expression that reproduces the mistake; the grader
also recognises a few by their ratio to the answer (bits vs bytes, GB vs GiB...).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from drill.errors import BankError
from question_bank import BANK_DIR


@dataclass(frozen=True)
class MisconceptionInfo:
    id: str
    name: str  # short, e.g. "forgot the K+V factor of 2"
    feedback: str  # the default explanation


CATALOGUE_PATH = BANK_DIR / "misconceptions.yaml"
_ID = re.compile(r"^[a-z0-9][a-z0-9-]*[a-z0-9]$")


def load_misconception_catalogue(
    path: str | Path | None = None, *, cached: bool = False
) -> dict[str, MisconceptionInfo]:
    """id -> MisconceptionInfo from the catalogue file (read once per process). `cached`:
    through the deck cache (drill.bank.deck_cache), as the quiz reads it; lint and the
    other readers read the file itself."""
    return dict(_load_catalogue(str(path or CATALOGUE_PATH), cached))


# the deck cache's name for a catalogue entry, which no deck's name (a slug) can be
CACHE_ENTRY_NAME = "(misconception catalogue)"


@functools.lru_cache(maxsize=8)
def _load_catalogue(path: str, cached: bool = False) -> dict[str, MisconceptionInfo]:
    """The catalogue at `path`; with `cached`, from the built-in deck's validated copy
    (drill.bank.validated_deck) or the deck cache when either holds this file as
    it is now (its size and time, and this code's), else read and then stored there. A file
    with problems raises before anything is stored, so its problems are always reported."""
    if not cached:
        return _read_catalogue(path)
    from drill.bank import deck_cache, validated_deck

    shipped = validated_deck.lookup_catalogue(Path(path))
    if shipped is not None:
        return {info.id: info for info in shipped}
    key = deck_cache.entry_key(Path(path))
    cache_dir = deck_cache.default_cache_dir()
    if key is not None:
        entry = deck_cache.read_entry(cache_dir, key)
        if entry is not None and entry[0] == CACHE_ENTRY_NAME:
            return {info.id: info for info in entry[2]}
    catalogue = _read_catalogue(path)
    if key is not None:
        deck_cache.write_entry(cache_dir, key, CACHE_ENTRY_NAME, None, list(catalogue.values()))
    return catalogue


def _read_catalogue(path: str) -> dict[str, MisconceptionInfo]:
    import yaml

    name = Path(path).name
    try:
        with open(path, encoding="utf-8") as handle:
            # the C loader where built (same safe rules, ~10x faster on this file)
            data = yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506
    except OSError as exc:
        raise BankError(f"{name}: cannot read the misconception catalogue: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{name}:{mark.line + 1}" if mark else name
        raise BankError(f"{where}: the misconception catalogue is not valid YAML") from None
    if not isinstance(data, dict):
        raise BankError(f"{name}: the catalogue must map ids to {{name, feedback}}")
    catalogue: dict[str, MisconceptionInfo] = {}
    for key, entry in data.items():
        if not isinstance(key, str) or not _ID.match(key):
            raise BankError(f"{name}: {key!r} is not an id (lowercase letters, digits, dashes)")
        if not isinstance(entry, dict) or set(entry) != {"name", "feedback"}:
            raise BankError(f"{name}: '{key}' needs exactly the fields name and feedback")
        if not all(isinstance(entry[f], str) and entry[f].strip() for f in ("name", "feedback")):
            raise BankError(f"{name}: '{key}' needs a non-empty name and feedback")
        catalogue[key] = MisconceptionInfo(key, entry["name"].strip(), entry["feedback"].strip())
    return catalogue


def catalogue_entry(misconception_id: str) -> MisconceptionInfo:
    """The built-in catalogue's entry; an unknown id gets its own words as a name."""
    catalogue = _load_catalogue(str(CATALOGUE_PATH), True)
    return catalogue.get(misconception_id) or MisconceptionInfo(
        misconception_id, misconception_id.replace("-", " "), ""
    )
