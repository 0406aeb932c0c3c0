"""Follow-up chains: an interview's numeric problem asked again with one thing changed.

A numeric template may declare a `chain` (drill.bank.schema.Chain): the follow-ups an
interviewer asks after it ("now the cache is FP8", "now 16 requests at once"). Drawing
a chain is a pure function of the opener, the bank and a seed:

  1. the opener is drawn with the seed, its chain's `start` fixing some of its params;
  2. the values so far are the opener's (params and derived values);
  3. each follow-up's params are set by its `change` (a number, or an expression over
     the values so far) or else carried over from the values so far; its derived
     values, answer and texts are worked out anew, and its values join the values so
     far, so the next follow-up builds on it.

Every follow-up is drawn with the opener's seed; since all of its params are fixed by
the chain, the seed alone does not reproduce it (the review stores its params).
A chain that cannot be drawn raises InstanceError at the opener's chain field;
`kvdrill bank lint` draws every chain (drill.kinds.numeric_chain_lint).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from drill.bank.misconceptions import load_misconception_catalogue
from drill.bank.schema import FollowUp, GpuParam, NumericQuestion
from drill.errors import BankError, ExprError
from drill.kinds.instance import DrawSources, Instance, InstanceError, MisconceptionValue
from drill.kinds.numeric_draw import (
    NumericDraw,
    compiled,
    draw_numeric,
    render_numeric,
    text_values,
)
from drill.kinds.params import Value, param_fields, record_param_kind

Lookup = Callable[[str], Any]  # a question id -> the question (BankError if unknown)


@dataclass(frozen=True)
class ChainDraw:
    """The numbers of one question of a drawn chain."""

    question: NumericQuestion  # the template asked
    draw: NumericDraw
    changed: dict[str, Value] = field(default_factory=dict)  # params this step set
    before: dict[str, Value] = field(default_factory=dict)  # the values so far, before it


@dataclass(frozen=True)
class ChainStep:
    """One question of a chain as an interview asks it."""

    instance: Instance
    ask: str | None  # the interviewer's words for a follow-up; None for the opener
    changed: dict[str, Value]  # the params this follow-up set, with their values


def follow_up_field(index: int, *rest: str | int) -> tuple[str | int, ...]:
    """The opener's field of its follow-up `index`: ("chain", "follow_ups", 1, "ask")."""
    return ("chain", "follow_ups", index, *rest)


def follow_up_question(opener: NumericQuestion, index: int, lookup: Lookup) -> Any:
    """The question follow-up `index` asks: its `question`, else the opener itself; a
    numeric template, or InstanceError at the follow-up's field."""
    assert opener.chain is not None
    follow_up = opener.chain.follow_ups[index]
    if follow_up.question is None or follow_up.question == opener.id:
        return opener
    try:
        question = lookup(follow_up.question)
    except BankError as exc:
        raise InstanceError(opener.id, follow_up_field(index, "question"), str(exc)) from None
    if question.kind != "numeric":
        raise InstanceError(
            opener.id,
            follow_up_field(index, "question"),
            f"'{question.id}' is a {question.kind} question; a follow-up is a numeric template",
        )
    return question


def param_keys(question: NumericQuestion, name: str) -> list[str]:
    """The values a param defines: itself, and a preset or gpu param's fields (m, m_layers,
    ...)."""
    return [name, *(f"{name}_{f}" for f in param_fields(question.params[name]))]


def gpu_choice_problem(param: Any, value: Any) -> str | None:
    """Why `value` cannot fix a gpu param in a chain (it must be one of the param's GPU
    keys, "h100"), or None."""
    if isinstance(value, str) and value in param.gpu:
        return None
    return f"{value!r} is not one of its GPUs ({', '.join(param.gpu)})"


def _gpu_name(key: str) -> str:
    from drill.serving.gpus import gpu_named

    return gpu_named(key).name


def fixed_values(question: NumericQuestion, values: Mapping[str, Value]) -> dict[str, Value]:
    """The values a chain fixes with `values` (param -> value, a gpu param's value the
    GPU's name): each value itself, and for a gpu param its figures too (g_memory, ...)."""
    from drill.kinds.numeric_draw import gpu_values
    from drill.serving.gpus import GPU_SPECS

    fixed: dict[str, Value] = {}
    for name, value in values.items():
        if isinstance(question.params.get(name), GpuParam):
            spec = next(spec for spec in GPU_SPECS if spec.name == value)
            fixed.update(gpu_values(name, spec))
        else:
            fixed[name] = value
    return fixed


def _start_values(opener: NumericQuestion) -> dict[str, Value]:
    """The params the chain's `start` fixes (a gpu param by its GPU's name)."""
    start: dict[str, Value] = {}
    for name, value in (opener.chain.start if opener.chain else {}).items():
        param = opener.params.get(name)
        where = ("chain", "start", name)
        if isinstance(param, GpuParam):
            problem = gpu_choice_problem(param, value)
            if problem:
                raise InstanceError(opener.id, where, problem)
            value = _gpu_name(str(value))
        elif param is None or record_param_kind(param):
            what = record_param_kind(param) or "not a param of this template"
            raise InstanceError(opener.id, where, f"'{name}' is {what}")
        start[name] = value
    return start


def _changed_values(
    opener: NumericQuestion, index: int, follow_up: FollowUp, question: Any, known: Mapping
) -> dict[str, Value]:
    changed: dict[str, Value] = {}
    for name, value in follow_up.change.items():
        where = follow_up_field(index, "change", name)
        param = question.params.get(name)
        if isinstance(param, GpuParam):
            problem = gpu_choice_problem(param, value)
            if problem:
                raise InstanceError(opener.id, where, problem)
            changed[name] = _gpu_name(str(value))
            continue
        if param is None or record_param_kind(param):
            what = record_param_kind(param) or "not a param"
            raise InstanceError(opener.id, where, f"'{name}' is {what} of {question.id}")
        if isinstance(value, str):
            try:
                value = compiled(value).evaluate(known)
            except ExprError as exc:
                raise InstanceError(opener.id, where, str(exc)) from None
        changed[name] = value
    return changed


def _carried(
    opener: NumericQuestion, index: int, question: Any, known: Mapping, changed: Mapping
) -> dict[str, Value]:
    carried: dict[str, Value] = {}
    for name in question.params:
        if name in changed:
            continue
        if name not in known:
            raise InstanceError(
                opener.id,
                follow_up_field(index),
                f"{question.id}'s param '{name}' is neither carried over from the questions "
                "before it nor set by change",
            )
        carried.update({key: known[key] for key in param_keys(question, name) if key in known})
    return carried


def draw_chain_numbers(
    opener: NumericQuestion,
    lookup: Lookup,
    seed: int,
    presets: Mapping[str, Any] | None = None,
) -> list[ChainDraw]:
    """The numbers of the opener and each follow-up (see the module docstring)."""
    start = _start_values(opener)
    first = draw_numeric(opener, seed, presets, fixed=fixed_values(opener, start))
    draws = [ChainDraw(opener, first, dict(start), {})]
    known: dict[str, Value] = dict(first.values)
    for index, follow_up in enumerate(opener.chain.follow_ups if opener.chain else ()):
        question = follow_up_question(opener, index, lookup)
        changed = _changed_values(opener, index, follow_up, question, known)
        fixed = {
            **_carried(opener, index, question, known, changed),
            **fixed_values(question, changed),
        }
        try:
            draw = draw_numeric(question, seed, presets, fixed=fixed)
        except InstanceError as exc:
            if exc.question_id == opener.id and question is opener:
                raise
            message = f"{question.id} with the chain's numbers: {exc}"
            raise InstanceError(opener.id, follow_up_field(index), message) from None
        draws.append(ChainDraw(question, draw, changed, dict(known)))
        known.update(draw.values)
    return draws


def draw_chain(
    opener: NumericQuestion, lookup: Lookup, seed: int, sources: DrawSources | None = None
) -> list[ChainStep]:
    """The opener and its follow-ups as an interview asks them: instances with their
    texts, and each follow-up's words rendered with its own values."""
    from drill.quantities.render import render

    sources = sources or DrawSources()
    steps: list[ChainStep] = []
    for index, item in enumerate(draw_chain_numbers(opener, lookup, seed, sources.presets)):
        instance = render_numeric(item.question, seed, item.draw, catalogue=sources.catalogue)
        ask = None
        if index:
            template = opener.chain.follow_ups[index - 1].ask if opener.chain else ""
            try:
                ask = render(template, text_values(item.question, item.draw))
            except BankError as exc:
                field_path = follow_up_field(index - 1, "ask")
                raise InstanceError(opener.id, field_path, str(exc)) from None
            instance = _with_unchanged_answer(instance, steps[-1].instance, ask, sources)
        steps.append(ChainStep(instance, ask, dict(item.changed) if index else {}))
    return steps


UNCHANGED_ID = "follow-up-unchanged"


def _with_unchanged_answer(
    instance: Instance, before: Instance, ask: str, sources: DrawSources
) -> Instance:
    """A follow-up's instance that names its likeliest mistake first: the answer to the
    question before it, as if nothing had changed (when that answer is in the same unit
    and differs from this one). It comes first so that a wrong answer equal to it is named
    this way even when one of the template's own mistakes gives the same number. Its
    feedback quotes the change in the interviewer's words (`ask`), not by param names."""
    previous = before.expected
    if (
        previous is None
        or instance.expected is None
        or before.unit != instance.unit
        or instance.tolerance.accepts(previous, instance.expected)
    ):
        return instance
    catalogue = sources.catalogue
    if catalogue is None:
        catalogue = load_misconception_catalogue(cached=True)
    info = catalogue.get(UNCHANGED_ID)
    if info is None:  # a catalogue of the bank's own without it
        return instance
    what = change_words(ask)
    feedback = f'{info.feedback} The change, as asked: "{what}"' if what else info.feedback
    unchanged = MisconceptionValue(UNCHANGED_ID, info.name, previous, feedback)
    return dataclasses.replace(instance, misconceptions=(unchanged, *instance.misconceptions))


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def change_words(ask: str) -> str:
    """What a follow-up changed, in the interviewer's words: its `ask` without the question
    it ends on ("Now the cache is FP8. How big is it?" -> "Now the cache is FP8."); empty
    when the ask is only a question."""
    sentences = _SENTENCE_END.split(" ".join(ask.split()))
    while sentences and sentences[-1].endswith("?"):
        sentences.pop()
    return " ".join(sentences)


def chain_length(question: Any) -> int:
    """How many questions a chain opened by `question` asks (1 without a chain)."""
    chain = getattr(question, "chain", None)
    return 1 + (len(chain.follow_ups) if chain else 0)
