"""`kvdrill stats`: progress from the review history."""

from __future__ import annotations

import json
import sys
from datetime import timezone
from pathlib import Path

import click

from drill.commands.options import (
    bank_option,
    db_option,
    now_option,
    open_database,
    parse_now,
    user_days,
)
from drill.commands.terminal import text_width, use_color

STATS_HELP = """Show what is due, your streak, a calendar of reviews, retention and weak spots.

Days are your days: in the zone of `kvdrill config timezone`, beginning at its
rollover hour (4 am unless changed), so a review at 1 am counts for the day before.
True retention counts, over the last 30 days, the first non-cram review of a
question each day when the question's previous review was on an earlier day; Again
fails, Hard/Good/Easy pass; as in Anki, a review is mature when that previous review
was at least 21 days before, else young. Accuracy is the share of a question's
answers that were right (the grader's verdict, else the self-rating above Again).
Recall now is FSRS retrievability, the predicted chance of remembering now; for
a card still in learning (failed, or new and on its steps), whose recall is near
100% for minutes after any answer, it is the chance a day after its last answer
(marked * among the weakest questions). At a terminal, or with COLUMNS set, the
text is wrapped between words to its width.
Suspended cards are never due; a buried card is due once its bury ends.

--html FILE writes the same figures as one web page to look at instead of
read: a calendar of reviews per day, true retention per week (young and
mature), the cards due over the next 30 days and recall and accuracy per topic
as charts, and the weakest questions and most frequent mistakes as tables. The
page is self-contained (no scripts, nothing loaded from elsewhere) and prints;
the same database and time give the same file.

\b
--json prints one object:
  now             the time the figures are for (ISO-8601, UTC)
  days            {zone, rollover_hour}: the days the figures count in
  due             {now, later_today}: cards due by now / later today
  forecast        [{date, due}] x 7: cards due on each day from today
                  (today includes overdue cards)
  streak          {days, reviewed_today}: consecutive days with a review,
                  ending today, or yesterday when today has none yet
  heatmap         [{date, reviews}]: reviews (cram included) per day from the
                  Monday 15 weeks before this week's Monday up to today
  retention       {window_days, since, reviews, passed, rate, young, mature};
                  young and mature are {reviews, passed, rate}; a rate is null
                  without reviews
  topics          [{topic, questions, reviews, retrievability, accuracy}];
                  questions no longer in the bank are under "(removed)"
  weakest         [{question_id, topic, retrievability, accuracy, reviews,
                  lapses, learning}] x <= 10, weakest first (mean of recall and
                  accuracy); learning: the card is still in learning, and its
                  retrievability is the one a day after its last answer
  misconceptions  [{id, name, count}] x <= 5, the mistakes seen most often
  missed_points   [{question_id, point, text, missed, reviews}] x <= 5: the
                  concept answers' key points left unticked most often (point
                  numbered from 1), in `missed` of the `reviews` ticked
  mock_interviews [{date, score, answered, minutes}] x <= 5: the latest mock
                  interviews, oldest first: the day, the score's share of the
                  questions answered (null: none), the minutes taken
  totals          {cards, reviews, suspended, buried, leeches}: cards
                  scheduled, reviews up to now, cards suspended (`!` in the
                  quiz, or as leeches), buried until a later day (`-`), and
                  flagged as leeches
  interview       only with `kvdrill config interview-date`: {date, days_left,
                  reviews_before, workload [{date, due}] for each day until
                  the interview, topics [{topic, questions, recall}]: recall
                  predicted for that morning if no review came before it,
                  plan: `kvdrill plan --json` without its suggestion (the
                  days simulated, recall on the day with the reviews to come;
                  new questions easier first, as the quiz and plan take them),
                  while the day is ahead}
Fractions are 0..1; accuracy is null for a question never answered.
"""


def bank_lookups(
    bank_paths: tuple[Path, ...],
) -> tuple[dict[str, str], dict[str, str], dict[str, tuple[str, ...]]]:
    """Question id -> topic for the bank, misconception id -> name from the catalogue, and
    concept question id -> its key points."""
    from drill.bank.loader import load_default_bank, quiz_order
    from drill.bank.misconceptions import load_misconception_catalogue

    bank = load_default_bank(bank_paths)
    # in the quiz's order, which the plan to the interview simulates
    topics = {q.id: q.topic for q in quiz_order(bank)}
    names = {mid: info.name for mid, info in load_misconception_catalogue().items()}
    points = {
        q.id: tuple(k.point for k in q.key_points) for q in bank if getattr(q, "key_points", None)
    }
    return topics, names, points


@click.command(help=STATS_HELP, short_help="Show what is due, streak, heatmap, retention.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (keys above).")
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Write the report with charts to FILE as one web page.",
)
@bank_option
@db_option()
@now_option
def stats(
    as_json: bool,
    html_path: Path | None,
    banks: tuple[Path, ...],
    db_path: Path | None,
    now_text: str | None,
):
    from drill.reports.stats import collect_stats
    from drill.reports.stats_text import render_text
    from drill.study.settings import read_settings
    from drill.text import escape_json_controls

    if html_path is not None and as_json:
        raise click.UsageError("--html and --json cannot be used together")
    protected = _refuse_the_database(html_path, db_path)
    now = parse_now(now_text).astimezone(timezone.utc)
    topics, names, points = bank_lookups(banks)
    db = open_database(db_path, write=False, now=now)
    settings = read_settings(db)
    days = user_days(settings, now_text)
    if html_path is not None:
        from drill.reports.stats_html import collect_report, render_report
        from drill.storage.outfile import write_text

        report = collect_report(
            db,
            now,
            topics=topics,
            misconception_names=names,
            key_points=points,
            days=days,
            target_retention=settings.retention,
            interview=settings.interview_date,
        )
        write_text(html_path, render_report(report), protected)
        click.echo(f"Report written to {html_path}.", err=True)
        return
    figures = collect_stats(
        db, now, topics=topics, misconception_names=names, key_points=points, days=days,
        interview=settings.interview_date,
    )  # fmt: skip
    if as_json:
        click.echo(escape_json_controls(json.dumps(figures, indent=2)))
    else:
        # ids come from the database, which an older kvdrill may have filled with anything
        shown = render_text(
            _printable(figures), color=use_color(sys.stdout), columns=text_width(sys.stdout)
        )
        click.echo(shown, nl=False)


def _refuse_the_database(html_path: Path | None, db_path: Path | None) -> list[Path]:
    """The files an --html FILE must not be; it is checked before the database is opened."""
    from drill.storage.outfile import check_outputs, protected_files

    if html_path is None:
        return []
    protected = protected_files(db_path)
    check_outputs([html_path], protected)
    return protected


def _printable(value):
    """Every string in a JSON-like value through `printable`."""
    from drill.text import printable

    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {key: _printable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_printable(item) for item in value]
    return value
