"""`kvdrill interview list` and `kvdrill interview report ID`: the interviews held, and
one's report shown again from what was stored with its answers."""

from __future__ import annotations

import json
from pathlib import Path

import click

from drill.commands.options import (
    db_option,
    now_option,
    open_database,
    report_option,
    user_days,
)

LIST_HELP = """List the mock interviews held, the newest first.

Each line gives the interview's id (its first 8 characters are enough for
`kvdrill interview report`), when it began (in your zone), its score (1 per right
answer, the share of key points covered per explanation, as its report scores),
the questions answered of those planned, the time it took of its length, and its
seed. An interview held before reports were kept shows its score but has no report.

\b
--json prints a list, one object per interview:
  id, started_at        the interview's id; when it began (ISO-8601, UTC)
  answered, planned     questions answered; planned (null: not kept)
  points, percent       the score, and its share of the questions answered
  minutes, elapsed_s    its length (null: not kept); seconds it took (null: unknown)
  seed, ended_by        its seed; done, time, quit, eof, interrupt, or null
                        when its end was not saved
  report                whether `kvdrill interview report` can show its report
"""

REPORT_HELP = """Show a stored mock interview's report again.

ID is the interview's id as `kvdrill interview list` shows it (any unique start of
it). The report is the one the interview ended with, built from what was stored with
each answer: the questions as asked, the answers, the verdicts, the times and the
things to drill next. --report FILE writes it as Markdown, or as a web page for a
name ending in .html; repeat it for more files. --json prints the object
`kvdrill interview --json` printed (its keys are listed in `kvdrill interview -h`):
seed, minutes, planned, answered, ended_by, elapsed_s, score, questions, topics,
drill_next.
"""


@click.command("list", help=LIST_HELP, short_help="List the interviews held, with their scores.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list (see above).")
@db_option()
@now_option
def interview_list(as_json: bool, db_path: Path | None, now_text: str | None) -> None:
    from drill.storage.interviews import interview_scores
    from drill.study.settings import read_settings

    db = open_database(db_path, write=False)
    try:
        days = user_days(read_settings(db), now_text)
        found = interview_scores(db)
    finally:
        db.conn.close()
    for item in found:
        item["percent"] = percent(item["points"], item["answered"])
        if item["elapsed_s"] is None and item["ended_at"] is not None:
            item["elapsed_s"] = _seconds_between(item["started_at"], item["ended_at"])
    if as_json:
        keys = ("id", "started_at", "answered", "planned", "points", "percent", "minutes",
                "elapsed_s", "seed", "ended_by", "report")  # fmt: skip
        click.echo(json.dumps([{k: item[k] for k in keys} for item in found], indent=2))
        return
    if not found:
        click.echo("No interviews yet: `kvdrill interview` starts one.")
        return
    click.echo("".join(line + "\n" for line in list_lines(found, days)), nl=False)


def list_lines(found, days) -> list[str]:
    """The interviews as an aligned table (drill.reports.stats_text.text_table)."""
    from drill.interview.plan import clock
    from drill.interview.report import score_text
    from drill.reports.stats_text import text_table
    from drill.srs import parse_iso
    from drill.text import printable

    rows = []
    for item in found:
        began = parse_iso(item["started_at"]).astimezone(days.tz)
        planned = f" of {item['planned']}" if item["planned"] is not None else ""
        took = clock(item["elapsed_s"]) if item["elapsed_s"] is not None else "-"
        length = f" of {clock(item['minutes'] * 60)}" if item["minutes"] is not None else ""
        rows.append([
            printable(item["id"][:8]),
            f"{began:%Y-%m-%d %H:%M}",
            f"{score_text(item['points'])} of {item['answered']} ({item['percent']} %)",
            f"{item['answered']}{planned}",
            took + length,
            str(item["seed"]) if item["seed"] is not None else "-",
            "" if item["report"] else "no report kept",
        ])  # fmt: skip
    header = ["id", "began", "score", "answered", "time", "seed", ""]
    return text_table(header, rows, indent="", align="lllllrl")


def percent(points: float, answered: int) -> int:
    """The score's share of the questions answered, in whole percent (0 for none), as a
    report gives it."""
    return round(100 * points / answered) if answered else 0


def _seconds_between(start: str, end: str) -> float:
    from drill.srs import parse_iso

    return (parse_iso(end) - parse_iso(start)).total_seconds()


@click.command("report", help=REPORT_HELP, short_help="Show a stored interview's report again.")
@click.argument("interview_id", metavar="ID")
@report_option(
    "Write the report to FILE: Markdown, or HTML for a name ending in .html "
    "(repeat for more files)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (see above).")
@db_option()
def interview_report(
    interview_id: str, report_paths: tuple[Path, ...], as_json: bool, db_path: Path | None
) -> None:
    from drill.interview.report import RENDERERS, render_text, report_format, report_json
    from drill.interview.stored import stored_report
    from drill.storage.interviews import find_interview, stored_interview
    from drill.storage.outfile import check_outputs, protected_files, write_text

    protected = protected_files(db_path)
    report_paths = tuple(dict.fromkeys(report_paths))
    check_outputs(list(report_paths), protected)
    db = open_database(db_path, write=False)
    try:
        report = stored_report(*stored_interview(db, find_interview(db, interview_id)))
    finally:
        db.conn.close()
    for path in report_paths:
        write_text(path, RENDERERS[report_format(path.name)](report), protected)
    if as_json:
        click.echo(json.dumps(report_json(report), indent=2, ensure_ascii=False))
    else:
        click.echo(render_text(report), nl=False)
    for path in report_paths:
        click.echo(f"Report written to {path}.", err=True)
