"""`kvdrill quiz`: today's session: due cards first, then a few new ones."""

from __future__ import annotations

from pathlib import Path

import click


def _parse_now(text: str):
    from datetime import datetime, timezone

    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise click.BadParameter(f"{text!r} is not an ISO time", param_hint="--now") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _clock_and_reader(fixed_now: str | None, tick_s: float):
    """(now, read_line, tz): the real clock, or a fixed one that advances per line read.

    The fixed clock exists for tests and demos: it starts at `fixed_now` and
    moves `tick_s` seconds each time a line is read, as if the user took that
    long to type it.
    """
    import sys
    from datetime import datetime, timedelta, timezone

    def read_raw() -> str | None:
        # sys.stdin at call time: click's test runner swaps it, a pipe or a TTY both work
        line = sys.stdin.readline()
        return line if line else None

    if fixed_now is None:
        return (lambda: datetime.now(timezone.utc)), read_raw, None
    start = _parse_now(fixed_now)
    clock = [start.astimezone(timezone.utc)]

    def read_ticking() -> str | None:
        clock[0] += timedelta(seconds=tick_s)
        return read_raw()

    return (lambda: clock[0]), read_ticking, start.tzinfo


def _write(text: str) -> None:
    click.echo(text, nl=False)  # echo flushes, so a piped reader sees each prompt at once


@click.command()
@click.option("--topic", help="Only questions of this topic (e.g. kv-cache).")
@click.option(
    "--new",
    "new_limit",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    help="New questions per day, counting those already started today.",
)
@click.option(
    "--max",
    "max_items",
    type=click.IntRange(min=1),
    default=20,
    show_default=True,
    help="At most this many questions in the session.",
)
@click.option("--seed", type=int, help="Reproducible session: the same numbers every time.")
@click.option(
    "--cram",
    is_flag=True,
    help="Practice the weakest questions; answers are logged but the schedule is not changed.",
)
@click.option(
    "--bank",
    "banks",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="An extra bank file or folder (repeatable).",
)
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Database file [default: $KVDRILL_HOME/kvdrill.db or the user data folder].",
)
@click.option(
    "--retention",
    type=click.FloatRange(0.7, 0.99),
    default=0.9,
    show_default=True,
    help="Desired probability of recall when a card comes due.",
)
@click.option("--now", "fixed_now", hidden=True, help="Fixed start time (ISO), for tests.")
@click.option("--tick", "tick_s", type=float, default=0.0, hidden=True)
@click.option("--no-fuzz", is_flag=True, hidden=True, help="Exact intervals, for tests.")
def quiz(topic, new_limit, max_items, seed, cram, banks, db_path, retention, fixed_now, tick_s,
         no_fuzz):
    """Today's quiz: due cards first, then new ones; every answer saved at once.

    Type an answer and press Enter, then Enter again to accept the suggested
    rating or type 1 (again) to 4 (easy). While a question is shown:
    h shows a hint, s skips, q quits. Input can be piped.
    """
    from drill.bank import load_default_bank
    from drill.session import SessionIO, SessionOptions, run_session
    from drill.store import open_db

    now, read_line, tz = _clock_and_reader(fixed_now, tick_s)
    # the database first: a refused one stops the quiz before anything is
    # written elsewhere (such as the deck cache)
    db = open_db(db_path)
    options = SessionOptions(
        topic=topic,
        new_limit=new_limit,
        max_items=max_items,
        seed=seed,
        cram=cram,
        retention=retention,
        fuzz=not no_fuzz,
    )
    try:
        bank = load_default_bank(banks)
        run_session(db, bank, options, SessionIO(read_line, _write, now), tz=tz)
    finally:
        db.conn.close()
