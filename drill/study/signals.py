"""SIGTERM and SIGHUP end a quiz or an interview as Ctrl-C does, and none of the three cuts
an answer's write short: a signal that comes during one waits for its end."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP during a session: taken as Ctrl-C is (the answer graded is
    kept with the suggested rating, then the session ends with its summary)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@dataclass
class _Signals:
    deferring: int = 0  # deferred_signals blocks open
    pending: int | None = None  # the first signal that came during one


_SIGNALS = _Signals()


def _interruption(signum: int) -> KeyboardInterrupt:
    import signal

    return KeyboardInterrupt() if signum == signal.SIGINT else Terminated(signum)


def _on_signal(signum: int, _frame: Any) -> None:
    if _SIGNALS.deferring:
        if _SIGNALS.pending is None:
            _SIGNALS.pending = signum
        return
    raise _interruption(signum)


@contextmanager
def ending_signals() -> Iterator[None]:
    """While the block runs (a quiz or an interview): SIGTERM and SIGHUP raise
    `Terminated`, which the session takes as Ctrl-C, and SIGINT, SIGTERM or SIGHUP
    coming during `deferred_signals` waits for `raise_pending`. A signal ignored when
    the block starts (nohup, a background job's SIGINT) stays ignored; the previous
    handlers come back afterwards. Outside the main thread it changes nothing."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    installed: dict[int, Any] = {}
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        signum = getattr(signal, name, None)
        if signum is None:  # Windows has no SIGHUP
            continue
        current = signal.getsignal(signum)
        python_default = name != "SIGINT" or current is signal.default_int_handler
        if current is signal.SIG_IGN or not python_default:
            continue
        installed[signum] = signal.signal(signum, _on_signal)
    try:
        yield
    finally:
        for signum, previous in installed.items():
            signal.signal(signum, previous)
        _SIGNALS.pending = None


@contextmanager
def deferred_signals() -> Iterator[None]:
    """Hold back a signal that comes in the block (under `ending_signals`) until
    `raise_pending`: an answer's write, and the session's count of it, are never cut
    short."""
    _SIGNALS.deferring += 1
    try:
        yield
    finally:
        _SIGNALS.deferring -= 1


def signal_pending() -> bool:
    return _SIGNALS.pending is not None


def raise_pending() -> None:
    """Raise what a signal held back by `deferred_signals` would have raised."""
    if not _SIGNALS.deferring and _SIGNALS.pending is not None:
        signum, _SIGNALS.pending = _SIGNALS.pending, None
        raise _interruption(signum)
