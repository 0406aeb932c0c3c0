"""What the quiz and the mock interview share at a terminal: the fixed test clock, reading
a typed line, the signal mask around imports that start threads, colour, and the answers a
database refused, merged back or reported at the end."""

from __future__ import annotations

import os
from contextlib import contextmanager

import click


def clock(now_text: str | None, tick_s: float):
    """(now, tick): the real clock, or a fixed one that `tick` advances.

    The fixed clock exists for tests and demos: it starts at `now_text` and
    moves `tick_s` seconds each time a line is read, as if the user took that
    long to type it.
    """
    from datetime import datetime, timedelta, timezone

    from drill.commands.options import parse_now

    if now_text is None:
        return (lambda: datetime.now(timezone.utc)), (lambda: None)
    clock = [parse_now(now_text).astimezone(timezone.utc)]

    def tick() -> None:
        clock[0] += timedelta(seconds=tick_s)

    return (lambda: clock[0]), tick


# the most of one typed line the quiz keeps (in bytes; at a terminal, in characters);
# the rest of a longer line is read and dropped
MAX_LINE_BYTES = 64 * 1024


def read_input_line(stream) -> str | None:
    """One line of input, None at its end; at most MAX_LINE_BYTES of it are kept.

    Bytes are read and decoded here, so input that is not UTF-8 gives U+FFFD
    characters rather than text that cannot be stored or printed.
    """
    from drill.text import valid_text

    raw = getattr(stream, "buffer", None)
    source = stream if raw is None else raw  # text-only streams decode for themselves
    line = rest = source.readline(MAX_LINE_BYTES)
    while rest and rest[-1:] not in ("\n", b"\n"):
        rest = source.readline(MAX_LINE_BYTES)  # drop the rest of an over-long line
    if not line:
        return None
    return valid_text(line) if raw is None else line.decode("utf-8", errors="replace")


@contextmanager
def signals_for_main_thread_only():
    """Block SIGINT, SIGTERM and SIGHUP while importing what starts worker threads.

    sqlite_utils imports numpy, whose BLAS starts worker threads at import. A
    signal sent to the process may land on any thread that does not block it, and
    one landing on a worker never interrupts the main thread's blocking read of
    the answer: Ctrl-C (or a SIGTERM, or the terminal's SIGHUP) would not end the
    session until the next line. Threads inherit the signal mask of the thread that
    starts them, so starting them with these blocked keeps them for the main thread.
    """
    import signal

    if not hasattr(signal, "pthread_sigmask"):  # Windows: no signal masks
        yield
        return
    ending = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, ending)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def use_color(stream) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (no-color.org)."""
    return bool(stream.isatty()) and not os.environ.get("NO_COLOR")


def text_width(stream) -> int | None:
    """The columns to wrap text to: the terminal's width (COLUMNS when it is set, as a
    piped output's reader may set it), at most the quiz's MAX_TEXT_COLUMNS; None for a
    pipe without COLUMNS, whose lines stay whole."""
    import shutil

    from drill.study.screen import MAX_TEXT_COLUMNS

    if not (stream.isatty() or os.environ.get("COLUMNS")):
        return None
    return min(shutil.get_terminal_size().columns, MAX_TEXT_COLUMNS)


def merge_unsaved_answers(db, scheduler, *, err: bool = False) -> None:
    """Merge the answers kept beside the database while it could not be written
    (drill.study.answer_keeper.merge_unsaved): a line when some were merged, a warning for a file
    that could not be."""
    from drill.study.answer_keeper import merge_unsaved

    def warn(message: str) -> None:
        click.echo(f"Warning: {message}", err=True)

    merge_unsaved(db, scheduler, lambda line: click.echo(line, err=err), warn)


def unsaved_error(kept: int, kept_in, shown: int) -> str | None:
    """The one-line error a quiz or an interview ends with when the database refused
    answers (kept in the unsaved-answers file, or only printed); None when it took all."""
    from drill.study.session_text import plural

    parts = []
    if kept:
        parts.append(f"{plural(kept, 'answer')} could not be saved to the database and "
                     f"{'waits' if kept == 1 else 'wait'} in {kept_in} (the next `kvdrill quiz` "
                     f"adds {'it' if kept == 1 else 'them'})")  # fmt: skip
    if shown:
        parts.append(f"{plural(shown, 'answer')} could be saved nowhere and "
                     f"{'was' if shown == 1 else 'were'} printed to keep")  # fmt: skip
    return "; ".join(parts) or None
