"""Bank text as HTML: escaped first, then the two constructs bank text marks rendered.

Bank text is never trusted: every character goes through `html.escape` (after
`drill.text.printable`), and only then are two plain-text conventions of the bank
turned into markup:

* a code span, a run of backticks, the code, and a run of as many (the same spans
  `drill.reports.markdown_text` fences in Markdown): `<code>` around the escaped code,
  a line break inside it a space;
* a power written with a caret right after its base, `10^9`, `2^30`, `α^k`, `0.8^4`,
  `α^(k+1)`, `x^-3`: the exponent in `<sup>`. The exponent is a run of letters and
  digits (an optional sign before it, a decimal part after it), or a parenthesised
  group of at most 40 characters holding no parenthesis or caret, shown without its
  parentheses, which a raised exponent no longer needs. A caret with a space before
  it, or with anything else after it, stays a caret.

Anything else (tags, entities, links, other Markdown) is shown as written. Line
breaks outside code spans become `<br>`; a blank line parting paragraphs is the
caller's (`html_text`).
"""

from __future__ import annotations

import html
import re

from drill.reports.markdown_text import CODE_SPAN
from drill.text import printable

# the exponent as html.escape leaves it: "(", ")", "^" and word characters are not escaped
_POWER = re.compile(
    r"(?<=\S)\^(?:\((?P<group>[^()^\n]{1,40})\)|(?P<word>[-−+]?[^\W_]+(?:\.[0-9]+)?))"
)
_LINE_BREAK = re.compile("\n|\u2028|\u2029")


def _plain(text: str) -> str:
    """Text outside code spans: escaped, powers raised, line breaks as <br>."""
    escaped = html.escape(text)
    raised = _POWER.sub(lambda m: f"<sup>{m['group'] or m['word']}</sup>", escaped)
    return _LINE_BREAK.sub("<br>", raised)


def html_inline(text: str) -> str:
    """Bank text as inline HTML (see the module's docstring)."""
    text = printable(text)
    out, last = [], 0
    for span in CODE_SPAN.finditer(text):
        code = _LINE_BREAK.sub(" ", span[2])
        out += [_plain(text[last : span.start()]), f"<code>{html.escape(code)}</code>"]
        last = span.end()
    out.append(_plain(text[last:]))
    return "".join(out)


def html_text(text: str) -> str:
    """Bank text as paragraphs: a blank line parts them, a single line break is <br>."""
    paragraphs = [p.strip() for p in text.strip().split("\n\n") if p.strip()]
    return "".join(f"<p>{html_inline(p)}</p>" for p in paragraphs)
