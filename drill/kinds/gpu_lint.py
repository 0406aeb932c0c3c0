"""Lint: a question takes every GPU figure from the one table (drill.serving.gpus).

A text that names a GPU of the table and, in the same sentence, writes a memory size,
bandwidth or FLOP/s by hand ("an H100's 3.35 TB/s", "A100 80GB (312, 2.0)") is reported:
it should say `{gpu.h100.bandwidth}` (or use a gpu param's `{g.bandwidth}`), so that every
question shows the table's figure, written one way. A `{gpu...}` placeholder that names no
figure of the table is reported too.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from drill.kinds.lint_report import LintReport

# fields that hold no prose: names, expressions, cues, numbers
_NOT_PROSE = frozenset(
    {"id", "kind", "topic", "tags", "difficulty", "cues", "expr", "derived", "params",
     "unit", "show_as", "tolerance", "evidence", "slip", "change", "start", "correct"}
)  # fmt: skip
# a number written with a unit of memory, bandwidth or FLOP/s
_FIGURE = re.compile(
    r"(?<![\w.])\d[\d,]*(?:\.\d+)?\s*(?:TB/s|GB/s|GiB|GB|TiB|TB|P?T?FLOP/?s|TFLOPS|PFLOPS)"
    r"(?![\w/])"
)
_NUMBER = re.compile(r"(?<![\w.{])\d[\d,]*(?:\.\d+)?(?![\w}])")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")


@functools.cache
def _gpu_names() -> tuple[re.Pattern[str], dict[str, set[str]]]:
    """A pattern of the table's GPU names, and for each name the numbers of its figures."""
    from drill.quantities.units import format_number
    from drill.serving.gpus import FIGURE_DIGITS, GPU_SPECS

    numbers: dict[str, set[str]] = {}
    for spec in GPU_SPECS:
        base = spec.name.split()[0].casefold() if not spec.name.startswith("RTX") else (
            " ".join(spec.name.split()[:2]).casefold()
        )
        figures = (spec.memory_gib, spec.hbm_tb_per_s, spec.bf16_dense_tflops)
        numbers.setdefault(base, set()).update(format_number(f, FIGURE_DIGITS) for f in figures)
    words = sorted(numbers, key=len, reverse=True)
    pattern = re.compile(
        r"(?<![\w-])(" + "|".join(re.escape(w).replace(r"\ ", r"\s*") for w in words) + r")(?![\w-])",
        re.IGNORECASE,
    )
    return pattern, numbers


def hand_written_figure(text: str) -> str | None:
    """The first GPU figure `text` writes by hand beside a GPU's name, or None."""
    from drill.serving.gpus import GPU_PLACEHOLDER

    pattern, numbers = _gpu_names()
    plain = GPU_PLACEHOLDER.sub("", text)
    for sentence in _SENTENCE_END.split(plain):
        names = [m.group(1) for m in pattern.finditer(sentence)]
        if not names:
            continue
        figure = _FIGURE.search(sentence)
        if figure:
            return f"{names[0]} … {figure.group(0)}"
        theirs = set().union(*(numbers[" ".join(n.split()).casefold()] for n in names))
        for number in _NUMBER.finditer(sentence):
            if number.group(0).replace(",", "") in theirs:
                return f"{names[0]} … {number.group(0)}"
    return None


def _prose(value: Any, path: tuple) -> Iterator[tuple[tuple, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _prose(item, (*path, i))
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in _NOT_PROSE:
                yield from _prose(item, (*path, key))
    elif dataclasses.is_dataclass(value):
        for field in dataclasses.fields(value):
            if field.name not in _NOT_PROSE:
                yield from _prose(getattr(value, field.name), (*path, field.name))


def question_texts(question: Any) -> Iterator[tuple[tuple, str]]:
    """(field, text) of each prose text of a question (a numeric answer is a formula)."""
    for field, text in _prose(question, ()):
        if field == ("answer",) and question.kind == "numeric":
            continue
        yield field, text


def lint_gpu_figures(question: Any, report: LintReport) -> None:
    """Report a GPU figure written by hand, and a `{gpu...}` placeholder the table lacks."""
    from drill.serving.gpus import GPU_PLACEHOLDER, figure_texts, gpu_placeholder_problem

    for field, text in question_texts(question):
        for match in GPU_PLACEHOLDER.finditer(text):
            if match.group(1) not in figure_texts():
                report.add(field, gpu_placeholder_problem(match.group(1)))
        found = hand_written_figure(text)
        if found:
            report.add(
                field,
                f"states a GPU figure by hand ({found}); take it from the GPU table: "
                "{gpu.KEY.FIELD}, or a gpu param's {g.FIELD}",
            )
