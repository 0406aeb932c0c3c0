"""Concept questions: answered in the user's own words and rated by the user.

The grader only reads which key points the text covers (any of a point's cues
appears in it, word-bounded, plural-tolerant, hyphen or space between words) and
suggests a rating from that: Good when every point is covered, Hard when some
are, Again when none is. The verdict shows the model answer beside the key
points as a checklist; the user's own rating decides.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from drill.document import Block
from drill.evidence import CLAIM_NAMES
from drill.instance import DrawSources, Instance
from drill.kinds.base import Kind, fixed_text_fields
from drill.verdict import AGAIN, GOOD, HARD, Verdict

if TYPE_CHECKING:
    from drill.lint import LintContext, LintReport

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
            evidence=tuple(question.evidence),
        )

    def how_to_answer(self, instance: Instance) -> str:
        return "Answer in your own words"

    def grade(self, instance: Instance, answer_text: str) -> Verdict:
        text = answer_text if isinstance(answer_text, str) else ""
        covered = cues_covered(text[:MAX_CUE_SEARCH_CHARS], instance.key_points)
        hits = sum(covered)
        if covered and hits == len(covered):
            rating = GOOD
        elif hits:
            rating = HARD
        else:
            rating = AGAIN
        points = [point for point, _cues in instance.key_points]
        got = [p for p, c in zip(points, covered, strict=True) if c]
        missed = [p for p, c in zip(points, covered, strict=True) if not c]
        lines = []
        if got:
            lines.append("Covered: " + "; ".join(got))
        if missed:
            lines.append("Missed: " + "; ".join(missed))
        return Verdict(
            correct=None, status="self", feedback="\n".join(lines), rating=rating, covered=covered
        )

    def verdict_lines(self, instance: Instance, verdict: Verdict) -> list[str]:
        """The model answer, the key points ticked where the answer covered them, and
        the explanation."""
        lines = ["Model answer:", f"  {(instance.answer_text or '').strip()}", "Key points:"]
        covered = tuple(verdict.covered) + (False,) * len(instance.key_points)
        for (point, _cues), hit in zip(instance.key_points, covered, strict=False):
            lines.append(f"  [{'x' if hit else ' '}] {point}")
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
        """Evidence may only name claims an engine run can back with a measurement."""
        for i, name in enumerate(question.evidence):
            if name not in EVIDENCE_NAMES:
                known = ", ".join(sorted(EVIDENCE_NAMES))
                report.add(("evidence", i), f"unknown evidence '{name}' (known: {known})")


def _normalise_words(text: str) -> str:
    text = re.sub(r"[-_/]", " ", text.casefold())
    return " ".join(text.split())


@functools.lru_cache(maxsize=4096)
def _cue_pattern(cue: str) -> re.Pattern[str]:
    """A cue as a regex: word-bounded, plural-tolerant, hyphen or space between words."""
    words = _normalise_words(cue).split()
    parts = []
    for word in words:
        stem = word[:-1] if len(word) > 3 and word.endswith("s") and word[-2] != "s" else word
        parts.append(re.escape(stem) + ("(?:e?s)?" if stem[-1:].isalpha() else ""))
    body = r"\s?".join(parts)
    return re.compile(rf"(?<![a-z0-9]){body}(?![a-z0-9])")


def cues_covered(text: str, key_points: Iterable[tuple[str, Iterable[str]]]) -> tuple[bool, ...]:
    """For each (point, cues): whether any cue appears in `text`."""
    normalised = _normalise_words(text or "")
    return tuple(
        any(cue.strip() and _cue_pattern(cue).search(normalised) for cue in cues)
        for _point, cues in key_points
    )
