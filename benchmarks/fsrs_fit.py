"""`kvdrill optimize` on a simulated user whose true FSRS parameters are known.

The history comes from tests/synthetic_history.py: kvdrill's default scheduler decides
when each question is asked, and recall is drawn from the retrievability of a scheduler
with the user's true parameters (a user who forgets faster than FSRS's defaults
assume). The command runs on a database holding it (--dry-run: nothing is stored), and
the figures of its time-series evaluation are shown beside those of the true parameters
on the same reviews, the floor a fit can reach. Times: the fit and its evaluation (as
the command reports them) and the whole command (also opening the database, reading the
history, loading the bank and finding the optimal retention).

    python benchmarks/fsrs_fit.py [--questions 300] [--days 500] [--new-per-day 4]
                                  [--seed 1] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from click.testing import CliRunner  # noqa: E402
from synthetic_history import TRUE_PARAMETERS, simulate, write_history  # noqa: E402

from drill.cli import cli  # noqa: E402
from drill.storage.database import open_db  # noqa: E402
from drill.study.fsrs_fit import (  # noqa: E402
    fit_histories,
    load_history,
    predictions,
    score_predictions,
    test_part,
)


def measure(questions: int, days: int, new_per_day: int, seed: int) -> dict:
    reviews = simulate(
        TRUE_PARAMETERS, questions=questions, days=days, new_per_day=new_per_day, seed=seed
    )
    with tempfile.TemporaryDirectory() as folder:
        path = write_history(Path(folder) / "fit.db", reviews)
        started = time.perf_counter()
        result = CliRunner().invoke(cli, ["optimize", "--db", str(path), "--json", "--dry-run"])
        command_s = time.perf_counter() - started
        if result.exit_code != 0:
            raise SystemExit(result.output)
        db = open_db(path, write=False)
        tested = test_part(fit_histories(load_history(db)))
        db.conn.close()
    figures = json.loads(result.output)
    truth = score_predictions(tested, predictions(tested, TRUE_PARAMETERS))
    return {
        "simulated": {"questions": questions, "days": days, "new_per_day": new_per_day,
                      "seed": seed},
        **figures,
        "true": truth.as_json(),
        "command_s": round(command_s, 3),
        "fit_reviews_per_s": round(figures["fit"]["reviews"] / figures["fit"]["seconds"], 1),
    }  # fmt: skip


def render(figures: dict) -> str:
    fit = figures["fit"]
    lines = [
        f"History: {figures['reviews']:,} reviews of {figures['questions']} questions"
        f" ({figures['simulated']['days']} simulated days, seed {figures['simulated']['seed']}).",
        f"Fit and evaluation: {fit['reviews']:,} reviews learnt from, {fit['seconds']:.2f} s"
        f" ({figures['fit_reviews_per_s']:.0f} reviews/s); the whole command"
        f" {figures['command_s']:.1f} s.",
        f"Time-series evaluation: {figures['tested']['reviews']:,} later reviews predicted.",
        f"  {'':<14}  {'log loss':>8}  {'RMSE(bins)':>10}",
    ]
    for name, key in (("FSRS defaults", "default"), ("fitted", "fitted"), ("true", "true")):
        row = figures[key]
        lines.append(f"  {name:<14}  {row['log_loss']:>8.4f}  {row['rmse_bins']:>10.4f}")
    gap = figures["default"]["log_loss"] - figures["true"]["log_loss"]
    closed = figures["default"]["log_loss"] - figures["fitted"]["log_loss"]
    lines.append(f"Fitting closes {closed / gap:.0%} of the log-loss gap from defaults to truth.")
    lines.append(f"Optimal retention: {figures['optimal_retention']['retention']:.2f}.")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--days", type=int, default=500)
    parser.add_argument("--new-per-day", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = measure(args.questions, args.days, args.new_per_day, args.seed)
    print(json.dumps(figures, indent=2) if args.json else render(figures))


if __name__ == "__main__":
    main()
