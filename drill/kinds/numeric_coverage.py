"""Which slips of each numeric template the grader cannot name: `kvdrill bank lint --coverage`.

Every slip lint derives (drill.kinds.numeric_slips) is evaluated on seeds 0..draws-1,
and on each draw where it differs from the answer its value is graded as a person
would type it, in a unit of the answer's dimension with either kind of prefix
(drill.kinds.numeric_grade.mistake_for_value): named by one of the question's
misconceptions, or by a slip the grader knows by its ratio to the answer, or by
nothing. The report, one block per numeric template in bank order:

    FILE:LINE: ID: N slips, K without a name
      SLIP                                 no name on any draw where it differs
      SLIP (no name on U of D draws)       no name on some of them
      SLIP (the catalogue has ID)          a slip the catalogue of mistakes names
      SLIP (no name on U of D draws; the catalogue has ID)
    coverage: N slips in T numeric templates, K without a name[, C the catalogue names]

A slip the catalogue names is one that leaves out a factor whose role has a mistake of
its own (CATALOGUE_DROPS: the layers are forgot-layers, the tokens per-token-not-total,
the requests forgot-requests, the element size wrong-dtype-bytes), the K-and-V 2 of a
KV-size product (forgot-kv-factor), a 2 beside a parameter count (2 FLOPs a parameter
and token: flops-2x; 2 bytes a weight: wrong-dtype-bytes), or a size in decimal units
read with the binary prefix (gb-vs-gib); not a factor left out of one part of the answer
while another part keeps it (the layers of the grouped cache only, in a difference of two
caches), which nobody does. Those the template must name; the others (a doubled answer, a
dropped constant) are left to the author's judgement.

A template that cannot be drawn is left out (lint reports why).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from drill.bank.loader import Bank, display_path
from drill.bank.schema import NumericQuestion
from drill.bank.template_formula import (
    Role,
    inlined_answer,
    kv_product,
    product_factors,
    template_roles,
)
from drill.errors import BankError
from drill.kinds.instance import InstanceError
from drill.kinds.numeric_draw import NumericDraw, draw_numeric
from drill.kinds.numeric_grade import mistake_for_value
from drill.kinds.numeric_lint import grading_instance
from drill.kinds.numeric_slips import same, slip_draws


@dataclass(frozen=True)
class SlipCoverage:
    """One slip of a template: on how many draws it differs from the answer, and on
    how many of those the grader names no mistake."""

    slip: str
    differs: int
    unnamed: int
    catalogue: str | None = None  # the catalogue's mistake for it, if it has one


# a factor's role (drill.bank.template_formula) -> the catalogue's mistake for leaving it out
CATALOGUE_DROPS = {
    "layers": "forgot-layers",
    "seq": "per-token-not-total",
    "tokens": "per-token-not-total",
    "requests": "forgot-requests",
    "dtype_bytes": "wrong-dtype-bytes",
}


def catalogue_mistake(question: NumericQuestion, names: tuple[str, ...]) -> str | None:
    """The catalogue's mistake for a slip known by `names` ("drop factor layers", "drop
    factor 2 in answer"), or None where the catalogue has none (module docstring)."""
    roles = template_roles(question)
    for name in names:
        words = name.split()
        if words[:1] == ["read"] and len(words) == 4 and words[2] == "as":
            return "gb-vs-gib"  # a decimal size read with the binary prefix
        if words[:2] != ["drop", "factor"] or len(words) < 3 or words[3:4] not in ([], ["in"]):
            continue
        factor, where = words[2], words[4] if len(words) > 4 else "answer"
        if factor == "2":
            mistake = _two_mistake(question, where, roles)
            if mistake is not None:
                return mistake
            continue
        role = roles.get(factor)
        if role is None or role.name not in CATALOGUE_DROPS:
            continue
        if where != "answer" and _uses(inlined_answer(question), factor) > 1:
            continue  # left out of one part only
        return CATALOGUE_DROPS[role.name]
    return None


# roles that count tokens: 2 x parameters x tokens is a FLOP count
_TOKEN_ROLES = frozenset({"prompt", "tokens", "seq", "batch"})


def _two_mistake(question: NumericQuestion, where: str, roles: Mapping[str, Role]) -> str | None:
    """The catalogue's mistake for leaving out a literal 2 in `where` (the answer or a
    derived value), else None. A 2 that multiplies a parameter count is the 2 FLOPs of a
    multiply-add where the product counts tokens too (flops-2x), else 2 bytes a weight
    (wrong-dtype-bytes); any other 2 is the 2 of K and V only where the product it sits in
    is the KV size (forgot-kv-factor): the 2 of `weights = params * 2` in the same
    template is an element size."""
    if where != "answer" and where not in question.derived:
        return None
    part = question if where == "answer" else replace(question, answer=where)
    for factors in product_factors(inlined_answer(part)):
        names = {roles[f.id].name for f in factors if isinstance(f, ast.Name) and f.id in roles}
        if "params" in names and any(isinstance(f, ast.Constant) and f.value == 2 for f in factors):
            return "flops-2x" if names & _TOKEN_ROLES else "wrong-dtype-bytes"
    if kv_product(part) and not _another_kv_part(question, where):
        return "forgot-kv-factor"
    return None


def _another_kv_part(question: NumericQuestion, where: str) -> bool:
    """Whether a derived value other than `where`, and apart from it (neither names the
    other), is a KV size too: the grouped cache beside the dense one."""
    if where == "answer":
        return False
    mine = ast.parse(question.derived[where], mode="eval")
    for name, text in question.derived.items():
        if name == where or _uses(ast.parse(text, mode="eval"), where) or _uses(mine, name):
            continue
        if kv_product(replace(question, answer=name)):
            return True
    return False


def _uses(tree: ast.AST, name: str) -> int:
    return sum(isinstance(node, ast.Name) and node.id == name for node in ast.walk(tree))


def template_coverage(
    question: NumericQuestion, draws: int, presets: Mapping[str, Any]
) -> list[SlipCoverage] | None:
    """The slips of one template and how well the grader names them; None if it
    cannot be drawn or its prompt cannot be read."""
    from drill.quantities.render import placeholders

    try:
        shown = {p.name for p in placeholders(question.prompt)}
    except BankError:
        return None
    drawn: list[tuple[int, NumericDraw]] = []
    for seed in range(draws):
        try:
            draw = draw_numeric(question, seed, presets)
        except InstanceError:
            continue
        if draw.expected > 0:
            drawn.append((seed, draw))
    if not drawn:
        return None
    found, _ = slip_draws(question, shown, [draw for _, draw in drawn])
    instances = [grading_instance(question, seed, draw, named=True) for seed, draw in drawn]
    report = []
    for item in found:
        differs = unnamed = 0
        for (_, draw), instance, value in zip(drawn, instances, item.values, strict=True):
            if value is None or same(value, draw.expected):
                continue
            differs += 1
            unnamed += mistake_for_value(instance, value) is None
        named = catalogue_mistake(question, item.slip.names) if unnamed else None
        report.append(SlipCoverage(item.slip.name, differs, unnamed, named))
    return report


def coverage_lines(bank: Bank, draws: int, presets: Mapping[str, Any]) -> list[str]:
    """The coverage report of every numeric template in `bank` (see the module docstring)."""
    lines: list[str] = []
    templates = slips = unnamed = in_catalogue = 0
    for question in bank:
        if not isinstance(question, NumericQuestion):
            continue
        report = template_coverage(question, draws, presets)
        if report is None:
            continue
        source = bank.source(question.id)
        missing = [item for item in report if item.unnamed]
        lines.append(
            f"{display_path(source.path)}:{source.line}: {question.id}: "
            f"{len(report)} slips, {len(missing)} without a name"
        )
        for item in missing:
            some = (
                ""
                if item.unnamed == item.differs
                else (f" (no name on {item.unnamed} of {item.differs} draws)")
            )
            if item.catalogue:
                has = f"the catalogue has {item.catalogue}"
                some = f" ({some[2:-1]}; {has})" if some else f" ({has})"
            lines.append(f"  {item.slip}{some}")
        templates += 1
        slips += len(report)
        unnamed += len(missing)
        in_catalogue += sum(item.catalogue is not None for item in missing)
    noun = "template" if templates == 1 else "templates"
    named = f", {in_catalogue} the catalogue names" if in_catalogue else ""
    lines.append(
        f"coverage: {slips} slips in {templates} numeric {noun}, {unnamed} without a name{named}"
    )
    return lines
