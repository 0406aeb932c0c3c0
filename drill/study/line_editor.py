"""Reading answers at a terminal with line editing, through the standard `readline`.

Left/Right move through the line, Ctrl-A/Ctrl-E go to its start and end, Up/Down
bring back earlier answers of the session (ratings and other keys are not kept).
readline ships with Python (GNU readline or libedit), loads in about a millisecond
and needs no dependency; it is loaded only when the quiz reads from a terminal, so
piped input keeps its plain reader. Where Python has no readline (Windows), the
quiz reads plain lines at a terminal too.
"""

from __future__ import annotations

from collections.abc import Callable

from drill.text import valid_text


def terminal_reader(max_chars: int) -> Callable[[str, bool], str | None] | None:
    """A reader for `SessionIO.read_prompted`, or None where readline is missing.

    It shows the prompt, reads one edited line (None at end of input, Ctrl-D) of at
    most `max_chars` characters, and adds it to the history when told to."""
    try:
        import readline
    except ImportError:  # pragma: no cover - Windows
        return None
    readline.set_auto_history(False)
    # Tab types a tab: no file-name completion in an answer
    if "libedit" in (readline.__doc__ or ""):
        readline.parse_and_bind("bind ^I ed-insert")
    else:
        readline.parse_and_bind("tab: tab-insert")

    def read(prompt: str, remember: bool) -> str | None:
        try:
            line = input(prompt)
        except EOFError:
            return None
        line = valid_text(line[:max_chars])
        if remember and line.strip():
            readline.add_history(line)
        return line

    return read
