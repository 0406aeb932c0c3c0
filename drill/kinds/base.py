"""What a kind of question provides, and the verdict form the graded kinds share.

A kind (one module in drill/kinds/) owns everything that differs between kinds of
question: the Instance drawn from a bank question, the prompt as the quiz and
`kvdrill ask` print it, how to answer, grading, the verdict as a person reads it,
its items on a mock interview sheet and in the answer key, and its lint checks.
The quiz, `ask`/`check`, sheets and lint look the kind up (`drill.kinds.kind_of`)
and never test a kind's name themselves.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from drill.kinds.instance import DrawSources, common_fields
from drill.reports.document import Block

if TYPE_CHECKING:
    from drill.kinds.instance import Instance
    from drill.kinds.lint_report import LintContext, LintReport
    from drill.kinds.verdict import Verdict


class Kind(ABC):
    """One kind of question. A subclass sets the attributes and implements the
    abstract methods; the others have defaults that fit most kinds."""

    name: str  # the `kind:` of a bank question
    answer_examples: str  # what answers look like: the quiz shows it on `?` or an empty answer
    section_title: str  # the sheet's part that holds questions of this kind
    space_lines: int  # lines to write on under each question on the sheet
    fast_ms: int = 15_000  # a right answer faster than this suggests Easy
    self_rated: bool = False  # the user rates the answer: it is neither right nor wrong
    templated: bool = False  # drawn with fresh numbers each time, so lint draws it many times

    @abstractmethod
    def make_instance(self, question: Any, seed: int, sources: DrawSources) -> Instance:
        """The concrete item for `question` and `seed`; `sources` matter only to kinds
        that draw numbers."""

    def prompt_lines(self, instance: Instance) -> list[str]:
        """The question as the quiz and `kvdrill ask` print it."""
        return [instance.text.rstrip()]

    @abstractmethod
    def how_to_answer(self, instance: Instance) -> str:
        """`kvdrill ask`'s advice, "Answer with ...", before ", then check it with:"."""

    def json_fields(self, instance: Instance) -> dict[str, Any]:
        """What `kvdrill ask --json` shows beyond the fields every kind has."""
        return {}

    @abstractmethod
    def grade(self, instance: Instance, answer_text: str) -> Verdict:
        """The verdict on `answer_text`, for any text without raising; a right or wrong
        one leaves its rating to `drill.kinds.grade.grade`."""

    @abstractmethod
    def verdict_lines(self, instance: Instance, verdict: Verdict) -> list[str]:
        """The verdict as a person reads it: in the quiz and from `kvdrill check`."""

    def question_blocks(self, instance: Instance) -> list[Block]:
        """The item on a mock interview sheet: the question and room to answer."""
        return [Block("text", instance.text.strip()), Block("space", lines=self.space_lines)]

    @abstractmethod
    def key_blocks(self, instance: Instance) -> list[Block]:
        """The item in the answer key: the answer and how to get there (the sheet adds
        the explanation every kind may have)."""

    def lint(self, question: Any, report: LintReport, context: LintContext) -> None:  # noqa: B027
        """Report what the schema cannot see in `question`; a kind without such
        checks keeps this default, which reports nothing."""


class GradedKind(Kind):
    """A kind whose answers are right or wrong against an expected answer."""

    @abstractmethod
    def expected_text(self, instance: Instance) -> str:
        """The right answer as a verdict shows it: "512 MiB (536,870,912 bytes)", "2"."""

    def verdict_lines(self, instance: Instance, verdict: Verdict) -> list[str]:
        """Right or wrong and the answer, the mistake's name when one is named, the
        grader's feedback, the worked solution and the explanation."""
        answer = self.expected_text(instance)
        if verdict.correct:
            head = "Right" if verdict.status == "correct" else "Right, with a unit slip"
            lines = [f"{head}: {answer}."]
        else:
            lines = [f"Wrong. Answer: {answer}."]
            if verdict.misconception_name:
                lines.append(f"Mistake: {verdict.misconception_name}.")
        if verdict.feedback:
            lines += verdict.feedback.strip().splitlines()
        if instance.solution:
            lines.append("Solution:")
            lines += [f"  {step}" for step in instance.solution]
        if instance.explanation:
            lines.append(instance.explanation.strip())
        return lines


def fixed_text_fields(question: Any, seed: int) -> dict[str, Any]:
    """The Instance fields of a question whose text is shown as written (no draw)."""
    return {
        **common_fields(question, seed),
        "text": question.prompt,
        "explanation": question.explanation,
        "hints": (question.hint,) if question.hint else (),
    }


def lint_hint(question: Any, report: LintReport) -> None:
    """A question shown as written needs a `hint:` for the quiz's `h` (a numeric
    template's formula gives it hints of its own)."""
    if not (question.hint or "").strip():
        report.add(("hint",), "needs a hint: a line that points the way without giving the answer")
