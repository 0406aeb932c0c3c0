"""`kvdrill optimize`: FSRS's parameters fitted to the user's own reviews."""

from __future__ import annotations

import json
import textwrap
import time
from pathlib import Path

import click

from drill.commands.options import bank_option, db_option, open_database

OPTIMIZE_HELP = """Fit FSRS's parameters to your own review history.

The fit, its evaluation and the optimal retention are fsrs-rs's, the FSRS engine
Anki itself runs. It learns FSRS-6's 21 parameters from each review made a day or
more after the question's previous one (it needs 64), with the question's reviews
before it. Anki's evaluation judges it: the reviews in time order are cut into six
parts, and each of the last five is predicted by parameters fitted to everything
before it and by FSRS's defaults (the chance of recall just before each review,
scored against what happened: recalled unless rated Again) by log loss and
RMSE(bins): lower is better.

When the fits predict better than the defaults, the parameters fitted to the whole
history are stored as `kvdrill config fsrs-parameters`, and the quiz, import, doctor
and stats schedule with them from then on; every card's memory state (stability
and difficulty) is recomputed from its history, its due date kept. `kvdrill config
--unset fsrs-parameters` goes back to FSRS's defaults. Cram and drill reviews are
left out, as the schedule leaves them out.

The optimal retention is the desired retention (0.70 at the least) whose simulated
year of study costs the fewest seconds per question remembered at its end, with the
parameters you will schedule with: your deck (the bank's questions), your
new-per-day, and your own answers' shares and median seconds by kind of review
(first, a day or more later, again after a lapse), each taken from your history once
5 reviews give it and fsrs-rs's default before; a day's study is capped at 30
minutes. It is shown, not set: `kvdrill config retention` sets it.

\b
--json prints one object:
  questions, reviews     the history's questions and reviews
  fit {reviews, seconds}
                         the reviews learnt from (a day or more after the one
                         before) and the time of the fit and its evaluation
  tested {reviews}       the reviews the evaluation predicts (the last 5/6)
  default {log_loss, rmse_bins}
                         FSRS's defaults on them
  fitted {log_loss, rmse_bins}
                         the parameters fitted before each sixth, on them
  parameters             the 21 parameters fitted to the whole history
  stored                 whether they were stored (false with --dry-run, or
                         when the fits predict no better than the defaults)
  optimal_retention {retention, simulated_with, deck_size, new_per_day,
                     days, daily_minutes, own_figures}
                         the optimal retention; the parameters simulated
                         ("fitted", or "current" when not better); what it
                         assumed; how many of the 23 cost figures are yours
"""


@click.command("optimize", help=OPTIMIZE_HELP, short_help="Fit FSRS to your own reviews.")
@click.option("--dry-run", is_flag=True, help="Fit and score, but store nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (keys above).")
@bank_option
@db_option()
def optimize_cmd(
    dry_run: bool, as_json: bool, banks: tuple[Path, ...], db_path: Path | None
) -> None:
    from drill.bank.loader import load_default_bank
    from drill.study import fsrs_fit
    from drill.study.settings import read_settings, write_setting

    # read first: a missing or empty database is refused, not created; it is opened for
    # writing only to store what the fit found
    db = open_database(db_path, write=False)
    try:
        settings = read_settings(db)
        timed = fsrs_fit.load_timed_history(db)
    finally:
        db.conn.close()
    history = {q: [(at, rating) for at, rating, _ in rows] for q, rows in timed.items()}
    result = fsrs_fit.fit(history, time.perf_counter)
    stored = result.better and not dry_run
    if stored:
        db = open_database(db_path, write=True)
        try:
            write_setting(db, "fsrs-parameters", json.dumps(list(result.parameters)))
        finally:
            db.conn.close()
    deck_size = len({q.id for q in load_default_bank(banks)} | set(history))
    costs = fsrs_fit.user_costs(timed)
    config = fsrs_fit.simulator_config(costs, deck_size=deck_size, new_per_day=settings.new_per_day)
    costs_own = costs.own
    with_fitted = result.better
    scheduled = (
        result.parameters
        if with_fitted
        else (settings.fsrs_parameters or fsrs_fit.DEFAULT_PARAMETERS)
    )
    retention = fsrs_fit.optimal_retention(scheduled, config)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "questions": result.questions,
                    "reviews": result.reviews,
                    "fit": {"reviews": result.fit_reviews, "seconds": round(result.fit_s, 3)},
                    "tested": {"reviews": result.fitted.reviews},
                    "default": result.default.as_json(),
                    "fitted": result.fitted.as_json(),
                    "parameters": list(result.parameters),
                    "stored": stored,
                    "optimal_retention": {
                        "retention": retention,
                        "simulated_with": "fitted" if with_fitted else "current",
                        "deck_size": deck_size,
                        "new_per_day": settings.new_per_day,
                        "days": fsrs_fit.SIMULATED_DAYS,
                        "daily_minutes": fsrs_fit.DAILY_MINUTES,
                        "own_figures": costs_own,
                    },
                }
            )
        )
        return
    click.echo(
        f"Fitted FSRS to {result.fit_reviews:,} reviews a day or more after the one before"
        f" ({result.questions:,} questions) in {result.fit_s:.2f} s."
    )
    click.echo(
        f"Time-series evaluation on the later {result.fitted.reviews:,}, each sixth"
        " predicted by a fit to the reviews before it:"
    )
    click.echo(f"  {'':<14}  {'log loss':>8}  {'RMSE(bins)':>10}")
    for name, figures in (("FSRS defaults", result.default), ("fitted", result.fitted)):
        click.echo(f"  {name:<14}  {figures.log_loss:>8.4f}  {figures.rmse_bins:>10.4f}")
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
            "Not stored: fits predict the later reviews no better than FSRS's defaults;"
            " fsrs-parameters is unchanged."
        )
    which = "the fitted parameters" if with_fitted else "your current parameters"
    click.echo(
        textwrap.fill(
            f"Optimal retention: {retention:.2f} (yours is {settings.retention:.2f}), the"
            f" least study per question remembered after a simulated year with {which}"
            f" ({deck_size} questions, {settings.new_per_day} new a day, at most"
            f" {fsrs_fit.DAILY_MINUTES} minutes a day; {costs_own} of 23 cost figures from"
            f" your answers). `kvdrill config retention {retention:.2f}` sets it.",
            width=88,
            break_on_hyphens=False,
        )
    )
