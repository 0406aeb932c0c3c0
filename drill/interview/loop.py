"""A timed mock interview in the terminal, with its terminal, clock and storage passed in.

`run_interview` asks the planned turns (drill.interview.plan) one by one through an
injected `InterviewIO` (read a line, write text, read the clock). As in a real
interview nothing is marked until the end: after an answer only the time it took is
shown. Each prompt shows the clock: the time gone, the time left and the question's
share of it. Each answer is graded at once (drill.kinds.grade, the suggested rating becomes
the review's rating) and handed to `save` before the next question is shown, so
Ctrl-C (SIGTERM and SIGHUP too, under drill.study.signals.ending_signals), `q` or the end of
input lose no answer given. `s` passes a question: it is saved as a miss (rating
Again), since an interviewer heard no answer. When the time is up no further question
is asked; the answer being typed then is still kept.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from drill.interview.plan import Turn, clock, per_question_share_s
from drill.kinds import kind_of
from drill.kinds.verdict import AGAIN, Verdict
from drill.study.screen import PLAIN, Screen
from drill.text import printable

if TYPE_CHECKING:
    from drill.storage.review_record import Review

PASS_KEYS = ("s", "pass")
QUIT_KEYS = ("q", "quit")


@dataclass(frozen=True)
class InterviewIO:
    read_line: Callable[[], str | None]  # one line without its newline; None at end of input
    write: Callable[[str], None]  # text as given (newlines included)
    now: Callable[[], datetime]  # UTC-aware
    screen: Screen = PLAIN  # at a terminal: lines wrapped to its width


@dataclass(frozen=True)
class Answer:
    """One question answered (or passed) in an interview."""

    turn: Turn
    text: str | None  # what was typed; None: passed
    verdict: Verdict
    shown_at: datetime
    answered_at: datetime

    @property
    def duration_ms(self) -> int:
        return int((self.answered_at - self.shown_at).total_seconds() * 1000)

    @property
    def rating(self) -> int:
        """The grader's suggestion; where it cannot tell, what the ticks suggest (an
        interview asks for no ratings)."""
        if self.verdict.rating is None:
            from drill.kinds.concept import rating_from_ticks

            return rating_from_ticks(self.verdict.covered)
        return int(self.verdict.rating)


@dataclass
class InterviewResult:
    turns: list[Turn]
    minutes: float
    started_at: datetime
    ended_at: datetime | None = None
    answers: list[Answer] = field(default_factory=list)
    ended_by: str = "done"  # done | time | quit | eof | interrupt


class _Stop(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def opening_lines(turns: Sequence[Turn], minutes: float) -> list[str]:
    share = clock(per_question_share_s(minutes, len(turns)))
    count = f"{len(turns)} question{'s' if len(turns) != 1 else ''}"
    return [
        f"Mock interview: {count} in {clock(minutes * 60)}, about {share} each.",
        "Answer as you would aloud: a number with its unit, or a few sentences. Nothing is "
        "marked until the end. s passes on a question, q ends the interview; every answer is "
        "saved as you give it.",
    ]


def heading(turn: Turn, total: int, gone_s: float, budget_s: float) -> str:
    """The line above a question: its number, what it follows up or its topic, the clock."""
    about = f"follow-up to {turn.follow_up_of}" if turn.follow_up_of else turn.topic
    left = clock(budget_s - gone_s)
    return f"Question {turn.number} of {total} · {about} · {clock(gone_s)} gone, {left} left"


def passed_verdict(turn: Turn) -> Verdict:
    """The verdict on a question passed: a miss, saved with rating Again."""
    if kind_of(turn.instance.kind).self_rated:
        return Verdict(correct=None, status="self", rating=AGAIN, feedback="Passed.")
    return Verdict(correct=False, status="wrong", rating=AGAIN, feedback="Passed.")


def run_interview(
    turns: Sequence[Turn],
    minutes: float,
    io: InterviewIO,
    save: Callable[[Answer], None],
    grade: Callable[..., Verdict] | None = None,
) -> InterviewResult:
    """Ask `turns` within `minutes`; every answer goes to `save` before the next question."""
    from drill.study.signals import deferred_signals, raise_pending

    if grade is None:
        from drill.kinds.grade import grade as grade_answer

        grade = grade_answer
    result = InterviewResult(list(turns), minutes, io.now())
    budget_s = minutes * 60
    share_s = per_question_share_s(minutes, len(turns))

    def say(*lines: str) -> None:
        io.write(io.screen.lines([piece for line in lines for piece in printable(line).split("\n")]))

    def read(prompt: str) -> str:
        io.write(prompt)
        line = io.read_line()
        if line is None:
            io.write("\n")
            raise _Stop("eof")
        return line.rstrip("\r\n")

    say(*opening_lines(turns, minutes))
    try:
        for turn in turns:
            gone_s = (io.now() - result.started_at).total_seconds()
            if gone_s >= budget_s:
                left = len(turns) - len(result.answers)
                say("", f"Time is up: {clock(gone_s)} gone; {left} not asked.")
                result.ended_by = "time"
                break
            kind = kind_of(turn.instance.kind)
            say("", heading(turn, len(turns), gone_s, budget_s))
            say(*([turn.ask] if turn.ask else kind.prompt_lines(turn.instance)))
            shown_at = io.now()
            while True:
                text = read("> ")
                command = text.strip().lower()
                if command in QUIT_KEYS:
                    raise _Stop("quit")
                if command in PASS_KEYS:
                    answer = Answer(turn, None, passed_verdict(turn), shown_at, io.now())
                    break
                if not command and not kind.self_rated:
                    say(f"Type an answer ({kind.answer_examples}); s passes, q ends the interview.")
                    continue
                answered_at = io.now()
                duration_ms = int((answered_at - shown_at).total_seconds() * 1000)
                verdict = grade(turn.instance, text, duration_ms=duration_ms)
                if verdict.status == "unreadable":
                    # how to write an answer is no verdict on it: say it and ask again
                    message = verdict.feedback.strip() or f"Cannot read that ({kind.answer_examples})"
                    say(message[:1].upper() + message[1:])
                    continue
                answer = Answer(turn, text, verdict, shown_at, answered_at)
                break
            # a signal (drill.study.signals.ending_signals) waits until the answer is saved
            # and counted
            with deferred_signals():
                save(answer)
                result.answers.append(answer)
            took = clock(answer.duration_ms / 1000)
            what = "Passed" if answer.text is None else "Noted"
            say(f"{what} ({took} on this question; the share is {clock(share_s)}).")
            raise_pending()
    except _Stop as stop:
        result.ended_by = stop.reason
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM or SIGHUP
        result.ended_by = "interrupt"
        try:
            io.write("\n")
        except OSError:
            pass  # a terminal hung up takes no more output; the answers are saved
    result.ended_at = io.now()
    return result


def review_of(answer: Answer, review_id: str, session_id: str) -> Review:
    """The review row of one interview answer. It is no practice (cram 0): it feeds the
    schedule. A follow-up's seed is null, since its params came from its chain, not from
    a seed; its params are stored as for any answer. A concept answer's ticks are the
    grader's: an interview asks for no ratings, and its report shows the checklist."""
    from drill.srs import iso
    from drill.storage.review_record import Review, params_text, ticks_text
    from drill.text import stored_answer

    instance, verdict = answer.turn.instance, answer.verdict
    graded = not kind_of(instance.kind).self_rated
    return Review(
        id=review_id,
        question_id=instance.question_id,
        reviewed_at=iso(answer.answered_at),
        rating=answer.rating,
        correct=int(bool(verdict.correct)) if graded else None,
        answer=stored_answer(answer.text) if answer.text is not None else None,
        duration_ms=answer.duration_ms,
        seed=answer.turn.drawn_seed,
        params=params_text(instance.params),
        expected=instance.expected,
        unit=instance.unit,
        misconception=verdict.misconception,
        session_id=session_id,
        cram=0,
        # a concept answer keeps the grader's ticks (a passed question: none ticked)
        ticks=ticks_text(verdict.covered or (False,) * len(instance.key_points))
        if not graded and instance.key_points
        else None,
    )


def counted_right(answer: Answer) -> bool:
    """How the session row counts an answer: the grader's verdict, else a rating above Again."""
    if kind_of(answer.turn.instance.kind).self_rated:
        return answer.rating > AGAIN
    return bool(answer.verdict.correct)
