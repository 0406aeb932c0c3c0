"""Concept questions: answered in the user's own words and rated by the user.

The grader reads which key points the text covers (drill.kinds.cues: cues matched as
words in any form and in the shared phrasings, not counted under negation or
contrast; wrong claims, and a point said the other way, mark their point missed) and
suggests a rating only where its reading is sure enough:

- Good when every point is found and nothing contradicts it;
- Hard when some of the points are found and nothing is contradicted: right as far as it
  goes, as the checklist rates such ticks (rating_from_ticks); where fewer than half are
  found, only in an answer of SAID_ENOUGH_WORDS words or more;
- Again when the text, a sentence or a list, makes a wrong claim (and says nothing that
  point needs), or is empty; also where a point is found and contradicted at once, if the
  wrong claims are at least as many as the points found, the contradicted ones among
  them (the answer is more wrong than right); and where an answer of SAID_ENOUGH_WORDS
  words or more finds none of the points: it has room to say them, and none is said in
  any phrasing the deck knows (the checklist, all unticked, rates it so too);
- no suggestion, the user rates, when the reading is uncertain: a shorter answer that
  finds fewer than half the points (terse wording the cues may miss), a list of
  fragments with no sentence and no wrong claim (terms named with nothing claimed about
  them, or a terse answer in note form: words alone cannot tell them apart; the verdict
  says what a list lacks), or a point found and contradicted at once in an answer that
  finds more points than it gets wrong.

The verdict shows the model answer beside the key points as a numbered checklist
([x] covered, [!] contradicted) and names each wrong claim; the user's ticks and
rating decide (drill.study.ticks).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from drill.kinds.base import Kind, fixed_text_fields, lint_hint
from drill.kinds.cues import OPPOSITE
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
# the most key points a concept question may have: an answer that is complete in other
# words must be able to find them all
MAX_KEY_POINTS = 4


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
        text = text[:MAX_CUE_SEARCH_CHARS]
        found = coverage(text, instance.key_points, instance.wrong_claims)
        points = [point for point, _cues in instance.key_points]
        got = [p for p, c in zip(points, found.covered, strict=True) if c]
        missed = [p for p, c in zip(points, found.covered, strict=True) if not c]
        claims = [claim for claim in found.wrong_claims if claim]
        rating = suggestion(text, found.covered, claims, sum(found.conflicted))
        lines = []
        if got:
            lines.append("Covered: " + points_text(got))
        if missed:
            lines.append("Missed: " + points_text(missed))
        lines += [careful(claim) for claim in claims]
        if rating is None and fragment_parts(text):
            lines.append(LIST_NOTE)
        return Verdict(
            correct=None, status="self", feedback="\n".join(lines), rating=rating,
            covered=found.covered, wrong_claims=found.wrong_claims,
        )  # fmt: skip

    def verdict_lines(self, instance: Instance, verdict: Verdict) -> list[str]:
        """The model answer, the key points numbered and ticked where the answer covered
        them (a ! where it contradicted them), each wrong claim named, and the explanation."""
        lines = ["Model answer:", f"  {(instance.answer_text or '').strip()}", "Key points:"]
        count = len(instance.key_points)
        claims = tuple(verdict.wrong_claims) + (None,) * count
        lines += checklist_lines(instance, verdict.covered, claims)
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
        at most MAX_KEY_POINTS key points; every cue with a word to look for, and no wrong
        claim repeating its point's cues, no cue starting or ending with a word that ends a
        clause."""
        from drill.kinds.cues import cue_stems

        lint_hint(question, report)
        if len(question.key_points) > MAX_KEY_POINTS:
            report.add(
                ("key_points",),
                f"{len(question.key_points)} key points; at most {MAX_KEY_POINTS} "
                "(merge or split them)",
            )
        for i, name in enumerate(question.evidence):
            if name not in EVIDENCE_NAMES:
                known = ", ".join(sorted(EVIDENCE_NAMES))
                report.add(("evidence", i), f"unknown evidence '{name}' (known: {known})")
        for i, key_point in enumerate(question.key_points):
            right = {cue_stems(cue) for cue in key_point.cues}
            for j, cue in enumerate(key_point.cues):
                if not cue_stems(cue):
                    report.add(("key_points", i, "cues", j), f"cue '{cue}' has no word to find")
                _lint_edge_word(report, ("key_points", i, "cues", j), cue)
            for j, wrong in enumerate(key_point.wrong):
                for k, cue in enumerate(wrong.cues):
                    field = ("key_points", i, "wrong", j, "cues", k)
                    if not cue_stems(cue):
                        report.add(field, f"cue '{cue}' has no word to find")
                    elif cue_stems(cue) in right:
                        report.add(field, f"'{cue}' is also a cue of this point")
                    _lint_edge_word(report, field, cue)


def _lint_edge_word(report: LintReport, field: tuple, cue: str) -> None:
    """A cue that starts or ends with a word that ends a clause is read without that word."""
    from drill.kinds.cues import cue_stems, edge_clause_word

    word = edge_clause_word(cue)
    if word:
        report.add(
            field,
            f"cue '{cue}' starts or ends with '{word}', which ends a clause and is not "
            f"matched: it is read as '{' '.join(cue_stems(cue))}' (put '{word}' between words, "
            "or leave it out)",
        )


def checklist_lines(
    instance: Instance, ticks: Sequence[bool], claims: Sequence[str | None] = ()
) -> list[str]:
    """The key points as a numbered checklist: `[x] 2. point` where ticked, `[!]` where
    the answer contradicted the point and it is not ticked, `[ ]` otherwise."""
    count = len(instance.key_points)
    ticks = tuple(ticks) + (False,) * count
    claims = tuple(claims) + (None,) * count
    lines = []
    for number, (point, _cues) in enumerate(instance.key_points, start=1):
        tick, claim = ticks[number - 1], claims[number - 1]
        mark = "x" if tick else "!" if claim else " "
        lines.append(f"  [{mark}] {number}. {point}")
    return lines


# a part of an answer that holds one of these says something about its terms
_CLAIM_WORDS = frozenset(
    "is are was were be been being does do did has have had will would can could should "
    "must means reads stores uses needs takes saves skips shares keeps holds costs grows "
    "drops falls rises shrinks increases decreases lowers raises makes avoids reuses "
    "because so since therefore".split()
)
# signs that say something of their terms, as a claim word does: "H_kv = KV heads"
_CLAIM_SIGNS = ("=", "≈", "≠", "<", ">")
# where a list parts: commas and semicolons (full-width ones too), line breaks, bullets,
# bars, arrows, a full stop, or a slash or dash between spaces ("holes. beam search.
# paging."); not a slash inside a word or unit ("K/V", "GB/s"), a decimal point, nor a
# middle dot, which is a times sign ("2·L·H·d")
_PARTS = re.compile(r"[,;，、；\n\r\u2028•|→⇒➡⟶]+|->|=>|(?<=\S)\.(?=\s)|\s/\s|\s[-–—]\s")
# a bullet at a line's start: "- tiling", "* SRAM", "• HBM"
_BULLET = re.compile(r"(?m)^[ \t]*[-–—*•][ \t]+")
FRAGMENT_WORDS = 5  # a list's parts are at most this long
# an answer this long that finds no key point is suggested Again; a shorter one, nothing
SAID_ENOUGH_WORDS = 25


LIST_NOTE = (
    "A list of short fragments: from the words alone the grader cannot tell what you "
    "know, so rate it yourself (and say what each does, and why)."
)


def fragment_parts(text: str) -> int:
    """How many fragments `text` is a list of, 0 when it is no list: at least three parts
    (split at commas, semicolons, line breaks, bullets, bars, arrows, full stops, and
    slashes and dashes between spaces), none longer than FRAGMENT_WORDS words, none
    holding a word that claims something about them ("is", "reads", "because")."""
    unbulleted = _BULLET.sub("\n", text)
    parts = [part.split() for part in _PARTS.split(unbulleted) if part.strip(" \t.")]
    if len(parts) < 3 or any(len(words) > FRAGMENT_WORDS for words in parts):
        return 0
    words = {w.strip(".:!?()").casefold() for part in parts for w in part}
    # a sign between terms says something of them ("H_kv = KV heads"); an arrow parts
    equates = any(sign in word for word in words for sign in _CLAIM_SIGNS)
    return 0 if equates or words & _CLAIM_WORDS else len(parts)


def suggestion(
    text: str, covered: Sequence[bool], claims: Sequence[str], conflicted: int
) -> int | None:
    """The rating to suggest for a concept answer, or None when its reading is too
    uncertain (see the module's docstring). `conflicted`: how many points were found and
    contradicted at once; such a point counts as found (its wrong claim is among
    `claims`), so one wrong cue on a point said right never outweighs it."""
    got, count = sum(1 for tick in covered if tick), len(covered)
    if not text.strip():
        return AGAIN
    if fragment_parts(text):
        # a wrong claim is a claim, list or not; anything else a list says, the user rates
        return AGAIN if claims and not conflicted else None
    if conflicted and len(claims) < got + conflicted:
        return None
    if claims:
        return AGAIN
    if 2 * got < count and len(text.split()) < SAID_ENOUGH_WORDS:
        return None  # too short to tell a terse right answer from one that misses
    return rating_from_ticks(covered)


def rating_from_ticks(ticks: Sequence[bool]) -> int:
    """The rating a checklist suggests: Good when every point is ticked, Again when none is,
    Hard in between (right as far as it goes)."""
    got, count = sum(1 for tick in ticks if tick), len(ticks)
    if got == 0:
        return AGAIN
    return GOOD if got == count else HARD


def points_text(points: Sequence[str]) -> str:
    """Key points in one line, each closed by its own full stop where it has one, joined
    by semicolons ("It lowers TTFT; The prefix is skipped."), never ".;"."""
    return "; ".join(point.rstrip(".") for point in points) + (
        "." if points and points[-1].endswith(".") else ""
    )


def careful(claim: str) -> str:
    """How a verdict names a wrong claim the answer made."""
    if claim.startswith(OPPOSITE):
        return f'Careful: the answer says the opposite of "{claim[len(OPPOSITE):].strip()}".'
    return f'Careful: "{claim.strip()}" is wrong.'
