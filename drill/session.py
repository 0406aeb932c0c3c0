"""The daily quiz loop, with its terminal and clock passed in.

`plan_*` functions choose the session's questions and are pure. `run_session`
asks them one by one through an injected `SessionIO` (read a line, write text,
read the clock), so tests and piped input drive it exactly like a terminal.
Each answer is stored (review row + card schedule, one transaction) before
the next question is shown; `q`, end of input and Ctrl-C all end with the
summary.
"""

from __future__ import annotations

import json
import random
import secrets
import sqlite3
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from drill.bank import eligible_questions
from drill.days import DayClock
from drill.errors import KvdrillError, StoreError
from drill.kinds import kind_of
from drill.review import Review
from drill.review_store import (
    Performance,
    end_session,
    load_cards,
    new_cards_since,
    performance_by_question,
    record_answer,
    rescue_review,
    start_session,
)
from drill.srs import (
    DEFAULT_RETENTION,
    iso,
    make_scheduler,
    new_card_row,
    parse_iso,
    retrievability,
    review_row,
)
from drill.text import printable, stored_answer

RATING_NAMES = {1: "again", 2: "hard", 3: "good", 4: "easy"}
LEARNING_STATES = (1, 3)  # fsrs.State.Learning, fsrs.State.Relearning
DAY = timedelta(days=1)

@dataclass(frozen=True)
class SessionOptions:
    topic: str | None = None
    new_limit: int = 10  # new cards per day, counting those already introduced today
    max_items: int = 20
    seed: int | None = None  # None: a fresh random session
    cram: bool = False  # practice only: reviews logged with cram=1, schedule untouched
    retention: float = DEFAULT_RETENTION
    fuzz: bool = True  # fsrs interval fuzzing; tests turn it off for exact due dates


@dataclass(frozen=True)
class SessionIO:
    read_line: Callable[[], str | None]  # one line without its newline; None at end of input
    write: Callable[[str], None]  # text as given (newlines included)
    now: Callable[[], datetime]  # UTC-aware


@dataclass(frozen=True)
class PlanItem:
    question_id: str
    why: str  # "learning", "due", "new" or "cram"


@dataclass
class SessionResult:
    session_id: str
    mode: str
    planned: int
    started_at: datetime
    ended_at: datetime | None = None
    ended_by: str = "done"  # done | quit | eof | interrupt
    answered: int = 0
    right: int = 0
    wrong: int = 0
    skipped: int = 0
    due_now: int = 0  # cards still due at the end (skipped ones, or ones left out by --max)
    due_within_day: int = 0
    next_due: datetime | None = None
    new_waiting: int = 0
    review_ids: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- planning


def item_seed(session_seed: int, position: int) -> int:
    """The seed of the item at `position` (1-based): stable across runs and platforms."""
    return random.Random(f"kvdrill:{session_seed}:{position}").getrandbits(31)


def plan_due(
    questions: Sequence[Any], cards: Mapping[str, Mapping[str, Any]], now: datetime
) -> list[PlanItem]:
    """Cards due now: learning and relearning first, then review; most overdue first."""
    due = []
    for q in questions:
        row = cards.get(q.id)
        if row is None:
            continue
        due_at = parse_iso(row["due"])
        if due_at <= now:
            learning = row["state"] in LEARNING_STATES
            due.append((0 if learning else 1, due_at, q.id, "learning" if learning else "due"))
    due.sort(key=lambda t: (t[0], t[1]))
    return [PlanItem(qid, why) for _, _, qid, why in due]


def plan_new(
    questions: Sequence[Any], cards: Mapping[str, Any], allowance: int
) -> list[PlanItem]:
    """Up to `allowance` questions never scheduled: easier first, then bank order."""
    fresh = [q for q in questions if q.id not in cards]
    fresh.sort(key=lambda q: q.difficulty)  # stable: bank order within a difficulty
    return [PlanItem(q.id, "new") for q in fresh[: max(0, allowance)]]


def plan_review(
    questions: Sequence[Any],
    cards: Mapping[str, Mapping[str, Any]],
    now: datetime,
    *,
    new_today: int,
    new_limit: int,
    max_items: int,
) -> list[PlanItem]:
    """Due cards, then new ones within today's allowance; at most `max_items`."""
    items = plan_due(questions, cards, now)
    items += plan_new(questions, cards, new_limit - new_today)
    return items[:max_items]


def plan_cram(
    questions: Sequence[Any],
    cards: Mapping[str, Mapping[str, Any]],
    performance: Mapping[str, Performance],
    now: datetime,
    *,
    scheduler,
    rng: random.Random,
    max_items: int,
) -> list[PlanItem]:
    """Weakest first: most often wrong, then least likely recalled; ties at random."""
    keyed = []
    for q in questions:
        record = performance.get(q.id, Performance(0, 0))
        row = cards.get(q.id)
        recall = retrievability(scheduler, row, now) if row else 0.0
        keyed.append((-record.wrong_ratio, recall, rng.random(), q.id))
    keyed.sort()
    return [PlanItem(qid, "cram") for *_, qid in keyed[:max_items]]


# --------------------------------------------------------------------------- text


def human_span(span: timedelta) -> str:
    """A duration as a person says it: 45 s, 4 min 12 s, 3 h 5 min, 8 days."""
    seconds = max(0, int(span.total_seconds()))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        minutes, rest = divmod(seconds, 60)
        return f"{minutes} min {rest} s" if rest else f"{minutes} min"
    if seconds < 86400:
        hours, rest = divmod(seconds, 3600)
        minutes = rest // 60
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days = round(seconds / 86400)
    return f"{days} day" if days == 1 else f"{days} days"


def render_summary(result: SessionResult) -> str:
    ended = result.ended_at or result.started_at
    lines = ["", "── summary ──"]
    if result.answered or result.skipped:
        verb = "practised" if result.mode == "cram" else "answered"
        line = f"{result.answered} {verb}: {result.right} right, {result.wrong} wrong"
        if result.skipped:
            line += f", {result.skipped} skipped"
        lines.append(f"{line}; {human_span(ended - result.started_at)}.")
    else:
        lines.append("No answers this time.")
    if result.mode == "cram":
        lines.append("Cram session: the schedule was not changed.")
    if result.due_now:
        lines.append(f"Due now: {result.due_now} (run kvdrill quiz again).")
    if result.next_due is not None:
        line = f"Next due: in {human_span(result.next_due - ended)}"
        if result.due_within_day:
            line += f"; {result.due_within_day} due within a day"
        lines.append(line + ".")
    elif not result.due_now:
        lines.append("Nothing scheduled yet.")
    if result.new_waiting:
        lines.append(f"New questions left for today: {result.new_waiting}.")
    return "\n".join(lines) + "\n"


def parse_rating(text: str, suggested: int) -> int | None:
    """1-4, a rating's name or its first letter... Enter takes `suggested`; None if unreadable."""
    text = text.strip().lower()
    if not text:
        return suggested
    if text in ("1", "2", "3", "4"):
        return int(text)
    for value, name in RATING_NAMES.items():
        if text == name:
            return value
    return None


# --------------------------------------------------------------------------- the loop


class _Stop(Exception):
    """End the session: `reason` is quit, eof or interrupt."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass
class _Deps:
    make_instance: Callable[..., Any]
    grade: Callable[..., Any]
    evidence_lines: Callable[[Sequence[str]], list[str]]


def _evidence_from_latest_run(db) -> Callable[[Sequence[str]], list[str]]:
    def evidence_lines(claims: Sequence[str]) -> list[str]:
        from drill.engine_runs import latest_engine_run
        from drill.evidence import quote_evidence

        return list(quote_evidence(list(claims), latest_engine_run(db)))

    return evidence_lines


class _Session:
    def __init__(self, db, questions, options: SessionOptions, io: SessionIO, deps: _Deps):
        self.db = db
        self.questions = {q.id: q for q in questions}
        self.options = options
        self.io = io
        self.deps = deps
        self.scheduler = make_scheduler(options.retention, fuzz=options.fuzz)

    # -- I/O helpers

    def say(self, *lines: str) -> None:
        # bank text (and an engine run's device name) may not put escapes on the terminal
        self.io.write(printable("".join(line + "\n" for line in lines)))

    def ask(self, prompt: str) -> str:
        self.io.write(prompt)
        line = self.io.read_line()
        if line is None:
            self.io.write("\n")
            raise _Stop("eof")
        return line.rstrip("\r\n")

    # -- one item

    def run_item(self, result: SessionResult, position: int, total: int, item: PlanItem,
                 seed: int) -> None:
        question = self.questions[item.question_id]
        try:
            instance = self.deps.make_instance(question, seed)
        except KvdrillError as exc:
            # one broken template must not end the session
            result.skipped += 1
            self.say("", f"[{position}/{total}] skipped {question.id}: {exc}")
            return
        tag = {"learning": "again", "due": "review", "new": "new", "cram": "cram"}[item.why]
        kind = kind_of(instance.kind)
        self.say("", f"[{position}/{total}] {question.topic} · {tag}", *kind.prompt_lines(instance))
        shown_at = self.io.now()
        hinted = False
        hints_shown = 0
        while True:
            text = self.ask("> ")
            command = text.strip().lower()
            if command == "q":
                raise _Stop("quit")
            if command == "s":
                result.skipped += 1
                self.say("Skipped.")
                return
            if command == "h":
                # each h shows the next hint; any hint caps the suggested rating at Hard
                if hints_shown < len(instance.hints):
                    hinted = True
                    hints_shown += 1
                    count = len(instance.hints)
                    label = "Hint" if count == 1 else f"Hint {hints_shown} of {count}"
                    self.say(f"{label}: {instance.hints[hints_shown - 1].strip()}")
                else:
                    self.say("No more hints." if instance.hints else "No hint for this one.")
                continue
            if command in ("?", "help"):
                self.say(f"Type your answer ({kind.answer_examples}); h hint, s skip, q quit.")
                continue
            if not command and not kind.self_rated:
                self.say(f"Type an answer ({kind.answer_examples}); h hint, s skip, q quit.")
                continue
            duration_ms = int((self.io.now() - shown_at).total_seconds() * 1000)
            verdict = self.deps.grade(instance, text, duration_ms=duration_ms, hinted=hinted)
            if verdict.status != "unreadable":
                break
            # the grader's message says what was wrong and shows examples; ask again
            message = verdict.feedback.strip() or f"Cannot read that ({kind.answer_examples})"
            self.say(message[:1].upper() + message[1:])
        suggested = int(verdict.rating)
        if hinted:
            suggested = min(suggested, 2)
        self.say(*kind.verdict_lines(instance, verdict))
        if instance.evidence:
            self.say(*self.deps.evidence_lines(instance.evidence))
        rating, stop = self.read_rating(suggested)
        self.store(result, instance, verdict, text, rating, duration_ms)
        if stop:
            raise _Stop(stop)

    def read_rating(self, suggested: int) -> tuple[int, str | None]:
        """The user's rating; at end of input or `q` the suggestion is kept, then we stop."""
        prompt = (
            f"Rate: 1 again · 2 hard · 3 good · 4 easy "
            f"[Enter = {suggested} {RATING_NAMES[suggested]}] "
        )
        while True:
            try:
                text = self.ask(prompt)
            except _Stop as stop:
                return suggested, stop.reason
            except KeyboardInterrupt:
                # the answer is in: keep it with the suggested rating, then stop
                self.io.write("\n")
                return suggested, "interrupt"
            if text.strip().lower() == "q":
                return suggested, "quit"
            rating = parse_rating(text, suggested)
            if rating is not None:
                return rating, None
            self.say(f"Type 1, 2, 3 or 4, or press Enter for {suggested} ({RATING_NAMES[suggested]}).")

    def store(self, result: SessionResult, instance, verdict, text: str, rating: int,
              duration_ms: int) -> None:
        now = self.io.now()
        graded = not kind_of(instance.kind).self_rated
        correct = bool(verdict.correct) if graded else None
        counted_right = bool(correct) if graded else rating > 1
        review = Review(
            id=str(uuid.uuid4()),
            question_id=instance.question_id,
            reviewed_at=iso(now),
            rating=rating,
            correct=None if correct is None else int(correct),
            answer=stored_answer(text),
            duration_ms=duration_ms,
            seed=instance.seed,
            params=json.dumps(instance.params, sort_keys=True),
            expected=instance.expected,
            unit=instance.unit,
            misconception=getattr(verdict, "misconception", None),
            session_id=result.session_id,
            cram=1 if self.options.cram else 0,
        )

        def reschedule(row: dict[str, Any] | None) -> dict[str, Any]:
            current = row or new_card_row(instance.question_id, now)
            # another session may have committed a review of this card after our clock
            # read while we waited for the lock; never schedule backwards in time
            at = now
            if current["last_review"]:
                at = max(now, parse_iso(current["last_review"]))
            return review_row(self.scheduler, current, rating, at)

        try:
            record_answer(
                self.db,
                review,
                None if self.options.cram else reschedule,
                counted_correct=counted_right,
            )
        except StoreError:
            self.say(*self.rescue(review))
            raise
        result.review_ids.append(review.id)
        result.answered += 1
        if counted_right:
            result.right += 1
        else:
            result.wrong += 1
        self.say(f"Saved: {RATING_NAMES[rating]}.")


    def rescue(self, review: Review) -> list[str]:
        """Keep an answer the database refused, and say where it went."""
        try:
            path = rescue_review(self.db, review)
        except OSError:
            from drill.review import ENCODER

            return [
                "Your answer could not be saved, nor written beside the database. Keep this",
                "line in a file and add it later with `kvdrill import FILE`:",
                ENCODER.encode(review.record()),
            ]
        return [f"Your answer could not be saved; it was written to {path}: "
                "`kvdrill import` adds it once the database can be written."]


def _finish(db, questions: Sequence[Any], result: SessionResult, now: datetime,
            new_allowance: int) -> None:
    cards = load_cards(db)
    ids = {q.id for q in questions}
    dues = sorted(parse_iso(row["due"]) for qid, row in cards.items() if qid in ids)
    result.due_now = sum(1 for d in dues if d <= now)
    later = [d for d in dues if d > now]
    result.next_due = later[0] if later else None
    result.due_within_day = sum(1 for d in later if d <= now + DAY)
    unseen = sum(1 for q in questions if q.id not in cards)
    result.new_waiting = min(unseen, max(0, new_allowance))


def run_session(
    db,
    questions: Iterable[Any],
    options: SessionOptions,
    io: SessionIO,
    *,
    days: DayClock | None = None,
    make_instance: Callable[..., Any] | None = None,
    grade: Callable[..., Any] | None = None,
    evidence_lines: Callable[[Sequence[str]], list[str]] | None = None,
) -> SessionResult:
    """Run one quiz session on `questions` (bank order) and return what happened.

    `days` says when the user's day begins, for the daily new-card limit (default:
    the system's zone, 4 am). The make_instance/grade/evidence_lines overrides
    exist for tests; by default the project's own are used.
    """
    chosen = eligible_questions(questions, options.topic)
    days = days or DayClock()
    from drill.grade import grade as grade_answer
    from drill.instance import make_instance as draw

    deps = _Deps(
        make_instance or draw, grade or grade_answer,
        evidence_lines or _evidence_from_latest_run(db),
    )  # fmt: skip
    session = _Session(db, chosen, options, io, deps)
    started = io.now()
    session_seed = options.seed if options.seed is not None else secrets.randbits(31)
    cards = load_cards(db)
    new_today = new_cards_since(db, iso(days.day_start(started)))
    if options.cram:
        plan = plan_cram(
            chosen,
            cards,
            performance_by_question(db),
            started,
            scheduler=session.scheduler,
            rng=random.Random(session_seed),
            max_items=options.max_items,
        )
    else:
        plan = plan_review(
            chosen,
            cards,
            started,
            new_today=new_today,
            new_limit=options.new_limit,
            max_items=options.max_items,
        )
    mode = "cram" if options.cram else "review"
    result = SessionResult(str(uuid.uuid4()), mode, len(plan), started)
    start_session(db, result.session_id, iso(started), mode)
    session.say(_header(plan, options))
    try:
        for position, item in enumerate(plan, 1):
            seed = item_seed(session_seed, position)
            session.run_item(result, position, len(plan), item, seed)
    except _Stop as stop:
        result.ended_by = stop.reason
    except KeyboardInterrupt:
        io.write("\n")
        result.ended_by = "interrupt"
    except StoreError:
        # the database stopped taking writes: close the session row if it still can
        try:
            end_session(db, result.session_id, iso(io.now()))
        except (StoreError, sqlite3.Error):
            pass  # `kvdrill doctor --repair` closes it later
        raise
    result.ended_at = io.now()
    end_session(db, result.session_id, iso(result.ended_at))
    new_now = new_cards_since(db, iso(days.day_start(result.ended_at)))
    _finish(db, chosen, result, result.ended_at, options.new_limit - new_now)
    io.write(render_summary(result))
    return result


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _header(plan: Sequence[PlanItem], options: SessionOptions) -> str:
    if not plan:
        return "Nothing due and no new questions left for today."
    if options.cram:
        return (
            f"Cram: {_plural(len(plan), 'question')}, practice only (the schedule is not "
            "changed). h hint · s skip · q quit"
        )
    new = sum(1 for item in plan if item.why == "new")
    due = len(plan) - new
    return f"{_plural(len(plan), 'question')}: {due} due, {new} new. h hint · s skip · q quit"
