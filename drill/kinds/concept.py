"""Concept questions: answered in the user's own words and rated by the user.

The grader reads which key points the text covers (drill.kinds.cues: cues matched as
words in any form and in the shared phrasings, not counted under negation or
contrast; wrong claims, and a point said the other way, mark their point missed) and
suggests a rating only where its reading is sure enough:

- Good when every point is found and nothing contradicts it;
- Hard when at least half the points are found and nothing is contradicted, or when
  the answer is right in the main with one detail off: one wrong claim, about a point
  other than the first (the question's headline), and every other point found, at least
  two of them;
- Again when the text makes a wrong claim (and says nothing that point needs), or is
  empty; also where a point is found and contradicted at once, if the wrong claims are
  at least as many as the points found, the contradicted ones among them (the answer is
  more wrong than right); and for a bare list of TERM_LIST_PARTS terms or more (short
  parts with no word that claims, no negation or direction, no mark that relates two
  things: ":", "=", "→", "+", "×", brackets): it names the topic's words and claims
  nothing, so no point is read in it and nothing is ticked;
- no suggestion, the user rates, when the reading is uncertain: fewer than half the
  points found and nothing wrong (a right answer in other words reads so too), a
  shorter list of such fragments (a few terms, or a terse note: words alone cannot tell
  them apart; the verdict says what a list lacks), or a point found and contradicted at
  once in an answer that finds more points than it gets wrong. A list whose parts relate
  things ("prefill: compute-bound; decode: memory-bound", "K and V, not Q") is a terse
  answer and is read as any answer is.

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
        # the stemmer loads with the first answer read
        from drill.kinds.cues import Coverage, coverage

        text = answer_text if isinstance(answer_text, str) else ""
        found = coverage(text[:MAX_CUE_SEARCH_CHARS], instance.key_points, instance.wrong_claims)
        terms = term_list(text)
        if terms:  # it names terms and claims nothing: no point is read in it
            found = Coverage((False,) * len(found.covered), (None,) * len(found.covered))
        points = [point for point, _cues in instance.key_points]
        got = [p for p, c in zip(points, found.covered, strict=True) if c]
        missed = [p for p, c in zip(points, found.covered, strict=True) if not c]
        claims = [claim for claim in found.wrong_claims if claim]
        rating = suggestion(text, found.covered, found.wrong_claims, sum(found.conflicted))
        lines = []
        if got:
            lines.append("Covered: " + points_text(got))
        if missed:
            lines.append("Missed: " + points_text(missed))
        lines += [careful(claim) for claim in claims]
        if terms:
            lines.append(TERM_LIST_NOTE)
        elif fragment_parts(text):
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
_PARTS = re.compile(r"[,;\n•|/]+|\s[-–—]\s")
FRAGMENT_WORDS = 5  # a list's parts are at most this long
# a list of this many bare terms or more is read as naming words, not as a terse answer
TERM_LIST_PARTS = 6
# a list holding one of these states something, as a terse answer in note form does
# ("decode: memory-bound", "E2E = TTFT + n·TPOT", "KV heads, not query heads"), and is
# read as any answer is
_STATING_MARKS = re.compile(r"[:=→⇒≈]|->")
_DENYING_WORDS = frozenset("not no never nor without than instead rather".split())
# a list of terms holding one of these may relate or move them ("batch up, latency
# higher", "prompt + output", "[B, H, T, d]"): it is not read as a bare list of terms
_RELATING_MARKS = re.compile(r"[<>+×÷*·⋅∙←↑↓~^()\[\]{}]")
_MOVING_WORDS = frozenset(
    "more less fewer higher lower faster slower larger smaller bigger longer shorter "
    "up down cuts halves doubles".split()
)


LIST_NOTE = (
    "A list of terms claims nothing about them: the grader cannot tell what you know, "
    "so rate it yourself (and say what each does, and why)."
)
TERM_LIST_NOTE = (
    "A list of terms names the topic's words but claims nothing about them: an interviewer "
    "hears no answer in it, so no point is ticked. Say what each does, and why; tick the "
    "points you meant if you rate it yourself."
)


def _list_parts(text: str) -> list[list[str]]:
    """`text` split at commas, semicolons, line breaks, bullets, slashes and dashes
    between spaces, as lists of words (bullet dashes at a line's start dropped)."""
    text = re.sub(r"(?m)^\s*[-–—*]\s+", "\n", text)
    return [part.split() for part in _PARTS.split(text) if part.strip()]


def fragment_parts(text: str) -> int:
    """How many fragments `text` is a list of, 0 when it is no list: at least three parts
    (split at commas, semicolons, line breaks, bullets, slashes and dashes between
    spaces), none longer than FRAGMENT_WORDS words, none holding a word that claims
    something about them ("is", "reads", "because") or denies one ("not", "than"), and
    no mark that states ("decode: memory-bound", "=", "→")."""
    parts = _list_parts(text)
    if len(parts) < 3 or any(len(words) > FRAGMENT_WORDS for words in parts):
        return 0
    if _STATING_MARKS.search(text):
        return 0
    words = {w.strip(".:!?()").casefold() for part in parts for w in part}
    return 0 if words & (_CLAIM_WORDS | _DENYING_WORDS) else len(parts)


def term_list(text: str) -> bool:
    """Whether `text` is a bare list of terms: a list of fragments (fragment_parts) of at
    least TERM_LIST_PARTS parts, with no word that moves a term ("higher") and no mark
    that may relate two ("+", "×", brackets)."""
    if fragment_parts(text) < TERM_LIST_PARTS or _RELATING_MARKS.search(text):
        return False
    words = {w.strip(".!?()").casefold() for part in _list_parts(text) for w in part}
    return not words & _MOVING_WORDS


def suggestion(
    text: str,
    covered: Sequence[bool],
    wrong_claims: Sequence[str | None],
    conflicted: int,
) -> int | None:
    """The rating to suggest for a concept answer, or None when its reading is too
    uncertain (see the module's docstring). `wrong_claims`: per point, the wrong claim the
    answer makes about it, or None. `conflicted`: how many points were found and
    contradicted at once; such a point counts as found (its wrong claim is among the
    claims), so one wrong cue on a point said right never outweighs it."""
    got, count = sum(1 for tick in covered if tick), len(covered)
    claims = [claim for claim in wrong_claims if claim]
    if not text.strip() or term_list(text):
        return AGAIN
    if fragment_parts(text):
        return None
    if conflicted and len(claims) < got + conflicted:
        return None
    if claims:
        return HARD if _one_detail_off(got, count, wrong_claims) else AGAIN
    if got == count:
        return GOOD
    return HARD if 2 * got >= count else None


def _one_detail_off(got: int, count: int, wrong_claims: Sequence[str | None]) -> bool:
    """Right in the main with one detail off, as an interviewer gives Hard: one wrong
    claim, about a point other than the first (the question's headline), and every other
    point said, at least two of them."""
    wrong = [i for i, claim in enumerate(wrong_claims) if claim]
    return wrong != [0] and len(wrong) == 1 and got >= 2 and got + 1 >= count


def rating_from_ticks(ticks: Sequence[bool]) -> int:
    """The rating a checklist suggests: Good when every point is ticked, Again when none is
    (or only one of several), Hard in between."""
    got, count = sum(1 for tick in ticks if tick), len(ticks)
    if got == 0 or (got == 1 and count > 1):
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
