"""Concept questions: answered in the user's own words and rated by the user.

The grader reads which key points the text covers (drill.kinds.cues: cues matched as
words in any form, not counted under negation or contrast, and wrong claims that
mark their point missed) and suggests a rating from that: Again when the text
makes a wrong claim or covers at most one point, Good when it covers every point,
Hard in between. The verdict shows the model answer beside the key points as a
checklist ([x] covered, [!] contradicted) and names each wrong claim; the user's
own rating decides.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from drill.kinds.base import Kind, fixed_text_fields, lint_hint
from drill.kinds.instance import DrawSources, Instance
from drill.kinds.verdict import AGAIN, GOOD, HARD, Verdict
from drill.reports.document import Block
from drill.serving.evidence import CLAIM_NAMES

if TYPE_CHECKING:
    from drill.kinds.lint_report import LintContext, LintReport

# what a concept question's `evidence` may name: the claims an engine run judges
EVIDENCE_NAMES = frozenset(CLAIM_NAMES)
# the most of an answer that cues are looked for in
MAX_CUE_SEARCH_CHARS = 20_000


class ConceptKind(Kind):
    name = "concept"
    answer_examples = "type what you remember, or just press Enter"
    section_title = "Explain"
    space_lines = 8
    self_rated = True

    def make_instance(self, question: Any, seed: int, sources: DrawSources) -> Instance:
        return Instance(
            **fixed_text_fields(question, seed),
            answer_text=question.answer,
            key_points=tuple((k.point, tuple(k.cues)) for k in question.key_points),
            wrong_claims=tuple(
                (i, wrong.claim, tuple(wrong.cues))
                for i, k in enumerate(question.key_points)
                for wrong in k.wrong
            ),
            evidence=tuple(question.evidence),
        )

    def how_to_answer(self, instance: Instance) -> str:
        return "Answer in your own words"

    def grade(self, instance: Instance, answer_text: str) -> Verdict:
        from drill.kinds.cues import coverage  # the stemmer loads with the first answer read

        text = answer_text if isinstance(answer_text, str) else ""
        found = coverage(text[:MAX_CUE_SEARCH_CHARS], instance.key_points, instance.wrong_claims)
        points = [point for point, _cues in instance.key_points]
        got = [p for p, c in zip(points, found.covered, strict=True) if c]
        missed = [p for p, c in zip(points, found.covered, strict=True) if not c]
        claims = [claim for claim in found.wrong_claims if claim]
        if claims or not got or (len(got) == 1 and len(points) > 1):
            rating = AGAIN
        elif not missed:
            rating = GOOD
        else:
            rating = HARD
        lines = []
        if got:
            lines.append("Covered: " + "; ".join(got))
        if missed:
            lines.append("Missed: " + "; ".join(missed))
        lines += [careful(claim) for claim in claims]
        return Verdict(
            correct=None, status="self", feedback="\n".join(lines), rating=rating,
            covered=found.covered, wrong_claims=found.wrong_claims,
        )  # fmt: skip

    def verdict_lines(self, instance: Instance, verdict: Verdict) -> list[str]:
        """The model answer, the key points ticked where the answer covered them (a ! where
        it contradicted them), each wrong claim named, and the explanation."""
        lines = ["Model answer:", f"  {(instance.answer_text or '').strip()}", "Key points:"]
        count = len(instance.key_points)
        covered = tuple(verdict.covered) + (False,) * count
        claims = tuple(verdict.wrong_claims) + (None,) * count
        for (point, _cues), hit, claim in zip(instance.key_points, covered, claims, strict=False):
            mark = "!" if claim else "x" if hit else " "
            lines.append(f"  [{mark}] {point}")
        lines += [careful(claim) for claim in claims[:count] if claim]
        if instance.explanation:
            lines.append(instance.explanation.strip())
        return lines

    def key_blocks(self, instance: Instance) -> list[Block]:
        points = tuple(point for point, _cues in instance.key_points)
        return [
            Block("answer", (instance.answer_text or "").strip()),
            Block("label", "Key points"),
            Block("bullets", items=points),
        ]

    def lint(self, question: Any, report: LintReport, context: LintContext) -> None:
        """A hint; evidence only naming claims an engine run can back with a measurement;
        every cue with a word to look for, and no wrong claim repeating its point's cues."""
        from drill.kinds.cues import cue_stems

        lint_hint(question, report)
        for i, name in enumerate(question.evidence):
            if name not in EVIDENCE_NAMES:
                known = ", ".join(sorted(EVIDENCE_NAMES))
                report.add(("evidence", i), f"unknown evidence '{name}' (known: {known})")
        for i, key_point in enumerate(question.key_points):
            right = {cue_stems(cue) for cue in key_point.cues}
            for j, cue in enumerate(key_point.cues):
                if not cue_stems(cue):
                    report.add(("key_points", i, "cues", j), f"cue '{cue}' has no word to find")
            for j, wrong in enumerate(key_point.wrong):
                for k, cue in enumerate(wrong.cues):
                    field = ("key_points", i, "wrong", j, "cues", k)
                    if not cue_stems(cue):
                        report.add(field, f"cue '{cue}' has no word to find")
                    elif cue_stems(cue) in right:
                        report.add(field, f"'{cue}' is also a cue of this point")


def careful(claim: str) -> str:
    """How a verdict names a wrong claim the answer made."""
    return f'Careful: "{claim.strip()}" is wrong.'
