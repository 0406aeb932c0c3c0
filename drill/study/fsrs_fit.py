"""FSRS fitted to the user: the reviews a fit learns from, how well parameters predict
them, the fit itself, and the retention that costs the user least per question known.

The fit, the evaluation and the simulator are fsrs-rs-python's, the FSRS engine Anki
itself runs (Rust, no torch). Scheduling stays on the fsrs package: the fitted
parameters are turned into values its Scheduler accepts (`fsrs_parameters`).

What a fit learns from: each review made a day or more after the question's previous
one, with the question's reviews before it (same-day steps included, as FSRS's
short-term stability reads them). Days are whole 24-hour periods since the previous
review, as the fsrs Scheduler counts them when it schedules.

How it is judged (Anki's evaluation): the reviews in time order are cut into six equal
parts; each of the last five is predicted by parameters fitted to everything before it,
and by FSRS's defaults, which need no fit. A prediction is FSRS's chance of recall just
before the review; the review was recalled unless it was rated Again. Over those
predictions

    log loss    = mean(-[y log p + (1 - y) log(1 - p)])
    RMSE(bins)  = sqrt(sum_b n_b (mean_b p - mean_b y)^2 / sum_b n_b)

with the bins b of fsrs-rs (by days since the previous review, long-term reviews so
far, and lapses). The fitted figures are fsrs-rs's own time-series evaluation; the
defaults' are the same sums over fsrs-rs's predictions of the same reviews.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise
from statistics import median

import fsrs_rs_python as rs
from fsrs.scheduler import (
    DEFAULT_PARAMETERS,
    LOWER_BOUNDS_PARAMETERS,
    UPPER_BOUNDS_PARAMETERS,
)

from drill.errors import FitError
from drill.srs import make_scheduler, parse_iso

# fsrs-rs fits all 21 parameters from 64 reviews on (below that only the first
# stabilities, below 8 none); fewer leave too little to judge a fit by
MIN_FIT_REVIEWS = 64
TIME_SERIES_PARTS = 6  # fsrs-rs: five splits, each predicting the next sixth
_SCHEDULER = make_scheduler(fuzz=False)
LEARNING_STEPS = len(_SCHEDULER.learning_steps)
RELEARNING_STEPS = len(_SCHEDULER.relearning_steps)

Reviews = list[tuple[datetime, int]]  # one question's (time, rating 1..4), in time order
History = dict[str, Reviews]  # by question id
Steps = list[tuple[int, int]]  # one question's (rating, whole days since the previous review)


def load_history(db) -> History:
    """Every non-cram review by question, in time order: what the schedule is built from."""
    history: History = {}
    rows = db.execute(
        "select question_id, reviewed_at, rating from reviews"
        " where not coalesce(cram, 0) order by reviewed_at, id"
    )
    for question_id, reviewed_at, rating in rows:
        history.setdefault(question_id, []).append((parse_iso(reviewed_at), int(rating)))
    return history


def _steps(reviews: Reviews) -> Steps:
    days = [0] + [(at - before).days for (before, _), (at, _) in pairwise(reviews)]
    return [(rating, gap) for (_, rating), gap in zip(reviews, days, strict=True)]


def fit_histories(history: Mapping[str, Reviews]) -> list[Steps]:
    """What a fit learns from: for each review a day or more after the question's previous
    one, the question's steps up to and including it; in time order (ties by question id)."""
    timed: list[tuple[datetime, str, Steps]] = []
    for question_id, reviews in history.items():
        steps = _steps(reviews)
        for n in range(1, len(reviews)):
            if steps[n][1] > 0:
                timed.append((reviews[n][0], question_id, steps[: n + 1]))
    timed.sort(key=lambda row: (row[0], row[1]))
    return [steps for _, _, steps in timed]


def fit_reviews(history: Mapping[str, Reviews]) -> int:
    """The reviews a fit learns from and is judged on (a day or more after the one before)."""
    return len(fit_histories(history))


def _items(histories: Iterable[Steps]) -> list[rs.FSRSItem]:
    return [rs.FSRSItem([rs.FSRSReview(r, d) for r, d in steps]) for steps in histories]


def _decimal(value: float) -> float:
    """A 32-bit float of fsrs-rs as the shortest decimal that reads back as it."""
    import numpy as np

    return float(str(np.float32(value)))


def fsrs_parameters(values: Sequence[float]) -> tuple[float, ...]:
    """fsrs-rs's parameters (32-bit floats) as the fsrs package's Scheduler takes them:
    each the shortest decimal that reads back as the same 32-bit float (0.8, not
    0.800000011920929, which is above the Scheduler's bound of 0.8), kept within the
    Scheduler's bounds. FitError unless there are 21, FSRS-6's count."""
    if len(values) != len(LOWER_BOUNDS_PARAMETERS):
        raise FitError(
            f"the fit returned {len(values)} parameters; FSRS-6 has {len(LOWER_BOUNDS_PARAMETERS)}"
        )
    return tuple(
        min(max(_decimal(value), low), high)
        for value, low, high in zip(
            values, LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS, strict=True
        )
    )


def fit_parameters(histories: Sequence[Steps]) -> tuple[float, ...]:
    """FSRS-6's 21 parameters fitted to `histories` by fsrs-rs, as fsrs takes them."""
    fitted = rs.FSRS(list(DEFAULT_PARAMETERS)).compute_parameters(
        _items(histories), enable_short_term=True, num_relearning_steps=RELEARNING_STEPS
    )
    return fsrs_parameters(fitted)


@dataclass(frozen=True)
class Score:
    log_loss: float
    rmse_bins: float
    reviews: int  # the reviews predicted

    def as_json(self) -> dict[str, float]:
        return {"log_loss": round(self.log_loss, 6), "rmse_bins": round(self.rmse_bins, 6)}


def _bin(steps: Steps) -> tuple[int, int, int]:
    """fsrs-rs's RMSE bin of a prediction (its `r_matrix_index`)."""
    gap = steps[-1][1]
    gap_bin = round(2.48 * 3.62 ** math.floor(math.log(gap, 3.62)) * 100)
    length = sum(1 for _, d in steps if d > 0) + 1
    length_bin = round(1.99 * 1.89 ** math.floor(math.log(length, 1.89)))
    lapses = sum(1 for r, d in steps[:-1] if r == 1 and d > 0)
    lapse_bin = round(1.65 * 1.73 ** math.floor(math.log(lapses, 1.73))) if lapses else 0
    return gap_bin, length_bin, lapse_bin


def score_predictions(histories: Sequence[Steps], predictions: Sequence[float]) -> Score:
    """Log loss and RMSE(bins) of `predictions` (one chance of recall per history's last
    review), every review weighing the same, as fsrs-rs's time-series evaluation weighs them."""
    loss = 0.0
    bins: dict[tuple[int, int, int], list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for steps, p in zip(histories, predictions, strict=True):
        y = 1.0 if steps[-1][0] > 1 else 0.0
        q = min(max(p, 1e-7), 1 - 1e-7)
        loss -= y * math.log(q) + (1 - y) * math.log(1 - q)
        row = bins[_bin(steps)]
        row[0] += p
        row[1] += y
        row[2] += 1
    squared = sum(n * (p / n - y / n) ** 2 for p, y, n in bins.values())
    return Score(loss / len(histories), math.sqrt(squared / len(histories)), len(histories))


def predictions(histories: Sequence[Steps], parameters: Sequence[float]) -> list[float]:
    """fsrs-rs's chance of recall before each history's last review under `parameters`
    (read back from its log loss on that one review)."""
    model = rs.FSRS(list(parameters))
    found = []
    for steps, item in zip(histories, _items(histories), strict=True):
        loss = model.evaluate([item]).log_loss
        found.append(math.exp(-loss) if steps[-1][0] > 1 else -math.expm1(-loss))
    return found


def test_part(histories: Sequence[Steps]) -> list[Steps]:
    """The reviews the time-series evaluation predicts: all but the first sixth."""
    return list(histories[len(histories) // TIME_SERIES_PARTS :])


def time_series_scores(histories: Sequence[Steps]) -> tuple[Score, Score]:
    """(FSRS's defaults, the parameters fitted before each part) on the later five sixths."""
    fitted = rs.evaluate_with_time_series_splits(
        _items(histories), enable_short_term=True, num_relearning_steps=RELEARNING_STEPS
    )
    tested = test_part(histories)
    default = score_predictions(tested, predictions(tested, DEFAULT_PARAMETERS))
    return default, Score(float(fitted.log_loss), float(fitted.rmse_bins), len(tested))


@dataclass(frozen=True)
class Fit:
    """A fit on the whole history, judged by Anki's time-series evaluation."""

    questions: int
    reviews: int
    fit_reviews: int  # the reviews learnt from (a day or more after the one before)
    default: Score  # FSRS's defaults on the later five sixths of those
    fitted: Score  # parameters fitted to what came before each sixth, on the same
    parameters: tuple[float, ...]  # fitted to all of them
    fit_s: float

    @property
    def better(self) -> bool:
        """Whether fitting is worth it: fits predict later reviews better than the defaults."""
        return self.fitted.log_loss < self.default.log_loss


def fit(history: Mapping[str, Reviews], clock: Callable[[], float]) -> Fit:
    """Fit FSRS to `history` and judge fitting against the defaults. FitError when there
    are too few reviews to learn from. `clock` (seconds) times the fit and the evaluation."""
    histories = fit_histories(history)
    if len(histories) < MIN_FIT_REVIEWS:
        raise FitError(
            f"fitting FSRS needs {MIN_FIT_REVIEWS} reviews made a day or more after the"
            f" question's previous review; there are {len(histories)}"
        )
    started = clock()
    parameters = fit_parameters(histories)
    default, fitted = time_series_scores(histories)
    return Fit(
        questions=len(history),
        reviews=sum(len(reviews) for reviews in history.values()),
        fit_reviews=len(histories),
        default=default,
        fitted=fitted,
        parameters=parameters,
        fit_s=clock() - started,
    )


# -- the user's costs and the retention that suits them ---------------------------------

SIMULATED_DAYS = 365
DAILY_MINUTES = 30  # Anki's simulator's default daily limit
MIN_TIMED = 5  # reviews with a time before a cost is the user's own, not fsrs-rs's default
LONGEST_COUNTED_S = 600  # a review timed longer is left out (the user stepped away)


@dataclass(frozen=True)
class Costs:
    """How a user answers, as fsrs-rs's simulator takes it."""

    first_rating_prob: tuple[float, ...]  # Again, Hard, Good, Easy on a new question
    review_rating_prob: tuple[float, ...]  # Hard, Good, Easy when a review is recalled
    # seconds per review: rows learning, review, relearning; columns Again .. Easy
    state_rating_costs: tuple[tuple[float, ...], ...]
    own: int  # how many of those figures are the user's (the rest fsrs-rs's defaults)


def load_timed_history(db) -> dict[str, list[tuple[datetime, int, int | None]]]:
    """Every non-cram review by question, in time order, with its duration (ms or None)."""
    timed: dict[str, list[tuple[datetime, int, int | None]]] = {}
    rows = db.execute(
        "select question_id, reviewed_at, rating, duration_ms from reviews"
        " where not coalesce(cram, 0) order by reviewed_at, id"
    )
    for question_id, reviewed_at, rating, duration_ms in rows:
        timed.setdefault(question_id, []).append(
            (parse_iso(reviewed_at), int(rating), None if duration_ms is None else int(duration_ms))
        )
    return timed


def user_costs(timed: Mapping[str, Sequence[tuple[datetime, int, int | None]]]) -> Costs:
    """The user's answer shares and median seconds per answer, from their reviews: a
    question's first review is learning, one a day or more after the previous review is
    a review, another on the same day after an Again is relearning (after other ratings,
    learning). A share or a cost with fewer than MIN_TIMED reviews is fsrs-rs's default."""
    defaults = rs.default_simulator_config()
    first = Counter[int]()
    recalled = Counter[int]()
    seconds: dict[tuple[int, int], list[float]] = defaultdict(list)
    for reviews in timed.values():
        previous: tuple[datetime, int] | None = None
        for at, rating, duration_ms in reviews:
            if previous is None:
                first[rating] += 1
                state = 0
            elif (at - previous[0]).days > 0:
                state = 1
                if rating > 1:
                    recalled[rating] += 1
            else:
                state = 2 if previous[1] == 1 else 0
            if duration_ms is not None and 0 < duration_ms <= LONGEST_COUNTED_S * 1000:
                seconds[(state, rating)].append(duration_ms / 1000)
            previous = (at, rating)
    own = 0

    def shares(counts: Counter[int], ratings: range, default: Sequence[float]) -> tuple[float, ...]:
        nonlocal own
        total = sum(counts[r] for r in ratings)
        if total < MIN_TIMED:
            return tuple(_decimal(p) for p in default)
        own += len(ratings)
        return tuple(counts[r] / total for r in ratings)

    first_prob = shares(first, range(1, 5), defaults.first_rating_prob)
    review_prob = shares(recalled, range(2, 5), defaults.review_rating_prob)
    rows = []
    for state, default_row in enumerate(defaults.state_rating_costs):
        row = []
        for rating, default_s in zip(range(1, 5), default_row, strict=True):
            timed_s = seconds.get((state, rating), [])
            if len(timed_s) >= MIN_TIMED:
                row.append(float(median(timed_s)))
                own += 1
            else:
                row.append(_decimal(default_s))
        rows.append(tuple(row))
    return Costs(first_prob, review_prob, tuple(rows), own)


def simulator_config(
    costs: Costs,
    *,
    deck_size: int,
    new_per_day: int,
    days: int = SIMULATED_DAYS,
    daily_minutes: float = DAILY_MINUTES,
) -> rs.SimulatorConfig:
    """fsrs-rs's simulator set up for this user: their deck, new questions a day and
    costs, kvdrill's learning and relearning steps, a day's study capped at
    `daily_minutes`; the rest fsrs-rs's defaults. The plan's forecasts can share it."""
    config = rs.default_simulator_config()
    config.deck_size = deck_size
    config.learn_span = days
    config.learn_limit = new_per_day
    config.max_cost_perday = daily_minutes * 60
    config.first_rating_prob = list(costs.first_rating_prob)
    config.review_rating_prob = list(costs.review_rating_prob)
    config.state_rating_costs = [list(row) for row in costs.state_rating_costs]
    config.learning_step_count = LEARNING_STEPS
    config.relearning_step_count = RELEARNING_STEPS
    return config


def optimal_retention(parameters: Sequence[float], config: rs.SimulatorConfig) -> float:
    """fsrs-rs's optimal retention: the desired retention (0.70 at the least) whose
    simulated study costs the fewest seconds per question remembered at the end, to 0.01."""
    return round(float(rs.optimal_retention(config, list(parameters))), 2)
