"""`kvdrill ask` and `kvdrill check`: one question at a time, for scripts and quick looks."""

from __future__ import annotations

import json
import secrets
import shlex
from pathlib import Path
from typing import Any

import click

from drill.commands.options import bank_option
from drill.text import escape_json_controls, printable

# seeds drawn when none is given stay short enough to type back
RANDOM_SEED_LIMIT = 1_000_000


def _instance(question_id: str, seed: int, banks: tuple[Path, ...]):
    from drill.bank.loader import load_default_bank
    from drill.kinds import make_instance

    bank = load_default_bank(banks)
    if question_id in bank.waiting:  # drawn from the user's runs: read the latest ones
        from drill.commands.measurements import measured_at

        bank = bank.with_runs(measured_at(None))
    return make_instance(bank.get(question_id), seed)


def _kind(instance):
    from drill.kinds import kind_of

    return kind_of(instance.kind)


def _echo(text: str = "") -> None:
    """A line for the terminal; bank text may not carry escape sequences to it."""
    click.echo(printable(text))


def instance_json(instance) -> dict[str, Any]:
    """The stable JSON form of an instance, as `kvdrill ask --json` prints it."""
    data: dict[str, Any] = {
        "id": instance.question_id,
        "seed": instance.seed,
        "kind": instance.kind,
        "topic": instance.topic,
        "difficulty": instance.difficulty,
        "text": instance.text,
        "params": dict(instance.params),
        "expected": instance.expected,
        "unit": instance.unit,
        "show_as": instance.show_as,
    }
    return {**data, **_kind(instance).json_fields(instance)}


@click.command()
@click.argument("question_id", metavar="ID")
@click.option(
    "--seed", type=int, help="Which draw of the numbers (default: a random one, printed)."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (see below).")
@bank_option
def ask(question_id: str, seed: int | None, as_json: bool, banks: tuple[Path, ...]) -> None:
    """Show one question, drawn with SEED: the same ID and seed give the same numbers.

    --json prints an object with id, seed, kind, topic, difficulty, text, params,
    expected (base units, or null), unit, show_as; choice questions add options
    and correct (0-based indexes into options), order questions add items and
    correct_order (indexes into items, in the right order).
    """
    if seed is None:
        seed = secrets.randbelow(RANDOM_SEED_LIMIT)
    instance = _instance(question_id, seed, banks)
    if as_json:
        click.echo(
            escape_json_controls(json.dumps(instance_json(instance), indent=2, ensure_ascii=False))
        )
        return
    kind = _kind(instance)
    _echo(f"{instance.question_id} · seed {instance.seed} · {instance.topic}")
    _echo()
    for line in kind.prompt_lines(instance):
        _echo(line)
    _echo()
    _echo(f"{kind.how_to_answer(instance)}, then check it with:")
    # the check must read the same banks to find the question
    banks_args = "".join(f" --bank {shlex.quote(str(path))}" for path in banks)
    _echo(
        f"  kvdrill check {instance.question_id} --seed {instance.seed}{banks_args}"
        ' --answer "..."'
    )


def verdict_json(instance, answer_text: str, verdict) -> dict[str, Any]:
    """The stable JSON form of a graded answer, as `kvdrill check --json` prints it."""
    from drill.storage.review_record import ticks_text

    data = verdict.to_json()
    return {
        "id": instance.question_id,
        "seed": instance.seed,
        "kind": instance.kind,
        "answer": answer_text,
        "correct": data["correct"],
        "status": data["status"],
        "value": data["value"],
        "expected": instance.expected,
        "unit": instance.unit,
        "misconception": data["misconception"],
        "misconception_name": data["misconception_name"],
        "feedback": data["feedback"],
        "rating": data["rating"],
        "suggested_rating": data["rating"],
        "ticks": ticks_text(verdict.covered) if verdict.status == "self" and verdict.covered
        else None,
        "covered": data["covered"],
        "wrong_claims": data["wrong_claims"],
    }


@click.command()
@click.argument("question_id", metavar="ID")
@click.option(
    "--seed", type=int,
    help="The draw that was asked (from `ask`); a concept question needs none.",
)  # fmt: skip
@click.option("--answer", "answer_text", required=True, help="The answer, as you would type it.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (see below).")
@bank_option
def check(
    question_id: str, seed: int | None, answer_text: str, as_json: bool, banks: tuple[Path, ...]
) -> None:
    """Grade one answer to question ID as drawn with SEED.

    A concept question reads the same for every seed and needs no --seed (seed 0
    is used); a numeric question draws its numbers, and a choice or order question
    shuffles what it shows, from the seed.

    Exit status 0 when the answer was graded (right or wrong), 1 when it could not
    be read. --json prints an object with id, seed, kind, answer, correct (true,
    false, or null for a self-rated concept answer), status (correct, unit,
    magnitude, misconception, wrong, unreadable, self), value (the answer in base
    units, or null), expected, unit, misconception (a catalogue id or null),
    misconception_name, feedback, rating (suggested 1-4, or null where the grader cannot
    tell and leaves the rating to you), suggested_rating (the same), ticks (concept:
    the key points the grader ticked, one character per point, 1 ticked and 0 not, as a
    review stores them; else null), covered (concept: one flag per key point) and
    wrong_claims (concept: per key point, the wrong claim the answer makes about it, or
    null).
    """
    from drill.kinds.grade import grade

    if seed is None:
        seed = _seed_not_needed(question_id, banks)
    instance = _instance(question_id, seed, banks)
    verdict = grade(instance, answer_text)
    if as_json:
        click.echo(json.dumps(verdict_json(instance, answer_text, verdict), indent=2))
        if verdict.status == "unreadable":
            click.echo(f"Error: {' '.join(verdict.feedback.split())}", err=True)
            raise SystemExit(1)
        return
    if verdict.status == "unreadable":
        raise click.ClickException(" ".join(verdict.feedback.split()))
    for line in verdict_lines(instance, verdict):
        _echo(line)


def _seed_not_needed(question_id: str, banks: tuple[Path, ...]) -> int:
    """The seed for a check given none: 0 for a concept question, whose draw is the same
    for every seed; a usage error for the others, whose draw depends on it."""
    from drill.bank.loader import load_default_bank

    bank = load_default_bank(banks)
    question = bank.waiting.get(question_id) or bank.get(question_id)
    kind = question.kind
    if kind == "concept":
        return 0
    depends = "draws its numbers" if kind == "numeric" else "shuffles what it shows"
    raise click.UsageError(
        f"{question_id} is a {kind} question and {depends} from the seed: give the --seed "
        f"that `kvdrill ask {question_id}` printed"
    )


def verdict_lines(instance, verdict) -> list[str]:
    """The verdict as the quiz shows it; a self-rated answer gets the rating the quiz
    would suggest, since no one is asked for one here."""
    kind = _kind(instance)
    lines = kind.verdict_lines(instance, verdict)
    if kind.self_rated:
        if verdict.rating is None:
            lines.append("No suggested rating: the grader cannot tell; judge your own answer.")
        else:
            lines.append(f"Suggested rating: {verdict.rating} of 4 (you judge your own answer).")
    return lines
