"""`kvdrill export` and `kvdrill import`: the review history as JSON Lines or CSV."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from drill.commands.options import db_option, open_database, output_option
from drill.storage.review_record import fields_help

FORMAT_HELP = f"""
\b
One record per review, oldest first. Fields, in order:
{fields_help()}

\b
jsonl: one JSON object per line (UTF-8).
csv:   a header row naming the columns, then one row per review; an empty
       cell is null, booleans are true/false, params is JSON text. A text
       cell (question_id, answer, unit, misconception, session_id) that a
       spreadsheet could run as a formula (it starts with = + - @, a tab or a
       carriage return), or that starts with ' or is empty text, gets one '
       in front; import takes one leading ' off these cells.

\b
Import refuses, naming FILE:LINE: a line longer than 1 MiB; JSON nested more
than 64 levels deep, or holding NaN or Infinity; an answer longer than 10,000
characters; another text field longer than 1,000 characters or holding control
characters; a reviewed_at outside the years 1970 to 9000; and an id twice in
the file with different content (the same record twice is read once).
"""

EXPORT_HELP = "Write your review history as JSON Lines (default) or CSV.\n" + FORMAT_HELP

IMPORT_HELP = (
    """Merge a review history file (JSON Lines or CSV) into the database.

The format comes from the extension (.jsonl/.ndjson/.json, .csv), else from the first
character. FILE may be a stream (`kvdrill import /dev/stdin`, a FIFO, a process
substitution): it is read once, and what is read is copied into the temporary folder
to name the lines of an id found twice. Reviews are merged by id: one already present is kept as it is, so importing
the same file twice adds nothing. Reviews of questions not in the bank are kept. Then
every card is rebuilt by replaying all non-cram reviews through FSRS in time order, with
your FSRS parameters (`kvdrill optimize`) at the retention of `kvdrill config retention`.
A bad record stops the import with FILE:LINE and nothing from the file is imported.
"""
    + FORMAT_HELP
)

@click.command("export", help=EXPORT_HELP, short_help="Write your review history to a file.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "csv"]),
    help="Output format (default: from -o's extension, else jsonl).",
)
@click.option(
    "--salvage",
    is_flag=True,
    help="Read what can still be read from a damaged database (JSON Lines only), through "
    "the table and every index that lists the reviews; each review the file still lists is "
    "saved or reported lost, by rowid range. Exit status 1 (the file still written) when "
    "any was lost or left out. Then `kvdrill restore` a backup and `kvdrill import` this "
    "file to add back the reviews the backup lacks.",
)
@output_option("Write to this file instead of standard output.")
@db_option()
def export_cmd(fmt: str | None, salvage: bool, output: Path | None, db_path: Path | None) -> None:
    from drill.storage.history_out import export_history
    from drill.storage.outfile import atomic_output, check_outputs, protected_files

    if fmt is None:
        fmt = "csv" if output is not None and output.suffix.lower() == ".csv" else "jsonl"
    protected = protected_files(db_path)
    check_outputs([output], protected)  # before the database is even opened
    if salvage:
        _salvage(fmt, output, db_path, protected)
        return
    db = open_database(db_path, write=False)
    if output is None:
        sys.stdout.flush()  # the text layer first, then the history's bytes beneath it
        export_history(db, sys.stdout.buffer, fmt)
        sys.stdout.buffer.flush()
        return
    with atomic_output(output, protected, binary=True) as out:
        count = export_history(db, out, fmt)
    click.echo(f"Exported {count} reviews to {output}.", err=True)


def _salvage(fmt: str, output: Path | None, db_path: Path | None, protected) -> None:
    from drill.errors import StoreError
    from drill.paths import default_db_path
    from drill.storage.outfile import atomic_output
    from drill.storage.salvage import describe_lost, describe_unreadable, salvage_history

    if fmt != "jsonl":
        raise click.UsageError("--salvage writes JSON Lines only; leave out --format csv")
    path = db_path or default_db_path()
    if output is None:
        sys.stdout.flush()
        result = salvage_history(path, sys.stdout.buffer)
        sys.stdout.buffer.flush()
    else:
        with atomic_output(output, protected, binary=True) as out:
            result = salvage_history(path, out)
    where = "standard output" if output is None else str(output)
    lines = [f"Saved {result.saved:,} review{'' if result.saved == 1 else 's'} from {path} to {where}."]
    if result.lost:
        count = result.lost_count
        lines.append(
            f"Lost {count:,} review{'' if count == 1 else 's'} the file still lists: "
            f"{describe_lost(result.lost)}."
        )
    if result.unreadable:
        lines.append(f"Unreadable: {describe_unreadable(result.unreadable)}.")
    if result.log_left_out:
        lines.append("Its write-ahead log could not be read with it and was left out.")
    if result.failed_checks:
        lines.append(f"Left out, as an import would refuse them: {result.failed_checks:,}.")
    if output is not None:
        lines.append(
            f"To put them back: kvdrill restore BACKUP, then kvdrill import {output} "
            "(it adds only the reviews the backup lacks)."
        )
    if result.complete:
        click.echo(" ".join(lines), err=True)
        return
    # the file is written; the one error line says what it lacks, then what it holds
    missing = []
    if result.lost:
        missing.append(f"{result.lost_count:,} lost")
    if result.unreadable:
        missing.append(f"at most {result.unreadable_rowids:,} unreadable")
    if result.failed_checks:
        missing.append(f"{result.failed_checks:,} left out")
    if result.log_left_out:
        missing.append("its write-ahead log left out")
    raise StoreError(
        f"not every review of {path} was saved ({', '.join(missing)}). " + " ".join(lines)
    )


@click.command("import", help=IMPORT_HELP, short_help="Merge a review history file.")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "csv"]),
    help="Read the file as this format instead of guessing.",
)
@db_option()
def import_cmd(file: Path, fmt: str | None, db_path: Path | None) -> None:
    from drill.storage.history_in import import_history
    from drill.study.load_balance import load_balancer
    from drill.study.settings import read_settings

    db = open_database(db_path, write=True)
    # the replay schedules as the quiz does: the user's retention and FSRS parameters,
    # due dates placed by the load balancer (the same every time for the same file)
    settings = read_settings(db)
    scheduler = settings.scheduler(fuzz=False)
    balancer = load_balancer(settings.easy_days, settings.day_clock(), scheduler)
    result = import_history(db, file, scheduler, fmt=fmt, place=balancer.place_rebuilt)
    present = result.read - result.added
    click.echo(
        f"Imported {result.added} new reviews from {file} ({present} already present);"
        f" rebuilt {result.cards} cards."
    )
