"""Multiple choice: options shown in a shuffled order, one or several of them right.

An answer names options by their displayed number or letter ("2", "b", "a, c"), or
types one option out in full. Naming exactly the right ones is right; the feedback
on a wrong answer says which were missed and why each wrong pick is wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from drill.kinds.base import fixed_text_fields, lint_hint
from drill.kinds.instance import DrawSources, Instance, instance_rng
from drill.kinds.numbered import NumberedKind, read_indexes, spoken_list
from drill.kinds.verdict import Verdict
from drill.reports.document import Block, letter

if TYPE_CHECKING:
    from drill.kinds.lint_report import LintContext, LintReport


class ChoiceKind(NumberedKind):
    name = "choice"
    answer_examples = "answer with an option's number, e.g. 2 (several: 1 3)"
    section_title = "Multiple choice"
    space_lines = 1
    sheet_note = "Choose every option that is right."
    fast_ms = 8_000

    def make_instance(self, question: Any, seed: int, sources: DrawSources) -> Instance:
        order = list(range(len(question.options)))
        instance_rng(question.id, seed).shuffle(order)
        shown = [question.options[i] for i in order]
        return Instance(
            **fixed_text_fields(question, seed),
            options=tuple(o.text for o in shown),
            option_why=tuple(o.why for o in shown),
            correct_options=tuple(k for k, o in enumerate(shown) if o.correct),
        )

    def entries(self, instance: Instance) -> Sequence[str]:
        return instance.options

    def how_to_answer(self, instance: Instance) -> str:
        return "Answer with the number(s) of the right option(s)"

    def json_fields(self, instance: Instance) -> dict[str, Any]:
        # correct: 0-based indexes into options
        return {"options": list(instance.options), "correct": list(instance.correct_options)}

    def grade(self, instance: Instance, answer_text: str) -> Verdict:
        count = len(instance.options)
        chosen = _typed_out_option(instance, answer_text)
        if chosen is None:
            read = read_indexes(answer_text, count, "option's number or letter")
            if isinstance(read, str):
                return Verdict(
                    correct=False, status="unreadable",
                    feedback=f"Cannot read that: {read}; answer with an option's number or "
                    "letter, e.g. 2 or b (several: 1 3).",
                )  # fmt: skip
            chosen = list(dict.fromkeys(read))
        right = set(instance.correct_options)
        picked = set(chosen)
        if picked == right:
            return Verdict(correct=True, status="correct")
        missing, extra = sorted(right - picked), sorted(picked - right)
        parts = [f"You chose {spoken_list(chosen)}; the answer is {spoken_list(sorted(right))}."]
        if len(right) > 1 and missing:
            parts.append(f"Missed {spoken_list(missing)}.")
        if extra:
            why = [instance.option_why[i] for i in extra if i < len(instance.option_why)]
            parts.extend(w.strip() for w in why if w)
        return Verdict(correct=False, status="wrong", feedback=" ".join(parts))

    def expected_text(self, instance: Instance) -> str:
        return spoken_list(sorted(instance.correct_options))

    def key_blocks(self, instance: Instance) -> list[Block]:
        right = "\n".join(f"{letter(i)}. {instance.options[i]}" for i in instance.correct_options)
        lines = []
        for i, text in enumerate(instance.options):
            mark = "right" if i in instance.correct_options else "wrong"
            why = instance.option_why[i] if i < len(instance.option_why) else None
            lines.append(f"{letter(i)} ({mark}): {text}" + (f" — {why}" if why else ""))
        return [Block("answer", right), Block("bullets", items=tuple(lines))]

    def lint(self, question: Any, report: LintReport, context: LintContext) -> None:
        lint_hint(question, report)
        texts = [option.text for option in question.options]
        report.add_repeats("options", texts, "the options cannot be told apart")


def _typed_out_option(instance: Instance, text: str) -> list[int] | None:
    """The option whose text was typed out in full, if exactly one matches."""
    wanted = " ".join(str(text).split()).casefold()
    if len(wanted) < 3:
        return None
    hits = [
        i
        for i, option in enumerate(instance.options)
        if " ".join(option.split()).casefold() == wanted
    ]
    return hits if len(hits) == 1 else None
