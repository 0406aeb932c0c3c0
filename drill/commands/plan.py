"""`kvdrill plan`: the days up to the interview, simulated, and the recall they lead to."""

from __future__ import annotations

import json
import sys
from datetime import timedelta, timezone

import click

from drill.commands.options import (
    FiniteRange,
    bank_option,
    db_option,
    now_option,
    open_database,
    parse_now,
    user_days,
)

PLAN_HELP = """Simulate the days up to the interview: reviews, new questions, recall on the day.

The simulation plays each day as the quiz schedules it, with your FSRS parameters
(`kvdrill optimize`, else FSRS's defaults), your new-per-day, retention and easy
days, the load balancer and, toward the interview, the retention ramp and the
last-week review: every card due on a day is reviewed that day, then the day's new
questions, with learning steps the same day. The simulated answers are drawn with a
seeded RNG from the recall your parameters predict (recalled: Good, forgotten:
Again; a first answer is Good as often as yours have been, else 75 %); each figure
is the mean of 8 runs (seeds SEED to SEED + 7), so the same database, time and seed
give the same plan. Minutes are reviews times the median time of your timed
answers (30 s until you have 10).

Recall on the day is the expected FSRS recall of each question at the start of the
interview day; a question never seen by then counts as 0. The suggestion tries the
fewest new questions a day that see the whole deck by the day before, and one more,
at retention 0.80, 0.85, 0.90 and 0.95, and keeps the highest recall whose busiest
day fits --minutes.

Without `kvdrill config interview-date`, --days N plans N days ahead.

\b
--json prints one object:
  now, target       the time planned from; the day whose morning is predicted
  interview         true when target is the interview date (else --days)
  days_left         days from today to target
  questions         questions in the deck; seen_now: those answered so far
  unseen_topics_now topics with no question answered yet
  settings          {new_per_day, retention, parameters ("fitted"/"default"),
                    easy_days, seconds_per_review, timed_answers, first_good,
                    first_answers}: what the simulation used
  seed, runs        the first seed and the number of runs averaged
  days              [{date, reviews, new, minutes}] for each day before target
  by_the_day        {seen, unseen, recall, recall_seen, topics [{topic,
                    questions, seen, recall}], unseen_topics}: recall is over
                    the deck (unseen as 0), recall_seen over the questions seen
  suggestion        {minutes, new_per_day, retention, covers, within_budget,
                    busiest_minutes, last_new_day, seen, unseen, recall}
Counts are means over the runs; fractions are 0..1.
"""


@click.command(help=PLAN_HELP, short_help="Simulate the days to the interview.")
@click.option(
    "--minutes",
    type=FiniteRange(1, 1440),
    default=15,
    show_default=True,
    help="Daily minutes the suggestion may take on its busiest day.",
)
@click.option(
    "--days",
    "days_ahead",
    type=click.IntRange(1, 365),
    help="Plan this many days ahead (instead of to the interview date).",
)
@click.option("--seed", type=click.IntRange(0, 2**31 - 1), default=0, show_default=True,
              help="First seed of the simulated answers.")  # fmt: skip
@click.option("--topic", help="Only questions of this topic (as `quiz --topic` studies).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (keys above).")
@bank_option
@db_option()
@now_option
def plan_cmd(minutes, days_ahead, seed, topic, as_json, banks, db_path, now_text):
    from drill.bank.loader import eligible_questions, load_default_bank, quiz_order
    from drill.commands.terminal import text_width
    from drill.paths import default_db_path
    from drill.reports.plan_text import render_plan
    from drill.study.readiness import Deck, plan_figures
    from drill.study.settings import Settings, read_settings

    now = parse_now(now_text).astimezone(timezone.utc)
    path = db_path if db_path is not None else default_db_path()
    db = open_database(path, write=False, now=now) if path.exists() else None
    settings = read_settings(db) if db is not None else Settings()
    days = user_days(settings, now_text)
    today = days.day_of(now)
    if days_ahead is not None:
        target = today + timedelta(days=days_ahead)
    elif settings.interview_date is None:
        raise click.UsageError(
            "no interview date: set one with `kvdrill config interview-date YYYY-MM-DD`,"
            " or plan N days ahead with --days N"
        )
    elif settings.interview_date <= today:
        raise click.UsageError(
            f"the interview date {settings.interview_date} is not after today ({today});"
            " plan N days ahead with --days N"
        )
    else:
        target = settings.interview_date
    bank = quiz_order(eligible_questions(load_default_bank(banks), topic))
    deck = Deck(tuple(q.id for q in bank), {q.id: q.topic for q in bank})
    try:
        figures = plan_figures(db, deck, settings, days, now, target, minutes=minutes, seed=seed)
    finally:
        if db is not None:
            db.conn.close()
    if as_json:
        click.echo(json.dumps(figures, indent=2))
    else:
        click.echo(render_plan(figures, columns=text_width(sys.stdout)), nl=False)
