"""Templates drawn from the user's own measurements: their `run:` params filled in.

A numeric template whose params include `run: FIELD` (drill.bank.schema.RunParam) can be
asked only once the run it reads is stored. `bind_run_params` gives the template with each
such param fixed to the measured value (a one-value `choices` param, so every draw, lint
and report treats it as any other template), or None when a field is missing; the bank
(drill.bank.loader.Bank) keeps templates that cannot be bound apart, and `waiting_reason`
says in one line what they wait for.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from drill.bank.schema import MeasuredParam, RunParam


def run_fields(question: Any) -> list[str]:
    """The run fields a question's params read, in order ([] for most questions)."""
    params = getattr(question, "params", None)
    if not params:
        return []
    return [p.run for p in params.values() if isinstance(p, RunParam)]


def bind_run_params(question: Any, measured: Mapping[str, Any]) -> Any | None:
    """`question` with each run param fixed to its measured value; None when `measured`
    lacks one of them. A question without run params is returned as it is."""
    fields = run_fields(question)
    if not fields:
        return question
    if any(name not in measured for name in fields):
        return None
    params = {
        name: MeasuredParam(choices=[measured[p.run]], run=p.run) if isinstance(p, RunParam) else p
        for name, p in question.params.items()
    }
    return replace(question, params=params)


def waiting_reason(question: Any, measured: Mapping[str, Any]) -> str:
    """Why `question` cannot be asked with `measured`, in one line: no such run stored,
    or the stored one lacks a field."""
    from drill.serving.measured import SOURCES, source_of

    missing = [name for name in run_fields(question) if name not in measured]
    source = source_of(missing[0]) if missing else "engine"
    what, how = SOURCES[source]
    if not any(source_of(name) == source for name in measured):
        return (
            f"{question.id} is drawn from your latest {what}, and none is stored: {how} makes one"
        )
    lacking = ", ".join(name for name in missing if source_of(name) == source)
    return f"{question.id} needs {lacking}, which your latest {what} does not hold: {how} makes a new one"


def waiting_line(waiting: Mapping[str, Any], measured: Mapping[str, Any]) -> str | None:
    """One line on the templates left out until a run is stored; None when none is."""
    if not waiting:
        return None
    from drill.serving.measured import SOURCES, source_of

    counts: dict[str, int] = {}
    for question in waiting.values():
        missing = [n for n in run_fields(question) if n not in measured] or ["engine"]
        counts[source_of(missing[0])] = counts.get(source_of(missing[0]), 0) + 1
    parts = [f"{counts[s]} for {how}" for s, (_, how) in SOURCES.items() if s in counts]
    total = len(waiting)
    noun = "question" if total == 1 else "questions"
    return f"{total} {noun} drawn from your own measurements wait for a stored run: {', '.join(parts)}."
