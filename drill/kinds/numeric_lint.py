"""The bank checks of numeric templates, beyond what the schema can see.

First statically: every expression compiles and names only values defined before
it, every param is used and shown, every placeholder names a known value, every
misconception id is in the catalogue, every preset exists, `show_as` fits the
answer's unit. Then the template is drawn with seeds 0..draws-1: each draw must
evaluate, render, and give a finite positive answer that no misconception matches
within the question's tolerance. On each draw no two of the question's misconceptions
with different ids may match each other (the grader would name only one), unless the
template's `ties` says which of the two it names (a tie that never applies, or that names
a mistake the template does not list, is reported too); and none may match one of
the grader's ratio slips (8x for bits) on some draws but not all (that slip would be
misnamed; on every draw, the misconception is just a more precise name for it).

Last, the slips of the formula (drill.kinds.numeric_slips: a term or factor left out,
a count off by one, two givens swapped, a unit slip) are evaluated on every draw: a
slip that differs from the answer but is within the tolerance is a problem (the
tolerance or the ranges must change), and so is one that gives exactly the answer on
a draw, unless the template lists it under `harmless_slips` with why. These problems
are reported at the template's first line, naming the slip and the first seed.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from drill.bank.schema import GpuParam, MeasuredParam, NumericQuestion, PresetParam
from drill.errors import BankError, ExprError
from drill.kinds.instance import InstanceError
from drill.kinds.numeric_draw import (
    NumericDraw,
    compiled,
    draw_numeric,
    render_numeric,
    tie_losers,
)
from drill.kinds.numeric_slips import same, slip_draws
from drill.kinds.params import param_fields

if TYPE_CHECKING:
    from drill.kinds.lint_report import LintContext, LintReport


def param_names(question: NumericQuestion) -> dict[str, set[str]]:
    """param -> the names it defines for expressions (a preset `m`: m_layers, ...; a gpu
    `g`: g_memory, ...)."""
    names: dict[str, set[str]] = {}
    for name, param in question.params.items():
        fields = param_fields(param)
        names[name] = {f"{name}_{f}" for f in fields} if fields else {name}
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
    shown = _check_placeholders(question, report, known | set(defined) | figure_names(question))
    texts_ok = len(report.problems) == before
    _check_params_used(question, report, defined, used, shown, derived_uses)
    ties = _tie_pairs(question, report)
    if drawable:
        drawn = _check_draws(question, report, draws, catalogue, presets, render=texts_ok)
        needed = check_grading(question, report, shown, drawn)
        if len(drawn) >= TIE_DRAWS:
            _check_ties_needed(question, report, ties, needed)


# a tie no draw needs is reported only when the template was drawn this many times
TIE_DRAWS = 200


def check_grading(
    question: NumericQuestion,
    report: LintReport,
    shown: set[str],
    drawn: Sequence[tuple[int, NumericDraw]],
) -> set[frozenset[str]]:
    """On these draws, the grader tells the answer from every named wrong answer and from
    every slip of the formula (`shown`: the names the prompt shows); returns the pairs of
    the template's ties that some draw needed."""
    used = _check_misconceptions(question, report, drawn)
    _check_slips(question, report, shown, drawn)
    return used


def _check_show_as(question: NumericQuestion, report: LintReport) -> None:
    """`show_as` must be a unit of the answer's dimension (GiB for bytes, ms for seconds)."""
    if question.show_as is None:
        return
    from drill.quantities.units import parse_unit

    spec = parse_unit(question.show_as)
    if spec is None:
        report.add(("show_as",), f"'{question.show_as}' is not a unit symbol")
    elif spec.dimension != question.unit:
        report.add(
            ("show_as",),
            f"'{question.show_as}' measures {spec.dimension}, but the answer is in {question.unit}",
        )


def figure_names(question: NumericQuestion) -> set[str]:
    """The GPU figures a text may show: every GPU's (`gpu.h100.bandwidth`), and each gpu
    param's (`g.bandwidth`)."""
    from drill.serving.gpus import FIGURE_UNITS, figure_texts

    names = set(figure_texts())
    for name, param in question.params.items():
        if isinstance(param, GpuParam):
            names |= {f"{name}.{field}" for field in FIGURE_UNITS}
    return names


def _check_placeholders(question, report, known) -> set[str]:
    """Report unknown placeholders and bad specs; return the names the prompt shows (a gpu
    param's figure `g.bandwidth` shows `g` and `g_bandwidth`)."""
    from drill.quantities.render import check_spec, placeholders
    from drill.serving.gpus import FIGURE_UNITS

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
            head, _, tail = placeholder.name.rpartition("_")
            if isinstance(question.params.get(head), GpuParam) and tail in FIGURE_UNITS:
                report.add(
                    field,
                    f"shows {{{placeholder.name}}}; write {{{head}.{tail}}}, so that every text "
                    "shows a GPU's figure the same way",
                )
            if field == ("prompt",):
                shown.add(placeholder.name)
                head, dot, tail = placeholder.name.partition(".")
                if dot and head in question.params:
                    shown |= {head, f"{head}_{tail}"}
    return shown


def _quoted_measurements(question: NumericQuestion) -> set[str]:
    """The measured params (drill.bank.run_params) some text of the template shows."""
    from drill.quantities.render import placeholders

    measured = {n for n, p in question.params.items() if isinstance(p, MeasuredParam)}
    if not measured:
        return set()
    texts = [question.prompt, question.explanation or "", question.hint or "",
             *question.solution, *(m.feedback or "" for m in question.misconceptions)]  # fmt: skip
    return measured & {p.name for text in texts for p in placeholders(text)}


def _check_params_used(question, report, defined, used, shown, derived_uses) -> None:
    """Each param feeds an expression and reaches the prompt, itself or via a derived value."""
    shown_closure = set(shown)
    for name in reversed(list(question.derived)):
        if name in shown_closure:
            shown_closure |= derived_uses.get(name, set())
    quoted = _quoted_measurements(question)
    for name, names in defined.items():
        if name in quoted and not names & used:  # a measured figure quoted for context
            continue
        param = question.params[name]
        text_only = getattr(param, "choices", None) and all(
            isinstance(c, str) for c in param.choices
        )
        if not text_only and not names & used:
            report.add(("params", name), "is never used by the answer, derived or misconceptions")
        if name not in shown_closure and not names & shown_closure:
            report.add(("params", name), "is not shown in the prompt")


def _check_draws(
    question, report, draws, catalogue, presets, *, render: bool
) -> list[tuple[int, NumericDraw]]:
    """Draw seeds 0..draws-1 and return the draws with a usable answer; `render` also
    renders each draw's text."""
    drawn: list[tuple[int, NumericDraw]] = []
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
        drawn.append((seed, draw))
        if render:
            try:
                render_numeric(question, seed, draw, catalogue=catalogue)
            except InstanceError as exc:
                report.add(exc.field, f"on seed {seed}: {exc.detail}")
                render = False  # one text problem is enough; the numbers still get checked
    return drawn


def _check_misconceptions(
    question: NumericQuestion, report: LintReport, drawn: Sequence[tuple[int, NumericDraw]]
) -> set[frozenset[str]]:
    """On every draw, each named wrong answer must differ from the answer and from the
    question's other named wrong answers, or the grader calls it right or names the
    wrong mistake. One that sometimes (not always) equals a slip the grader knows by its
    ratio to the answer (8x for bits) is a problem too: on those draws that slip would
    be named as this one. Always equal, it is the same slip with a more precise name."""
    from drill.kinds.numeric_grade import mistake_for_value

    ties = _tie_pairs(question)
    used: set[frozenset[str]] = set()
    if not question.misconceptions:
        return used
    tolerance = question.tolerance
    # the draws as the grader sees them without the question's own named wrong answers
    bare = [grading_instance(question, seed, draw, named=False) for seed, draw in drawn]
    for i, item in enumerate(question.misconceptions):
        field = ("misconceptions", i, "expr")
        known: dict[str | None, int] = {}  # the ratio slip it matches -> first seed
        for (seed, draw), instance in zip(drawn, bare, strict=True):
            value, expected = draw.misconception_values[i], draw.expected
            if tolerance.accepts(value, expected):
                report.add(field, f"'{item.id}' gives the right answer ({value:g}) on seed {seed}")
                continue
            for j, other in enumerate(question.misconceptions[:i]):
                theirs = draw.misconception_values[j]
                if (
                    other.id != item.id
                    and not tolerance.accepts(theirs, expected)
                    and (tolerance.accepts(value, theirs) or tolerance.accepts(theirs, value))
                ):
                    pair = frozenset((item.id, other.id))
                    if pair in ties:
                        used.add(pair)
                        continue
                    report.add(
                        field,
                        f"'{item.id}' gives the value of '{other.id}' ({value:g}) on seed "
                        f"{seed}; the grader would name only '{other.id}' (or say under ties "
                        "which of the two it names)",
                        key=("same as", other.id),
                    )
            known.setdefault(mistake_for_value(instance, value), seed)
        ids = [k for k in known if k is not None and k != item.id]
        if ids and len(known) > 1:
            first = min(ids, key=known.__getitem__)
            report.add(
                field,
                f"'{item.id}' gives the value of a '{first}' slip on seed {known[first]} "
                f"but not on every draw; on those draws a '{first}' slip is named "
                f"'{item.id}'",
                key=("known as",),
            )
    return used


def _tie_pairs(
    question: NumericQuestion, report: LintReport | None = None
) -> dict[frozenset[str], int]:
    """The template's ties that name two of its misconceptions, each pair once, by pair ->
    index; the others are reported to `report`, if given."""
    ids = {item.id for item in question.misconceptions}
    ties: dict[frozenset[str], int] = {}
    for index, tie in enumerate(question.ties):
        missing = [name for name in (tie.prefer, tie.over) if name not in ids]
        pair = frozenset((tie.prefer, tie.over))
        if missing:
            problem = f"'{missing[0]}' is not a misconception of this template"
        elif len(pair) == 1:
            problem = f"'{tie.prefer}' is tied with itself"
        elif pair in ties:
            problem = f"'{tie.prefer}' and '{tie.over}' are tied already in ties[{ties[pair]}]"
        else:
            ties[pair] = index
            continue
        if report is not None:
            report.add(("ties", index), problem)
    return ties


def _check_ties_needed(
    question: NumericQuestion,
    report: LintReport,
    ties: dict[frozenset[str], int],
    used: set[frozenset[str]],
) -> None:
    """Some draw needs each of the template's ties (`ties` from _tie_pairs)."""
    for pair, index in ties.items():
        if pair not in used:
            tie = question.ties[index]
            report.add(
                ("ties", index),
                f"'{tie.prefer}' and '{tie.over}' never give one value on {TIE_DRAWS} or more "
                "draws; the tie is not needed",
            )


def grading_instance(question: NumericQuestion, seed: int, draw: NumericDraw, *, named: bool):
    """An Instance with what grading needs (no text): the question's named wrong
    answers only if `named`."""
    from drill.kinds.instance import Instance, MisconceptionValue, common_fields

    wrong = (
        tuple(
            MisconceptionValue(m.id, m.id, value, "", tie_losers(question, m.id))
            for m, value in zip(question.misconceptions, draw.misconception_values, strict=True)
        )
        if named
        else ()
    )
    return Instance(
        **common_fields(question, seed),
        text="",
        expected=draw.expected,
        unit=question.unit,
        tolerance=question.tolerance,
        misconceptions=wrong,
    )


def _check_slips(
    question: NumericQuestion,
    report: LintReport,
    shown: set[str],
    drawn: Sequence[tuple[int, NumericDraw]],
) -> None:
    """No slip of the formula (drill.kinds.numeric_slips) may be accepted as the answer;
    one that gives exactly the answer must be listed under harmless_slips."""
    if not drawn:
        return
    found, names = slip_draws(question, shown, [draw for _, draw in drawn])
    harmless: set[str] = set()
    for i, listed in enumerate(question.harmless_slips):
        if listed.slip in names:
            harmless.add(listed.slip)
            continue
        close = difflib.get_close_matches(listed.slip, names, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        message = f"'{listed.slip}' is not a slip of this template{hint}"
        report.add(("harmless_slips", i, "slip"), message)
    for item in found:
        slip = item.slip
        exact_ok = not harmless.isdisjoint(slip.names)
        for (seed, draw), value in zip(drawn, item.values, strict=True):
            if value is None:
                continue
            expected = float(draw.expected)
            if same(value, expected):
                if not exact_ok:
                    report.add(
                        (),
                        f"slip '{slip.name}' gives exactly the answer ({expected:g}) on seed "
                        f"{seed}; change the ranges, or list it under harmless_slips with "
                        "why it does no harm",
                        key=("exact", slip.name),
                    )
            elif question.tolerance.accepts(value, expected):
                report.add(
                    (),
                    f"slip '{slip.name}' gives {value:g}, accepted as the answer {expected:g} "
                    f"on seed {seed}; tighten the tolerance or change the ranges",
                    key=("accepted", slip.name),
                )
