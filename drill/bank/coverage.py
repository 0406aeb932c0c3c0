"""What a deck asks and where it repeats itself: `kvdrill bank coverage`.

- Questions per topic and kind, with totals, and the numeric share (numeric templates
  over all questions).
- The numeric templates that are variants of the KV-size formula (2 x layers x KV heads
  x head_dim x bytes x tokens, however arranged, some factors fixed or from a preset),
  decided from the formula, not the tag (drill.bank.template_formula.kv_product), against
  the target of at most a fifth of the numeric templates; the templates whose
  `kv-formula` tag says otherwise are listed.
- The catalogue's misconceptions that no question names.
- Near-duplicate numeric templates, each pair with its reason, strongest first:
  `same formula` (the same function of the same roles, drill.bank.template_formula),
  `same answers` (one template's formula gives the other's answer on at least half of
  the other's seeded draws), `special case` (one template's formula with one of its
  roles set to one in base units, 100 % or one token or one request, gives the other's
  answers on at least half of its draws). A pair is reported once, with its strongest
  reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from drill.bank.loader import Bank, display_path
from drill.bank.schema import NumericQuestion
from drill.bank.template_formula import (
    RoleDraw,
    draw_roles,
    kv_product,
    param_roles,
    same_answers,
    same_formula,
    special_case,
)

KV_TAG = "kv-formula"
KV_TARGET_SHARE = 0.2  # at most a fifth of the numeric templates
DEFAULT_DRAWS = 20
REASONS = ("same formula", "same answers", "special case")  # strongest first


@dataclass(frozen=True)
class Place:
    id: str
    file: str
    line: int

    def where(self) -> str:
        return f"{self.file}:{self.line}"

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "file": self.file, "line": self.line}


@dataclass(frozen=True)
class NearDuplicate:
    """Two numeric templates and why they are near-duplicates. For `same answers` and
    `special case`, `first`'s formula was evaluated on `second`'s draws."""

    first: Place
    second: Place
    why: str  # "same formula" | "same answers" | "special case"
    agree: int = 0  # draws of `second` where the answers agree
    draws: int = 0  # draws of `second` that could be compared
    fixed: str = ""  # special case: "hit_pct = 100", the role of `first` set

    def reason(self) -> str:
        if self.why == "same formula":
            return "same formula"
        on = f"on {self.agree} of {self.draws} draws"
        if self.why == "same answers":
            return f"same answers {on}"
        return f"special case, {self.fixed}, {on}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "first": self.first.as_dict(),
            "second": self.second.as_dict(),
            "why": self.why,
            "agree": self.agree,
            "draws": self.draws,
            "fixed": self.fixed or None,
        }


@dataclass(frozen=True)
class Coverage:
    kinds: tuple[str, ...]
    topics: dict[str, dict[str, int]]  # topic -> kind -> questions, topics sorted
    kv_templates: tuple[Place, ...]
    numeric: int
    tag_disagrees: tuple[tuple[Place, bool], ...]  # (template, tagged kv-formula)
    unnamed_misconceptions: tuple[tuple[str, str], ...]  # (id, name), catalogue order
    misconceptions: int  # in the catalogue
    near_duplicates: tuple[NearDuplicate, ...]

    @property
    def questions(self) -> int:
        return sum(self.totals.values())

    @property
    def totals(self) -> dict[str, int]:
        return {k: sum(row[k] for row in self.topics.values()) for k in self.kinds}

    @property
    def numeric_share(self) -> float:
        return self.numeric / self.questions if self.questions else 0.0

    @property
    def kv_share(self) -> float:
        return len(self.kv_templates) / self.numeric if self.numeric else 0.0


def place(bank: Bank, question: Any) -> Place:
    source = bank.source(question.id)
    return Place(question.id, display_path(source.path), source.line)


def deck_coverage(
    bank: Bank,
    questions: Iterable[Any],
    kinds: Iterable[str],
    catalogue: Mapping[str, Any],
    presets: Mapping[str, Any],
    draws: int = DEFAULT_DRAWS,
) -> Coverage:
    """The coverage of `questions` (of `bank`, which says where each is written)."""
    questions = list(questions)
    kinds = tuple(kinds)
    topics: dict[str, dict[str, int]] = {}
    for question in questions:
        row = topics.setdefault(question.topic, dict.fromkeys(kinds, 0))
        row[question.kind] = row.get(question.kind, 0) + 1
    numeric = [q for q in questions if isinstance(q, NumericQuestion)]
    is_kv = [kv_product(q) for q in numeric]
    kv = [q for q, flag in zip(numeric, is_kv, strict=True) if flag]
    disagree = tuple(
        (place(bank, q), KV_TAG in q.tags)
        for q, flag in zip(numeric, is_kv, strict=True)
        if flag != (KV_TAG in q.tags)
    )
    named = {m.id for q in questions for m in getattr(q, "misconceptions", ())}
    unnamed = tuple(
        (key, getattr(info, "name", key)) for key, info in catalogue.items() if key not in named
    )
    return Coverage(
        kinds=kinds,
        topics=dict(sorted(topics.items())),
        kv_templates=tuple(place(bank, q) for q in kv),
        numeric=len(numeric),
        tag_disagrees=disagree,
        unnamed_misconceptions=unnamed,
        misconceptions=len(catalogue),
        near_duplicates=tuple(near_duplicates(bank, numeric, presets, draws)),
    )


def near_duplicates(
    bank: Bank, templates: list[NumericQuestion], presets: Mapping[str, Any], draws: int
) -> list[NearDuplicate]:
    """Each near-duplicate pair once, with its strongest reason: same formula, then same
    answers, then special case, each in bank order."""
    drawn = {q.id: [draw_roles(q, seed, presets) for seed in range(draws)] for q in templates}
    found: list[NearDuplicate] = []
    for i, a in enumerate(templates):
        for b in templates[i + 1 :]:
            pair = _pair(bank, a, b, drawn)
            if pair is not None:
                found.append(pair)
    return sorted(found, key=lambda pair: REASONS.index(pair.why))  # stable: bank order kept


def _pair(
    bank: Bank, a: NumericQuestion, b: NumericQuestion, drawn: Mapping[str, list[RoleDraw | None]]
) -> NearDuplicate | None:
    if a.unit != b.unit:
        return None
    if same_formula(a, drawn[a.id], b, drawn[b.id]):
        return NearDuplicate(place(bank, a), place(bank, b), "same formula")
    best: NearDuplicate | None = None
    for first, second in ((a, b), (b, a)):
        agree, comparable = same_answers(first, drawn[second.id], second)
        if comparable and 2 * agree >= comparable:
            candidate = NearDuplicate(
                place(bank, first), place(bank, second), "same answers", agree, comparable
            )
            if best is None or agree / comparable > best.agree / best.draws:
                best = candidate
    if best is not None:
        return best
    for general, other in ((a, b), (b, a)):
        found = special_case(general, other, drawn[other.id])
        if found is not None:
            name, agree, comparable = found
            one = 1 / param_roles(general)[name].scale
            fixed = f"{name} = {one:g}"
            candidate = NearDuplicate(
                place(bank, general), place(bank, other), "special case", agree, comparable, fixed
            )
            if best is None or agree / comparable > best.agree / best.draws:
                best = candidate
    return best


# --------------------------------------------------------------------------- output


def _percent(share: float) -> str:
    return f"{100 * share:.0f}%"


def coverage_lines(report: Coverage) -> list[str]:
    """The report as text (see `kvdrill bank coverage --help`)."""
    lines = [f"Questions by topic and kind: {report.questions}"]
    headers = ("topic", *report.kinds, "total")
    rows = [
        (topic, *(str(row.get(k, 0)) for k in report.kinds), str(sum(row.values())))
        for topic, row in report.topics.items()
    ]
    totals = report.totals
    rows.append(("total", *(str(totals[k]) for k in report.kinds), str(report.questions)))
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    for row in [headers, *rows]:
        cells = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        lines.append("  " + "  ".join(cells))
    lines.append(
        f"Numeric share: {report.numeric} of {report.questions} questions "
        f"({_percent(report.numeric_share)})"
    )
    lines.append("")
    target = int(KV_TARGET_SHARE * report.numeric)
    lines.append(
        f"KV-size formula: {len(report.kv_templates)} of {report.numeric} numeric templates "
        f"({_percent(report.kv_share)}); target at most {_percent(KV_TARGET_SHARE)} "
        f"({target} of {report.numeric})"
    )
    lines += _places(report.kv_templates)
    if report.tag_disagrees:
        lines.append(f"  The tag {KV_TAG} says otherwise on {len(report.tag_disagrees)}:")
        width = max(len(p.id) for p, _ in report.tag_disagrees)
        for where, tagged in report.tag_disagrees:
            says = "tagged, but no KV-size product" if tagged else "a KV-size product, not tagged"
            lines.append(f"    {where.id.ljust(width)}  {where.where()}  {says}")
    lines.append("")
    lines.append(
        f"Misconceptions no question names: {len(report.unnamed_misconceptions)} "
        f"of {report.misconceptions}"
    )
    if report.unnamed_misconceptions:
        width = max(len(key) for key, _ in report.unnamed_misconceptions)
        for key, name in report.unnamed_misconceptions:
            lines.append(f"  {key.ljust(width)}  {name}")
    lines.append("")
    pairs = report.near_duplicates
    lines.append(f"Near-duplicate numeric templates: {len(pairs)} pair{'s' * (len(pairs) != 1)}")
    if pairs:
        lines += [
            "  (same answers: the first's formula gives the second's answer on its draws;",
            "   special case: the first's formula with that role at one does)",
        ]
    for pair in pairs:
        lines.append(f"  {pair.first.id} ≈ {pair.second.id}: {pair.reason()}")
        lines.append(f"    {pair.first.where()}  {pair.second.where()}")
    return lines


def _places(places: Iterable[Place]) -> list[str]:
    places = list(places)
    if not places:
        return []
    width = max(len(p.id) for p in places)
    return [f"  {p.id.ljust(width)}  {p.where()}" for p in places]


def coverage_json(report: Coverage) -> dict[str, Any]:
    """The report as a JSON object (see `kvdrill bank coverage --help`)."""
    return {
        "questions": report.questions,
        "kinds": list(report.kinds),
        "topics": [
            {"topic": topic, "counts": dict(row), "total": sum(row.values())}
            for topic, row in report.topics.items()
        ],
        "totals": report.totals,
        "numeric_share": round(report.numeric_share, 4),
        "kv_formula": {
            "templates": [p.as_dict() for p in report.kv_templates],
            "count": len(report.kv_templates),
            "numeric": report.numeric,
            "share": round(report.kv_share, 4),
            "target_share": KV_TARGET_SHARE,
            "tag_disagrees": [
                {**p.as_dict(), "tagged": tagged} for p, tagged in report.tag_disagrees
            ],
        },
        "unnamed_misconceptions": [
            {"id": key, "name": name} for key, name in report.unnamed_misconceptions
        ],
        "near_duplicates": [pair.as_dict() for pair in report.near_duplicates],
    }
