"""The bank as Moodle XML, for a Moodle question bank (Import, format "Moodle XML").

- numeric templates: a *calculated* question when Moodle can work the template out
  itself: every param a number drawn from a range or choices, every expression and
  placeholder written in Moodle's formula language (`{layers}`, `{=...}`, pow(), log());
  its datasets hold the -n draws (item k of every dataset is draw k), its answer is the
  formula in the display unit (GiB, ms...) with the bank's tolerance (rel: relative,
  abs: nominal in the display unit, sig: relative half a unit in the last figure), and
  each named mistake is a further answer worth 0 whose feedback names it. Otherwise
  (a model preset, a text param, a formatted placeholder Moodle cannot write) each draw
  is a *numerical* question with the same answers at that draw's numbers.
- choice questions: *multichoice*, each option with its why as feedback; several right
  options share the marks and wrong ones take them back.
- concept questions: *essay*, the model answer and key points as information for the
  grader.
- order questions are left out: the ordering question type is not in every Moodle.
Each question carries its hint, its explanation as general feedback, its id as
idnumber and its topic as a category. Bank text is HTML-escaped, its code spans and
powers rendered (drill.reports.html_text). A share shown in % is asked as a percentage,
and its percent-vs-fraction slip is the fraction typed as it is (drill.exports.numeric_answers).
"""

from __future__ import annotations

import ast
import html
import re
from collections.abc import Mapping, Sequence
from typing import Any
from xml.sax.saxutils import escape

from drill.bank.schema import ChoiceParam, NumericQuestion, RangeParam
from drill.exports import (
    PERCENT_SLIP_FEEDBACK,
    ExportItem,
    Untranslatable,
    answer_number,
    asked_in,
    display_unit,
    is_percent_slip,
    numeric_answers,
    plain_number,
    unit_factor,
)
from drill.kinds import kind_of
from drill.kinds.instance import Instance
from drill.kinds.numeric import expected_value
from drill.quantities.dimensions import NAMES as DIMENSION_NAMES
from drill.reports.html_text import html_text
from drill.reports.sheet import html_block, key_blocks

SUFFIX = ".xml"
CANNOT_CARRY = (
    "order questions (Moodle's ordering question type is not in every Moodle)",
    "the grader's own diagnosis: unit slips recognised by their ratio (bits for bytes, GB "
    "for GiB, ms for s), bare numbers read in the question's units, answers typed in "
    "another unit than the display unit",
    "a concept answer's key points as automatic marking (they go to the grader "
    "information of an essay)",
    "formatted numbers in a calculated question's text: Moodle writes 4096, not 4,096",
)
# Moodle's tolerance types for calculated answers
RELATIVE, NOMINAL = 1, 2
_CALLS = {"abs": "abs", "ceil": "ceil", "floor": "floor", "max": "max", "min": "min",
          "round": "round", "sqrt": "sqrt"}  # fmt: skip


# ----------------------------------------------------------------------------- formulas


def formula(text: str, params: set[str], derived: Mapping[str, str]) -> str:
    """An expression of the bank in Moodle's formula language: params as {name}, derived
    values written out in place, ** as pow(), // as floor(), log2 as log()/log(2)."""
    return _node(ast.parse(text, mode="eval").body, params, derived)[0]


_ATOM, _UNARY, _PRODUCT, _SUM = 4, 3, 2, 1
_BINARY = {ast.Add: ("+", _SUM), ast.Sub: ("-", _SUM), ast.Mult: ("*", _PRODUCT),
           ast.Div: ("/", _PRODUCT)}  # fmt: skip


def _wrap(part: tuple[str, int], level: int, *, strict: bool = False) -> str:
    text, own = part
    return f"({text})" if own < level or (strict and own == level) else text


def _node(node: ast.AST, params: set[str], derived: Mapping[str, str]) -> tuple[str, int]:
    """(Moodle text, its precedence): parentheses only where the order needs them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return repr(node.value), _ATOM
    if isinstance(node, ast.Name):
        if node.id in params:
            return "{" + node.id + "}", _ATOM
        if node.id in derived:
            return _node(ast.parse(derived[node.id], mode="eval").body, params, derived)
        raise Untranslatable(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        sign = "-" if isinstance(node.op, ast.USub) else "+"
        return sign + _wrap(_node(node.operand, params, derived), _UNARY), _UNARY
    if isinstance(node, ast.BinOp):
        left, right = _node(node.left, params, derived), _node(node.right, params, derived)
        for op_type, (symbol, level) in _BINARY.items():
            if isinstance(node.op, op_type):
                # a - (b - c) and a / (b * c) keep their parentheses
                strict = symbol in ("-", "/")
                text = f"{_wrap(left, level)} {symbol} {_wrap(right, level, strict=strict)}"
                return text, level
        if isinstance(node.op, ast.Pow):
            return f"pow({left[0]}, {right[0]})", _ATOM
        if isinstance(node.op, ast.FloorDiv):
            return f"floor({left[0]} / {_wrap(right, _PRODUCT, strict=True)})", _ATOM
        if isinstance(node.op, ast.Mod):
            return f"fmod({left[0]}, {right[0]})", _ATOM
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        args = [_node(arg, params, derived)[0] for arg in node.args]
        if node.func.id == "log2" and len(args) == 1:
            return f"log({args[0]}) / log(2)", _PRODUCT
        if node.func.id in _CALLS:
            return f"{_CALLS[node.func.id]}({', '.join(args)})", _ATOM
    raise Untranslatable(ast.dump(node))


_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")


def _text_template(template: str, params: set[str], derived: Mapping[str, str]) -> str:
    """A bank text as a calculated question's HTML: params as {name}, other values as
    {=formula}; a unit spec converts ({kv:GiB} -> {=... / 1073741824} GiB). The text
    around them is rendered as every bank text is (drill.reports.html_text); each
    placeholder stands in it as a private-use mark until then."""
    from drill.quantities.units import parse_unit

    plain: list[str] = []
    tokens: list[str] = []
    last = 0
    for match in _PLACEHOLDER.finditer(template):
        plain.append(template[last : match.start()])
        last = match.end()
        token = match.group(0)
        if token in ("{{", "}}"):
            plain.append(token[0])
            continue
        name, _, spec = match.group(1).partition(":")
        name, spec = name.strip(), spec.strip()
        if spec in DIMENSION_NAMES:
            raise Untranslatable(spec)  # the unit that fits each value best: none fixed
        unit = parse_unit(spec) if spec and spec not in (",", "g") else None
        if spec and spec not in (",", "g") and unit is None:
            raise Untranslatable(spec)  # a Python number format Moodle has no form for
        if unit is None and name in params:
            tokens.append("{" + name + "}")
        else:
            text = formula(name, params, derived)
            if unit is not None:
                text = _in_unit(text, unit_factor(spec))
            tokens.append("{=" + text + "}" + (f" {html.escape(unit.symbol)}" if unit else ""))
        plain.append(_mark(len(tokens) - 1))
    plain.append(template[last:])
    out = html_text("".join(plain))
    for k, token in enumerate(tokens):
        out = out.replace(_mark(k), token)
    return out


def _mark(k: int) -> str:
    return f"\ue000{k}\ue001"


def _in_unit(text: str, factor: float) -> str:
    """A formula in base units as one in a unit `factor` times larger."""
    return f"({text}) / {plain_number(factor)}" if factor != 1 else text


# ----------------------------------------------------------------------------- XML


def _text(tag: str, body: str, *, html_format: bool = True) -> str:
    fmt = ' format="html"' if html_format else ""
    return f"<{tag}{fmt}><text>{escape(body)}</text></{tag}>"


def _common(name: str, question_html: str, instance: Instance, question: Any) -> list[str]:
    general = html_text(instance.explanation) if instance.explanation else ""
    lines = [
        f"<name><text>{escape(name)}</text></name>",
        _text("questiontext", question_html),
        _text("generalfeedback", general),
        "<defaultgrade>1</defaultgrade>",
        "<penalty>0.3333333</penalty>",
        "<hidden>0</hidden>",
        f"<idnumber>{escape(name)}</idnumber>",
    ]
    hint = instance.hints[0] if instance.hints else None
    if hint:
        lines.append(_text("hint", html_text(hint)))
    tags = "".join(f"<tag><text>{escape(t)}</text></tag>" for t in (question.topic, *question.tags))
    lines.append(f"<tags>{tags}</tags>")
    return lines


def _tolerance(instance: Instance, factor: float, value: float) -> tuple[int, float]:
    """(Moodle tolerance type, tolerance) of the bank's tolerance, in the display unit."""
    tolerance = instance.tolerance
    if tolerance.abs is not None:
        return NOMINAL, tolerance.abs / factor
    return RELATIVE, tolerance.relative_to(value)


def _units(symbol: str) -> list[str]:
    if not symbol:
        return []
    return [
        "<unitgradingtype>0</unitgradingtype>",
        "<unitpenalty>0.1</unitpenalty>",
        "<showunits>3</showunits>",
        "<unitsleft>0</unitsleft>",
        f"<units><unit><multiplier>1</multiplier><unit_name>{escape(symbol)}</unit_name>"
        "</unit></units>",
    ]


def _answer(fraction: float, text: str, feedback_html: str, extra: Sequence[str]) -> str:
    return (
        f'<answer fraction="{plain_number(fraction)}" format="moodle_auto_format">'
        f"<text>{escape(text)}</text>{''.join(extra)}"
        f"{_text('feedback', feedback_html)}</answer>"
    )


def _mistake_feedback(name: str, feedback: str) -> str:
    return html_text(f"Mistake: {name}." + (f"\n{feedback.strip()}" if feedback.strip() else ""))


def calculated(item: ExportItem) -> str:
    """A numeric template as a calculated question (Untranslatable if it cannot be)."""
    question: NumericQuestion = item.question
    first = item.instances[0]
    params = set(question.params)
    for param in question.params.values():
        numeric_choices = isinstance(param, ChoiceParam) and all(
            not isinstance(c, str) for c in param.choices
        )
        if not (isinstance(param, RangeParam) or numeric_choices):
            raise Untranslatable("param")
    derived = dict(question.derived)
    derived["answer"] = question.answer
    symbol, factor = display_unit(first)
    value = expected_value(first) / factor
    kind, tolerance = _tolerance(first, factor, value)
    answer_formula = formula(question.answer, params, derived)
    shown = _in_unit(answer_formula, factor)
    question_html = asked_in(_text_template(question.prompt, params, derived), symbol)
    answers = [_answer(100, shown, "", _calc_extra(kind, tolerance))]
    for i, wrong in enumerate(question.misconceptions):
        named = first.misconceptions[i]
        if symbol == "%" and is_percent_slip(named, expected_value(first)):
            # asked in percent, the slip is the fraction typed as it is (see numeric_answers)
            fraction_tolerance = tolerance if kind == RELATIVE else tolerance * factor
            feedback = _mistake_feedback(named.name, PERCENT_SLIP_FEEDBACK)
            answers.append(
                _answer(0, answer_formula, feedback, _calc_extra(kind, fraction_tolerance))
            )
            continue
        wrong_formula = _in_unit(formula(wrong.expr, params, derived), factor)
        feedback = _mistake_feedback(named.name, "" if wrong.feedback else named.feedback)
        answers.append(_answer(0, wrong_formula, feedback, _calc_extra(kind, tolerance)))
    lines = [
        '<question type="calculated">',
        *_common(question.id, question_html, first, question),
        "<synchronize>0</synchronize>",
        "<single>0</single>",
        "<answernumbering>abc</answernumbering>",
        "<shuffleanswers>0</shuffleanswers>",
        *answers,
        *_units(symbol),
        "<dataset_definitions>",
        *(_dataset(name, [i.params[name] for i in item.instances]) for name in question.params),
        "</dataset_definitions>",
        "</question>",
    ]
    return "\n".join(lines)


def _calc_extra(kind: int, tolerance: float) -> list[str]:
    return [
        f"<tolerance>{plain_number(tolerance)}</tolerance>",
        f"<tolerancetype>{kind}</tolerancetype>",
        "<correctanswerformat>2</correctanswerformat>",  # significant figures
        "<correctanswerlength>4</correctanswerlength>",
    ]


def _dataset(name: str, values: Sequence[Any]) -> str:
    numbers = [float(v) for v in values]
    whole = all(v.is_integer() for v in numbers)
    decimals = (
        0 if whole else max(len(repr(v).split(".")[1]) for v in numbers if not v.is_integer())
    )
    items = "".join(
        f"<dataset_item><number>{k}</number><value>{plain_number(v)}</value></dataset_item>"
        for k, v in enumerate(numbers, 1)
    )
    return (
        "<dataset_definition><status><text>private</text></status>"
        f"<name><text>{escape(name)}</text></name><type>calculated</type>"
        "<distribution><text>uniform</text></distribution>"
        f"<minimum><text>{plain_number(min(numbers))}</text></minimum>"
        f"<maximum><text>{plain_number(max(numbers))}</text></maximum>"
        f"<decimals><text>{decimals}</text></decimals>"
        f"<itemcount>{len(numbers)}</itemcount><dataset_items>{items}</dataset_items>"
        f"<number_of_items>{len(numbers)}</number_of_items></dataset_definition>"
    )


def numerical(item: ExportItem) -> list[str]:
    """Each draw of a numeric template as a numerical question."""
    out = []
    for instance in item.instances:
        symbol, numbers = numeric_answers(instance)
        answers = [
            _answer(
                0 if number.mistake else 100,
                answer_number(number.value, number.margin),
                _mistake_feedback(number.mistake, number.feedback) if number.mistake else "",
                [f"<tolerance>{plain_number(number.margin, 6)}</tolerance>"],
            )
            for number in numbers
        ]
        question_html = asked_in(html_text(instance.text), symbol)
        name = f"{instance.question_id} (seed {instance.seed})"
        out.append(
            "\n".join(
                [
                    '<question type="numerical">',
                    *_common(name, question_html, instance, item.question),
                    *answers,
                    *_units(symbol),
                    "</question>",
                ]
            )
        )
    return out


def multichoice(item: ExportItem) -> str:
    instance = item.instances[0]
    right = set(instance.correct_options)
    share = 100 / len(right)
    wrong_share = -100 / max(len(instance.options) - len(right), 1) if len(right) > 1 else 0
    answers = []
    for i, text in enumerate(instance.options):
        why = instance.option_why[i] if i < len(instance.option_why) else None
        answers.append(
            f'<answer fraction="{plain_number(round(share if i in right else wrong_share, 5))}" '
            f'format="html"><text>{escape(html_text(text))}</text>'
            f"{_text('feedback', html_text(why) if why else '')}</answer>"
        )
    lines = [
        '<question type="multichoice">',
        *_common(instance.question_id, html_text(instance.text), instance, item.question),
        f"<single>{'true' if len(right) == 1 else 'false'}</single>",
        "<shuffleanswers>true</shuffleanswers>",
        "<answernumbering>abc</answernumbering>",
        *answers,
        "</question>",
    ]
    return "\n".join(lines)


def essay(item: ExportItem) -> str:
    instance = item.instances[0]
    grader = "".join(html_block(block) for block in key_blocks(instance))
    lines = [
        '<question type="essay">',
        *_common(instance.question_id, html_text(instance.text), instance, item.question),
        "<responseformat>editor</responseformat>",
        "<responserequired>1</responserequired>",
        "<responsefieldlines>8</responsefieldlines>",
        "<attachments>0</attachments>",
        _text("graderinfo", grader),
        _text("responsetemplate", ""),
        "</question>",
    ]
    return "\n".join(lines)


def render(items: Sequence[ExportItem], stamp: float) -> tuple[bytes, list[str]]:
    """The Moodle XML of `items` (`stamp` is not used: the file holds no time)."""
    body: list[str] = []
    left_out: list[str] = []
    drawn: list[str] = []
    topic = None
    for item in sorted(items, key=lambda i: (i.question.topic, i.question.id)):
        kind = item.question.kind
        if kind == "order":
            left_out.append(item.question.id)
            continue
        if item.question.topic != topic:
            topic = item.question.topic
            body.append(
                '<question type="category"><category><text>'
                f"$course$/top/kvdrill/{escape(topic)}</text></category></question>"
            )
        if kind == "numeric":
            try:
                body.append(calculated(item))
            except Untranslatable:
                drawn.append(item.question.id)
                body += numerical(item)
        elif kind == "choice":
            body.append(multichoice(item))
        elif kind_of(kind).self_rated:
            body.append(essay(item))
    notes = []
    if left_out:
        notes.append(f"left out {len(left_out)} order question(s): {', '.join(left_out)}")
    if drawn:
        notes.append(
            f"{len(drawn)} numeric template(s) as drawn numerical questions (not calculated): "
            + ", ".join(drawn)
        )
    comment = ["Exported from kvdrill. Not carried:", *(f"- {line}" for line in CANNOT_CARRY)]
    comment += [f"Note: {note}." for note in notes]
    head = "<!--\n" + "\n".join(line.replace("--", "- -") for line in comment) + "\n-->"
    text = "\n".join(['<?xml version="1.0" encoding="UTF-8"?>', head, "<quiz>", *body, "</quiz>"])
    return (text + "\n").encode("utf-8"), notes
