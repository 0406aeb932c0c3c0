"""The daily quiz loop, with its terminal and clock passed in.

`drill.study.plan` chooses the session's questions and keeps the queue (pure). `run_session`
asks them one by one through an injected `SessionIO` (read a line, write text, read
the clock), so tests and piped input drive it exactly like a terminal. Each answer
is stored (review row + card schedule, one transaction) before the next question is
shown; a card still in learning comes back in the same session once its step has
passed. `u` takes the last answer (or suspend, or bury) back and asks its question
again; `!` suspends a question, `-` buries it until tomorrow. `q`, end of input and
Ctrl-C all end with the summary.

An answer never ends a session: a write the database refuses as busy is tried again
for a while, and an answer it still refuses is kept in the unsaved-answers file beside
it, which the next quiz or interview merges (drill.study.answer_keeper). Under
`ending_signals` (drill.study.signals), SIGTERM and SIGHUP end a session as Ctrl-C
does, and none of the three cuts an answer's write short.
"""

from __future__ import annotations

import random
import secrets
import sqlite3
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

from drill.bank.loader import eligible_questions
from drill.bank.misconceptions import catalogue_entry
from drill.errors import CardError, KvdrillError, StoreError
from drill.kinds import kind_of
from drill.kinds.verdict import HARD
from drill.serving.evidence import evidence_from_latest_run
from drill.srs import iso, new_card_row, parse_iso, review_row
from drill.storage.review_record import Review, params_text, ticks_text
from drill.storage.reviews import (
    CardChange,
    end_session,
    get_card,
    hold_card,
    last_ratings,
    new_cards_since,
    performance_by_question,
    start_session,
    undo,
)
from drill.storage.session_cards import (
    cards_left,
    cards_of,
    due_cards,
    learning_cards_later,
    without_card,
)
from drill.study.answer_keeper import AnswerKeeper, Stored, why_not_saved
from drill.study.days import DayClock
from drill.study.deadline import capped_due
from drill.study.load_balance import LoadBalancer, load_balancer
from drill.study.plan import (
    LEARNING_STATES,
    PlanItem,
    Queue,
    after_answer,
    coming,
    drop,
    item_seed,
    learning_later,
    next_item,
    plan_cram,
    plan_drill,
    plan_review,
    refresh_learning,
)
from drill.study.prompts import Prompts, SessionStop, keep_rating
from drill.study.screen import progress, verdict_roles
from drill.study.session_io import SessionIO, SessionOptions
from drill.study.session_text import (
    ANSWER_KEYS,
    RATING_NAMES,
    TAGS,
    SessionResult,
    fill_summary,
    keys_help,
    local_time,
    opening_line,
    render_summary,
)
from drill.study.settings import read_settings
from drill.study.signals import (
    deferred_signals,
    raise_pending,
)
from drill.study.ticks import TickPrompt
from drill.text import printable, stored_answer

__all__ = ["run_session"]


@dataclass
class _Deps:
    make_instance: Callable[..., Any]
    grade: Callable[..., Any]
    evidence_lines: Callable[[Sequence[str]], list[str]]


_COUNTERS = ("answered", "right", "wrong", "skipped", "suspended", "buried")


@dataclass(frozen=True)
class _Done:
    """An action `u` can take back, and the session as it stood when its item was shown;
    or, with `refusal`, an answer the database never took, which `u` cannot take back."""

    change: CardChange
    item: PlanItem
    position: int
    queue: Queue  # without the item
    counters: tuple[int, ...]
    review_ids: int
    refusal: str | None = None  # why `u` cannot take it back


@dataclass
class _Session:
    db: Any
    questions: dict[str, Any]
    options: SessionOptions
    io: SessionIO
    deps: _Deps
    days: DayClock
    result: SessionResult
    session_seed: int
    queue: Queue
    scheduler: Any
    keeper: AnswerKeeper
    balancer: LoadBalancer | None  # None: exact fsrs intervals (tests)
    position: int = 0
    history: list[_Done] = field(default_factory=list)
    redo: tuple[PlanItem, int, Queue] | None = None  # an undone item, asked again next

    @property
    def practice(self) -> bool:
        return self.result.mode != "review"

    @property
    def prompts(self) -> Prompts:
        return Prompts(self.ask, self.say, self.io.write)

    # -- I/O helpers

    def say(self, *lines: str, roles: Sequence[str | None] | None = None) -> None:
        """Write lines (a line may hold several), each with its colour role."""
        pieces: list[str] = []
        piece_roles: list[str | None] = []
        for line, role in zip(lines, roles or [None] * len(lines), strict=True):
            # bank text (and an engine run's device name) may not put escapes on the terminal
            for piece in printable(line).split("\n"):
                pieces.append(piece)
                piece_roles.append(role)
        self.io.write(self.io.screen.lines(pieces, piece_roles))

    def ask(self, prompt: str, remember: bool = False) -> str:
        lead, prompt = self.io.screen.prompt(prompt)
        if lead:
            self.io.write(lead)
        if self.io.read_prompted is not None:
            line = self.io.read_prompted(prompt, remember)
        else:
            self.io.write(prompt)
            line = self.io.read_line()
        if line is None:
            self.io.write("\n")
            raise SessionStop("eof")
        return line.rstrip("\r\n")

    # -- the loop

    def run(self) -> None:
        while True:
            if self.redo is not None:
                item, position, rest = self.redo
                self.redo = None
            else:
                found = self.take_next()
                if found is None:
                    if self.history and not self.history[-1].refusal and self.last_chance():
                        continue
                    return
                item, rest = found
                self.position += 1
                position = self.position
            self.queue = rest
            self.run_item(item, position)

    def take_next(self) -> tuple[PlanItem, Queue] | None:
        now = self.io.now()
        if self.queue.learning:
            ids = [item.question_id for item in self.queue.learning]
            self.queue = refresh_learning(self.queue, {q: get_card(self.db, q) for q in ids}, now)
        item, rest = next_item(self.queue, now, self.options.learn_ahead)
        return None if item is None else (item, rest)

    def last_chance(self) -> bool:
        """Nothing is left: offer to take back the last answer before the summary."""
        try:
            text = self.ask("Done. u takes back the last answer; Enter ends the session: ")
        except SessionStop:
            return False
        except KeyboardInterrupt:
            self.io.write("\n")
            return False
        return text.strip().lower() == "u" and self.take_back()

    def run_item(self, item: PlanItem, position: int) -> None:
        result = self.result
        question = self.questions[item.question_id]
        total = position + coming(self.queue, self.io.now(), self.options.learn_ahead)
        shown_queue = self.queue
        try:
            instance = self.deps.make_instance(question, item_seed(self.session_seed, position))
        except KvdrillError as exc:
            # one broken template must not end the session
            result.skipped += 1
            self.say("", f"{progress(position, total)} skipped {question.id}: {exc}")
            return
        kind = kind_of(instance.kind)
        self.say("")
        label = printable(f"{question.topic} · {TAGS[item.why]}")
        self.io.write(self.io.screen.header(position, total, label) + "\n")
        self.say(*kind.prompt_lines(instance))
        before = _Done(
            CardChange(item.question_id, None, None), item, position, shown_queue,
            tuple(getattr(result, name) for name in _COUNTERS), len(result.review_ids),
        )  # fmt: skip
        shown_at = self.io.now()
        hinted = False
        hints_shown = 0
        while True:
            text = self.ask("> ", remember=True)
            command = text.strip().lower()
            if command == "q":
                raise SessionStop("quit")
            if command == "s":
                result.skipped += 1
                self.say("Skipped.")
                return
            if command == "u":
                if self.take_back():
                    return
                continue
            if command in ("!", "-"):
                if self.hold(before, suspend=command == "!"):
                    return
                continue
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
                self.say(f"Type your answer ({kind.answer_examples}).",
                         *keys_help(ANSWER_KEYS, self.io.read_prompted is not None))
                continue
            if not command and not kind.self_rated:
                self.say(f"Type an answer ({kind.answer_examples}); h hint, s skip, q quit, "
                         "? keys.")
                continue
            duration_ms = int((self.io.now() - shown_at).total_seconds() * 1000)
            verdict = self.deps.grade(instance, text, duration_ms=duration_ms, hinted=hinted)
            if verdict.status != "unreadable":
                break
            # the grader's message says what was wrong and shows examples; ask again
            message = verdict.feedback.strip() or f"Cannot read that ({kind.answer_examples})"
            self.say(message[:1].upper() + message[1:])
        # None: the grader cannot tell (a concept answer it could not read); the user rates
        suggested: int | None = None if verdict.rating is None else int(verdict.rating)
        if hinted and suggested is not None:
            suggested = min(suggested, HARD)
        lines = kind.verdict_lines(instance, verdict)
        graded = not kind.self_rated
        # a concept answer's checklist: the grader's ticks, which the user may correct
        checklist = (
            TickPrompt(instance, verdict.covered, verdict.wrong_claims, suggested,
                       cap=HARD if hinted else None)
            if kind.self_rated and instance.key_points
            else None
        )  # fmt: skip
        try:
            self.say(*lines, roles=verdict_roles(lines, bool(verdict.correct) if graded else None))
            if instance.evidence:
                self.say(*self.deps.evidence_lines(instance.evidence))
            stop_at_ticks = self.prompts.ticks(checklist) if checklist is not None else None
            if checklist is not None:
                suggested = checklist.suggested
            # what is saved when the session ends before the user rates
            keep_as = suggested if suggested is not None else keep_rating(checklist)
            if stop_at_ticks is None:
                rating, stop = self.prompts.rating(suggested, keep_as)
            else:  # the session ends at the ticks: kept as they stand, as at the rating
                rating, stop = keep_as, stop_at_ticks
        except OSError:
            # the terminal is gone (hung up, a closed pipe): keep the answer as Ctrl-C does
            ticks = checklist.ticks if checklist is not None else None
            keep_as = suggested if suggested is not None else keep_rating(checklist)
            self.store(instance, verdict, text, keep_as, duration_ms, ticks)
            raise
        if rating is None:
            self.say("Not saved.")
        else:
            ticks = checklist.ticks if checklist is not None else None
            stored = self.store(instance, verdict, text, rating, duration_ms, ticks)
            change = stored.change
            if change is None:  # kept outside the database: the card did not change
                kept = f"it waits in {stored.kept_in}" if stored.kept_in else "it was printed above"
                self.history.append(replace(before, refusal=kept))
            else:
                self.history.append(replace(before, change=change))
                if not self.practice:
                    self.queue = after_answer(self.queue, item.question_id, change.after, rating)
                if change.leech:
                    self.say_leech(item.question_id)
        raise_pending()  # a signal that came while the answer was written ends it here
        if stop:
            raise SessionStop(stop)

    # -- changes to the database

    def store(
        self, instance, verdict, text: str, rating: int, duration_ms: int,
        ticks: tuple[bool, ...] | None = None,
    ) -> Stored:  # fmt: skip
        """Save one answer; its `change` is None when the database refused it and it was
        kept outside (AnswerKeeper). A signal that comes meanwhile waits for the caller's
        `raise_pending`."""
        result = self.result
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
            params=params_text(instance.params),
            expected=instance.expected,
            unit=instance.unit,
            misconception=getattr(verdict, "misconception", None),
            session_id=result.session_id,
            cram=1 if self.practice else 0,
            ticks=None if ticks is None else ticks_text(ticks),
        )

        def reschedule(row: dict[str, Any] | None) -> dict[str, Any]:
            current = row or new_card_row(instance.question_id, now)
            # another session may have committed a review of this card after our clock
            # read while we waited for the lock; never schedule backwards in time
            at = now
            if current["last_review"]:
                at = max(now, parse_iso(current["last_review"]))
            row = review_row(self.scheduler, current, rating, at)
            if self.balancer is not None:  # fsrs's fuzz range, toward the lighter days
                row = self.balancer.place_in(self.db, row, at)
            if self.options.interview is not None:
                due = capped_due(
                    parse_iso(row["due"]), instance.question_id, at, at,
                    self.options.interview, self.days,
                )  # fmt: skip
                row["due"] = iso(due)
            return row

        keeper = self.keeper
        with deferred_signals():  # the answer's write and its count, whole
            stored = keeper.record(
                review,
                None if self.practice else reschedule,
                counted_correct=counted_right,
                leech_threshold=self.options.leech_threshold,
            )
            result.answered += 1
            if counted_right:
                result.right += 1
            else:
                result.wrong += 1
            if stored.change is not None:
                result.review_ids.append(review.id)
                result.mistakes.append(review.misconception)
            result.unsaved, result.unsaved_shown = keeper.kept, keeper.shown
            if keeper.kept_in is not None:
                result.unsaved_file = str(keeper.kept_in)
        self.say(*stored.lines or [f"Saved: {RATING_NAMES[rating]}."])
        return stored

    def hold(self, before: _Done, *, suspend: bool) -> bool:
        """Suspend (`!`) or bury (`-`) the question shown; False (said) when the database
        refused it, and the question stays."""
        now = self.io.now()
        qid = before.item.question_id
        until = None if suspend else self.days.next_day_start(now)
        try:
            change = self.keeper.write(
                lambda: hold_card(self.db, qid, now, suspend=suspend, bury_until=until)
            )
        except StoreError as exc:
            self.say(f"Not {'suspended' if suspend else 'buried'}: {why_not_saved(exc)}. "
                     "The question is still yours to answer.")  # fmt: skip
            return False
        if until is None:
            self.result.suspended += 1
            self.say(f"Suspended until `kvdrill unsuspend {qid}`.")
        else:
            self.result.buried += 1
            self.say(f"Buried until tomorrow ({local_time(until, self.days)}).")
        self.history.append(replace(before, change=change))
        self.queue = drop(self.queue, qid)
        return True

    def take_back(self) -> bool:
        """Undo the last answer, suspend or bury; its question is asked again next."""
        if not self.history:
            self.say("Nothing to undo in this session.")
            return False
        refusal = self.history[-1].refusal
        if refusal:
            self.say(f"Cannot undo: the last answer is not in the database ({refusal}), so "
                     "there is nothing to take back.")  # fmt: skip
            return False
        done = self.history.pop()
        try:
            self.keeper.write(lambda: undo(self.db, done.change))
        except CardError as exc:
            self.say(f"Cannot undo: {exc}.")
            return False
        except StoreError as exc:
            self.history.append(done)  # nothing changed: u may try again
            self.say(f"Cannot undo now: {why_not_saved(exc)}.")
            return False
        result = self.result
        for name, value in zip(_COUNTERS, done.counters, strict=True):
            setattr(result, name, value)
        del result.review_ids[done.review_ids:]
        del result.mistakes[done.review_ids:]
        result.undone += 1
        self.position = done.position
        self.redo = (done.item, done.position, done.queue)
        self.say(f"Undone: {done.item.question_id} is asked again.")
        return True

    def say_leech(self, question_id: str) -> None:
        from drill.study.leech import card_lapse_cause, leech_lines

        cause = card_lapse_cause(self.db, question_id, self.scheduler)
        name = catalogue_entry(cause.misconception).name if cause.misconception else None
        self.say(*leech_lines(question_id, cause, name), roles=["mistake", None])


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

    `days` says when the user's day begins, for the daily new-card limit and the end
    of a bury (default: the system's zone, 4 am). The make_instance/grade/evidence_lines
    overrides exist for tests; by default the project's own are used.
    """
    chosen = eligible_questions(questions, options.topic)
    days = days or DayClock()
    from drill.kinds import make_instance as draw
    from drill.kinds.grade import grade as grade_answer

    deps = _Deps(
        make_instance or draw, grade or grade_answer,
        evidence_lines or evidence_from_latest_run(db),
    )  # fmt: skip
    # the user's FSRS parameters (kvdrill optimize) at the session's retention; fsrs's
    # fuzz is replaced by the load balancer, which picks within the same range
    settings = read_settings(db)
    scheduler = settings.scheduler(options.retention, fuzz=False)
    balancer = load_balancer(settings.easy_days, days, scheduler) if options.fuzz else None
    started = io.now()
    session_seed = options.seed if options.seed is not None else secrets.randbits(31)
    mode = "drill" if options.drill else "cram" if options.cram else "review"
    if options.drill:
        from drill.study.leech import drill_questions

        chosen = drill_questions(db, chosen, options.drill)
    session_id = str(uuid.uuid4())

    def tell(line: str) -> None:
        io.write(io.screen.lines([printable(line)]))

    keeper = AnswerKeeper(db, tell)
    # lifts burials that have ended, before the cards are read
    keeper.write(lambda: start_session(db, session_id, iso(started), mode))
    # only the session's own questions' cards are read, and of those only what it uses
    ids = [q.id for q in chosen]
    queue = Queue()
    if mode == "drill":
        plan = plan_drill(chosen, options.max_items)
    elif mode == "cram":
        plan = plan_cram(
            chosen,
            cards_of(db, ids),
            performance_by_question(db, ids),
            started,
            scheduler=scheduler,
            rng=random.Random(session_seed),
            max_items=options.max_items,
        )
    else:
        due = due_cards(db, ids, iso(started), options.max_items)
        later = learning_cards_later(db, ids, iso(started))
        learning_ids = [
            qid for qid, row in (*due.items(), *later.items()) if row["state"] in LEARNING_STATES
        ]
        ratings = last_ratings(db, learning_ids) if learning_ids else {}
        plan = plan_review(
            chosen,
            due,
            started,
            new_today=new_cards_since(db, iso(days.day_start(started))),
            new_limit=options.new_limit,
            max_items=options.max_items,
            last_ratings=ratings,
            unseen=without_card(db, ids),
        )
        queue = Queue(learning=learning_later(chosen, later, started, ratings))
    queue = Queue(tuple(plan), queue.learning)
    result = SessionResult(session_id, mode, len(plan), started, learn_ahead=options.learn_ahead)
    session = _Session(
        db, {q.id: q for q in chosen}, options, io, deps, days, result, session_seed, queue,
        scheduler, keeper, balancer,
    )  # fmt: skip
    soon = coming(queue, started, options.learn_ahead) - len(plan)
    drill_name = catalogue_entry(options.drill).name if options.drill else ""
    try:
        session.say(opening_line([item.why for item in plan], soon, mode, drill_name))
        session.run()
    except SessionStop as stop:
        result.ended_by = stop.reason
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM or SIGHUP
        result.ended_by = "interrupt"
        try:
            io.write("\n")
        except OSError:
            pass  # a terminal hung up: the summary below fails as the session ends
    except (StoreError, OSError):
        # the database stopped taking writes, or the output did (a full disk, a closed
        # terminal or pipe): close the session row if it still can
        try:
            end_session(db, result.session_id, iso(io.now()))
        except (StoreError, sqlite3.Error):
            pass  # `kvdrill doctor --repair` closes it later
        raise
    ended_at = result.ended_at = io.now()
    try:
        keeper.write(lambda: end_session(db, result.session_id, iso(ended_at)))
    except StoreError as exc:
        # every answer is stored or kept already: the summary still comes
        session.say(f"The session's end time was not saved ({why_not_saved(exc)}); "
                    "`kvdrill doctor --repair` closes the session.")  # fmt: skip
    new_now = new_cards_since(db, iso(days.day_start(ended_at)))
    left = cards_left(db, ids, iso(ended_at), iso(ended_at + timedelta(days=1)))
    fill_summary(result, left, options.new_limit - new_now)
    result.mistake_names = {m: catalogue_entry(m).name for m in result.mistakes if m}
    io.write(render_summary(result))
    return result
