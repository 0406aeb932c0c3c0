"""`kvdrill interview`: a timed mock interview in the terminal, then its scored report."""

from __future__ import annotations

import json
import os
import secrets
import uuid
from datetime import datetime
from pathlib import Path

import click

from drill.commands import terminal
from drill.commands.interview_stored import interview_list, interview_report
from drill.commands.options import (
    FiniteRange,
    bank_option,
    db_option,
    now_option,
    open_database,
    report_option,
    user_days,
)
from drill.commands.terminal import (
    clock,
    merge_unsaved_answers,
    signals_for_main_thread_only,
    unsaved_error,
)

INTERVIEW_HELP = """A timed mock interview: problems with follow-ups, explanations, then a report.

The interviewer asks about half numeric problems and half questions to explain in
your own words (one line each). A problem with a follow-up chain comes first: after
it the same problem is asked again with one thing changed ("now the cache is FP8",
"now 16 requests at once"), on the numbers before it. Every prompt shows the time
gone, the time left and each question's share; nothing is marked until the end. s
passes on a question (saved as a miss), q ends the interview early; when the time is
up no further question is asked.

Every answer is graded and saved before the next question, with the suggested
rating (Again when wrong, Good or Easy when right, from the key points for an
explanation): interview answers feed the schedule like the quiz's, in a session of
mode "interview". Ctrl-C, q or the end of input keep every answer given, and the
report covers them. The report gives per question the answer, the verdict with the
right answer, the named mistake and the time taken; per topic a score (1 per right
answer, the share of key points covered per explanation); and the three things to
drill next, ranked by the points they cost: a named mistake 1 per wrong answer that
made it, an explanation the share of its key points it missed (4 of 5 missed ranks
above 1 of 4), ties to the earlier question; then the topics that lost points, weakest
first. --report FILE writes it as Markdown, or as one self-contained web page when
FILE ends in .html (its folder is checked before the first question); give --report
more than once to write each file. When a FILE cannot be written at the end, its
report goes beside the database instead (NAME-report-TIME.md or .html), else to
standard output, and the exit status is 1. --focus weak draws your weakest questions
more often.

The report is kept with the answers: `kvdrill interview list` lists the interviews
held, with their scores, and `kvdrill interview report ID` shows one's report again
(as text, --json, or --report FILE).

\b
--json prints the report as one JSON object (the prompts go to standard error):
  seed, minutes, planned      the interview's seed, its minutes, questions planned
  answered, ended_by          questions answered; done, time, quit, eof or interrupt
  elapsed_s                   seconds from the first question to the end
  score                       {points, of, percent}
  questions                   per question: number, question_id, topic, kind,
                              follow_up_of (the problem it follows up, or null), asked,
                              answer (null: passed), verdict, expected, mistake, missed
                              (key points), duration_ms, points, rating
  topics                      per topic: topic, asked, points, percent
  drill_next                  up to three: what, why, command
"""


@click.group(
    help=INTERVIEW_HELP,
    short_help="A timed mock interview and its scored report.",
    invoke_without_command=True,
    subcommand_metavar="[COMMAND]",
)
@click.option(
    "--minutes",
    type=FiniteRange(min=1, max=600),
    default=45,
    show_default=True,
    help="The interview's length.",
)
@click.option(
    "-n",
    "--n",
    "count",
    type=click.IntRange(min=1, max=100),
    default=12,
    show_default=True,
    help="How many questions, follow-ups included.",
)
@click.option("--topic", help="Only questions of this topic.")
@click.option("--seed", type=click.IntRange(min=0), help="Which interview (default: a random one).")
@click.option("--focus", type=click.Choice(["weak"]), help="Weight the choice to weak spots.")
@report_option(
    "Also write the report to FILE: Markdown, or HTML for a name ending in .html "
    "(repeat for more files)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (see above).")
@bank_option
@db_option()
@now_option
@click.option("--tick", "tick_s", type=FiniteRange(0, 86_400), default=0.0, hidden=True)
@click.option("--no-fuzz", is_flag=True, hidden=True, help="Exact intervals, for tests.")
@click.pass_context
def interview(ctx, minutes, count, topic, seed, focus, report_paths, as_json, banks, db_path,
              now_text, tick_s, no_fuzz) -> None:  # fmt: skip
    if ctx.invoked_subcommand is not None:
        given = [
            param.opts[-1] for param in ctx.command.params
            if ctx.get_parameter_source(param.name) is not click.core.ParameterSource.DEFAULT
        ]  # fmt: skip
        if given:
            raise click.UsageError(
                f"{given[0]} starts an interview; give `{ctx.invoked_subcommand}` its own options"
            )
        return
    with signals_for_main_thread_only():
        from drill.bank.loader import eligible_questions, load_default_bank
        from drill.errors import KvdrillError
        from drill.interview.loop import InterviewIO, run_interview
        from drill.interview.plan import plan_interview
        from drill.interview.report import (
            RENDERERS,
            build_report,
            render_text,
            report_format,
            report_json,
        )
        from drill.kinds import make_instance
        from drill.storage.outfile import protected_files
        from drill.study.settings import read_settings
        from drill.study.signals import ending_signals

    protected = protected_files(db_path)
    report_paths = tuple(dict.fromkeys(report_paths))  # one file named twice is written once
    for report_path in report_paths:
        check_report_path(report_path, protected)
    now, tick = clock(now_text, tick_s)

    def read_line() -> str | None:
        import sys

        tick()
        return terminal.read_input_line(sys.stdin)

    def write(text: str) -> None:
        click.echo(text, nl=False, err=as_json)

    screen = _screen(as_json)

    db = open_database(db_path, write=True, now=now())
    try:
        # answers a busy or full database refused last time, before anything is asked
        merge_unsaved_answers(db, read_settings(db).scheduler(fuzz=not no_fuzz), err=as_json)
        from drill.serving.measured import latest_measured

        bank = load_default_bank(banks).with_runs(latest_measured(db))
        questions = eligible_questions(bank, topic)
        if seed is None:
            seed = secrets.randbelow(2**31)
        weights = _weak_weights(db, questions, now()) if focus == "weak" else None
        turns = plan_interview(questions, count, seed, bank.get, make_instance, weights=weights)
        plan = {"seed": seed, "minutes": minutes, "planned": len(turns), "topic": topic,
                "focus": focus}  # fmt: skip
        save, finish, keeper = _storage(db, now(), no_fuzz, now_text, write, plan)
        result = None
        try:
            with ending_signals():  # SIGTERM and SIGHUP end the interview as Ctrl-C does
                result = run_interview(
                    turns, minutes, InterviewIO(read_line, write, now, screen), save
                )
        finally:
            finish(now(), result)
    finally:
        db.conn.close()
    report = build_report(result, seed)
    problems = []
    printed = []  # the report files' texts that no file could take
    written = []
    for report_path in report_paths:
        fmt = report_format(report_path.name)
        text = RENDERERS[fmt](report)
        where, problem = write_report(
            report_path, text, protected, db_path, fmt, result.ended_at or now(), as_json
        )
        if problem:
            problems.append(problem)
        else:
            written.append(report_path)
        if where is None and not as_json:
            printed.append(text)
    if as_json:
        click.echo(json.dumps(report_json(report), indent=2, ensure_ascii=False))
    else:
        click.echo(screen.lines(render_text(report).splitlines()), nl=False)
    for text in printed:
        click.echo()
        click.echo(text, nl=not text.endswith("\n"))
    for report_path in written:
        click.echo(f"Report written to {report_path}.", err=True)
    unsaved = unsaved_error(keeper.kept, keeper.kept_in, keeper.shown)
    if unsaved:
        problems.append(unsaved)
    if problems:
        raise KvdrillError("; ".join(problems))


def check_report_path(path: Path, protected) -> None:
    """What can be checked of --report FILE before the interview: no database or folder
    is written over and its folder exists (drill.storage.outfile.check_outputs), and that folder
    can be written (the report is made there and renamed into place); a device or a pipe
    is written in place, so it must be writable itself. KvdrillError otherwise."""
    from drill.errors import KvdrillError
    from drill.storage.outfile import check_outputs

    check_outputs([path], protected)
    if path.exists() and not path.is_file():
        if not os.access(path, os.W_OK):
            raise KvdrillError(f"cannot write {path}: permission denied")
        return
    folder = path.parent if str(path.parent) else Path(".")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise KvdrillError(f"cannot write {path}: its folder {folder} cannot be written")


def write_report(
    path: Path, text: str, protected, db_path: Path | None, fmt: str, ended: datetime,
    as_json: bool,
) -> tuple[Path | None, str | None]:
    """Write the report to `path`; when that fails (a full disk, /dev/full), beside the
    database instead, as `NAME-report-TIME.md` (or `.html`) for the database `NAME`.
    Returns where it went (None: nowhere) and the one-line problem (None when `path`
    took it)."""
    from drill.errors import KvdrillError
    from drill.paths import default_db_path
    from drill.storage.outfile import write_text

    try:
        write_text(path, text, protected)
        return path, None
    except (KvdrillError, OSError) as exc:
        failed = str(exc).rstrip(".")
    database = db_path if db_path is not None else default_db_path()
    stamp = ended.strftime("%Y%m%d-%H%M%S")
    beside = database.with_name(f"{database.name}-report-{stamp}.{fmt}")
    number = 1
    while beside.exists() or beside.is_symlink():  # never over an earlier report
        number += 1
        beside = database.with_name(f"{database.name}-report-{stamp}-{number}.{fmt}")
    try:
        write_text(beside, text, protected)
    except (KvdrillError, OSError) as exc:
        went = ("is in the JSON on standard output" if as_json
                else "was printed to standard output instead")  # fmt: skip
        beside_failed = str(exc).rstrip(".")
        return None, f"{failed}, nor beside the database ({beside_failed}); the report {went}"
    return beside, f"{failed}; the report was written to {beside} instead"


def _screen(as_json: bool):
    """At a terminal, text wrapped to its width between words; piped, plain lines."""
    import shutil
    import sys

    from drill.study.screen import PLAIN, Screen

    out = sys.stderr if as_json else sys.stdout
    if not (sys.stdin.isatty() and out.isatty()):
        return PLAIN
    return Screen(width=lambda: shutil.get_terminal_size().columns)


def _weak_weights(db, questions, now):
    from drill.reports.sheet import weak_weights
    from drill.reports.stats import question_figures

    return weak_weights(question_figures(db, now, {q.id: q.topic for q in questions}))


def _storage(db, started, no_fuzz: bool, now_text: str | None, write, plan):
    """(save, finish, keeper): store one answer as a review of an "interview" session, in
    one transaction with the card's new schedule and its report row
    (drill.storage.interviews); close the session row, and say how the interview ended. With an
    interview date set, the schedule aims at it as the quiz's does. An answer the
    database refuses is kept beside it (drill.study.answer_keeper.AnswerKeeper, which counts them),
    said through `write`, and the interview goes on."""
    from drill.errors import StoreError
    from drill.interview.loop import counted_right, review_of
    from drill.interview.report import question_row
    from drill.srs import iso, new_card_row, parse_iso, review_row
    from drill.storage.interviews import end_interview, insert_answer, start_interview
    from drill.storage.reviews import end_session, start_session
    from drill.study.answer_keeper import AnswerKeeper, why_not_saved
    from drill.study.deadline import capped_due, retention_toward
    from drill.study.load_balance import load_balancer
    from drill.study.settings import read_settings
    from drill.text import printable

    settings = read_settings(db)
    days = user_days(settings, now_text)
    deadline = settings.interview_date
    retention = settings.retention
    if deadline is not None:  # more recall as the interview nears
        retention = retention_toward(retention, deadline, started, days)
    # fsrs's fuzz is replaced by the load balancer, which picks within the same range
    scheduler = settings.scheduler(retention, fuzz=False)
    balancer = None if no_fuzz else load_balancer(settings.easy_days, days, scheduler)
    session_id = str(uuid.uuid4())

    def tell(*lines: str) -> None:
        write("".join(printable(line) + "\n" for line in lines))

    keeper = AnswerKeeper(db, tell)
    keeper.write(lambda: start_session(db, session_id, iso(started), "interview"))
    keeper.write(lambda: start_interview(db, session_id, **plan))

    def save(answer) -> None:
        review = review_of(answer, str(uuid.uuid4()), session_id)
        moment = answer.answered_at

        def reschedule(row):
            current = row or new_card_row(review.question_id, moment)
            # another session may have answered this card after our clock read
            at = max(moment, parse_iso(current["last_review"])) if current["last_review"] else moment
            row = review_row(scheduler, current, review.rating, at)
            if balancer is not None:
                row = balancer.place_in(db, row, at)
            if deadline is not None:
                due = capped_due(parse_iso(row["due"]), review.question_id, at, at, deadline, days)
                row["due"] = iso(due)
            return row

        row = question_row(answer)
        fields = {"review_id": review.id, "session_id": session_id, **{
            name: getattr(row, name) for name in (
                "number", "follow_up_of", "topic", "kind", "asked", "verdict", "expected",
                "mistake", "missed", "points", "details",
            )
        }}  # fmt: skip
        stored = keeper.record(
            review, reschedule, counted_correct=counted_right(answer),
            also=lambda: insert_answer(db, fields),
        )  # fmt: skip
        if stored.lines:
            tell(*stored.lines)

    def finish(ended, result) -> None:
        try:
            keeper.write(lambda: end_session(db, session_id, iso(ended)))
            if result is not None:
                gone_s = ((result.ended_at or ended) - result.started_at).total_seconds()
                keeper.write(lambda: end_interview(db, session_id, result.ended_by, gone_s))
        except StoreError as exc:  # every answer is stored or kept already
            why = why_not_saved(exc)
            click.echo(f"Warning: the interview's end time was not saved ({why}); "
                       "`kvdrill doctor --repair` closes the session.", err=True)  # fmt: skip

    return save, finish, keeper


# the stored interviews, under the same word (drill.commands.interview_stored)
interview.add_command(interview_list)
interview.add_command(interview_report)
