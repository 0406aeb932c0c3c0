"""`kvdrill config`: settings that persist in the database."""

from __future__ import annotations

import json
from pathlib import Path

import click

from drill.commands.options import db_option, now_option, open_database, parse_now, user_days

CONFIG_HELP = """Show or change settings kept in the database.

\b
  kvdrill config                      every setting, its value and what it does
  kvdrill config KEY                  one setting's value
  kvdrill config KEY VALUE            change it
  kvdrill config --unset KEY          back to its default

\b
Settings:
{settings}

A quiz's --retention, --new and --max override these for that session only.
Days (new cards a day, streak, heatmap, retention, forecast) are your days:
midnight-to-midnight in the time zone, shifted to begin at the rollover hour, so
a review at 1 am counts for the day before.

\b
--json prints {{key: value}} for every setting.
"""


def _settings_help() -> str:
    from drill.study.settings import SETTINGS, Settings

    width = max(len(key) for key in SETTINGS) + 2
    return "\n".join(
        f"  {s.key:<{width}}{s.help} [{Settings().shown(s.key)}]" for s in SETTINGS.values()
    )


@click.command(
    "config",
    help=CONFIG_HELP.format(settings=_settings_help()),
    short_help="Show or change settings.",
    context_settings={"ignore_unknown_options": True},  # a VALUE of -1 is a value
)
@click.argument("key", required=False)
@click.argument("value", required=False)
@click.option("--unset", is_flag=True, help="Put KEY back to its default.")
@click.option("--json", "as_json", is_flag=True, help="Print every setting as JSON.")
@db_option()
@now_option
def config_cmd(
    key: str | None,
    value: str | None,
    unset: bool,
    as_json: bool,
    db_path: Path | None,
    now_text: str | None,
) -> None:
    from drill.paths import default_db_path
    from drill.study.settings import SETTINGS, Settings, read_settings, setting, write_setting

    if unset and (key is None or value is not None):
        raise click.UsageError("--unset takes one KEY and no VALUE")
    writing = unset or value is not None
    if key is not None:
        setting(key)  # an unknown key fails before the database is touched
    path = db_path if db_path is not None else default_db_path()
    if not writing and not path.exists():
        settings = Settings()  # nothing stored yet: the defaults
    else:
        db = open_database(path, write=writing)
        try:
            if writing and key is not None:
                if setting(key).key == "interview-date" and value is not None:
                    _refuse_a_past_day(value, read_settings(db), now_text)
                settings = write_setting(db, key, None if unset else value)
                if setting(key).key == "interview-date" and settings.interview_date is not None:
                    moved = _bring_cards_forward(db, settings, now_text)
                    cards = "card" if moved == 1 else "cards"
                    click.echo(f"{moved} {cards} brought back before the interview.", err=True)
            else:
                settings = read_settings(db)
        finally:
            db.conn.close()
    if as_json:
        keys = [setting(key).key] if key is not None else list(SETTINGS)
        click.echo(json.dumps({k: settings.json_value(k) for k in keys}))
        return
    if key is not None:
        item = setting(key)
        click.echo(f"{item.key} = {settings.shown(item.key)}")
        return
    click.echo(settings_listing(settings), nl=False)


def settings_listing(settings) -> str:
    """Every setting: its key, value (marked when changed) and, on the next line under the
    value, what it does."""
    from drill.study.settings import SETTINGS

    width = max(len(k) for k in SETTINGS) + 2
    lines = []
    for item in SETTINGS.values():
        current = getattr(settings, item.attribute)
        mark = "" if current == item.default else "  (changed)"
        lines.append(f"{item.key:<{width}}{settings.shown(item.key)}{mark}")
        lines.append(f"{'':<{width}}{item.help}")
    return "\n".join(lines) + "\n"


def _refuse_a_past_day(text: str, settings, now_text: str | None) -> None:
    """An interview date before the user's today is a slip: refuse it."""
    from drill.errors import ConfigError
    from drill.study.settings import parse_value

    day = parse_value("interview-date", text)
    today = user_days(settings, now_text).day_of(parse_now(now_text))
    if day is not None and day < today:
        raise ConfigError(f"interview-date {day} is before today ({today}); nothing was changed")


def _bring_cards_forward(db, settings, now_text: str | None) -> int:
    """Every card due on or after the interview day is brought into the days before it."""
    from drill.storage.reviews import move_dues
    from drill.study.deadline import capped_due

    now = parse_now(now_text)
    days = user_days(settings, now_text)
    interview = settings.interview_date
    return move_dues(
        db, lambda qid, due, last: capped_due(due, qid, last, now, interview, days)
    )
