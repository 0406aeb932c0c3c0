"""Mock interview sheets: a seeded choice of questions, a question sheet and its answer key.

Everything here is a pure function of the bank, the seed and (for `weights`) the
user's history: the same inputs give byte-identical Markdown and HTML. Nothing
reads the clock; a sheet carries no date.

Choosing: the questions are split by kind, each kind gets a share of the sheet in
proportion to how many questions it has (at least one each while there is room), and
inside a kind by difficulty the same way; within a share, questions are drawn by
weighted sampling without replacement (Efraimidis-Spirakis keys), weight 1 unless the
caller weights weak questions up.

A sheet and its key are lists of sections of items; each item is a list of blocks
(`Block`), which the Markdown and HTML renderers turn into text. Bank text is escaped
by `drill.reports.html_text` in HTML (escaped first; then its code spans shown as code and
its powers, `10^9`, raised) and by `drill.reports.markdown_text` in Markdown (every character
that could make markup escaped, code spans fenced anew), so markup in a bank
(`<script>`, `<img onerror=...>`, a link) is shown as text by either.
"""

from __future__ import annotations

import hashlib
import html
import math
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from drill.kinds import KINDS, kind_of
from drill.reports.document import Block, Document, Item, Section, letter
from drill.reports.html_page import page_head
from drill.reports.html_text import html_inline, html_text
from drill.reports.markdown_text import md_code, md_escape
from drill.text import printable

TITLE = "kvdrill mock interview"
WEAK_WEIGHT_MAX = 100.0  # weight of a question never recalled and never right
WEAK_WEIGHT_MIN = 0.5  # weight of a question recalled perfectly
UNSEEN_WEIGHT = 1.0


# ------------------------------------------------------------------------- choosing


def item_seed(sheet_seed: int, question_id: str) -> int:
    """The draw of a question on a sheet: stable across runs, platforms and bank order."""
    digest = hashlib.sha256(f"kvdrill-sheet:{sheet_seed}:{question_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1  # 31 bits, like the quiz's seeds


def quotas(sizes: Mapping[Any, int], n: int) -> dict[Any, int]:
    """Split `n` picks across groups of the given sizes: one each while `n` allows (the
    largest groups first), the rest in proportion to size by largest remainder."""
    keys = sorted(sizes, key=lambda k: (-sizes[k], str(k)))
    n = min(n, sum(sizes.values()))
    share = dict.fromkeys(keys, 0)
    for k in keys[:n]:
        share[k] = 1
    left = n - sum(share.values())
    while left > 0:
        room = {k: sizes[k] - share[k] for k in keys if sizes[k] > share[k]}
        total = sum(room.values())
        exact = {k: left * room[k] / total for k in room}
        for k in room:
            share[k] += math.floor(exact[k])
        left = n - sum(share.values())
        by_remainder = sorted(room, key=lambda k: (-(exact[k] - math.floor(exact[k])), str(k)))
        for k in by_remainder[:left]:
            share[k] += 1
        left = n - sum(share.values())
    return share


def weighted_sample(items: Sequence[Any], k: int, weight, rng: random.Random) -> list[Any]:
    """k items without replacement, each with probability in proportion to its weight."""
    keyed = []
    for item in items:
        u = rng.random() or 1e-300
        keyed.append((math.log(u) / weight(item), item.id, item))
    keyed.sort(key=lambda t: (-t[0], t[1]))
    return [item for _, _, item in keyed[:k]]


def choose_questions(
    questions: Sequence[Any],
    n: int,
    seed: int,
    *,
    weights: Mapping[str, float] | None = None,
) -> list[Any]:
    """`n` questions (fewer if the bank is smaller), in sheet order: by kind
    (the order of drill.kinds.KINDS), then easy to hard, then by draw."""
    rng = random.Random(f"kvdrill-sheet:{seed}")
    weights = weights or {}

    def weight(q: Any) -> float:
        return weights.get(q.id, UNSEEN_WEIGHT)

    by_kind: dict[str, list[Any]] = {}
    for q in sorted(questions, key=lambda q: q.id):  # bank order does not matter
        by_kind.setdefault(q.kind, []).append(q)
    chosen: list[tuple[int, int, int, Any]] = []
    kind_quota = quotas({k: len(v) for k, v in by_kind.items()}, n)
    for kind in sorted(by_kind, key=_kind_rank):
        by_level: dict[int, list[Any]] = {}
        for q in by_kind[kind]:
            by_level.setdefault(q.difficulty, []).append(q)
        level_quota = quotas({d: len(v) for d, v in by_level.items()}, kind_quota[kind])
        for level in sorted(by_level):
            picked = weighted_sample(by_level[level], level_quota[level], weight, rng)
            chosen += [(_kind_rank(kind), level, i, q) for i, q in enumerate(picked)]
    chosen.sort(key=lambda t: t[:3])
    return [q for *_, q in chosen]


def _kind_rank(kind: str) -> int:
    """Where a kind's part comes on the sheet: the order of drill.kinds.KINDS."""
    return list(KINDS).index(kind) if kind in KINDS else len(KINDS)


def weak_weights(figures: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Sampling weights from `drill.reports.stats.question_figures`: the weaker, the heavier.

    Strength is the mean of retrievability now and accuracy (`drill.reports.stats.weakness`);
    weight runs geometrically from WEAK_WEIGHT_MIN (strength 1) to WEAK_WEIGHT_MAX
    (strength 0): MIN * (MAX / MIN) ** (1 - strength). A question never answered right
    (strength at most 0.5) weighs 7 to 100 times an unseen one, which keeps
    UNSEEN_WEIGHT; a linear scale up to 5 left the weakest questions lost among the
    many unseen ones.
    """
    from drill.reports.stats import weakness

    ratio = WEAK_WEIGHT_MAX / WEAK_WEIGHT_MIN
    return {f["question_id"]: WEAK_WEIGHT_MIN * ratio ** (1 - weakness(f)) for f in figures}


# ---------------------------------------------------------------------------- blocks


def key_blocks(instance: Any) -> list[Block]:
    """What the answer key says about one item: the answer, then how to get it."""
    blocks = kind_of(instance.kind).key_blocks(instance)
    if instance.explanation:
        blocks.append(Block("text", instance.explanation.strip()))
    return blocks


def _meta(instance: Any) -> str:
    return f"{instance.topic} · difficulty {instance.difficulty}/3"


def build_documents(
    questions: Sequence[Any],
    seed: int,
    make_instance: Callable[[Any, int], Any],
) -> tuple[Document, Document]:
    """The question sheet and its answer key for questions in sheet order."""
    sheet_sections: dict[str, list[Item]] = {}
    key_sections: dict[str, list[Item]] = {}
    for number, q in enumerate(questions, start=1):
        qseed = item_seed(seed, q.id)
        instance = make_instance(q, qseed)
        kind = kind_of(q.kind)
        title = kind.section_title
        sheet_sections.setdefault(title, []).append(
            Item(number, _meta(instance), tuple(kind.question_blocks(instance)))
        )
        replay = Block("command", f"kvdrill ask {q.id} --seed {qseed}")
        key_sections.setdefault(title, []).append(
            Item(number, q.id, (*key_blocks(instance), replay))
        )
    count = f"{len(questions)} question{'s' if len(questions) != 1 else ''}"
    sheet = Document(
        TITLE,
        f"Sheet {seed} · {count}. Give every number with its unit and show your working.",
        tuple(Section(t, tuple(items)) for t, items in sheet_sections.items()),
    )
    key = Document(
        f"Answer key: {TITLE}",
        f"Sheet {seed} · {count}.",
        tuple(Section(t, tuple(items)) for t, items in key_sections.items()),
    )
    return sheet, key


# -------------------------------------------------------------------------- Markdown


def _md_list(items: Sequence[str], marker) -> list[str]:
    lines = []
    for i, item in enumerate(items):
        head = marker(i)
        body = md_escape(item).strip().splitlines() or [""]
        lines.append(f"{head} {body[0]}")
        lines += [" " * (len(head) + 1) + rest for rest in body[1:]]
    return lines


def _md_block(block: Block) -> list[str]:
    if block.kind == "text":
        return [md_escape(block.text)]
    if block.kind in ("label", "note"):
        return [f"*{md_escape(block.text)}*"]
    if block.kind == "answer":
        # several lines (the right options of a choice) stay lines: a hard break each
        return ["**Answer:** " + "\\\n".join(md_escape(block.text).strip().splitlines())]
    if block.kind == "steps":
        return _md_list(block.items, lambda i: f"{i + 1}.")
    if block.kind == "bullets":
        return _md_list(block.items, lambda i: "-")
    if block.kind == "options":
        # "A." is no list marker in CommonMark: each option is a bullet that carries its letter
        return _md_list(block.items, lambda i: f"- {letter(i)}.")
    if block.kind == "space":
        return ["Answer: " + "_" * 40]
    if block.kind == "command":
        return [f"Practise this draw: {md_code(block.text)}"]
    raise ValueError(f"unknown block kind {block.kind!r}")


def render_markdown(doc: Document) -> str:
    out = [f"# {md_escape(doc.title)}", "", md_escape(doc.intro)]
    for part, section in enumerate(doc.sections, start=1):
        out += ["", f"## Part {part}. {md_escape(section.title)}"]
        for item in section.items:
            out += ["", f"### {item.number}. {md_escape(item.title)}"]
            for block in item.blocks:
                out += ["", *_md_block(block)]
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------ HTML

_CSS = """
@page { size: A4; margin: 16mm 18mm; }
* { box-sizing: border-box; }
body { font: 11pt/1.5 Georgia, "DejaVu Serif", "Times New Roman", serif; color: #111;
       max-width: 44em; margin: 2.5em auto; padding: 0 1.2em; }
h1, h2, h3, .label, .meta { font-family: "Helvetica Neue", Arial, "DejaVu Sans", sans-serif; }
h1 { font-size: 1.55em; margin: 0 0 .2em; }
.meta { color: #555; margin: 0 0 1.5em; }
h2 { font-size: 1.15em; border-bottom: 2px solid #222; padding-bottom: .2em; margin: 2em 0 0; }
article { break-inside: avoid; page-break-inside: avoid; padding: .9em 0 .4em;
          border-bottom: 1px solid #ddd; }
h3 { font-size: 1em; margin: 0 0 .4em; }
h3 .n { display: inline-block; min-width: 1.8em; }
h3 .tag { font-weight: normal; color: #666; font-size: .9em; }
p { margin: .45em 0; }
ol, ul { margin: .4em 0; padding-left: 2em; }
li { margin: .15em 0; }
ol.options { list-style-type: upper-alpha; }
.label { font-size: .85em; color: #444; text-transform: uppercase; letter-spacing: .04em;
         margin-top: .8em; }
.answer { border-left: 4px solid #2b6; padding: .2em .7em; background: #f3faf5;
          font-weight: bold; }
.space { margin: .6em 0 .3em; }
.practise { font-size: .85em; color: #555; }
.note { font-style: italic; color: #444; font-size: .95em; }
code { font: .95em "DejaVu Sans Mono", Menlo, Consolas, monospace; }
.space .line { height: 1.9em; border-bottom: 1px dotted #888; }
@media print {
  body { max-width: none; margin: 0; padding: 0; font-size: 10.5pt; }
  section + section { break-before: page; page-break-before: always; }
  h2 { margin-top: 0; }
  .answer { background: none; }
}
"""


def html_escape(text: str) -> str:
    return html.escape(printable(text))


def _html_items(items: Sequence[str]) -> str:
    return "".join(f"<li>{html_inline(item.strip())}</li>" for item in items)


def html_block(block: Block) -> str:
    if block.kind == "text":
        return html_text(block.text)
    if block.kind == "label":
        return f'<p class="label">{html_escape(block.text)}</p>'
    if block.kind == "note":
        return f'<p class="note">{html_inline(block.text)}</p>'
    if block.kind == "answer":
        return f'<p class="answer">{html_inline(block.text.strip())}</p>'
    if block.kind == "steps":
        return f"<ol>{_html_items(block.items)}</ol>"
    if block.kind == "bullets":
        return f"<ul>{_html_items(block.items)}</ul>"
    if block.kind == "options":
        return f'<ol class="options">{_html_items(block.items)}</ol>'
    if block.kind == "space":
        return '<div class="space">' + '<div class="line"></div>' * block.lines + "</div>"
    if block.kind == "command":
        code = html_escape(block.text)
        return f'<p class="practise">Practise this draw: <code>{code}</code></p>'

    raise ValueError(f"unknown block kind {block.kind!r}")


def render_html(doc: Document) -> str:
    """One self-contained page (`drill.reports.html_page`): inline CSS with print rules."""
    out = [
        *page_head(html_escape(doc.title), _CSS),
        f"<header><h1>{html_escape(doc.title)}</h1>",
        f'<p class="meta">{html_escape(doc.intro)}</p></header>',
    ]
    for part, section in enumerate(doc.sections, start=1):
        out.append(f"<section><h2>Part {part}. {html_escape(section.title)}</h2>")
        for item in section.items:
            out.append(
                f'<article><h3><span class="n">{item.number}.</span>'
                f' <span class="tag">{html_escape(item.title)}</span></h3>'
            )
            out += [html_block(block) for block in item.blocks]
            out.append("</article>")
        out.append("</section>")
    out += ["</body>", "</html>"]
    return "\n".join(out) + "\n"


RENDERERS = {"md": render_markdown, "html": render_html}
