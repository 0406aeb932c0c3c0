"""Options several commands share: one definition each."""

from __future__ import annotations

import math
from datetime import datetime, timezone
from pathlib import Path

import click


def bank_option(func):
    """`--bank PATH` (repeatable): extra bank files or folders, after the built-in deck."""
    return click.option(
        "--bank",
        "banks",
        multiple=True,
        type=click.Path(path_type=Path),
        help="An extra bank file or folder (repeatable); KVDRILL_BANK adds more.",
    )(func)


def db_option(help: str = "Database file [default: $KVDRILL_HOME/kvdrill.db or the user data folder]."):
    """`--db FILE`, passed as `db_path` (None: the default location)."""
    return click.option(
        "--db", "db_path", type=click.Path(dir_okay=False, path_type=Path), help=help
    )


def output_option(help: str):
    """`-o/--output FILE`, passed as `output`; the command writes it through drill.storage.outfile."""
    return click.option(
        "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help=help
    )


def report_option(help: str):
    """`--report FILE` (repeatable), passed as `report_paths`: where an interview's report
    is written (drill.interview.report.report_format picks Markdown or HTML)."""
    return click.option(
        "--report",
        "report_paths",
        type=click.Path(dir_okay=False, path_type=Path),
        multiple=True,
        help=help,
    )


def now_option(func):
    """Hidden `--now ISO`, passed as `now_text`: pretend it is that time (tests, demos)."""
    return click.option(
        "--now", "now_text", hidden=True, help="Pretend it is this ISO-8601 time (tests)."
    )(func)


def parse_now(text: str | None) -> datetime:
    """The `--now` value as an aware time (without an offset: UTC); None: the clock, in UTC.

    The year must lie in drill.moments' span (1970 to 9000), where date arithmetic is safe.
    """
    if text is None:
        return datetime.now(timezone.utc)
    from drill.moments import moment_problem

    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        shown = text if len(text) <= 40 else text[:37] + "..."
        raise click.BadParameter(f"not an ISO-8601 time: {shown!r}", param_hint="--now") from None
    moment = moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
    problem = moment_problem(moment)
    if problem:
        raise click.BadParameter(f"{text!r} {problem}", param_hint="--now")
    return moment


DATABASE_KEY = "kvdrill.database"  # in click's context meta: the database a command uses


def database_path(db_path: Path | None) -> Path:
    """The database a command uses (`--db`, else the default one), remembered for the one
    line the command line prints should a SQLite error escape the command."""
    from drill.paths import default_db_path

    path = db_path if db_path is not None else default_db_path()
    context = click.get_current_context(silent=True)
    if context is not None:
        context.meta[DATABASE_KEY] = path  # shared by every context of this invocation
    return path


def open_database(
    db_path: Path | None, *, write: bool, now: datetime | None = None, older_schema: bool = False
):
    """The database for a command (see drill.storage.database.open_db); backup trouble is a warning."""
    from drill.storage.database import open_db

    def warn(message: str) -> None:
        click.echo(f"Warning: {message}", err=True)

    path = database_path(db_path)
    return open_db(path, write=write, now=now, warn=warn, older_schema=older_schema)


def user_days(settings, now_text: str | None):
    """The user's days (drill.study.days.DayClock) from the settings; with the zone setting
    left at "local", a --now time with an offset is taken to be in that local zone."""
    from dataclasses import replace

    days = settings.day_clock()
    if now_text is not None and settings.timezone == "local":
        moment = parse_now(now_text)
        days = replace(days, tz=moment.tzinfo)
    return days


class FiniteRange(click.FloatRange):
    """A FloatRange that also refuses nan (which compares false with either bound)."""

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if math.isnan(number):
            self.fail(f"{value!r} is not a number", param, ctx)
        return number


def utf8_text(ctx, param, value):
    """A click callback: refuse an argument (or each of several) that is not UTF-8 text
    (bytes the system could not decode arrive as lone surrogates, which can be neither
    stored nor looked up)."""
    from drill.text import valid_text

    for text in value if isinstance(value, tuple) else [value]:
        if text is not None and valid_text(text) != text:
            raise click.BadParameter(f"{valid_text(text)!r} is not valid UTF-8 text", ctx, param)
    return value
