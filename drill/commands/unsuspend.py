"""`kvdrill unsuspend`: bring suspended or buried questions back into the schedule."""

from __future__ import annotations

import json
from pathlib import Path

import click

from drill.commands.options import db_option, now_option, open_database, parse_now, utf8_text

UNSUSPEND_HELP = """Bring suspended or buried questions back, or list them.

\b
  kvdrill unsuspend ID [ID...]    back into the schedule, as they were
  kvdrill unsuspend --list        the questions held back

In the quiz, ! suspends a question until this command brings it back, and -
buries one until the next day (this command lifts a bury too). A card whose
lapses reach `kvdrill config leech-threshold` is flagged a leech and suspended;
the list names the mistake the grader saw in most of its lapses, and
`kvdrill quiz --drill ID` practises the questions that test that mistake. A
leech brought back stays flagged (stats counts leeches). A question held back
before its first answer is new again.

\b
--json prints [{question_id, held, suspended_at, buried_until, leech_at,
lapses, lapse_misconception, lapse_misconception_name, lapses_with_it}], one
object per question listed (or brought back):
  held                      "suspended" or "buried"
  suspended_at, leech_at    when it was suspended / flagged a leech, or null
  buried_until              when its bury ends, or null
  lapses                    its lapses so far
  lapse_misconception       id of the mistake named in most of its lapses,
                            or null (no lapse named one)
  lapse_misconception_name  that mistake in words, or null
  lapses_with_it            how many of its lapses named it
Times are ISO-8601 in UTC.
"""


def held_records(db, rows, now_iso: str) -> list[dict]:
    """The --json records of held card rows, with the mistake behind their lapses."""
    from drill.bank.misconceptions import catalogue_entry
    from drill.study.leech import card_lapse_cause
    from drill.study.settings import read_settings

    scheduler = read_settings(db).scheduler(fuzz=False)
    records = []
    for row in rows:
        cause = card_lapse_cause(db, row["question_id"], scheduler)
        mistake = cause.misconception
        records.append(
            {
                "question_id": row["question_id"],
                "held": "suspended" if row["suspended_at"] else "buried",
                "suspended_at": row["suspended_at"],
                "buried_until": row["buried_until"] if (row["buried_until"] or "") > now_iso
                else None,
                "leech_at": row["leech_at"],
                "lapses": row["lapses"],
                "lapse_misconception": mistake,
                "lapse_misconception_name": catalogue_entry(mistake).name if mistake else None,
                "lapses_with_it": cause.count,
            }
        )
    return records


def render_held(records: list[dict]) -> str:
    from drill.reports.stats_text import text_table
    from drill.text import printable

    if not records:
        return "No question is suspended or buried.\n"
    rows = []
    for r in records:
        since = r["suspended_at"] if r["held"] == "suspended" else r["buried_until"]
        mistake = "-"
        if r["lapse_misconception"]:
            mistake = (
                f"{r['lapse_misconception_name']} ({r['lapses_with_it']} of {r['lapses']}): "
                f"kvdrill quiz --drill {r['lapse_misconception']}"
            )
        rows.append([
            printable(r["question_id"]), r["held"], (since or "")[:16].replace("T", " "),
            str(r["lapses"]), "yes" if r["leech_at"] else "", mistake,
        ])  # fmt: skip
    header = ["question", "held", "since/until (UTC)", "lapses", "leech", "behind most lapses"]
    return "\n".join(text_table(header, rows, indent="", align="lllrll")) + "\n"


def _refuse_ids_not_held(question_ids: tuple[str, ...], held_rows: list[dict]) -> None:
    """A CardError for the first id that is not held, suggesting held ids close to it."""
    from drill.errors import CardError, did_you_mean

    held = [row["question_id"] for row in held_rows]
    for qid in question_ids:
        if qid not in held:
            hint = did_you_mean(qid, held)
            raise CardError(f"{qid} is neither suspended nor buried; nothing was changed"
                            + (f" ({hint})" if hint else ""))  # fmt: skip


@click.command("unsuspend", help=UNSUSPEND_HELP, short_help="Unsuspend or list held questions.")
@click.argument("question_ids", nargs=-1, metavar="[ID]...", callback=utf8_text)
@click.option("--list", "list_held", is_flag=True, help="List suspended and buried questions.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (keys above).")
@db_option()
@now_option
def unsuspend_cmd(
    question_ids: tuple[str, ...],
    list_held: bool,
    as_json: bool,
    db_path: Path | None,
    now_text: str | None,
) -> None:
    from drill.srs import iso
    from drill.storage.reviews import held_cards, release_cards

    if list_held == bool(question_ids):
        raise click.UsageError("give question ids to bring back, or --list")
    now = parse_now(now_text)
    db = open_database(db_path, write=not list_held, now=now)
    try:
        if list_held:
            rows = held_cards(db, iso(now))
        else:
            _refuse_ids_not_held(question_ids, held_cards(db, iso(now)))
            rows = release_cards(db, list(dict.fromkeys(question_ids)), iso(now))
        records = held_records(db, rows, iso(now))
    finally:
        db.conn.close()
    if as_json:
        from drill.text import escape_json_controls

        click.echo(escape_json_controls(json.dumps(records, indent=2)))
    elif list_held:
        click.echo(render_held(records), nl=False)
    else:
        from drill.text import printable

        for row in rows:
            again = " as a new question" if row["reps"] == 0 else ""
            leech = " It stays flagged a leech." if row["leech_at"] else ""
            click.echo(f"{printable(row['question_id'])} is back in the schedule{again}.{leech}")
