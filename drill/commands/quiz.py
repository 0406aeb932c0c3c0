"""`kvdrill quiz`: today's session: due cards first, then a few new ones."""

from __future__ import annotations

from datetime import timedelta

import click

from drill.commands import terminal
from drill.commands.options import (
    FiniteRange,
    bank_option,
    db_option,
    now_option,
    open_database,
    user_days,
    utf8_text,
)
from drill.commands.terminal import (
    MAX_LINE_BYTES,
    clock,
    merge_unsaved_answers,
    signals_for_main_thread_only,
    unsaved_error,
    use_color,
)


def _session_io(now_text: str | None, tick_s: float):
    """The quiz's SessionIO: plain lines from a pipe; at a terminal, line editing,
    text wrapped to its width, colour (unless NO_COLOR) and a position bar."""
    import sys

    from drill.study.screen import PLAIN, Screen
    from drill.study.session_io import SessionIO

    now, tick = clock(now_text, tick_s)

    def read_line() -> str | None:
        tick()
        # sys.stdin at call time: click's test runner swaps it, a pipe or a TTY both work
        return terminal.read_input_line(sys.stdin)

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return SessionIO(read_line, _write, now, None, PLAIN)
    import shutil

    from drill.study.line_editor import terminal_reader

    reader = terminal_reader(MAX_LINE_BYTES)
    read_prompted = None
    if reader is not None:

        def read_prompted(prompt: str, remember: bool) -> str | None:
            tick()
            return reader(prompt, remember)

    def width() -> int:
        return shutil.get_terminal_size().columns

    screen = Screen(color=use_color(sys.stdout), width=width, bar=True)
    return SessionIO(read_line, _write, now, read_prompted, screen)


def _write(text: str) -> None:
    click.echo(text, nl=False)  # echo flushes, so a piped reader sees each prompt at once


@click.command()
@click.option("--topic", help="Only questions of this topic (e.g. kv-cache).")
@click.option(
    "--new",
    "new_limit",
    type=click.IntRange(min=0),
    help="New questions per day, counting those started today [config new-per-day: 10].",
)
@click.option(
    "--max",
    "max_items",
    type=click.IntRange(min=1),
    help="At most this many questions in the session [config max-per-session: 20].",
)
@click.option("--seed", type=int, help="Reproducible session: the same numbers every time.")
@click.option(
    "--cram",
    is_flag=True,
    help="Practice the weakest questions; answers are logged but the schedule is not changed.",
)
@bank_option
@db_option()
@click.option(
    "--retention",
    type=FiniteRange(0.7, 0.99),
    help="Desired probability of recall when a card comes due [config retention: 0.9].",
)
@click.option(
    "--drill",
    metavar="MISCONCEPTION",
    callback=utf8_text,
    help="Practise the questions that test one named mistake (an id such as "
    "forgot-kv-factor; `kvdrill mistakes` lists them); the schedule is not changed.",
)
@now_option
@click.option("--tick", "tick_s", type=FiniteRange(0, 86_400), default=0.0, hidden=True)
@click.option("--no-fuzz", is_flag=True, hidden=True, help="Exact intervals, for tests.")
def quiz(topic, new_limit, max_items, seed, cram, banks, db_path, retention, drill, now_text,
         tick_s, no_fuzz):
    """Today's quiz: due cards first, then new ones; every answer saved at once.

    Type an answer and press Enter, then Enter again to accept the suggested
    rating or type 1 (again) to 4 (easy). While a question is shown: h shows a
    hint, s skips, u takes the last answer back and asks it again, ! suspends
    the question (until `kvdrill unsuspend`), - buries it until tomorrow, q
    quits, ? lists the keys. A card answered wrong, or still in learning, comes
    back in the same session once its step has passed (after an Again, not before
    three other questions; config learn-ahead: shown early when nothing else is
    left). After `leech-threshold` lapses a card is suspended as a leech, and the
    mistake behind its lapses is named. The summary names the session's mistakes,
    each with its drill, and the cards still in learning.

    At a terminal the answer line can be edited (arrow keys, Ctrl-A/Ctrl-E, Up
    for earlier answers) and text is wrapped and coloured (NO_COLOR turns colour
    off). Input can be piped, one line per answer or key.
    """
    if drill and cram:
        raise click.UsageError("--drill and --cram cannot be used together")
    with signals_for_main_thread_only():
        from drill.bank.loader import load_default_bank
        from drill.errors import KvdrillError
        from drill.study.deadline import retention_toward
        from drill.study.session import run_session
        from drill.study.session_io import SessionOptions
        from drill.study.settings import read_settings
        from drill.study.signals import ending_signals

    io = _session_io(now_text, tick_s)
    now = io.now
    # the database first: a refused one stops the quiz before anything is
    # written elsewhere (such as the deck cache)
    db = open_database(db_path, write=True, now=now())
    try:
        settings = read_settings(db)
        # answers a busy or full database refused last time, before anything is planned
        merge_unsaved_answers(db, settings.scheduler(fuzz=not no_fuzz))
        days = user_days(settings, now_text)
        if retention is None:
            retention = settings.retention
            if settings.interview_date is not None:  # more recall as the interview nears
                retention = retention_toward(retention, settings.interview_date, now(), days)
        options = SessionOptions(
            topic=topic,
            new_limit=settings.new_per_day if new_limit is None else new_limit,
            max_items=settings.max_per_session if max_items is None else max_items,
            seed=seed,
            cram=cram,
            retention=retention,
            fuzz=not no_fuzz,
            learn_ahead=timedelta(minutes=settings.learn_ahead),
            leech_threshold=settings.leech_threshold,
            drill=drill,
            interview=settings.interview_date,
        )
        from drill.serving.measured import latest_measured

        # questions drawn from the user's own latest runs join when a run is stored
        bank = load_default_bank(banks).with_runs(latest_measured(db))
        with ending_signals():  # SIGTERM and SIGHUP end the session as Ctrl-C does
            result = run_session(db, bank, options, io, days=days)
    finally:
        db.conn.close()
    problem = unsaved_error(result.unsaved, result.unsaved_file, result.unsaved_shown)
    if problem:
        raise KvdrillError(problem)
