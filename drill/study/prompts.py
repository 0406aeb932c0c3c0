"""What the quiz asks after an answer's verdict: the ticks of a concept answer, the rating,
and, at `q`, whether to save the answer before quitting. Each ends the session the same
way at the end of input (SessionStop) or a signal (KeyboardInterrupt), keeping the answer."""

from __future__ import annotations

from collections.abc import Callable

from drill.kinds.concept import rating_from_ticks
from drill.kinds.verdict import HARD
from drill.study.session_text import RATING_KEYS, RATING_NAMES, keys_help, parse_rating
from drill.study.ticks import PROMPT as TICKS_PROMPT
from drill.study.ticks import TickPrompt


class SessionStop(Exception):
    """End the session: `reason` is quit, eof or interrupt."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def keep_rating(checklist: TickPrompt | None) -> int:
    """The rating an answer without a suggestion is kept with when the session ends before
    the user rates it: what its ticks suggest (Hard without a checklist)."""
    return rating_from_ticks(checklist.ticks) if checklist is not None else HARD


class Prompts:
    """The prompts after a verdict, over the session's `ask` (raises SessionStop at the end
    of input), `say` and `write`."""

    def __init__(
        self,
        ask: Callable[[str], str],
        say: Callable[..., None],
        write: Callable[[str], None],
    ) -> None:
        self.ask, self.say, self.write = ask, say, write

    def ticks(self, checklist: TickPrompt) -> str | None:
        """Let the user correct a concept answer's ticks (drill.study.ticks); the reason
        the session stops when it ends at this prompt, else None."""
        while True:
            try:
                text = self.ask(TICKS_PROMPT)
            except SessionStop as stop:
                return stop.reason
            except KeyboardInterrupt:
                self.write("\n")
                return "interrupt"
            lines = checklist.answer(text)
            if lines is None:
                return None
            self.say(*lines)

    def rating(self, suggested: int | None, kept: int) -> tuple[int | None, str | None]:
        """The user's rating (None: not to be saved) and whether to stop after it. At end
        of input or Ctrl-C the answer is kept with the suggestion (`kept` where there is
        none), then we stop; `q` asks first. Without a suggestion Enter alone rates
        nothing: the user types one."""
        offer = (
            f"[Enter = {suggested} {RATING_NAMES[suggested]}] "
            if suggested is not None
            else "[no suggestion: the grader cannot tell] "
        )
        prompt = f"Rate: 1 again · 2 hard · 3 good · 4 easy {offer}"
        while True:
            try:
                text = self.ask(prompt)
                command = text.strip().lower()
                if command == "q":
                    chosen = self.confirm_quit(kept)
                    if chosen is not None:
                        return chosen
                    continue
            except SessionStop as stop:
                return kept, stop.reason
            except KeyboardInterrupt:
                # Ctrl-C, SIGTERM or SIGHUP (Terminated): the answer is in; keep it with the
                # suggested rating, then stop
                try:
                    self.write("\n")
                except OSError:
                    pass  # a terminal hung up takes no more output; the answer is still kept
                return kept, "interrupt"
            if command in ("?", "help"):
                self.say(*keys_help(RATING_KEYS))
                continue
            rating = parse_rating(text, suggested)
            if rating is not None:
                return rating, None
            if suggested is None:
                self.say("Type 1, 2, 3 or 4: the grader cannot tell for this answer.")
            else:
                self.say(
                    f"Type 1, 2, 3 or 4, or press Enter for {suggested} "
                    f"({RATING_NAMES[suggested]})."
                )

    def confirm_quit(self, suggested: int) -> tuple[int | None, str] | None:
        """`q` at the rating: which rating to save before quitting (None: discard the
        answer), or None to go back to the rating prompt."""
        name = RATING_NAMES[suggested]
        prompt = (
            f"Quit: save this answer as {suggested} {name}? Enter saves it · 1-4 another "
            "rating · d discards the answer · n goes back: "
        )
        while True:
            command = self.ask(prompt).strip().lower()
            if command in ("", "y", "yes"):
                return suggested, "quit"
            if command in ("d", "discard"):
                return None, "quit"
            if command in ("n", "no"):
                return None
            rating = parse_rating(command, suggested)
            if rating is not None:
                return rating, "quit"
            self.say("Press Enter, type 1-4, d or n.")
