"""The bank in GIFT, Moodle's plain-text question format, for the simple kinds.

- numeric templates: each of the -n draws is a numerical question, answer in the unit
  the quiz shows it in (a share shown in % asked as a percentage), margin from the
  bank's tolerance, and each named mistake a further answer worth 0% whose feedback
  names it, but for one below zero, which no quantity asked can be; numbers are
  decimals with no float noise and no finer than their margin needs;
- choice questions: multiple choice, each option with its why as feedback (several
  right options share the marks, wrong ones then take them back);
- concept questions: essays, the model answer and key points as general feedback.
Order questions are left out: GIFT has no ordering question. Every question is
written in GIFT's [html] format with bank text HTML-escaped and then GIFT's special
characters (~ = # { } : and the backslash) escaped with a backslash.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from drill.exports import (
    ExportItem,
    NumericAnswer,
    answer_number,
    asked_in,
    numeric_answers,
    plain_number,
    possible,
)
from drill.reports.html_text import html_text
from drill.reports.sheet import html_block, key_blocks

SUFFIX = ".gift"
CANNOT_CARRY = (
    "order questions (GIFT has no ordering question)",
    "fresh numbers: each numeric template is -n fixed draws",
    "hints, and the grader's own diagnosis (unit slips recognised by their ratio, bare "
    "numbers read in the question's units)",
    "a concept answer's key points as automatic marking (they are the essay's general feedback)",
    "a named mistake whose value is below zero (weights that overfill the memory leave "
    "-15 sequences): no quantity asked is negative, and GIFT readers differ on signed "
    "numbers",
)
_SPECIAL = re.compile(r"([~=#{}:\\])")


def escape(text: str) -> str:
    """Text (HTML already) with GIFT's special characters escaped, on one line."""
    return _SPECIAL.sub(r"\\\1", " ".join(text.split()))


def _head(name: str, question_html: str) -> str:
    return f"::{escape(name)}::[html]{escape(question_html)}"


def _numerical(item: ExportItem) -> list[str]:
    out = []
    for instance in item.instances:
        symbol, (right, *wrongs) = numeric_answers(instance)
        answers = [f"={_number(right)}"]
        for wrong in wrongs:
            if not possible(wrong, right):
                continue  # CANNOT_CARRY: a negative count, size or share
            feedback = f"Mistake: {wrong.mistake}. {wrong.feedback}".strip()
            answers.append(f"=%0%{_number(wrong)}#{escape(html_text(feedback))}")
        text = asked_in(html_text(instance.text), symbol)
        name = f"{instance.question_id} (seed {instance.seed})"
        out.append(f"{_head(name, text)}{{#\n    " + "\n    ".join(answers) + "\n}")
    return out


def _number(answer: NumericAnswer) -> str:
    """value:margin, the value no finer than its margin needs."""
    return f"{answer_number(answer.value, answer.margin)}:{plain_number(answer.margin, 6)}"


def _choice(item: ExportItem) -> str:
    instance = item.instances[0]
    right = set(instance.correct_options)
    several = len(right) > 1
    wrong_count = max(len(instance.options) - len(right), 1)
    lines = []
    for i, option in enumerate(instance.options):
        why = instance.option_why[i] if i < len(instance.option_why) else None
        feedback = f"#{escape(html_text(why))}" if why else ""
        if not several:
            mark = "=" if i in right else "~"
        elif i in right:
            mark = f"~%{plain_number(round(100 / len(right), 5))}%"
        else:
            mark = f"~%{plain_number(round(-100 / wrong_count, 5))}%"
        lines.append(f"{mark}{escape(html_text(option))}{feedback}")
    return (
        f"{_head(instance.question_id, html_text(instance.text))}{{\n    "
        + "\n    ".join(lines)
        + "\n}"
    )


def _essay(item: ExportItem) -> str:
    instance = item.instances[0]
    model = "".join(html_block(block) for block in key_blocks(instance))
    return f"{_head(instance.question_id, html_text(instance.text))}{{####{escape(model)}}}"


def render(items: Sequence[ExportItem], stamp: float) -> tuple[bytes, list[str]]:
    """The GIFT text of `items` (`stamp` is not used: the file holds no time)."""
    body: list[str] = []
    left_out: list[str] = []
    topic = None
    for item in sorted(items, key=lambda i: (i.question.topic, i.question.id)):
        kind = item.question.kind
        if kind not in ("numeric", "choice", "concept"):
            left_out.append(item.question.id)
            continue
        if item.question.topic != topic:
            topic = item.question.topic
            body.append(f"$CATEGORY: $course$/top/kvdrill/{topic}")
        if kind == "numeric":
            body += _numerical(item)
        elif kind == "choice":
            body.append(_choice(item))
        else:
            body.append(_essay(item))
    notes = (
        [f"left out {len(left_out)} order question(s): {', '.join(left_out)}"] if left_out else []
    )
    head = ["// Exported from kvdrill. Not carried:", *(f"// - {line}" for line in CANNOT_CARRY)]
    head += [f"// Note: {note}." for note in notes]
    return ("\n".join(head) + "\n\n" + "\n\n".join(body) + "\n").encode("utf-8"), notes
