"""Strict readers of the exported files, for the export tests.

`read_gift` follows Moodle's GIFT format documentation (docs.moodle.org, "GIFT format")
for the question types kvdrill writes, and refuses what a lenient reader would guess at:
  - a `//` line is a comment, `$CATEGORY: path` a category, blank lines part questions;
  - a question is `::title::` then an optional `[format]`, the text, and one answer block
    `{...}` with nothing after it;
  - in a title, text, answer or feedback, each of ~ = # { } : and the backslash is
    written with a backslash before it; an unescaped one is an error (in a title, `:`);
  - answer blocks: `{}` or `{####general feedback}` an essay; `{#` a numerical question
    whose answers are `=value:margin`, `=%percent%value:margin` or a single
    `value:margin`, each with an optional `#feedback`; else multiple choice, answers
    `=text` (right) or `~text` (wrong), `~%percent%text`, each with `#feedback`;
  - a number is an unsigned decimal (digits, an optional point and digits): no sign, no
    exponent; a percent weight is a decimal from -100 to 100 (a sign allowed).

`moodle_problems` checks Moodle XML against what Moodle's importer (question/format/xml)
reads for each type kvdrill writes; no XSD of the format is published, so the structure
is checked element by element. Texts in HTML format must parse to the tags kvdrill writes.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

SPECIAL = "~=#{}:\\"
NUMBER = re.compile(r"\d+(?:\.\d+)?")
WEIGHT = re.compile(r"-?\d+(?:\.\d+)?")


class GiftError(ValueError):
    pass


def _split(text: str, stops: str) -> list[tuple[str, str]]:
    """`text` cut at each unescaped character of `stops`: [(stop before it, piece)],
    the first stop ""; escapes are kept (unescape each piece after)."""
    pieces: list[tuple[str, str]] = []
    stop, start, i = "", 0, 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] in stops:
            pieces.append((stop, text[start:i]))
            stop, start = text[i], i + 1
        i += 1
    pieces.append((stop, text[start:]))
    return pieces


def unescape(text: str, where: str) -> str:
    """GIFT text with its escapes undone; an unescaped special character is an error."""
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            if i + 1 >= len(text) or text[i + 1] not in SPECIAL + "n":
                raise GiftError(f"{where}: a backslash escapes nothing: {text[i : i + 2]!r}")
            out.append("\n" if text[i + 1] == "n" else text[i + 1])
            i += 2
            continue
        if c in SPECIAL:
            raise GiftError(f"{where}: unescaped {c!r} in {text!r}")
        out.append(c)
        i += 1
    return "".join(out)


def _number(text: str, where: str) -> float:
    if not NUMBER.fullmatch(text):
        raise GiftError(f"{where}: not an unsigned decimal: {text!r}")
    return float(text)


def _weighted(body: str, where: str) -> tuple[float | None, str]:
    if not body.startswith("%"):
        return None, body
    weight, sep, rest = body[1:].partition("%")
    if not sep or not WEIGHT.fullmatch(weight) or not -100 <= float(weight) <= 100:
        raise GiftError(f"{where}: bad percent weight in {body!r}")
    return float(weight), rest


def _answers(block: str, where: str) -> dict:
    if block.startswith("####") or not block.strip():
        feedback = unescape(block[4:], where) if block.startswith("####") else ""
        return {"type": "essay", "general_feedback": feedback}
    if block.startswith("#"):
        answers = []
        pieces = _split(block[1:].strip(), "=")
        if pieces[0][1].strip():  # a single value:margin with no =
            if len(pieces) > 1:
                raise GiftError(f"{where}: text before the first = of a numerical block")
        else:
            pieces = pieces[1:]
        for _, piece in pieces:
            weight, body = _weighted(piece.strip(), where)
            parts = _split(body, "#")
            if len(parts) > 2:
                raise GiftError(f"{where}: two feedbacks in {body!r}")
            value_text, sep, margin_text = parts[0][1].strip().partition(":")
            if not sep:
                raise GiftError(f"{where}: a numerical answer without its margin: {body!r}")
            answers.append({
                "fraction": 100.0 if weight is None else weight,
                "value": _number(value_text, where),
                "margin": _number(margin_text, where),
                "feedback": unescape(parts[1][1], where) if len(parts) == 2 else "",
            })  # fmt: skip
        return {"type": "numerical", "answers": answers}
    pieces = _split(block, "=~")
    if pieces[0][1].strip():
        raise GiftError(f"{where}: text before the first answer: {pieces[0][1]!r}")
    answers = []
    for stop, piece in pieces[1:]:
        weight, body = _weighted(piece.strip(), where)
        parts = _split(body, "#")
        if len(parts) > 2:
            raise GiftError(f"{where}: two feedbacks in {body!r}")
        if stop == "=" and weight is not None:
            raise GiftError(f"{where}: a weighted = answer")
        answers.append({
            "fraction": weight if weight is not None else (100.0 if stop == "=" else 0.0),
            "text": unescape(parts[0][1].strip(), where),
            "feedback": unescape(parts[1][1], where) if len(parts) == 2 else "",
        })  # fmt: skip
    return {"type": "multichoice", "answers": answers}


def read_gift(text: str) -> list[dict]:
    """The questions of a GIFT file (see the module's docstring); GiftError if malformed."""
    questions: list[dict] = []
    category = None
    blocks = re.split(r"\n[ \t]*\n", text)
    for block in blocks:
        lines = [line for line in block.split("\n") if not line.lstrip().startswith("//")]
        source = "\n".join(lines).strip()
        if not source:
            continue
        if source.startswith("$CATEGORY:"):
            if "\n" in source:
                raise GiftError(f"a category line runs on: {source[:60]!r}")
            category = source.removeprefix("$CATEGORY:").strip()
            continue
        match = re.fullmatch(r"::(.*?)::(\[(\w+)\])?(.*)", source, re.S)
        if not match:
            raise GiftError(f"a question without a ::title::: {source[:60]!r}")
        title = unescape(match[1], "title")
        where = f"question {title!r}"
        body = match[4]
        pieces = _split(body, "{}")
        if [stop for stop, _ in pieces] != ["", "{", "}"] or pieces[2][1].strip():
            raise GiftError(f"{where}: not one answer block at the end")
        question = {
            "title": title,
            "format": match[3] or "moodle",
            "category": category,
            "text": unescape(pieces[0][1].strip(), where),
            **_answers(pieces[1][1].strip(), where),
        }
        questions.append(question)
    return questions


# ----------------------------------------------------------------------------- HTML


class _Fragment(HTMLParser):
    """The tags of an HTML fragment, and whether they nest properly."""

    VOID = {"br", "hr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: set[tuple[str, tuple]] = set()
        self.open: list[str] = []
        self.problems: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.add((tag, tuple(attrs)))
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_endtag(self, tag):
        if not self.open or self.open.pop() != tag:
            self.problems.append(f"</{tag}> closes nothing open")


ALLOWED_TAGS = {"p", "br", "code", "sup", "ol", "ul", "li"}
ALLOWED_CLASSES = {"answer", "label", "note", "options"}


def html_problems(fragment: str) -> list[str]:
    """What is wrong with an exported HTML text: a tag kvdrill does not write (bank markup
    that slipped through unescaped), an attribute other than a known class, bad nesting."""
    parser = _Fragment()
    parser.feed(fragment)
    parser.close()
    problems = list(parser.problems) + [f"<{t}> left open" for t in parser.open]
    for tag, attrs in parser.tags:
        if tag not in ALLOWED_TAGS:
            problems.append(f"unexpected <{tag}>")
        for name, value in attrs:
            if name != "class" or value not in ALLOWED_CLASSES:
                problems.append(f"unexpected attribute {name}={value!r} on <{tag}>")
    return problems


# ----------------------------------------------------------------------------- Moodle XML

_COMMON = ("name/text", "questiontext/text", "generalfeedback/text", "defaultgrade", "penalty",
           "hidden")  # fmt: skip
_FORMULA = re.compile(r"[\w{}().,*/+\- ]+")
_FUNCTIONS = {"pow", "floor", "ceil", "log", "sqrt", "abs", "min", "max", "round", "fmod"}


def _float(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


def moodle_problems(data: bytes) -> list[str]:
    """What Moodle's XML importer would refuse or misread in `data`, one line each."""
    root = ET.fromstring(data)
    problems: list[str] = []
    if root.tag != "quiz":
        return [f"root is <{root.tag}>, not <quiz>"]
    for q in root:
        qtype = q.get("type")
        if q.tag != "question":
            problems.append(f"<{q.tag}> inside <quiz>")
            continue
        if qtype == "category":
            if not (q.findtext("category/text") or "").startswith("$course$/"):
                problems.append("a category outside $course$")
            continue
        name = q.findtext("name/text") or "?"
        say = problems.append
        for path in _COMMON:
            if q.find(path) is None:
                say(f"{name}: no {path}")
        if _float(q.findtext("defaultgrade")) is None or _float(q.findtext("penalty")) is None:
            say(f"{name}: defaultgrade or penalty not a number")
        for element in q.iter():
            if element.get("format") == "html":
                for problem in html_problems(element.findtext("text") or ""):
                    say(f"{name}: {element.tag}: {problem}")
        answers = q.findall("answer")
        fractions = [_float(a.get("fraction")) for a in answers]
        if None in fractions or any(not -100 <= f <= 100 for f in fractions if f is not None):
            say(f"{name}: an answer fraction out of -100..100")
            continue
        if qtype in ("numerical", "calculated"):
            if 100 not in fractions:
                say(f"{name}: no answer worth 100")
            for a in answers:
                if _float(a.findtext("tolerance")) is None or _float(a.findtext("tolerance")) < 0:
                    say(f"{name}: a tolerance that is not a number >= 0")
            for unit in q.findall("units/unit"):
                if _float(unit.findtext("multiplier")) is None or not unit.findtext("unit_name"):
                    say(f"{name}: a unit without multiplier or name")
        if qtype == "numerical":
            for a in answers:
                if _float(a.findtext("text")) is None:
                    say(f"{name}: a numerical answer that is not a number: {a.findtext('text')}")
        elif qtype == "calculated":
            _calculated_problems(q, name, answers, say)
        elif qtype == "multichoice":
            single = q.findtext("single")
            if single not in ("true", "false"):
                say(f"{name}: single is {single!r}")
            positive = sum(f for f in fractions if f and f > 0)
            if (single == "true" and max(fractions) != 100) or (
                single == "false" and abs(positive - 100) > 0.01
            ):
                say(f"{name}: right answers worth {positive}, not 100")
        elif qtype == "essay":
            if q.findtext("responseformat") not in ("editor", "plain", "noinline"):
                say(f"{name}: responseformat")
            if q.find("graderinfo/text") is None:
                say(f"{name}: no graderinfo")
        else:
            say(f"{name}: a question type kvdrill does not write: {qtype}")
    return problems


def _calculated_problems(q, name: str, answers, say) -> None:
    datasets = {}
    for d in q.findall("dataset_definitions/dataset_definition"):
        values = [_float(v.text) for v in d.findall("dataset_items/dataset_item/value")]
        numbers = [int(n.text) for n in d.findall("dataset_items/dataset_item/number")]
        count = d.findtext("itemcount")
        if None in values or numbers != list(range(1, len(values) + 1)):
            say(f"{name}: dataset {d.findtext('name/text')}: items not numbered values")
        if count != str(len(values)) or d.findtext("number_of_items") != count:
            say(
                f"{name}: dataset {d.findtext('name/text')}: itemcount {count}, {len(values)} items"
            )
        if d.findtext("type") != "calculated" or d.findtext("status/text") != "private":
            say(f"{name}: dataset type or status")
        datasets[d.findtext("name/text")] = len(values)
    if len(set(datasets.values())) > 1:
        say(f"{name}: datasets of different sizes")
    texts = [q.findtext("questiontext/text") or ""] + [a.findtext("text") or "" for a in answers]
    for used in re.findall(r"\{([A-Za-z_]\w*)\}", " ".join(texts)):
        if used not in datasets:
            say(f"{name}: {{{used}}} has no dataset")
    for a in answers:
        formula = a.findtext("text") or ""
        if not _FORMULA.fullmatch(formula):
            say(f"{name}: a formula with characters Moodle refuses: {formula}")
        for call in re.findall(r"([A-Za-z_]\w*)\(", formula):
            if call not in _FUNCTIONS:
                say(f"{name}: a function Moodle has not: {call}")
        if a.findtext("tolerancetype") not in ("1", "2", "3"):
            say(f"{name}: tolerancetype {a.findtext('tolerancetype')}")
        if a.findtext("correctanswerformat") not in ("1", "2"):
            say(f"{name}: correctanswerformat")
