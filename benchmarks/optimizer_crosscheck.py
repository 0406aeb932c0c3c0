"""The same history fitted two ways: the fsrs package's own optimizer (torch, what
`kvdrill optimize` used before) and fsrs-rs (what it uses now, the engine Anki runs).

The history is a simulated user whose true FSRS parameters are known
(tests/synthetic_history.py, seeded). Both parameter sets are scored on every review of
that history made a day or more after the question's previous one, by fsrs-rs's
prediction of recall with each (log loss, every review weighing the same), and the
fsrs package's Scheduler's own prediction gives a second reading. The fits agree when
their log losses differ by less than 0.01.

Needs torch, pandas and tqdm for the fsrs package's optimizer (not kvdrill's
dependencies): pip install torch pandas tqdm

    python benchmarks/optimizer_crosscheck.py [--questions 150] [--days 400]
                                              [--new-per-day 3] [--seed 7]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from fsrs import Card, Rating, ReviewLog  # noqa: E402
from synthetic_history import TRUE_PARAMETERS, simulate  # noqa: E402

from drill.srs import make_scheduler  # noqa: E402
from drill.study.fsrs_fit import (  # noqa: E402
    fit_histories,
    fit_parameters,
    fsrs_parameters,
    predictions,
    score_predictions,
)

AGREE = 0.01


def torch_fit(history: dict) -> tuple[float, ...]:
    """The fsrs package's optimizer on the whole history, as kvdrill called it before."""
    try:
        import pandas  # noqa: F401
        import torch  # noqa: F401
        import tqdm  # noqa: F401
    except ImportError as exc:
        raise SystemExit(
            f"the fsrs package's optimizer needs torch, pandas and tqdm ({exc.name} is not"
            " installed): pip install torch pandas tqdm"
        ) from None
    from fsrs.optimizer import Optimizer

    card_ids = {question_id: n for n, question_id in enumerate(sorted(history))}
    logs = [
        ReviewLog(card_ids[question_id], Rating(rating), at, None)
        for question_id, reviews in history.items()
        for at, rating in reviews
    ]
    return fsrs_parameters(Optimizer(logs).compute_optimal_parameters(verbose=False))


def scheduler_log_loss(history: dict, parameters) -> float:
    """Log loss of the fsrs Scheduler's retrievability before each review a day or more
    after the question's previous one."""
    scheduler = make_scheduler(fuzz=False, parameters=parameters)
    loss, count = 0.0, 0
    for reviews in history.values():
        card = None
        for at, rating in reviews:
            if card is None:
                card = Card(card_id=0, due=at)
            elif (at - card.last_review).days > 0:
                p = min(max(scheduler.get_card_retrievability(card, at), 1e-7), 1 - 1e-7)
                loss -= math.log(p) if rating > 1 else math.log(1 - p)
                count += 1
            card, _ = scheduler.review_card(card, Rating(rating), at)
    return loss / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=150)
    parser.add_argument("--days", type=int, default=400)
    parser.add_argument("--new-per-day", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    reviews = simulate(
        TRUE_PARAMETERS,
        questions=args.questions,
        days=args.days,
        new_per_day=args.new_per_day,
        seed=args.seed,
    )
    history: dict = {}
    for question_id, at, rating in reviews:
        history.setdefault(question_id, []).append((at, rating))
    histories = fit_histories(history)
    started = time.perf_counter()
    with_torch = torch_fit(history)
    torch_s = time.perf_counter() - started
    started = time.perf_counter()
    with_rs = fit_parameters(histories)
    rs_s = time.perf_counter() - started
    print(
        f"History: {len(reviews):,} reviews of {args.questions} questions"
        f" ({args.days} simulated days, seed {args.seed});"
        f" {len(histories):,} a day or more after the one before, scored."
    )
    print(f"  {'':<24}  {'fsrs-rs':>8}  {'fsrs':>8}  {'fit':>7}")
    rows = {}
    for name, parameters, seconds in (
        ("fsrs optimizer (torch)", with_torch, torch_s),
        ("fsrs-rs", with_rs, rs_s),
        ("true parameters", TRUE_PARAMETERS, None),
    ):
        by_rs = score_predictions(histories, predictions(histories, parameters)).log_loss
        by_fsrs = scheduler_log_loss(history, parameters)
        rows[name] = (by_rs, by_fsrs)
        fit_s = f"{seconds:6.2f}s" if seconds is not None else ""
        print(f"  {name:<24}  {by_rs:>8.4f}  {by_fsrs:>8.4f}  {fit_s:>7}")
    difference = abs(rows["fsrs optimizer (torch)"][0] - rows["fsrs-rs"][0])
    difference_fsrs = abs(rows["fsrs optimizer (torch)"][1] - rows["fsrs-rs"][1])
    verdict = "agree" if max(difference, difference_fsrs) < AGREE else "DISAGREE"
    print(
        f"Log loss difference: {difference:.4f} (fsrs-rs's prediction),"
        f" {difference_fsrs:.4f} (fsrs's): the fits {verdict} (< {AGREE})."
    )
    print("fsrs optimizer:", ", ".join(f"{w:.4f}" for w in with_torch))
    print("fsrs-rs:       ", ", ".join(f"{w:.4f}" for w in with_rs))
    if verdict != "agree":
        raise SystemExit(1)


if __name__ == "__main__":
    main()
