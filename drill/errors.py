"""The project's exception types.

Code below the CLI raises these; only `drill.cli` turns them into a one-line
`Error: ...` and a non-zero exit. Messages are written for the user to act on.
"""

import sqlite3
from collections.abc import Sequence

# what reading a damaged database can raise: besides sqlite3's own errors, a damaged
# schema can make SQLite's message bytes that are not UTF-8, raised as UnicodeDecodeError
SQLITE_READ_ERRORS = (sqlite3.Error, UnicodeDecodeError)


def reason_of(exc: BaseException) -> str:
    """Why an operation failed, in a few words: an OSError's strerror, else the message."""
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)


class KvdrillError(Exception):
    """Base class: anything the CLI reports as a one-line error."""


class ConfigError(KvdrillError):
    """A model shape, preset, config.json or dtype that cannot be used."""


class ExprError(KvdrillError):
    """An arithmetic expression that is malformed, unsafe or too costly."""


class AnswerError(KvdrillError):
    """A user's answer that cannot be read."""


class BankError(KvdrillError):
    """A question bank file that cannot be loaded; the message names file:line."""


class StoreError(KvdrillError):
    """A database that cannot be opened or used."""


class CardError(KvdrillError):
    """A card that cannot be changed as asked: an undo of an answer another session
    built on, or unsuspending a question that is not suspended."""


class EngineError(KvdrillError):
    """An engine_check run that cannot be performed (no torch, bad device...)."""


class HistoryError(KvdrillError):
    """A history file that cannot be imported; the message names FILE:LINE."""


class FitError(KvdrillError):
    """FSRS's parameters cannot be fitted: too few reviews, or the fit returned parameters
    the fsrs Scheduler cannot take."""


def close_names(typed: str, known: Sequence[str], *, cutoff: float = 0.6) -> list[str]:
    """The known names a mistyped `typed` may have meant, at most three: those that start
    with it first (they beat similar-looking ones), then similar ones, then those that
    contain it."""
    import difflib

    # compared without case ("QUERY-HEADS" is query-heads); the known spelling is shown
    spelled = {name.casefold(): name for name in reversed(known)}
    typed, folded = typed.casefold(), list(dict.fromkeys(name.casefold() for name in known))
    starts = [name for name in folded if typed and name.startswith(typed)]
    similar = difflib.get_close_matches(typed, folded, n=3, cutoff=cutoff)
    within = [name for name in folded if typed and typed in name]
    return [spelled[name] for name in dict.fromkeys(starts + similar + within)][:3]


def did_you_mean(typed: str, known: Sequence[str], *, cutoff: float = 0.6) -> str | None:
    """"did you mean a, b?" for the names close to `typed`; None when none is."""
    close = close_names(typed, known, cutoff=cutoff)
    return f"did you mean {', '.join(close)}?" if close else None


def unknown_name_error(what: str, typed: str, key: str, known: list[str]) -> ConfigError:
    """The error for a name that is not among `known` ("unknown GPU 'h1000'; did you mean
    h100, h200?"), by its normalised `key`; without a close name, every known name."""
    hint = did_you_mean(key, known, cutoff=0.5) or f"known: {', '.join(known)}"
    return ConfigError(f"unknown {what} {typed!r}; {hint}")
