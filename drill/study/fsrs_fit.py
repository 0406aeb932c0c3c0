"""FSRS fitted to the user: the reviews a fit learns from, the questions held out to
test it, how well a set of parameters predicts those, and the fit itself.

The fit is fsrs's own Optimizer, which needs torch, pandas and tqdm (the `optimize`
extra); they are imported only inside `fit_parameters`. About one question in five is
held out, chosen by a stable hash of its id, so a history always splits the same way:
the optimizer never sees those questions' reviews, and fsrs's default parameters and
the fitted ones are both scored on them alone.

A score replays each held-out question's reviews through fsrs's Scheduler and, before
each review made a day or more after the question's previous one, takes the
Scheduler's own retrievability as the predicted chance of recall; the review was
recalled unless it was rated Again. Same-day steps are left out, as the optimizer and
srs-benchmark leave them out: FSRS's forgetting curve counts whole days. Then

    log loss = mean(-[y log p + (1 - y) log(1 - p)])   (each log at least -100, as in
                                                        torch's BCELoss the fit minimises)
    RMSE     = sqrt(mean((y - p)^2))
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise

from fsrs import Card, Rating, ReviewLog
from fsrs.scheduler import DEFAULT_PARAMETERS

from drill.errors import FitError
from drill.srs import make_scheduler, parse_iso

HELD_OUT_ONE_IN = 5  # about a fifth of the questions test the fit
# fsrs's Optimizer returns its defaults below one mini-batch of reviews it can learn
# from, and learns from each card's first 64 reviews
MIN_FIT_REVIEWS = 512
FIT_REVIEWS_PER_QUESTION = 64
INSTALL_HINT = "pip install 'kvdrill[optimize]'"

Reviews = list[tuple[datetime, int]]  # one question's (time, rating 1..4), in time order
History = dict[str, Reviews]  # by question id


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


def is_held_out(question_id: str) -> bool:
    digest = hashlib.sha256(f"kvdrill-held-out:{question_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % HELD_OUT_ONE_IN == 0


def split(history: Mapping[str, Reviews]) -> tuple[History, History]:
    """(the questions the fit learns from, the questions held out to test it)."""
    fit: History = {}
    held_out: History = {}
    for question_id, reviews in history.items():
        (held_out if is_held_out(question_id) else fit)[question_id] = reviews
    return fit, held_out


def spaced_reviews(history: Mapping[str, Reviews], first: int = 0) -> int:
    """Reviews made a day or more after the question's previous one (among each
    question's `first` reviews; 0: all of them)."""
    count = 0
    for reviews in history.values():
        kept = reviews[:first] if first else reviews
        count += sum(1 for (before, _), (at, _) in pairwise(kept) if (at - before).days > 0)
    return count


def fit_reviews(history: Mapping[str, Reviews]) -> int:
    """The reviews fsrs's Optimizer learns from (it needs MIN_FIT_REVIEWS)."""
    return spaced_reviews(history, FIT_REVIEWS_PER_QUESTION)


@dataclass(frozen=True)
class Score:
    log_loss: float
    rmse: float
    reviews: int  # the reviews predicted

    def as_json(self) -> dict[str, float]:
        return {"log_loss": self.log_loss, "rmse": self.rmse}


def _log(p: float) -> float:
    return max(math.log(p), -100.0) if p > 0 else -100.0


def score(
    history: Mapping[str, Reviews], parameters: Sequence[float]
) -> Score | None:
    """How well `parameters` predict recall in `history` (None: nothing to predict)."""
    scheduler = make_scheduler(fuzz=False, parameters=parameters)
    loss = squared = 0.0
    count = 0
    for reviews in history.values():
        card: Card | None = None
        for at, rating in reviews:
            if card is None:
                card = Card(card_id=0, due=at)
            elif card.last_review is not None and (at - card.last_review).days > 0:
                p = scheduler.get_card_retrievability(card, at)
                recalled = rating != int(Rating.Again)
                loss -= _log(p) if recalled else _log(1 - p)
                squared += (recalled - p) ** 2
                count += 1
            card, _log_entry = scheduler.review_card(card, Rating(rating), at)
    if count == 0:
        return None
    return Score(loss / count, math.sqrt(squared / count), count)


def fit_parameters(
    history: Mapping[str, Reviews], *, progress: bool = False
) -> tuple[float, ...]:
    """FSRS's parameters fitted to `history` by fsrs's Optimizer (FitError when its
    packages are missing). Below MIN_FIT_REVIEWS it returns fsrs's defaults."""
    try:
        import pandas  # noqa: F401
        import torch  # noqa: F401
        import tqdm  # noqa: F401
    except ImportError as exc:
        raise FitError(
            f"fitting FSRS needs torch, pandas and tqdm ({exc.name} is not installed):"
            f" {INSTALL_HINT}"
        ) from None
    from fsrs.optimizer import Optimizer

    card_ids = {question_id: n for n, question_id in enumerate(sorted(history))}
    logs = [
        ReviewLog(card_ids[question_id], Rating(rating), at, None)
        for question_id, reviews in history.items()
        for at, rating in reviews
    ]
    fitted = Optimizer(logs).compute_optimal_parameters(verbose=progress)
    return tuple(float(value) for value in fitted)


@dataclass(frozen=True)
class Fit:
    """A fit on the history's questions but the held-out ones, scored on those."""

    questions: int
    reviews: int
    fit_questions: int
    fit_reviews: int  # the reviews the optimizer learnt from
    held_out_questions: int
    default: Score | None  # fsrs's defaults on the held-out reviews (None: none to score)
    fitted: Score | None
    parameters: tuple[float, ...]
    fit_s: float

    @property
    def better(self) -> bool:
        """Whether the fitted parameters are worth keeping: they predict the held-out
        reviews better than fsrs's defaults (or nothing was held out to tell)."""
        if self.default is None or self.fitted is None:
            return True
        return self.fitted.log_loss < self.default.log_loss


def fit(
    history: Mapping[str, Reviews],
    clock: Callable[[], float],
    *,
    progress: bool = False,
) -> Fit:
    """Fit FSRS to `history` but its held-out questions and score both parameter sets
    on those. FitError when there are too few reviews to learn from. `clock` (seconds)
    times the fit."""
    learn, held_out = split(history)
    learnable = fit_reviews(learn)
    if learnable < MIN_FIT_REVIEWS:
        raise FitError(
            f"fitting FSRS needs {MIN_FIT_REVIEWS} reviews made a day or more after the"
            f" question's previous review; there are {learnable} on the questions it fits"
            f" to (and {fit_reviews(held_out)} on those held out to test it, one in five)"
        )
    started = clock()
    parameters = fit_parameters(learn, progress=progress)
    fit_s = clock() - started
    return Fit(
        questions=len(history),
        reviews=sum(len(reviews) for reviews in history.values()),
        fit_questions=len(learn),
        fit_reviews=learnable,
        held_out_questions=len(held_out),
        default=score(held_out, DEFAULT_PARAMETERS),
        fitted=score(held_out, parameters),
        parameters=parameters,
        fit_s=fit_s,
    )
