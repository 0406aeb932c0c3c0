"""The bank checks of a numeric template's follow-up chain (drill.kinds.chains).

Statically: every `start` value is a param of the opener and one it can draw (a gpu
param one of its GPU keys); every follow-up's question exists and is a numeric template;
`change` sets params of that question (not preset ones), each a number or an expression
over the values of the questions before it, or a gpu param one of its GPU keys; the follow-up shares the problem (at least one param carried
over) and every param it does not change is carried over from the questions before
it; its `ask` names only the follow-up's values.

Then the chain is drawn with the opener's seeds 0..draws-1: every draw must evaluate,
every change must change what it says on every draw (a param set to the value it
already had asks the same question twice), every follow-up's answer must be positive
and its words must render, and the grader must tell each follow-up's answer from its
named wrong answers and the slips of its formula on the chain's numbers, as lint
checks a template on its own draws (drill.kinds.numeric_lint).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from drill.bank.schema import ChoiceParam, GpuParam, NumericQuestion, RangeParam
from drill.errors import BankError, ExprError
from drill.kinds.chains import (
    draw_chain_numbers,
    follow_up_field,
    follow_up_question,
    gpu_choice_problem,
    param_keys,
)
from drill.kinds.instance import InstanceError, dotted
from drill.kinds.numeric_draw import NumericDraw, compiled, range_values, text_values
from drill.kinds.numeric_slips import same
from drill.kinds.params import record_param_kind

if TYPE_CHECKING:
    from drill.kinds.lint_report import LintContext, LintReport


class _FollowUpReport:
    """A LintReport for the checks of a follow-up's own template, filed at the opener's
    follow-up field and saying which template and field the problem is in."""

    def __init__(self, report: LintReport, index: int, question_id: str) -> None:
        self.report, self.index, self.question_id = report, index, question_id

    def add(self, field: tuple, message: str, key: tuple = ()) -> None:
        where = f" {dotted(field)}:" if field else ""
        text = f"{self.question_id} with the chain's numbers:{where} {message}"
        self.report.add(follow_up_field(self.index), text, key=(field, *key))


def lint_chain(question: NumericQuestion, report: LintReport, context: LintContext) -> None:
    """Report the problems of `question`'s chain (see the module docstring)."""
    chain = question.chain
    if chain is None:
        return
    ok = _check_start(question, report)
    known = _names(question)
    questions: list[Any] = []
    for index in range(len(chain.follow_ups)):
        try:
            follow = follow_up_question(question, index, report.bank.get)
        except InstanceError as exc:
            report.add(exc.field, exc.detail)
            return
        ok = _check_follow_up(question, index, follow, known, report) and ok
        questions.append(follow)
        known |= _names(follow)
    if ok:
        _check_draws(question, questions, report, context)


def _names(question: NumericQuestion) -> set[str]:
    """The values a template defines: its params (a preset's fields too) and derived."""
    names = {key for name in question.params for key in param_keys(question, name)}
    return names | set(question.derived)


def _drawable(param: Any, value: Any) -> bool:
    if isinstance(param, ChoiceParam):
        return any(_same_value(choice, value) for choice in param.choices)
    if isinstance(param, RangeParam) and not isinstance(value, str):
        low, step, count = range_values(param)
        steps = (value - low) / step
        return 0 <= steps <= count - 1 and math.isclose(steps, round(steps), abs_tol=1e-9)
    return False


def _same_value(a: Any, b: Any) -> bool:
    """Two param values are one: equal text, or the same number up to float rounding."""
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return same(float(a), float(b))


def _check_start(question: NumericQuestion, report: LintReport) -> bool:
    ok = True
    assert question.chain is not None
    for name, value in question.chain.start.items():
        param = question.params.get(name)
        field = ("chain", "start", name)
        if param is None:
            report.add(field, f"'{name}' is not a param of this template")
        elif isinstance(param, GpuParam):
            problem = gpu_choice_problem(param, value)
            if problem is None:
                continue
            report.add(field, problem)
        elif record_param_kind(param):
            what = record_param_kind(param)
            report.add(field, f"'{name}' is {what}; start fixes only numbers and text")
        elif not _drawable(param, value):
            report.add(field, f"{value!r} is not a value '{name}' can draw")
        else:
            continue
        ok = False
    return ok


def _check_follow_up(
    opener: NumericQuestion, index: int, follow: NumericQuestion, known: set[str], report
) -> bool:
    """The static checks of one follow-up; whether it can be drawn."""
    from drill.quantities.render import placeholders

    assert opener.chain is not None
    follow_up = opener.chain.follow_ups[index]
    ok = True
    for name, value in follow_up.change.items():
        field = follow_up_field(index, "change", name)
        param = follow.params.get(name)
        if isinstance(param, GpuParam):
            problem = gpu_choice_problem(param, value)
            if problem:
                report.add(field, problem)
                ok = False
        elif param is None or record_param_kind(param):
            what = record_param_kind(param) or "not a param"
            report.add(field, f"'{name}' is {what} of {follow.id}")
            ok = False
        elif isinstance(value, str):
            try:
                names = set(compiled(value).names)
            except ExprError as exc:
                report.add(field, str(exc))
                ok = False
                continue
            for unknown in sorted(names - known):
                report.add(field, f"'{unknown}' is not a value of the questions before it")
                ok = False
    carried = [name for name in follow.params if name not in follow_up.change]
    missing = [name for name in carried if name not in known]
    if missing:
        listed = ", ".join(f"'{name}'" for name in missing)
        report.add(
            follow_up_field(index, "change"),
            f"{follow.id}'s param {listed} is neither carried over from the questions "
            "before it nor set here",
        )
        ok = False
    elif not carried:
        report.add(
            follow_up_field(index, "change"),
            f"changes every param of {follow.id}: a follow-up keeps the problem and changes one thing",
        )
        ok = False
    try:
        found = placeholders(follow_up.ask)
    except BankError as exc:
        report.add(follow_up_field(index, "ask"), str(exc))
        return False
    from drill.kinds.numeric_lint import figure_names

    own = _names(follow) | figure_names(follow) | {"answer"}
    for placeholder in found:
        if placeholder.name not in own:
            report.add(
                follow_up_field(index, "ask"),
                f"unknown placeholder {{{placeholder.name}}}: not a value of {follow.id}",
            )
            ok = False
    return ok


def _check_draws(
    opener: NumericQuestion, follows: Sequence[NumericQuestion], report, context: LintContext
) -> None:
    from drill.kinds.numeric_lint import check_grading
    from drill.quantities.render import placeholders, render

    assert opener.chain is not None
    drawn: list[list[tuple[int, NumericDraw]]] = [[] for _ in follows]
    asks_ok = [True] * len(follows)
    for seed in range(context.draws):
        try:
            items = draw_chain_numbers(opener, report.bank.get, seed, context.presets)
        except InstanceError as exc:
            report.add(exc.field, f"on seed {seed}: {exc.detail}")
            continue
        for index, item in enumerate(items[1:]):
            follow_up = opener.chain.follow_ups[index]
            for name, value in item.changed.items():
                if name in item.before and _same_value(item.before[name], value):
                    report.add(
                        follow_up_field(index, "change", name),
                        f"changes nothing on seed {seed}: '{name}' is {value!r} already; "
                        "set it to a value the questions before it never have (or fix it "
                        "there with start)",
                    )
            expected = item.draw.expected
            if not (math.isfinite(expected) and expected > 0):
                report.add(
                    follow_up_field(index),
                    f"{item.question.id}'s answer is {expected:g} on seed {seed} with the "
                    "chain's numbers; it must be positive",
                )
                continue
            drawn[index].append((seed, item.draw))
            if asks_ok[index]:
                try:
                    render(follow_up.ask, text_values(item.question, item.draw))
                except BankError as exc:
                    report.add(follow_up_field(index, "ask"), f"on seed {seed}: {exc}")
                    asks_ok[index] = False
    for index, follow in enumerate(follows):
        shown = {p.name for p in placeholders(follow.prompt)}
        check_grading(follow, _FollowUpReport(report, index, follow.id), shown, drawn[index])  # type: ignore[arg-type]
