"""`kvdrill mistakes`: the named mistakes, with how often you made each and when last."""

from __future__ import annotations

import json
from pathlib import Path

import click

from drill.commands.options import (
    bank_option,
    database_path,
    db_option,
    now_option,
    open_database,
    parse_now,
    user_days,
)

MISTAKES_HELP = """List the named mistakes the grader can diagnose, with your counts.

Each mistake has an id (forgot-kv-factor) and a name ("forgot the K+V factor of
2"). The list holds the whole catalogue, the ones you made most often first
(then the latest made), with how many of your answers made each and when you
made it last, in your days' time zone; --made lists only those you made.
`kvdrill quiz --drill ID` practises the questions that test one.

\b
--json prints [{id, name, count, last_seen, questions}], one object per mistake:
  count       your answers (cram and drills included) that made it
  last_seen   the latest of them (ISO-8601, UTC), or null
  questions   questions of the bank whose answer key names it (a drill also
              asks those whose reviews recorded it)
"""


@click.command("mistakes", help=MISTAKES_HELP, short_help="List the named mistakes and your counts.")
@click.option("--made", is_flag=True, help="Only the mistakes you have made.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (keys above).")
@bank_option
@db_option()
@now_option
def mistakes_cmd(
    made: bool, as_json: bool, banks: tuple[Path, ...], db_path: Path | None,
    now_text: str | None,
) -> None:  # fmt: skip
    from drill.bank.loader import load_default_bank
    from drill.bank.misconceptions import load_misconception_catalogue
    from drill.reports.mistakes import mistake_rows, mistake_tallies, render_mistakes
    from drill.srs import parse_iso
    from drill.study.settings import Settings, read_settings

    now = parse_now(now_text)
    catalogue = {mid: info.name for mid, info in load_misconception_catalogue().items()}
    questions = list(load_default_bank(banks))
    settings, tallies = Settings(), {}
    if database_path(db_path).exists():  # no database yet: nothing made
        db = open_database(db_path, write=False, now=now)
        try:
            settings, tallies = read_settings(db), mistake_tallies(db, now)
        finally:
            db.conn.close()
    rows = mistake_rows(catalogue, questions, tallies)
    known = len(rows)
    if made:
        rows = [row for row in rows if row["count"]]
    if as_json:
        from drill.text import escape_json_controls

        click.echo(escape_json_controls(json.dumps(rows, indent=2)))
        return
    days = user_days(settings, now_text)

    def local(text: str) -> str:
        return f"{parse_iso(text).astimezone(days.tz):%Y-%m-%d %H:%M}"

    from drill.text import printable

    click.echo(printable(render_mistakes(rows, known, local)), nl=False)
