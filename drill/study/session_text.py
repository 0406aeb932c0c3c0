"""The words of a quiz session: its opening line, the keys, ratings and the summary
(with the figures it reports)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from drill.srs import parse_iso
from drill.storage.session_cards import CardsLeft
from drill.study.days import DayClock

RATING_NAMES = {1: "again", 2: "hard", 3: "good", 4: "easy"}
# the header's word for why an item is shown (drill.study.plan.PlanItem.why)
TAGS = {
    "learning": "learning", "again": "again", "due": "review", "new": "new", "cram": "cram",
    "drill": "drill",
}  # fmt: skip

ANSWER_KEYS = (
    ("Enter", "send the answer typed"),
    ("h", "a hint; h again for the next one (any hint caps the rating at Hard)"),
    ("s", "skip this question"),
    ("u", "undo the last answer: it is taken back and its question asked again"),
    ("!", "suspend this question until `kvdrill unsuspend ID`"),
    ("-", "bury this question until tomorrow"),
    ("q", "end the session, with its summary"),
    ("?", "this list"),
)
RATING_KEYS = (
    ("Enter", "save the suggested rating"),
    ("1-4", "save 1 again, 2 hard, 3 good or 4 easy"),
    ("q", "save and end the session (asks first which rating to save)"),
    ("?", "this list"),
)
EDITING_KEYS = "Editing: Left/Right, Ctrl-A/Ctrl-E (start/end), Up/Down for earlier answers."


def keys_help(keys: Sequence[tuple[str, str]], line_editing: bool = False) -> list[str]:
    lines = [f"  {key:<7}{what}" for key, what in keys]
    return ["Keys:", *lines, *([f"  {EDITING_KEYS}"] if line_editing else [])]


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


def parse_rating(text: str, suggested: int | None) -> int | None:
    """1-4, a rating's name or its first letter... Enter takes `suggested` (None without
    one); None if unreadable."""
    text = text.strip().lower()
    if not text:
        return suggested
    if text in ("1", "2", "3", "4"):
        return int(text)
    for value, name in RATING_NAMES.items():
        if text == name:
            return value
    return None


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


@dataclass
class SessionResult:
    session_id: str
    mode: str  # review, cram or drill
    planned: int
    started_at: datetime
    ended_at: datetime | None = None
    ended_by: str = "done"  # done | quit | eof | interrupt
    answered: int = 0
    right: int = 0
    wrong: int = 0
    skipped: int = 0
    suspended: int = 0
    buried: int = 0
    undone: int = 0
    due_now: int = 0  # cards still due at the end (skipped ones, or ones left out by --max)
    due_within_day: int = 0
    next_due: datetime | None = None
    new_waiting: int = 0
    # the cards still in learning: when each comes back, and its question
    learning_left: list[tuple[datetime, str]] = field(default_factory=list)
    learn_ahead: timedelta = timedelta(0)
    review_ids: list[str] = field(default_factory=list)  # the answers the database took
    # the named mistake of each answer in review_ids (None: none named), in the same order
    mistakes: list[str | None] = field(default_factory=list)
    mistake_names: dict[str, str] = field(default_factory=dict)  # id -> the mistake in words
    # answers the database refused: kept in the unsaved-answers file, or only printed
    unsaved: int = 0
    unsaved_file: str | None = None
    unsaved_shown: int = 0


def unsaved_lines(kept: int, kept_in: object, shown: int) -> list[str]:
    """What became of the answers the database refused, for a session's end."""
    lines = []
    if kept:
        them = "it" if kept == 1 else "them"
        lines.append(f"Not in the database yet: {plural(kept, 'answer')}, kept in {kept_in}; "
                     f"the next `kvdrill quiz` adds {them}.")  # fmt: skip
    if shown:
        lines.append(f"Saved nowhere: {plural(shown, 'answer')}, printed above; `kvdrill import "
                     "FILE` adds a file holding those lines.")  # fmt: skip
    return lines


def render_summary(result: SessionResult) -> str:
    ended = result.ended_at or result.started_at
    lines = ["", "── summary ──"]
    if result.answered or result.skipped:
        verb = "answered" if result.mode == "review" else "practised"
        line = f"{result.answered} {verb}: {result.right} right, {result.wrong} wrong"
        if result.skipped:
            line += f", {result.skipped} skipped"
        lines.append(f"{line}; {human_span(ended - result.started_at)}.")
    else:
        lines.append("No answers this time.")
    held = [f"{n} {word}" for n, word in ((result.suspended, "suspended"),
                                          (result.buried, "buried")) if n]
    if held:
        lines.append(f"Held back: {', '.join(held)}.")
    if result.undone:
        lines.append(f"Undone: {plural(result.undone, 'answer')}.")
    if result.mode != "review":
        lines.append(f"{result.mode.capitalize()} session: the schedule was not changed.")
    lines += mistake_lines(result.mistakes, result.mistake_names)
    lines += learning_lines(result.learning_left, ended)
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
    lines += unsaved_lines(result.unsaved, result.unsaved_file, result.unsaved_shown)
    return "\n".join(lines) + "\n"


LEARNING_LISTED = 5  # learning cards named one by one; more are counted


def mistake_lines(mistakes: Sequence[str | None], names: Mapping[str, str]) -> list[str]:
    """The named mistakes of a session's answers, most frequent first (then the first
    made), each with its count and the drill that practises it."""
    counts: dict[str, int] = {}
    for mistake in mistakes:
        if mistake:
            counts[mistake] = counts.get(mistake, 0) + 1
    if not counts:
        return []
    ranked = sorted(counts, key=lambda m: -counts[m])  # stable: first made first on a tie
    lines = [f"Mistakes this session: {sum(counts.values())}; practise each with its drill:"]
    for mistake in ranked:
        name = names.get(mistake, mistake.replace("-", " "))
        lines.append(f"  {counts[mistake]}x {name}: kvdrill quiz --drill {mistake}")
    return lines


def learning_lines(learning: Sequence[tuple[datetime, str]], ended: datetime) -> list[str]:
    """The cards still in learning and when each comes back (the soonest first)."""
    if not learning:
        return []
    ordered = sorted(learning)
    them = "it" if len(ordered) == 1 else "each"
    lines = [f"Still learning: {len(ordered)}; `kvdrill quiz` shows {them} once it is back:"]
    width = max(len(qid) for _, qid in ordered[:LEARNING_LISTED])
    for due, qid in ordered[:LEARNING_LISTED]:
        when = "now" if due <= ended else f"in {human_span(due - ended)}"
        lines.append(f"  {qid:<{width}}  back {when}")
    if len(ordered) > LEARNING_LISTED:
        last = ordered[-1][0]
        lines.append(
            f"  and {len(ordered) - LEARNING_LISTED} more, the last back in "
            f"{human_span(last - ended)}"
        )
    return lines


def fill_summary(result: SessionResult, left: CardsLeft, new_allowance: int) -> None:
    """What is left at the end, from `left` (drill.storage.session_cards.cards_left at
    `result.ended_at`): cards due now and later (suspended and buried ones left out), new
    questions for today, and, after a review session however it ended, the cards still
    in learning and when each comes back."""
    result.due_now = left.due_now
    result.next_due = parse_iso(left.next_due) if left.next_due is not None else None
    result.due_within_day = left.due_within_day
    result.new_waiting = min(left.without_card, max(0, new_allowance))
    if result.mode == "review":
        result.learning_left = sorted((parse_iso(due), qid) for due, qid in left.learning)


def local_time(moment: datetime, days: DayClock) -> str:
    """A time as the user's clock shows it: Tue 3 Nov, 04:00."""
    local = moment.astimezone(days.tz)
    return f"{local:%a} {local.day} {local:%b}, {local:%H:%M}"


def opening_line(why: Sequence[str], learning_soon: int, mode: str, drill_name: str = "") -> str:
    """The session's first line: what it holds, and the main keys."""
    keys = "h hint · s skip · u undo · q quit · ? keys"
    count = len(why) + learning_soon
    if not count:
        return "Nothing due and no new questions left for today."
    if mode == "cram":
        return (
            f"Cram: {plural(len(why), 'question')}, practice only (the schedule is not "
            f"changed). {keys}"
        )
    if mode == "drill":
        return (
            f"Drill on \"{drill_name}\": {plural(len(why), 'question')}, practice only (the "
            f"schedule is not changed). {keys}"
        )
    new = sum(1 for item in why if item == "new")
    due = len(why) - new
    learning = f", {learning_soon} learning" if learning_soon else ""
    return f"{plural(count, 'question')}: {due} due, {new} new{learning}. {keys}"
