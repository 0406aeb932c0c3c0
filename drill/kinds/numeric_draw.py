"""A numeric question drawn: its params from a seed, its derived values, answer and
misconceptions evaluated (drill.quantities.expr), and its text, solution, feedback and
hints rendered with the draw's numbers."""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from drill.bank.schema import ChoiceParam, GpuParam, NumericQuestion, PresetParam, RangeParam
from drill.errors import BankError
from drill.kinds.instance import (
    Instance,
    InstanceError,
    MisconceptionValue,
    common_fields,
    instance_rng,
)
from drill.kinds.params import PRESET_FIELDS, Value


def _whole(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def range_values(param: RangeParam) -> tuple[int | float, int | float, int]:
    """(low, step, count) of a range param; ints when low and step are whole."""
    lo, hi = param.range
    count = math.floor((hi - lo) / param.step + 1e-9) + 1
    if float(lo).is_integer() and float(param.step).is_integer():
        return int(lo), int(param.step), count
    return lo, param.step, count


def draw_range(param: RangeParam, rng: random.Random) -> int | float:
    lo, step, count = range_values(param)
    value = lo + rng.randrange(count) * step
    # 0.1 + 3 * 0.1 is 0.4000000000000001; a drawn value should read as written
    return value if isinstance(value, int) else _whole(round(value, 12))


def preset_values(name: str, shape: Any) -> dict[str, Value]:
    """The values a preset param called `name` exposes, from a kvmath.ModelShape."""
    from drill.serving.kvmath import dtype_bytes

    values: dict[str, Value] = {name: shape.display_name}
    for field_name in PRESET_FIELDS:
        if field_name == "dtype_bytes":
            raw = dtype_bytes(shape.dtype) if shape.dtype else None
        else:
            raw = getattr(shape, field_name, None)
        if raw is not None:
            values[f"{name}_{field_name}"] = _whole(raw)
    return values


def gpu_values(name: str, spec: Any) -> dict[str, Value]:
    """The values a gpu param called `name` exposes, from a drill.serving.gpus.GpuSpec."""
    return {
        name: spec.name,
        f"{name}_memory": spec.memory_bytes,
        f"{name}_bandwidth": _whole(spec.bytes_per_s),
        f"{name}_flops": _whole(spec.flops_per_s),
    }


def gpu_texts(question: NumericQuestion, values: Mapping[str, Value]) -> dict[str, str]:
    """Each drawn GPU's figures as every text shows them: `{g.bandwidth}` for a gpu
    param `g` (drill.serving.gpus.gpu_figure)."""
    from drill.serving.gpus import FIGURE_UNITS, GPU_SPECS, gpu_figure

    by_name = {spec.name: spec for spec in GPU_SPECS}
    texts: dict[str, str] = {}
    for name, param in question.params.items():
        spec = by_name.get(str(values.get(name))) if isinstance(param, GpuParam) else None
        if spec is not None:
            texts.update({f"{name}.{field}": gpu_figure(spec, field) for field in FIGURE_UNITS})
    return texts


def draw_params(
    question: NumericQuestion, rng: random.Random, presets: Mapping[str, Any]
) -> dict[str, Value]:
    """One value per param, drawn in the order the params are written."""
    values: dict[str, Value] = {}
    for name, param in question.params.items():
        if isinstance(param, RangeParam):
            values[name] = draw_range(param, rng)
        elif isinstance(param, ChoiceParam):
            values[name] = rng.choice(param.choices)
        elif isinstance(param, GpuParam):
            values.update(gpu_values(name, _gpu(question.id, name, rng.choice(param.gpu))))
        else:
            preset = rng.choice(param.preset)
            if preset not in presets:
                raise InstanceError(
                    question.id, ("params", name, "preset"), f"unknown model preset '{preset}'"
                )
            values.update(preset_values(name, presets[preset]))
    return values


@functools.lru_cache(maxsize=4096)
def compiled(text: str) -> Any:
    """The drill.quantities.expr.Expr for `text`, compiled once per process."""
    from drill.quantities.expr import compile_expr

    return compile_expr(text)


# an integer result beyond 64 bits is kept as a float: the database holds no larger
# integer, and at that size the grader compares floats anyway
_INT64_MAX = 2**63 - 1


def _evaluate(question_id: str, field: tuple[str | int, ...], text: str, env: Mapping) -> Any:
    from drill.errors import ExprError

    try:
        value = compiled(text).evaluate(env)
    except ExprError as exc:
        raise InstanceError(question_id, field, str(exc)) from None
    return float(value) if type(value) is int and abs(value) > _INT64_MAX else value


@dataclass(frozen=True)
class NumericDraw:
    """The numbers of one draw of a numeric question, before any text is rendered."""

    values: dict[str, Value]  # params (and preset fields) then derived values, in order
    expected: int | float
    misconception_values: tuple[int | float, ...]  # one per question.misconceptions


def draw_numeric(
    question: NumericQuestion,
    seed: int,
    presets: Mapping[str, Any] | None = None,
    fixed: Mapping[str, Value] | None = None,
) -> NumericDraw:
    """Draw params, then evaluate `derived` in order, the answer and each misconception.

    `fixed` gives params (and a preset param's fields) values of their own in place of
    the drawn ones: an interview's chain carries numbers from one question to the next
    (drill.kinds.chains).
    """
    if presets is None:
        presets = _default_presets() if _uses_presets(question) else {}
    rng = instance_rng(question.id, seed)
    values = draw_params(question, rng, presets)
    if fixed:
        values.update(fixed)
    for name, text in question.derived.items():
        values[name] = _evaluate(question.id, ("derived", name), text, values)
    expected = _evaluate(question.id, ("answer",), question.answer, values)
    wrong = tuple(
        _evaluate(question.id, ("misconceptions", i, "expr"), m.expr, values)
        for i, m in enumerate(question.misconceptions)
    )
    return NumericDraw(values, expected, wrong)


def _gpu(question_id: str, name: str, key: str) -> Any:
    from drill.errors import ConfigError
    from drill.serving.gpus import gpu_named

    try:
        return gpu_named(key)
    except ConfigError as exc:  # a bank checked on load never gets here
        raise InstanceError(question_id, ("params", name, "gpu"), str(exc)) from None


def _uses_presets(question: NumericQuestion) -> bool:
    return any(isinstance(p, PresetParam) for p in question.params.values())


@functools.cache
def _default_presets() -> dict[str, Any]:
    from drill.serving.kvmath import load_presets

    return load_presets()


def _default_catalogue() -> Mapping[str, Any]:
    from drill.bank.misconceptions import load_misconception_catalogue

    return load_misconception_catalogue(cached=True)


def tie_losers(question: NumericQuestion, mistake: str) -> tuple[str, ...]:
    """The ids `mistake` is named over when an answer matches both (the template's
    `ties` that prefer it)."""
    return tuple(tie.over for tie in question.ties if tie.prefer == mistake)


def text_values(question: NumericQuestion, draw: NumericDraw) -> dict[str, Value]:
    """The names a numeric question's text may use: every GPU's figures
    (`gpu.h100.bandwidth`), `answer`, then its values."""
    from drill.serving.gpus import figure_texts

    return {
        **figure_texts(),
        **gpu_texts(question, draw.values),
        "answer": draw.expected,
        **draw.values,
    }


def _render(question_id: str, field: tuple[str | int, ...], text: str, values: Mapping) -> str:
    from drill.quantities.render import render

    try:
        return render(text, values)
    except BankError as exc:
        raise InstanceError(question_id, field, str(exc)) from None


def misconception_feedback(
    question: NumericQuestion, index: int, value: int | float, values: Mapping, catalogue: Mapping
) -> tuple[str, str]:
    """(name, feedback) of the question's misconception `index` for one draw.

    The question's own feedback is rendered with the draw's values, plus `value`
    (this misconception's wrong answer); otherwise the catalogue's text is used.
    """
    item = question.misconceptions[index]
    info = catalogue.get(item.id)
    name = getattr(info, "name", None) or item.id
    if not item.feedback:
        # the catalogue's text is generic and plain: it is shown as written
        return name, getattr(info, "feedback", None) or ""
    field = ("misconceptions", index, "feedback")
    return name, _render(question.id, field, item.feedback, {**values, "value": value})


def numeric_hints(
    question: NumericQuestion, values: Mapping[str, Any], draw: NumericDraw
) -> tuple[str, ...]:
    """The template's own hint (rendered), then its formula in words and with numbers."""
    from drill.kinds.hints import (
        formula_hints,  # the formula read in words: a numeric draw's last step
    )

    own = (_render(question.id, ("hint",), question.hint, values),) if question.hint else ()
    return (*own, *formula_hints(question, draw.values))


def render_numeric(
    question: NumericQuestion,
    seed: int,
    draw: NumericDraw,
    *,
    catalogue: Mapping[str, Any] | None = None,
) -> Instance:
    """The Instance of one numeric draw: its text, solution and feedback rendered."""
    values = text_values(question, draw)
    qid = question.id
    wrong: list[MisconceptionValue] = []
    if question.misconceptions:
        catalogue = _default_catalogue() if catalogue is None else catalogue
        for i, (item, value) in enumerate(
            zip(question.misconceptions, draw.misconception_values, strict=True)
        ):
            name, feedback = misconception_feedback(question, i, value, values, catalogue)
            beats = tie_losers(question, item.id)
            wrong.append(MisconceptionValue(item.id, name, value, feedback, beats))
    return Instance(
        **common_fields(question, seed),
        text=_render(qid, ("prompt",), question.prompt, values),
        params=dict(draw.values),
        expected=draw.expected,
        unit=question.unit,
        show_as=question.show_as,
        tolerance=question.tolerance,
        solution=tuple(
            _render(qid, ("solution", i), step, values) for i, step in enumerate(question.solution)
        ),
        misconceptions=tuple(wrong),
        hints=numeric_hints(question, values, draw),
        explanation=(
            _render(qid, ("explanation",), question.explanation, values)
            if question.explanation
            else None
        ),
    )
