"""`kvdrill sheet`: a printable mock interview and its answer key."""

from __future__ import annotations

import secrets
from datetime import timezone
from pathlib import Path

import click

from drill.commands.options import (
    bank_option,
    db_option,
    now_option,
    open_database,
    output_option,
    parse_now,
)

SHEET_HELP = """Write a mock interview sheet and, separately, its answer key.

The sheet mixes kinds (calculations, explanations, multiple choice, ordering) and
difficulties; the key gives each answer with its worked solution, the numbers
substituted, unit conversions, key points, right options and right order. The same
--seed and bank give byte-identical files (a sheet carries no date); without --seed
a random one is drawn and printed on the sheet. --focus weak draws your weakest
questions more often (low recall now and low accuracy in your history), so the
choice then also depends on your history and today's date.

\b
Output: Markdown on standard output unless -o FILE; --format html (or an -o name
ending in .html) writes one self-contained page with print styles: each part starts
on a new page and every question has room to write. The key goes to --key FILE;
with -o and no --key it is written next to the sheet as NAME.key.EXT.
"""


def _key_path_for(output: Path) -> Path:
    return output.with_name(f"{output.stem}.key{output.suffix}")


@click.command(help=SHEET_HELP, short_help="Write a mock interview sheet and answer key.")
@click.option(
    "-n",
    "--n",
    "count",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="How many questions.",
)
@click.option("--seed", type=click.IntRange(min=0), help="Which sheet (default: a random one).")
@click.option("--topic", help="Only questions of this topic.")
@click.option("--focus", type=click.Choice(["weak"]), help="Weight the choice to weak spots.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "html"]),
    help="md or html (default: from -o's extension, else md).",
)
@output_option("Write the sheet to this file instead of standard output.")
@click.option(
    "--key",
    "key_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the answer key to this file.",
)
@bank_option
@db_option("Database file (read for --focus weak).")
@now_option
def sheet(count, seed, topic, focus, fmt, output, key_path, banks, db_path, now_text) -> None:
    from drill.bank.loader import eligible_questions, load_default_bank
    from drill.errors import KvdrillError
    from drill.kinds import make_instance
    from drill.reports.sheet import RENDERERS, build_documents, choose_questions, weak_weights
    from drill.storage.outfile import check_outputs, protected_files, write_text

    if key_path is None and output is not None:
        key_path = _key_path_for(output)
    protected = protected_files(db_path)
    if output is not None and key_path is not None and output.resolve() == key_path.resolve():
        raise KvdrillError(f"the sheet and its key would both be written to {output}")
    check_outputs([output, key_path], protected)  # both, before either is written
    from drill.commands.measurements import measured_at

    bank = load_default_bank(banks).with_runs(measured_at(db_path))
    questions = eligible_questions(bank, topic)
    if seed is None:
        seed = secrets.randbelow(2**31)
    weights = None
    if focus == "weak":
        from drill.reports.stats import question_figures

        now = parse_now(now_text).astimezone(timezone.utc)
        db = open_database(db_path, write=False, now=now)
        topics = {q.id: q.topic for q in questions}
        weights = weak_weights(question_figures(db, now, topics))
    chosen = choose_questions(questions, count, seed, weights=weights)
    sheet_doc, key_doc = build_documents(chosen, seed, make_instance)

    if fmt is None:
        fmt = "html" if output is not None and output.suffix.lower() in (".html", ".htm") else "md"
    render = RENDERERS[fmt]
    if output is None:
        click.echo(render(sheet_doc), nl=False)
    else:
        write_text(output, render(sheet_doc), protected)
    if key_path is not None:
        write_text(key_path, render(key_doc), protected)
    where = f"sheet {output}, key {key_path}" if output else f"key {key_path}"
    if key_path is None:
        where = "no key written (add --key FILE)"
    click.echo(f"Sheet {seed}: {len(chosen)} questions; {where}.", err=True)
