"""How many answers per second the grader handles, caches cold, over a realistic mix.

Run:  .venv/bin/python benchmarks/grader_throughput.py [--answers 20000] [--repeat 5]
      [--quick] [--json]

The mix: instances drawn from the built-in bank (every kind, three draws of each
question), and for each numeric instance the answers people actually type: the
expected value in its display unit, a bare number, the byte count with separators,
an arithmetic expression, each named wrong value, a unit slip, a far-off value and an
unreadable line. Choice and order items get right, wrong and unreadable answers.
Concept items get a list of their cue words, one cue alone, an empty answer, a stock
sentence, and the answers of tests/data/expert_concept_answers.yaml written for their
question: right, terse, partial, wrong and keyword answers of two to four sentences,
as people type them (the cue words alone are short and cheap to read, so without the
sentences concept grading looked faster than it is). `--answers` answers are drawn
from those at random (seeded).

Timed: `grade()` on the numeric answers of the mix, on its concept answers, and on the
whole mix; the floor of numeric grading is reading the same answers alone
(`parse_answer`), which every numeric verdict starts with. Each timed pass runs in a
fresh process that loads the bank and draws the mix first (untimed): its caches are
cold, as a quiz's are when the first answer comes, and nothing a pass learnt helps the
next. A fresh process rather than clearing the grader's caches in one, because a list
of caches to clear goes stale without a sound when someone adds one, and because a
process also starts without the phrasings table and the stemmer, which the first
concept answer loads (a session pays that too; it is inside the concept pass). The
passes of each round run one after another in a rotating order, and each figure is the
median of the rounds. Also shown: how long the first answer to each concept question
takes in a fresh process, where every cue of the question is read for the first time.

Targets: numeric grading >= 15,000 answers/s and concept grading >= 2,000 answers/s,
both caches cold. `--json` prints {"targets": [...], "figures": {...}}.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import bench_targets  # beside this script in benchmarks/

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

EXPERT_SET = REPO / "tests" / "data" / "expert_concept_answers.yaml"
NUMERIC_TARGET = 15_000.0  # answers/s, caches cold
CONCEPT_TARGET = 2_000.0  # answers/s, caches cold
# what a child process can time, each in a process of its own
PASSES = ("numeric", "concept", "parse", "mix")


def numeric_answers(instance) -> list[str]:
    from drill.quantities.units import format_quantity

    shown = instance.show_as or instance.unit
    expected = instance.expected
    answers = [
        format_quantity(expected, shown),
        format_quantity(expected, None, digits=6),
        f"{round(expected):,}" if abs(expected) >= 1 else f"{expected}",
        f"{expected:.3e}",
        f"2*{expected / 2!r}",
        format_quantity(expected * 1.3, shown),
        format_quantity(expected * 1000, shown),
        "about half a gig",
    ]
    answers += [format_quantity(m.value, shown) for m in instance.misconceptions]
    return answers


def other_answers(instance, written: dict[str, list[str]]) -> list[str]:
    if instance.kind == "choice":
        right = " ".join(str(i + 1) for i in instance.correct_options)
        return [right, "a", "b, c", "9"]
    if instance.kind == "order":
        right = " ".join(str(i + 1) for i in instance.correct_order)
        return [right, " ".join(str(i) for i in range(1, len(instance.items) + 1)), "1 1"]
    cues = [cues[0] for _point, cues in instance.key_points]
    stock = [", ".join(cues), cues[0], "", "it is faster because of the cache and the GPU"]
    return stock + written.get(instance.question_id, [])


def expert_answers() -> dict[str, list[str]]:
    """Question id -> the answers the expert set wrote for it."""
    import yaml

    written: dict[str, list[str]] = {}
    for entry in yaml.safe_load(EXPERT_SET.read_text(encoding="utf-8"))["answers"]:
        written.setdefault(entry["question"], []).append(entry["answer"])
    return written


def build_mix(answers: int, seed: int) -> list[tuple[object, str]]:
    from drill.bank.loader import load_default_bank
    from drill.kinds import make_instance

    bank = load_default_bank()
    written = expert_answers()
    pairs: list[tuple[object, str]] = []
    for question in bank:
        for draw in range(3):
            instance = make_instance(question, draw)
            texts = (
                numeric_answers(instance)
                if instance.kind == "numeric"
                else other_answers(instance, written)
            )
            pairs += [(instance, text) for text in texts]
    rng = random.Random(seed)
    return [rng.choice(pairs) for _ in range(answers)]


def child(what: str, answers: int, seed: int) -> dict:
    """One timed pass in this (fresh) process: {"answers", "wall_s", "cpu_s"}, and for the
    full mix the verdicts' statuses; "first" times one answer to each concept question."""
    from drill.kinds.grade import grade
    from drill.quantities.units import parse_answer

    mix = build_mix(answers, seed)
    if what == "first":
        firsts: dict[str, tuple[object, str]] = {}
        for instance, text in mix:
            if instance.kind == "concept" and text.strip():
                firsts.setdefault(instance.question_id, (instance, text))
        chosen = list(firsts.values())
        # the one-time loads (phrasings, stemmer) are a session's first answer's, not
        # each question's: one answer to a question outside the timed ones takes them
        spare = next(i for i, _t in mix if i.kind == "concept")
        chosen = [pair for pair in chosen if pair[0].question_id != spare.question_id]
        grade(spare, "warming the loads, not the cues")
        work = lambda: [grade(i, t, duration_ms=9_000) for i, t in chosen]  # noqa: E731
        count = len(chosen)
    elif what == "parse":
        texts = [text for instance, text in mix if instance.kind == "numeric"]

        def work() -> None:
            for text in texts:
                try:
                    parse_answer(text)
                except Exception:  # noqa: BLE001 - unreadable lines are part of the mix
                    pass

        count = len(texts)
    else:
        chosen = mix if what == "mix" else [(i, t) for i, t in mix if i.kind == what]
        work = lambda: [grade(i, t, duration_ms=9_000) for i, t in chosen]  # noqa: E731
        count = len(chosen)
    start, cpu = time.perf_counter(), time.process_time()
    verdicts = work()
    wall_s, cpu_s = time.perf_counter() - start, time.process_time() - cpu
    out: dict = {"answers": count, "wall_s": wall_s, "cpu_s": cpu_s}
    if what == "mix":
        statuses: dict[str, int] = {}
        for verdict in verdicts or ():
            statuses[verdict.status] = statuses.get(verdict.status, 0) + 1
        out["statuses"] = dict(sorted(statuses.items()))
        kinds: dict[str, int] = {}
        for instance, _text in mix:
            kinds[instance.kind] = kinds.get(instance.kind, 0) + 1
        out["kinds"] = dict(sorted(kinds.items()))
    return out


def run_child(what: str, answers: int, seed: int) -> dict:
    command = [sys.executable, __file__, "--child", what, "--answers", str(answers),
               "--seed", str(seed)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, check=False)
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        raise SystemExit(f"the {what} pass failed: {lines[-1] if lines else done.returncode}")
    return json.loads(done.stdout)


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def measure(answers: int, repeat: int, seed: int) -> dict:
    """Each pass `repeat` times, in rounds whose order rotates; the runs of each."""
    order = [*PASSES, "first"]
    runs: dict[str, list[dict]] = {what: [] for what in order}
    for round_ in range(repeat):
        shift = round_ % len(order)
        for what in order[shift:] + order[:shift]:
            runs[what].append(run_child(what, answers, seed))
    return runs


def median_rate(runs: list[dict], clock: str = "wall_s") -> float:
    return statistics.median(run["answers"] / run[clock] for run in runs)


def targets(runs: dict[str, list[dict]]) -> list[dict]:
    numeric, parse = median_rate(runs["numeric"]), median_rate(runs["parse"])
    numeric_cpu, parse_cpu = (
        median_rate(runs["numeric"], "cpu_s"),
        median_rate(runs["parse"], "cpu_s"),
    )
    concept = median_rate(runs["concept"])
    return [
        bench_targets.target(
            "numeric grading, caches cold", round(numeric, 1), floor=round(parse, 1),
            floor_name="reading the same answers alone", unit="answers/s",
            limit=NUMERIC_TARGET, kind="min", cpu=numeric_cpu, cpu_floor=parse_cpu,
        ),
        bench_targets.target(
            "concept grading, caches cold", round(concept, 1), unit="answers/s",
            limit=CONCEPT_TARGET, kind="min",
        ),
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=None, help="answers in the mix")
    parser.add_argument("--repeat", type=int, default=None, help="rounds (medians of them)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="a small run, under a minute")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", choices=(*PASSES, "first"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    answers = args.answers or (5_000 if args.quick else 20_000)
    repeat = args.repeat or (3 if args.quick else 5)
    if args.child:
        print(json.dumps(child(args.child, answers, args.seed)))
        return

    before = load_average()
    runs = measure(answers, repeat, args.seed)
    after = load_average()
    found = targets(runs)
    mix = runs["mix"][0]
    first = runs["first"]
    first_ms = statistics.median(run["wall_s"] / run["answers"] * 1e3 for run in first)
    figures = {
        "answers": answers,
        "rounds": repeat,
        "kinds": mix["kinds"],
        "statuses": mix["statuses"],
        "numeric_answers": runs["numeric"][0]["answers"],
        "concept_answers": runs["concept"][0]["answers"],
        "mix_answers_per_s": round(median_rate(runs["mix"]), 1),
        "numeric_cpu_answers_per_s": round(median_rate(runs["numeric"], "cpu_s"), 1),
        "parse_cpu_answers_per_s": round(median_rate(runs["parse"], "cpu_s"), 1),
        "concept_cpu_answers_per_s": round(median_rate(runs["concept"], "cpu_s"), 1),
        "concept_first_answer_ms": round(first_ms, 3),
        "concept_questions_first_answered": first[0]["answers"],
        "load_average_before": before,
        "load_average_after": after,
    }
    if args.json:
        print(json.dumps({"targets": found, "figures": figures}, indent=2))
        return
    numeric, concept = found
    print(f"machine: {platform.machine()}, Python {platform.python_version()}; "
          f"load average {before} before, {after} after")  # fmt: skip
    print(f"mix: {answers:,} answers; kinds {mix['kinds']}")
    print(f"verdicts: {mix['statuses']}")
    print(f"medians of {repeat} rounds, each pass in a fresh process (caches cold):")
    print(f"  numeric grade():  {numeric['measured']:10,.0f} answers/s "
          f"(CPU {figures['numeric_cpu_answers_per_s']:,.0f}; target >= {NUMERIC_TARGET:,.0f}: "
          f"{'met' if numeric['met'] else 'NOT MET'})")  # fmt: skip
    print(f"  parse_answer():   {numeric['floor']:10,.0f} answers/s "
          f"(the floor; numeric grading runs at {numeric['ratio']:.2f}x of it)")  # fmt: skip
    print(f"  concept grade():  {concept['measured']:10,.0f} answers/s "
          f"(CPU {figures['concept_cpu_answers_per_s']:,.0f}; target >= {CONCEPT_TARGET:,.0f}: "
          f"{'met' if concept['met'] else 'NOT MET'})")  # fmt: skip
    print(f"  whole mix:        {figures['mix_answers_per_s']:10,.0f} answers/s")
    print(f"  first answer to a concept question: {first_ms:.2f} ms "
          f"(median over {first[0]['answers']} questions, every cue read afresh)")  # fmt: skip


if __name__ == "__main__":
    main()
