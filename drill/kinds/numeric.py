"""Numeric questions: templates drawn with fresh numbers, answered with a number and unit.

Drawing (params, derived values, the texts rendered with them) lives in
drill.kinds.numeric_draw, the grader in drill.kinds.numeric_grade and the bank checks in
drill.kinds.numeric_lint; this module is the kind itself and how its answer is
shown: "512 MiB (536,870,912 bytes)" in a verdict, the same first form and a few
others in the answer key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from drill.errors import BankError
from drill.kinds.base import GradedKind
from drill.kinds.instance import DrawSources, Instance
from drill.kinds.numeric_draw import draw_numeric, render_numeric
from drill.kinds.numeric_grade import grade_numeric, show_symbol
from drill.kinds.verdict import Verdict
from drill.quantities.units import format_bytes, format_in, format_number
from drill.reports.document import Block

if TYPE_CHECKING:
    from drill.kinds.lint_report import LintContext, LintReport


class NumericKind(GradedKind):
    name = "numeric"
    answer_examples = "answers look like 0.5 GiB, 536,870,912, 2*32*8*128*4096*2, 75% or 3/4"
    section_title = "Calculations"
    space_lines = 5
    fast_ms = 15_000
    templated = True

    def make_instance(self, question: Any, seed: int, sources: DrawSources) -> Instance:
        draw = draw_numeric(question, seed, sources.presets)
        return render_numeric(question, seed, draw, catalogue=sources.catalogue)

    def how_to_answer(self, instance: Instance) -> str:
        return f"Answer with a number and unit (e.g. in {instance.show_as or instance.unit})"

    def grade(self, instance: Instance, answer_text: str) -> Verdict:
        return grade_numeric(instance, answer_text)

    def expected_text(self, instance: Instance) -> str:
        """In show_as (or the best fit), and a byte count exactly too:
        "512 MiB (536,870,912 bytes)"."""
        shown = shown_expected(instance)
        exact = _exact_bytes(instance)
        if exact is not None and exact not in shown:
            return f"{shown} ({exact} bytes)"
        return shown

    def key_blocks(self, instance: Instance) -> list[Block]:
        first, *others = expected_forms(instance)
        also = f" (= {'; '.join(others)})" if others else ""
        blocks = [
            Block("answer", f"{first}{also}"),
            Block("text", instance.tolerance.describe(instance.unit)),
        ]
        if instance.solution:
            blocks += [Block("label", "Worked solution"), Block("steps", items=instance.solution)]
        if instance.misconceptions:
            wrong = tuple(
                f"{m.name}: {format_in(m.value, instance.show_as or instance.unit)}"
                for m in instance.misconceptions
            )
            blocks += [
                Block("label", "Wrong answers and the mistake behind them"),
                Block("bullets", items=wrong),
            ]
        return blocks

    def lint(self, question: Any, report: LintReport, context: LintContext) -> None:
        # the checks draw every template many times: loaded only by `kvdrill bank lint`
        from drill.kinds.numeric_chain_lint import lint_chain
        from drill.kinds.numeric_lint import lint_numeric
        from drill.kinds.numeric_wording import check_wording

        lint_numeric(question, report, context)
        lint_chain(question, report, context)
        check_wording(question, report.add, context.draws, context.presets)


def expected_value(instance: Instance) -> float:
    """A numeric instance's expected value (BankError for an instance that has none)."""
    if instance.expected is None:
        raise BankError(f"{instance.question_id}: a numeric instance needs an expected value")
    return float(instance.expected)


def shown_expected(instance: Instance) -> str:
    """The expected value in show_as, else in the unit that fits it best: "512 MiB"."""
    expected = expected_value(instance)
    return format_in(expected, show_symbol(instance, expected))


def _exact_bytes(instance: Instance) -> str | None:
    """A whole byte count written out, "536,870,912"; None for anything else."""
    expected = expected_value(instance)
    if instance.unit == "bytes" and expected.is_integer():
        return f"{int(expected):,}"
    return None


def expected_forms(instance: Instance) -> list[str]:
    """The expected value as shown (`shown_expected`), then other useful forms: exact
    bytes and decimal units for bytes, seconds and best fit for times."""
    value, unit = expected_value(instance), instance.unit
    forms = [shown_expected(instance)]
    if unit not in (None, "count"):  # a plain count has no other unit to show
        forms.append(format_in(value, unit))
    if unit == "bytes":
        exact = _exact_bytes(instance)
        if exact is not None:
            forms.append(f"{exact} bytes")
        forms.append(format_bytes(value, binary=False))
    elif unit == "seconds":
        forms.append(format_in(value, "s"))
    elif unit == "fraction":
        forms.append(format_number(value))
    return list(dict.fromkeys(forms))  # distinct, in order
