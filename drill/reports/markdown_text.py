"""Text put into Markdown so that a CommonMark renderer shows it as written, and
nothing else: escaped by construction, not by spotting dangerous input.

`md_escape(text)` makes plain text (bank text, typed answers) into Markdown:

* every character that can begin inline markup, wherever it stands, is escaped: `\\`,
  `*`, `[`, `]`, `#`, `|`, `~` and a backtick with a backslash; `&`, `<` and `>` as the
  entities `&amp;`, `&lt;`, `&gt;` (so no raw HTML, autolink, entity or block quote);
  `_` too, except between two ASCII letters or digits, where CommonMark lets it open or
  close nothing (`head_dim` stays as it is);
* at the start of a line, what could open a block: `-`, `+` and `=` (a list item, a
  thematic break, a setext underline) and the `.` or `)` after up to nine digits (an
  ordered list);
* spaces and tabs at the start and end of each line are dropped, so no line is an
  indented code block or ends in a hard break.

Bank text marks code the Markdown way, with a run of backticks, the code, and a run of
as many (`2 * layers * hidden_size * 2`): that is a code span, written out again by
`md_code` with a fence longer than any run of backticks inside it and on one line. Its
text is shown as it is; a backslash before the opening run is a backslash like any other
(the text is plain text), so no backslash can turn a fence into text and let the code
out. `code_spans=False` shows the backticks as typed.

What the renderer shows is the text (through `drill.text.printable`) with these
whitespace rules: a line's leading and trailing spaces and tabs are gone; a blank line
parts paragraphs and a single line break is a soft break; U+2028 and U+2029 are line
breaks; a line break inside a code span is a space; and a code span's delimiters are not
shown.
"""

from __future__ import annotations

import re

from drill.text import printable

# a code span: a whole run of backticks, text holding no blank line, a run of as many
CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)((?:(?!\n[ \t]*\n).)+?)(?<!`)\1(?!`)", re.S)
_BACKTICKS = re.compile("`+")
_INLINE = re.compile(r"[\\`*\[\]#|~&<>]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_LIST_NUMBER = re.compile(r"([0-9]{1,9})([.)])(?=[ \t]|$)")


def _inline(text: str) -> str:
    return _INLINE.sub(lambda m: _ENTITIES.get(m[0]) or "\\" + m[0], text)


def _line(line: str) -> str:
    """One line of escaped text: trimmed, and a block marker at its start escaped."""
    line = line.strip(" \t")
    if line[:1] in ("-", "+", "="):
        return "\\" + line
    number = _LIST_NUMBER.match(line)
    if number:
        return f"{number[1]}\\{number[2]}{line[number.end() :]}"
    return line


def md_code(text: str) -> str:
    """`text` as one Markdown code span, shown exactly as it is (a line break as a space):
    fenced by one backtick more than its longest run of them, and padded with a space on
    each side where CommonMark strips one."""
    text = printable(text).replace("\n", " ")
    if not text:
        return ""
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)
    pad = (
        " "
        if "`" in (text[0], text[-1]) or (text[0] == text[-1] == " " and text.strip(" "))
        else ""
    )
    return f"{fence}{pad}{text}{pad}{fence}"


def md_escape(text: str, *, code_spans: bool = True) -> str:
    """Plain text as Markdown that shows it as written (see the module's docstring)."""
    text = printable(text).replace("\u2028", "\n").replace("\u2029", "\n")
    out, last = [], 0
    for span in CODE_SPAN.finditer(text) if code_spans else ():
        out += [_inline(text[last : span.start()]), md_code(span[2])]
        last = span.end()
    out.append(_inline(text[last:]))
    return "\n".join(_line(line) for line in "".join(out).split("\n"))


def md_cell(text: str | None) -> str:
    """Text for a cell of a (GitHub-style) Markdown table: one line, its whitespace runs
    made single spaces, every backtick shown (a pipe in a code span would end the cell)."""
    return md_escape(" ".join((text or "").split()), code_spans=False)
