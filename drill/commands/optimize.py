"""`kvdrill optimize`: FSRS's parameters fitted to the user's own reviews."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click

from drill.commands.options import db_option, open_database

OPTIMIZE_HELP = """Fit FSRS's parameters to your own review history.

fsrs's optimizer learns from the reviews made a day or more after the question's
previous review (it needs 512 of them) on about four questions in five; the rest,
chosen by a stable hash of each question's id, are held out. FSRS's default
parameters and the fitted ones then each predict the held-out reviews (the
chance of recall FSRS gives just before each review), scored against what
happened (recalled unless rated Again) by log loss and RMSE: lower is better.

When the fitted parameters predict better they are stored as `kvdrill config
fsrs-parameters`, and the quiz, import, doctor and stats schedule with them from
then on; every card's memory state (stability and difficulty) is recomputed
from its history, its due date kept. `kvdrill config --unset fsrs-parameters`
goes back to FSRS's defaults. Cram and drill reviews are left out, as the
schedule leaves them out.

Needs torch, pandas and tqdm: pip install 'kvdrill[optimize]'. The fit takes a
few seconds per thousand reviews.

\b
--json prints one object:
  questions, reviews     the history's questions and reviews
  fit {questions, reviews, seconds}
                         the questions fitted to, the reviews learnt from (a
                         day or more after the one before), the fit's time
  held_out {questions, reviews}
                         the held-out questions and the reviews scored
  default {log_loss, rmse}
                         FSRS's defaults on the held-out reviews (null: none)
  fitted {log_loss, rmse}
                         the fitted parameters on them (null: none)
  parameters             the 21 fitted parameters
  stored                 whether they were stored (false with --dry-run, or
                         when they predict no better than the defaults)
"""


@click.command("optimize", help=OPTIMIZE_HELP, short_help="Fit FSRS to your own reviews.")
@click.option("--dry-run", is_flag=True, help="Fit and score, but store nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (keys above).")
@db_option()
def optimize_cmd(dry_run: bool, as_json: bool, db_path: Path | None) -> None:
    from drill.study.fsrs_fit import fit, load_history
    from drill.study.settings import write_setting

    # read first: a missing or empty database is refused, not created; it is opened for
    # writing only to store what the fit found
    db = open_database(db_path, write=False)
    try:
        result = fit(load_history(db), time.perf_counter, progress=sys.stderr.isatty())
    finally:
        db.conn.close()
    stored = result.better and not dry_run
    if stored:
        db = open_database(db_path, write=True)
        try:
            write_setting(db, "fsrs-parameters", json.dumps(list(result.parameters)))
        finally:
            db.conn.close()
    held_out_reviews = result.default.reviews if result.default else 0
    if as_json:
        scores = {
            "default": result.default.as_json() if result.default else None,
            "fitted": result.fitted.as_json() if result.fitted else None,
        }
        click.echo(
            json.dumps(
                {
                    "questions": result.questions,
                    "reviews": result.reviews,
                    "fit": {
                        "questions": result.fit_questions,
                        "reviews": result.fit_reviews,
                        "seconds": round(result.fit_s, 3),
                    },
                    "held_out": {
                        "questions": result.held_out_questions,
                        "reviews": held_out_reviews,
                    },
                    **scores,
                    "parameters": list(result.parameters),
                    "stored": stored,
                }
            )
        )
        return
    click.echo(
        f"Fitted FSRS to {result.fit_questions:,} questions ({result.fit_reviews:,} reviews a"
        f" day or more after the one before) in {result.fit_s:.1f} s."
    )
    if result.default is None or result.fitted is None:
        click.echo(
            f"None of the {result.held_out_questions:,} held-out questions has a review a day"
            " or more after another to score the fit on."
        )
    else:
        click.echo(
            f"Scored on {held_out_reviews:,} reviews of {result.held_out_questions:,}"
            " held-out questions:"
        )
        click.echo(f"  {'':<14}  {'log loss':>8}  {'RMSE':>6}")
        for name, figures in (("FSRS defaults", result.default), ("fitted", result.fitted)):
            click.echo(f"  {name:<14}  {figures.log_loss:>8.4f}  {figures.rmse:>6.4f}")
    if stored:
        click.echo(
            "Stored as fsrs-parameters: the quiz, import, doctor and stats schedule with them"
            " now,\nand every card's memory state was recomputed with them."
            "\n`kvdrill config --unset fsrs-parameters` goes back to FSRS's defaults."
        )
    elif dry_run:
        click.echo("Not stored (--dry-run).")
    else:
        click.echo(
            "Not stored: the fitted parameters predict the held-out reviews no better than"
            " FSRS's defaults; fsrs-parameters is unchanged."
        )
