"""Markdown escaped by construction (drill.reports.markdown_text), checked by rendering it with a
CommonMark parser: whatever the text, the page holds no tag but the renderer's own, and
shows the text as written.

"As written" is up to the whitespace rules drill.reports.markdown_text documents, so the texts
are compared word by word (`words`: runs of whitespace as one space, none at the ends);
with code spans, the backticks that fence them are not shown, so those texts are
compared without backticks.
"""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from drill.interview.report import QuestionRow, Report, Suggestion, TopicRow
from drill.interview.report import render_markdown as report_markdown
from drill.reports.document import Block, Document, Item, Section
from drill.reports.markdown_text import md_cell, md_code, md_escape
from drill.reports.sheet import render_markdown as sheet_markdown

COMMONMARK = MarkdownIt("commonmark")
# a report's tables are GitHub's; the commonmark preset with tables reads them
WITH_TABLES = MarkdownIt("commonmark").enable("table")
BYPASS = "\\`<img src=x onerror=alert(1)>`"


class Page(HTMLParser):
    """The tags, the text and anything else (comments, declarations) of rendered HTML."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, tuple]] = []
        self.text: list[str] = []
        self.other: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, tuple(attrs)))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, tuple(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def handle_comment(self, data):
        self.other.append(f"<!--{data}-->")

    def handle_decl(self, decl):
        self.other.append(f"<!{decl}>")

    def handle_pi(self, data):
        self.other.append(f"<?{data}>")

    def unknown_decl(self, data):
        self.other.append(f"<![{data}]>")

    @property
    def tag_names(self) -> set[str]:
        return {tag for tag, _ in self.tags}

    @property
    def attributes(self) -> set[tuple[str, str | None]]:
        return {attr for _, attrs in self.tags for attr in attrs}

    @property
    def shown(self) -> str:
        return "".join(self.text)


def words(text: str) -> str:
    return " ".join(text.split())


# Markdown's significant characters and the markup they make, with letters, digits and
# whitespace between them
TOKENS = [
    *"\\`<>&*_[]!#|~-+=.():/\"' \t\n",
    *"ab19é\xa0\u2028",
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "<!-- c -->",
    "<![CDATA[x]]>",
    "<?php ?>",
    "<!DOCTYPE html>",
    "javascript:alert(1)",
    "http://x.example",
    "&amp;",
    "&#60;",
    "&lt;",
    "    ",
    "```",
    "~~~",
    "1. ",
    "2) ",
    "- ",
    "---",
    "===",
    "> ",
    "# ",
    "[x]: http://x\n",
    "](javascript:alert(1))",
    BYPASS,
]
markdowny = st.lists(st.sampled_from(TOKENS), max_size=40).map("".join)
# any text that drill.text.printable leaves as it is: no control characters but newline
# and tab, no lone surrogates, no bidirectional controls
anything = st.text(
    st.one_of(
        st.characters(
            blacklist_categories=("Cc", "Cs"),
            blacklist_characters="\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069",
        ),
        st.sampled_from("\n\t"),
    ),
    max_size=60,
)
texts = st.one_of(markdowny, anything)


# ------------------------------------------------------------------------- properties


@settings(max_examples=600)
@given(text=texts)
def test_escaped_text_renders_as_paragraphs_of_its_own_text_and_nothing_else(text):
    page = Page(COMMONMARK.render(md_escape(text, code_spans=False)))
    assert page.tag_names <= {"p"}
    assert page.attributes == set()
    assert page.other == []
    assert words(page.shown) == words(text)


@settings(max_examples=600)
@given(text=texts)
def test_escaped_text_with_code_spans_renders_its_text_in_paragraphs_and_code(text):
    page = Page(COMMONMARK.render(md_escape(text)))
    assert page.tag_names <= {"p", "code"}
    assert page.attributes == set()
    assert page.other == []
    assert words(page.shown.replace("`", "")) == words(text.replace("`", ""))


@settings(max_examples=300)
@given(text=texts)
def test_a_code_span_shows_its_text_exactly(text):
    page = Page(COMMONMARK.render(md_code(text)))
    if text.replace("\n", " ").strip(" ") == "":
        return  # only spaces: a paragraph of nothing, or of a blank code span
    assert [tag for tag, _ in page.tags] == ["p", "code"]
    assert page.shown == text.replace("\n", " ") + "\n"


@settings(max_examples=300)
@given(text=texts)
def test_a_table_cell_is_one_cell_showing_its_text(text):
    cell = md_cell(text)
    page = Page(WITH_TABLES.render(f"| a | b |\n| --- | --- |\n| {cell} | end |\n"))
    assert [tag for tag, _ in page.tags].count("td") == 2
    assert page.tag_names <= {"table", "thead", "tbody", "tr", "th", "td"}
    assert page.attributes == set()
    row = page.shown.split("b\n", 1)[1]  # after the header row
    assert words(row) == words(f"{text} end")


@settings(max_examples=200)
@given(text=texts)
def test_a_sheet_with_the_text_everywhere_holds_only_the_renderers_tags(text):
    item = Item(
        1,
        text,
        (
            Block("text", text),
            Block("label", text),
            Block("note", text),
            Block("answer", text),
            Block("steps", items=(text, text)),
            Block("bullets", items=(text,)),
            Block("options", items=(text, text)),
            Block("space", lines=2),
            Block("command", text),
        ),
    )
    doc = Document(text, text, (Section(text, (item,)),))
    page = Page(COMMONMARK.render(sheet_markdown(doc)))
    allowed = {"h1", "h2", "h3", "p", "em", "strong", "ol", "ul", "li", "code", "br"}
    assert page.tag_names <= allowed
    assert page.attributes == set()
    assert page.other == []


def report_of(text: str) -> Report:
    row = QuestionRow(
        number=1,
        question_id="iv-open",
        topic=text,
        kind="concept",
        follow_up_of=None,
        asked=text,
        answer=text,
        verdict=text,
        expected=text,
        mistake=text,
        missed=(text,),
        duration_ms=30_000,
        points=0.5,
        rating=2,
        details=(text, text),
    )
    return Report(
        seed=1,
        minutes=45,
        planned=1,
        ended_by="done",
        elapsed_s=30,
        rows=(row,),
        topics=(TopicRow(text, 1, 0.5),),
        drill_next=(Suggestion(text, text, f"kvdrill ask {text}"),),
    )


@settings(max_examples=200)
@given(text=texts)
def test_a_report_with_the_text_everywhere_holds_only_the_renderers_tags(text):
    page = Page(WITH_TABLES.render(report_markdown(report_of(text))))
    allowed = {"h1", "h2", "h3", "p", "strong", "ol", "ul", "li", "code", "blockquote"}
    allowed |= {"table", "thead", "tbody", "tr", "th", "td"}
    assert page.tag_names <= allowed
    assert page.attributes <= {("style", "text-align:right")}
    assert page.other == []


# --------------------------------------------------------------------------- by hand


@pytest.mark.parametrize(
    "text, markdown, html",
    [
        # the bypass: a backslash is plain text's backslash, the code stays in its span
        (
            BYPASS,
            "\\\\`<img src=x onerror=alert(1)>`",
            "<p>\\<code>&lt;img src=x onerror=alert(1)&gt;</code></p>\n",
        ),
        (
            "a \\`<script>alert(1)</script>` b",
            "a \\\\`<script>alert(1)</script>` b",
            "<p>a \\<code>&lt;script&gt;alert(1)&lt;/script&gt;</code> b</p>\n",
        ),
        # a stray backtick, or a run with no match, is a backtick
        ("``a`", "\\`\\`a\\`", "<p>``a`</p>\n"),
        # a span holding backticks gets a longer fence
        ("` `` `", "```  ``  ```", "<p><code> `` </code></p>\n"),
        ("``a`b``", "``a`b``", "<p><code>a`b</code></p>\n"),
        # block markers at a line's start, indented code, a setext underline
        (
            "1. x\n- y\n# z\n> q\n    code\n===",
            "1\\. x\n\\- y\n\\# z\n&gt; q\ncode\n\\===",
            "<p>1. x\n- y\n# z\n&gt; q\ncode\n===</p>\n",
        ),
        # emphasis; an underscore inside a word stays as it is
        ("a_b _c_ __d__ *e*", "a_b \\_c\\_ \\_\\_d\\_\\_ \\*e\\*", "<p>a_b _c_ __d__ *e*</p>\n"),
        ("see [docs](javascript:alert(1))", "see \\[docs\\](javascript:alert(1))",
         "<p>see [docs](javascript:alert(1))</p>\n"),  # fmt: skip
        ("x | y ~~z~~ &amp;", "x \\| y \\~\\~z\\~\\~ &amp;amp;", "<p>x | y ~~z~~ &amp;amp;</p>\n"),
        ("tail \\\nnext  ", "tail \\\\\nnext", "<p>tail \\\nnext</p>\n"),
        # what the golden sheets hold stays as it was
        ("shape [batch, heads, sequence, head_dim]", "shape \\[batch, heads, sequence, head_dim\\]",
         "<p>shape [batch, heads, sequence, head_dim]</p>\n"),  # fmt: skip
        ("K+V, 2 × 28 = 56 (-5%)", "K+V, 2 × 28 = 56 (-5%)", "<p>K+V, 2 × 28 = 56 (-5%)</p>\n"),
    ],
)
def test_escaping_by_hand(text, markdown, html):
    assert md_escape(text) == markdown
    assert COMMONMARK.render(markdown) == html


def test_typed_text_without_code_spans_shows_its_backticks():
    assert md_escape(BYPASS, code_spans=False) == "\\\\\\`&lt;img src=x onerror=alert(1)&gt;\\`"
    assert md_cell("a | `b` |\n c") == "a \\| \\`b\\` \\| c"


BYPASS_BANK = """\
deck: bypass
questions:
  - id: bypass-concept
    kind: concept
    topic: bypass
    difficulty: 1
    prompt: 'Explain \\`<img src=x onerror=alert(1)>` and \\`<script>alert(2)</script>`'
    answer: 'Model \\`<img src=x onerror=alert(3)>`'
    key_points:
      - point: 'Point \\`<script>alert(4)</script>`'
        cues: [point]
"""


def test_the_bypass_in_a_bank_shows_as_code_on_the_sheet_and_the_key(tmp_path):
    from drill.bank.loader import load_bank
    from drill.kinds import make_instance
    from drill.reports.sheet import build_documents

    path = tmp_path / "bypass.yaml"
    path.write_text(BYPASS_BANK, encoding="utf-8")
    sheet, key = build_documents(list(load_bank([path])), 1, make_instance)
    sheet_md, key_md = sheet_markdown(sheet), sheet_markdown(key)
    assert (
        "Explain \\\\`<img src=x onerror=alert(1)>` and \\\\`<script>alert(2)</script>`"
        in sheet_md.splitlines()
    )
    sheet_html, key_html = COMMONMARK.render(sheet_md), COMMONMARK.render(key_md)
    assert (
        "<p>Explain \\<code>&lt;img src=x onerror=alert(1)&gt;</code>"
        " and \\<code>&lt;script&gt;alert(2)&lt;/script&gt;</code></p>"
    ) in sheet_html.splitlines()
    assert (
        "<p><strong>Answer:</strong> Model \\<code>&lt;img src=x onerror=alert(3)&gt;</code></p>"
        in key_html.splitlines()
    )
    assert "<li>Point \\<code>&lt;script&gt;alert(4)&lt;/script&gt;</code></li>" in (
        key_html.splitlines()
    )
    for page in (sheet_html, key_html):
        assert "<img" not in page and "<script" not in page


def test_the_bypass_typed_and_asked_in_an_interview_report_shows_as_text():
    report = report_of(BYPASS)
    md = report_markdown(report)
    page = WITH_TABLES.render(md)
    assert "<img" not in page and "<script" not in page
    lines = md.splitlines()
    # a table cell and the typed answer show the backticks as typed
    assert "**Your answer:** \\\\\\`&lt;img src=x onerror=alert(1)&gt;\\`" in lines
    assert "| 1 | iv-open | \\\\\\`&lt;img src=x onerror=alert(1)&gt;\\` | 0:30 |" in "\n".join(
        lines
    )
    # the question as asked is bank text: its code span stays one
    assert "> \\\\`<img src=x onerror=alert(1)>`" in lines
    assert "<p>\\<code>&lt;img src=x onerror=alert(1)&gt;</code></p>" in page
    assert "1. \\\\`<img src=x onerror=alert(1)>` (\\\\`<img src=x onerror=alert(1)>`):" in md
