"""How the concept grader's suggestions agree with an expert's ratings.

The set is tests/data/expert_concept_answers.yaml: answers to the built-in deck's
concept questions, five per question (right in the writer's own words, terse, partial,
confidently wrong in the right vocabulary, a list of keywords), each with the rating
an expert gives it (1 Again, 2 Hard, 3 Good). It was written and labelled without the
bank's cue lists, and is never tuned against answer by answer.

Each answer is graded as the quiz grades it (drill.kinds.grade); the suggestion is
compared with the expert's rating. Printed:
- agreement: the share of the answers the grader rates (it may abstain) whose suggestion
  equals the expert's rating (Easy counts as Good);
- wrong answers (expert 1) suggested Good or Easy, as a share of the wrong answers;
- right answers (expert 3) suggested Again, as a count;
- the abstain rate: answers given no suggestion, as a share of all;
- the same per kind of answer, and the confusion table.
Targets: agreement >= 80 %, wrong suggested Good <= 2 %, right suggested Again 0,
abstain <= 25 %.

A second set, tests/data/expert_concept_answers_heldout.yaml (220 answers to 44
questions, 25 of them not in the first set), was written later by another expert from
each question's prompt, model answer and key points alone, without the cues, the grader
or the first set, after the grader's cues were last changed against the first set's
figures. It was later measured once for a keep-or-take-back decision on one rule.

A third set, tests/data/expert_concept_answers_third.yaml (220 answers to 44 questions
drawn at random), was written by a third interviewer the same way, blind to the cues, the
grader and both other sets, and first measured at the commit that added it, after the
grader's rules were last changed; the cues changed after that only against the tuning
set. It is the honest measure of how the grader does on answers nobody tuned it for.

The tuning set, tests/data/concept_dev_answers.yaml (1,224 answers to the concept
questions in four rounds, each written and rated from the questions alone before the cues
were read, then measured once before the cues were tuned against it), is what the cues are
tuned against; it is measured only with `--set dev`, never in `--set all`.

`--set heldout`, `--set third`, `--set both` (first and heldout) or `--set all` (the
three expert sets): each set's figures apart, then together.

    python benchmarks/concept_agreement.py [--set first|heldout|third|dev|both|all] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import yaml  # noqa: E402

from drill.bank.loader import load_default_bank  # noqa: E402
from drill.kinds import make_instance  # noqa: E402
from drill.kinds.grade import grade  # noqa: E402

SETS = {
    "first": REPO / "tests" / "data" / "expert_concept_answers.yaml",
    "heldout": REPO / "tests" / "data" / "expert_concept_answers_heldout.yaml",
    "third": REPO / "tests" / "data" / "expert_concept_answers_third.yaml",
    "dev": REPO / "tests" / "data" / "concept_dev_answers.yaml",
}
# the sets measured together by --set all: the expert sets, never the tuning set
MEASURED = ("first", "heldout", "third")
SET = SETS["first"]
TARGETS = {"agreement": 0.80, "wrong_suggested_good": 0.02, "right_suggested_again": 0,
           "abstain": 0.25}  # fmt: skip


def graded(path: Path = SET) -> list[dict]:
    """Every answer of the set with the grader's suggestion (None: it abstained)."""
    bank = load_default_bank(())
    answers = yaml.safe_load(path.read_text(encoding="utf-8"))["answers"]
    out = []
    for entry in answers:
        instance = make_instance(bank.get(entry["question"]), 0)
        verdict = grade(instance, entry["answer"])
        suggested = None if verdict.rating is None else min(int(verdict.rating), 3)
        out.append({**entry, "suggested": suggested})
    return out


def figures(rows: list[dict]) -> dict:
    rated = [r for r in rows if r["suggested"] is not None]
    wrong = [r for r in rows if r["rating"] == 1]
    return {
        "answers": len(rows),
        "rated": len(rated),
        "agreement": sum(r["suggested"] == r["rating"] for r in rated) / len(rated) if rated else 0,
        "wrong_suggested_good": (
            sum(r["suggested"] == 3 for r in wrong) / len(wrong) if wrong else 0
        ),
        "right_suggested_again": sum(r["rating"] == 3 and r["suggested"] == 1 for r in rows),
        "abstain": (len(rows) - len(rated)) / len(rows) if rows else 0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--set", choices=(*SETS, "both", "all"), default="first",
        help="both: first and heldout; all: the three expert sets",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    names = {"both": ("first", "heldout"), "all": MEASURED}.get(args.set, (args.set,))
    sets = {name: graded(SETS[name]) for name in names}
    if len(sets) > 1:
        sets["together"] = [row for rows in sets.values() for row in rows]
    found = {name: report(rows, args.json) for name, rows in sets.items()}
    if args.json:
        print(json.dumps(found if len(found) > 1 else found[names[0]], indent=2))
    else:
        for name, text in found.items():
            if len(found) > 1:
                print(f"== {name}")
            print(text)


def report(rows: list[dict], as_json: bool):
    """One set's figures: a dict for --json, else the printed text."""
    lines: list[str] = []
    print = lines.append  # noqa: A001 - the text is gathered, then printed by main
    overall = figures(rows)
    kinds = sorted({r["kind"] for r in rows})
    per_kind = {kind: figures([r for r in rows if r["kind"] == kind]) for kind in kinds}
    confusion = Counter((r["rating"], r["suggested"]) for r in rows)
    if as_json:
        table = {f"{e}->{s}": n for (e, s), n in sorted(confusion.items(), key=str)}
        return {"overall": overall, "per_kind": per_kind, "confusion": table}
    questions = len({r["question"] for r in rows})
    print(f"{overall['answers']} answers to {questions} questions; {overall['rated']} rated")
    marks = {
        "agreement": overall["agreement"] >= TARGETS["agreement"],
        "wrong_suggested_good": overall["wrong_suggested_good"] <= TARGETS["wrong_suggested_good"],
        "right_suggested_again": overall["right_suggested_again"] <= 0,
        "abstain": overall["abstain"] <= TARGETS["abstain"],
    }
    for name, met in marks.items():
        value = overall[name]
        shown = f"{value:.1%}" if isinstance(value, float) else str(value)
        print(f"  {name:<22} {shown:>7}  [{'meets' if met else 'MISSES'} {TARGETS[name]}]")
    print("per kind (agreement of rated, abstain):")
    for kind, f in per_kind.items():
        print(f"  {kind:<9} {f['agreement']:6.1%} of {f['rated']:3} rated, abstain {f['abstain']:6.1%}")
    print("expert rating -> suggestion (None: abstained):")
    for expert in (1, 2, 3):
        cells = "  ".join(f"{s}:{confusion[(expert, s)]:3}" for s in (1, 2, 3, None))
        print(f"  {expert} -> {cells}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
