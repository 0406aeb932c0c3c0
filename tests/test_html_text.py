"""Bank text in HTML: escaped first, then code spans as <code> and powers as <sup>."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

from hypothesis import given
from hypothesis import strategies as st

from drill.reports.document import Block
from drill.reports.html_text import html_inline, html_text
from drill.reports.sheet import html_block


def test_code_spans_become_code_and_their_text_stays_escaped():
    assert html_inline("computes `kv = 2 * L * h * d` bytes") == (
        "computes <code>kv = 2 * L * h * d</code> bytes"
    )
    assert html_inline('prints `f"{x / 1e9:.2f} <GiB>"` & stops') == (
        "prints <code>f&quot;{x / 1e9:.2f} &lt;GiB&gt;&quot;</code> &amp; stops"
    )
    # a longer fence holds a backtick; a line break inside code is a space
    assert html_inline("``a ` b`` and `x\ny`") == "<code>a ` b</code> and <code>x y</code>"
    # a lone backtick is text
    assert html_inline("it's a ` mark") == "it&#x27;s a ` mark"


def test_the_powers_the_bank_writes_are_raised():
    assert html_inline("GB means 10^9 bytes and GiB 2^30 bytes.") == (
        "GB means 10<sup>9</sup> bytes and GiB 2<sup>30</sup> bytes."
    )
    assert html_inline("the mean is (1 − α^(k+1)) / (1 − α)") == (
        "the mean is (1 − α<sup>k+1</sup>) / (1 − α)"
    )
    assert html_inline("0.9062^256 and 0.8^(4 + 1) and (58/64)^256") == (
        "0.9062<sup>256</sup> and 0.8<sup>4 + 1</sup> and (58/64)<sup>256</sup>"
    )
    assert html_inline("1 + α + … + α^k, 10^-3") == "1 + α + … + α<sup>k</sup>, 10<sup>-3</sup>"


def test_a_caret_that_is_no_simple_power_stays_a_caret():
    assert html_inline("a ^ b, x^, ^9, a^<b>, 2^(nested (x))") == (
        "a ^ b, x^, ^9, a^&lt;b&gt;, 2^(nested (x))"
    )
    # nothing is raised inside code
    assert html_inline("`x^2` is x^2") == "<code>x^2</code> is x<sup>2</sup>"


def test_markup_in_bank_text_is_shown_as_text():
    assert html_inline("<script>alert(1)</script>^<b>") == (
        "&lt;script&gt;alert(1)&lt;/script&gt;^&lt;b&gt;"
    )
    assert html_inline("`</code><script>`") == "<code>&lt;/code&gt;&lt;script&gt;</code>"
    assert html_inline("x^(<i>)") == "x<sup>&lt;i&gt;</sup>"


def test_paragraphs_lines_and_blocks():
    assert html_text("First `a`\nsecond 2^3.\n\nThird.") == (
        "<p>First <code>a</code><br>second 2<sup>3</sup>.</p><p>Third.</p>"
    )
    assert html_block(Block("steps", items=("2 × 8 × 10^9 = 16", "`b`"))) == (
        "<ol><li>2 × 8 × 10<sup>9</sup> = 16</li><li><code>b</code></li></ol>"
    )
    assert html_block(Block("answer", text="0.5 GiB (2^29 bytes)\nB. `x`")) == (
        '<p class="answer">0.5 GiB (2<sup>29</sup> bytes)<br>B. <code>x</code></p>'
    )


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, attrs))

    def handle_data(self, data):
        self.text.append(data)


_ALPHABET = st.sampled_from(list("ab1 9`^()<>&\"'\n-.α/"))


@given(st.text(_ALPHABET, max_size=60))
def test_only_code_sup_and_br_are_made_and_no_character_is_lost(text):
    out = html_inline(text)
    parser = _Tags()
    parser.feed(out)
    parser.close()
    assert {tag for tag, _ in parser.tags} <= {"code", "sup", "br"}
    assert all(attrs == [] for _, attrs in parser.tags)
    # what a browser shows is the text, less the markup's own characters and spacing
    markup = re.compile(r"[`^()\s]")
    assert markup.sub("", "".join(parser.text)) == markup.sub("", text)
    assert html.unescape(re.sub(r"<[^>]*>", "", out)) == "".join(parser.text)
