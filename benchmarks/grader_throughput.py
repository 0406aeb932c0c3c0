"""How many answers per second the grader handles, over a realistic mix.

Run:  .venv/bin/python benchmarks/grader_throughput.py [--answers 20000] [--repeat 5]

The mix: instances drawn from the built-in bank (every kind), and for each numeric
instance the answers people actually type: the expected value in its display unit,
a bare number, the byte count with separators, an arithmetic expression, each
named wrong value, a unit slip, a far-off value and an unreadable line. Choice,
order and concept items get right, wrong and unreadable answers. Instances are
built before timing starts; only `grade()` is timed. Also reported: the answer
parser alone and the expression evaluator on a compiled bank formula.
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from drill.bank.loader import load_default_bank  # noqa: E402
from drill.kinds import make_instance
from drill.kinds.grade import grade  # noqa: E402
from drill.quantities.expr import compile_expr  # noqa: E402
from drill.quantities.units import format_quantity, parse_answer  # noqa: E402


def numeric_answers(instance) -> list[str]:
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


def other_answers(instance) -> list[str]:
    if instance.kind == "choice":
        right = " ".join(str(i + 1) for i in instance.correct_options)
        return [right, "a", "b, c", "9"]
    if instance.kind == "order":
        right = " ".join(str(i + 1) for i in instance.correct_order)
        return [right, " ".join(str(i) for i in range(1, len(instance.items) + 1)), "1 1"]
    cues = [cues[0] for _point, cues in instance.key_points]
    return [", ".join(cues), cues[0], "", "it is faster because of the cache and the GPU"]


def build_mix(answers: int, seed: int) -> list[tuple[object, str]]:
    bank = load_default_bank()
    pairs: list[tuple[object, str]] = []
    for question in bank:
        for draw in range(3):
            instance = make_instance(question, draw)
            texts = (
                numeric_answers(instance) if instance.kind == "numeric" else other_answers(instance)
            )
            pairs += [(instance, text) for text in texts]
    rng = random.Random(seed)
    return [rng.choice(pairs) for _ in range(answers)]


def per_second(run, count: int, repeat: int) -> tuple[float, float]:
    rates = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        rates.append(count / (time.perf_counter() - start))
    return max(rates), statistics.median(rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    mix = build_mix(args.answers, args.seed)
    kinds = {}
    for instance, _text in mix:
        kinds[instance.kind] = kinds.get(instance.kind, 0) + 1
    statuses: dict[str, int] = {}
    for instance, text in mix:  # warm-up, and the verdict mix for the report
        status = grade(instance, text, duration_ms=9_000).status
        statuses[status] = statuses.get(status, 0) + 1

    def grade_all() -> None:
        for instance, text in mix:
            grade(instance, text, duration_ms=9_000)

    texts = [text for instance, text in mix if instance.kind == "numeric"]

    def parse_all() -> None:
        for text in texts:
            try:
                parse_answer(text)
            except Exception:  # noqa: BLE001 - unreadable lines are part of the mix
                pass

    formula = compile_expr("2 * layers * kv_heads * head_dim * seq * dtype_bytes * requests")
    env = {"layers": 32, "kv_heads": 8, "head_dim": 128, "seq": 4096, "dtype_bytes": 2}
    envs = [{**env, "requests": r} for r in range(1, 10_001)]

    def evaluate_all() -> None:
        for e in envs:
            formula.evaluate(e)

    best, median = per_second(grade_all, len(mix), args.repeat)
    parse_best, parse_median = per_second(parse_all, len(texts), args.repeat)
    eval_best, eval_median = per_second(evaluate_all, len(envs), args.repeat)
    print(
        f"machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}"
    )
    print(f"mix: {len(mix):,} answers; kinds {dict(sorted(kinds.items()))}")
    print(f"verdicts: {dict(sorted(statuses.items()))}")
    print(f"grade():        {best:10,.0f} answers/s best, {median:10,.0f} median of {args.repeat}")
    print(f"parse_answer(): {parse_best:10,.0f} answers/s best, {parse_median:10,.0f} median")
    print(f"Expr.evaluate:  {eval_best:10,.0f} evals/s best, {eval_median:10,.0f} median")


if __name__ == "__main__":
    main()
