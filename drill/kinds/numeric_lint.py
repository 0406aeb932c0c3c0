"""The bank checks of numeric templates, beyond what the schema can see.

First statically: every expression compiles and names only values defined before
it, every param is used and shown, every placeholder names a known value, every
misconception id is in the catalogue, every preset exists, `show_as` fits the
answer's unit. Then the template is drawn with seeds 0..draws-1: each draw must
evaluate, render, and give a finite positive answer that no misconception matches
within the question's tolerance.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

from drill.errors import BankError, ExprError
from drill.instance import (
    PRESET_FIELDS,
    InstanceError,
    compiled,
    draw_numeric,
    render_numeric,
)
from drill.schema import NumericQuestion, PresetParam

if TYPE_CHECKING:
    from drill.lint import LintContext, LintReport


def param_names(question: NumericQuestion) -> dict[str, set[str]]:
    """param -> the names it defines for expressions (a preset `m`: m_layers, ...)."""
    names: dict[str, set[str]] = {}
    for name, param in question.params.items():
        if isinstance(param, PresetParam):
            names[name] = {f"{name}_{f}" for f in PRESET_FIELDS}
        else:
            names[name] = {name}
    return names


def _expressions(question: NumericQuestion) -> Iterable[tuple[tuple, str]]:
    for name, text in question.derived.items():
        yield ("derived", name), text
    yield ("answer",), question.answer
    for i, item in enumerate(question.misconceptions):
        yield ("misconceptions", i, "expr"), item.expr


def _texts(question: NumericQuestion):
    """(field, template, extra names) of every text rendered with a draw's values."""
    yield ("prompt",), question.prompt, ()
    for i, step in enumerate(question.solution):
        yield ("solution", i), step, ()
    if question.hint:
        yield ("hint",), question.hint, ()
    if question.explanation:
        yield ("explanation",), question.explanation, ()
    for i, item in enumerate(question.misconceptions):
        if item.feedback:
            yield ("misconceptions", i, "feedback"), item.feedback, ("value",)


def lint_numeric(question: NumericQuestion, report: LintReport, context: LintContext) -> None:
    """Report the problems of one numeric template (see the module docstring)."""
    draws, catalogue, presets = context.draws, context.catalogue, context.presets
    defined = param_names(question)
    known: set[str] = set().union(*defined.values()) if defined else set()
    used: set[str] = set()
    drawable = True
    derived_uses: dict[str, set[str]] = {}
    for field, text in _expressions(question):
        try:
            names = set(compiled(text).names)
        except ExprError as exc:
            report.add(field, str(exc))
            drawable = False
            continue
        for name in sorted(names - known):
            later = field[0] == "derived" and name in question.derived
            why = "is defined after it" if later else "is not a param or derived value"
            report.add(field, f"'{name}' {why}")
            drawable = False
        used |= names
        if field[0] == "derived":
            derived_uses[field[1]] = names
            known.add(field[1])

    for name, param in question.params.items():
        if isinstance(param, PresetParam):
            for i, preset in enumerate(param.preset):
                if preset not in presets:
                    report.add(("params", name, "preset", i), f"unknown model preset '{preset}'")
                    drawable = False  # draws would only repeat it
    _check_show_as(question, report)
    for i, item in enumerate(question.misconceptions):
        if item.id not in catalogue:
            report.add(("misconceptions", i, "id"), f"'{item.id}' is not in the catalogue")

    before = len(report.problems)
    shown = _check_placeholders(question, report, known | set(defined))
    texts_ok = len(report.problems) == before
    _check_params_used(question, report, defined, used, shown, derived_uses)
    if drawable:
        _check_draws(question, report, draws, catalogue, presets, render=texts_ok)


def _check_show_as(question: NumericQuestion, report: LintReport) -> None:
    """`show_as` must be a unit of the answer's dimension (GiB for bytes, ms for seconds)."""
    if question.show_as is None:
        return
    from drill.units import parse_unit

    spec = parse_unit(question.show_as)
    if spec is None:
        report.add(("show_as",), f"'{question.show_as}' is not a unit symbol")
    elif spec.dimension != question.unit:
        report.add(
            ("show_as",),
            f"'{question.show_as}' measures {spec.dimension}, but the answer is in {question.unit}",
        )


def _check_placeholders(question, report, known) -> set[str]:
    """Report unknown placeholders and bad specs; return the names the prompt shows."""
    from drill.render import check_spec, placeholders

    known = known | {"answer"}
    shown: set[str] = set()
    for field, template, extra in _texts(question):
        try:
            found = placeholders(template)
        except BankError as exc:
            report.add(field, str(exc))
            continue
        for placeholder in found:
            if placeholder.name not in known and placeholder.name not in extra:
                report.add(field, f"unknown placeholder {{{placeholder.name}}}")
            problem = check_spec(placeholder.spec)
            if problem:
                report.add(field, problem)
            if field == ("prompt",):
                shown.add(placeholder.name)
    return shown


def _check_params_used(question, report, defined, used, shown, derived_uses) -> None:
    """Each param feeds an expression and reaches the prompt, itself or via a derived value."""
    shown_closure = set(shown)
    for name in reversed(list(question.derived)):
        if name in shown_closure:
            shown_closure |= derived_uses.get(name, set())
    for name, names in defined.items():
        param = question.params[name]
        text_only = getattr(param, "choices", None) and all(
            isinstance(c, str) for c in param.choices
        )
        if not text_only and not names & used:
            report.add(("params", name), "is never used by the answer, derived or misconceptions")
        if name not in shown_closure and not names & shown_closure:
            report.add(("params", name), "is not shown in the prompt")


def _check_draws(question, report, draws, catalogue, presets, *, render: bool) -> None:
    """Draw seeds 0..draws-1; `render` also renders each draw's text."""
    for seed in range(draws):
        try:
            draw = draw_numeric(question, seed, presets)
        except InstanceError as exc:
            report.add(exc.field, f"on seed {seed}: {exc.detail}")
            continue
        expected = draw.expected
        if not (math.isfinite(expected) and expected > 0):
            report.add(("answer",), f"is {expected:g} on seed {seed}; it must be positive")
            continue
        for i, value in enumerate(draw.misconception_values):
            field = ("misconceptions", i, "expr")
            if not report.seen(field) and question.tolerance.accepts(value, expected):
                wrong_id = question.misconceptions[i].id
                message = f"'{wrong_id}' gives the right answer ({value:g}) on seed {seed}"
                report.add(field, message)
        if render:
            try:
                render_numeric(question, seed, draw, catalogue=catalogue)
            except InstanceError as exc:
                report.add(exc.field, f"on seed {seed}: {exc.detail}")
                render = False  # one text problem is enough; the numbers still get checked
