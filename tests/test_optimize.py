"""`kvdrill optimize`: FSRS fitted to the user's own history by fsrs-rs, judged by Anki's
time-series evaluation against FSRS's defaults, and the optimal retention for their costs."""

import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import fsrs_rs_python as rs
import pytest
from click.testing import CliRunner
from fsrs import Scheduler
from fsrs.scheduler import DEFAULT_PARAMETERS
from synthetic_history import TRUE_PARAMETERS, simulate, write_history

from drill.cli import cli
from drill.errors import FitError
from drill.srs import iso, replay_rows
from drill.storage.database import open_db
from drill.study import fsrs_fit
from drill.study.fsrs_fit import (
    Costs,
    Fit,
    Score,
    fit_histories,
    fit_reviews,
    fsrs_parameters,
    optimal_retention,
    predictions,
    score_predictions,
    simulator_config,
    user_costs,
)
from drill.study.settings import read_settings

REPO = Path(__file__).resolve().parent.parent


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def history_of(reviews):
    history = {}
    for question, at, rating in reviews:
        history.setdefault(question, []).append((at, rating))
    return history


def cards(db_path):
    db = open_db(db_path, write=False)
    rows = {row["question_id"]: row for row in db.query("select * from cards")}
    db.conn.close()
    return rows


def test_a_fit_learns_from_each_review_a_day_or_more_after_the_one_before():
    week = history_of(simulate(TRUE_PARAMETERS, questions=1, days=6, new_per_day=1, seed=1))
    # learning steps on the first day, a lapse and its relearning step two days later,
    # then a review two days after that: two reviews a day or more after the one before
    assert [(iso(at)[11:16], rating) for at, rating in week["q0000"]] == [
        ("11:03", 2), ("11:08", 3), ("11:18", 2), ("11:28", 3),
        ("11:46", 1), ("11:56", 3),
        ("08:06", 3),
    ]  # fmt: skip
    assert [iso(at)[:10] for at, _ in week["q0000"]][3:] == [
        "2025-01-07", "2025-01-09", "2025-01-09", "2025-01-11",
    ]  # fmt: skip
    # each with the question's (rating, whole days since the previous review) before it
    assert fit_histories(week) == [
        [(2, 0), (3, 0), (2, 0), (3, 0), (1, 2)],
        [(2, 0), (3, 0), (2, 0), (3, 0), (1, 2), (3, 0), (3, 1)],
    ]
    assert fit_reviews(week) == 2


def test_fsrs_rs_parameters_become_values_the_fsrs_scheduler_accepts():
    # fsrs-rs's 32-bit floats read back as the decimals fsrs writes
    assert rs.DEFAULT_PARAMETERS[0] == 0.21199999749660492
    assert fsrs_parameters(rs.DEFAULT_PARAMETERS) == DEFAULT_PARAMETERS
    # 0.8 as a 32-bit float is above fsrs's bound of 0.8 for the decay (w20)
    top_decay = [*rs.DEFAULT_PARAMETERS[:20], 0.800000011920929]
    with pytest.raises(ValueError, match="out of bounds"):
        Scheduler(top_decay)
    kept = fsrs_parameters(top_decay)
    assert kept[20] == 0.8
    Scheduler(kept)
    with pytest.raises(FitError, match="the fit returned 19 parameters; FSRS-6 has 21"):
        fsrs_parameters(rs.DEFAULT_PARAMETERS[:19])


def test_the_defaults_are_scored_as_fsrs_rs_scores_the_fits():
    """The defaults' figures are sums over fsrs-rs's predictions; the same sums over the
    predictions of the five fits give fsrs-rs's own time-series evaluation."""
    reviews = simulate(TRUE_PARAMETERS, questions=45, days=300, new_per_day=2, seed=1)
    histories = fit_histories(history_of(reviews))
    sixth = len(histories) // 6
    assert (len(histories), sixth) == (717, 119)
    predicted, tested = [], []
    for part in range(1, 6):
        end = len(histories) if part == 5 else (part + 1) * sixth
        fitted = rs.FSRS(list(DEFAULT_PARAMETERS)).compute_parameters(
            [rs.FSRSItem([rs.FSRSReview(r, d) for r, d in h]) for h in histories[: part * sixth]],
            enable_short_term=True, num_relearning_steps=1,
        )  # fmt: skip
        predicted += predictions(histories[part * sixth : end], fitted)
        tested += histories[part * sixth : end]
    ours = score_predictions(tested, predicted)
    theirs = rs.evaluate_with_time_series_splits(
        [rs.FSRSItem([rs.FSRSReview(r, d) for r, d in h]) for h in histories],
        enable_short_term=True, num_relearning_steps=1,
    )  # fmt: skip
    assert ours.reviews == 598
    assert ours.log_loss == pytest.approx(theirs.log_loss, abs=1e-6)
    assert ours.rmse_bins == pytest.approx(theirs.rmse_bins, abs=1e-6)
    assert (round(ours.log_loss, 4), round(ours.rmse_bins, 4)) == (0.4982, 0.1220)


def test_optimize_fits_a_synthetic_users_memory_better_than_the_defaults(tmp_path):
    # a user who forgets faster than FSRS's defaults, scheduled by the defaults for 300 days
    reviews = simulate(TRUE_PARAMETERS, questions=45, days=300, new_per_day=2, seed=1)
    db = write_history(tmp_path / "k.db", reviews)
    before = cards(db)
    result = run("optimize", "--db", db)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith(
        "Fitted FSRS to 717 reviews a day or more after the one before (45 questions) in "
    )
    assert lines[1:5] == [
        "Time-series evaluation on the later 598, each sixth predicted by a fit to the reviews"
        " before it:",
        "                  log loss  RMSE(bins)",
        "  FSRS defaults     0.5117      0.1363",
        "  fitted            0.4982      0.1220",
    ]
    assert lines[5].startswith("Stored as fsrs-parameters")
    assert lines[8].startswith("Optimal retention: 0.70 (yours is 0.90), the least study")
    # the truth scores lower still on the same reviews
    tested = fsrs_fit.test_part(fit_histories(history_of(reviews)))
    truth = score_predictions(tested, predictions(tested, TRUE_PARAMETERS))
    assert round(truth.log_loss, 4) == 0.4819
    # stored, and every card's memory state is the fitted parameters' (due dates kept)
    settings = read_settings(open_db(db, write=False))
    fitted = settings.fsrs_parameters
    assert fitted == (
        0.021807136, 0.13301325, 0.23725547, 0.8533173, 6.4129205, 0.77819264, 3.1267362,
        0.001, 1.7593604, 0.20725912, 0.68186456, 1.4214282, 0.06859553, 0.17122658,
        1.608097, 0.5984447, 1.7675675, 0.51234317, 0.051913008, 0.056562994, 0.15807696,
    )  # fmt: skip
    replayed = replay_rows(
        settings.scheduler(fuzz=False), ((q, iso(at), rating) for q, at, rating in reviews)
    )
    after = cards(db)
    assert {q: (row["stability"], row["difficulty"]) for q, row in after.items()} == {
        q: (row["stability"], row["difficulty"]) for q, row in replayed.items()
    }
    assert {q: row["due"] for q, row in after.items()} == {
        q: row["due"] for q, row in before.items()
    }
    assert after["q0001"]["stability"] != before["q0001"]["stability"]


def test_too_few_reviews_are_refused_saying_how_many_there_are(tmp_path):
    reviews = simulate(TRUE_PARAMETERS, questions=12, days=90, new_per_day=2, seed=1)
    result = run("optimize", "--db", write_history(tmp_path / "k.db", reviews))
    assert result.exit_code == 1
    assert result.output == (
        "Error: fitting FSRS needs 64 reviews made a day or more after the question's"
        " previous review; there are 59\n"
    )


@pytest.mark.parametrize("dry_run", [[], ["--dry-run"]])
def test_no_database_is_refused_and_none_is_made(tmp_path, dry_run):
    path = tmp_path / "none.db"
    result = run("optimize", "--db", path, *dry_run)
    assert result.exit_code == 1
    assert result.output == (
        f"Error: no database at {path}; `kvdrill quiz` or `kvdrill import` creates one\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.fixture
def enough_reviews(tmp_path):
    reviews = simulate(TRUE_PARAMETERS, questions=45, days=300, new_per_day=2, seed=1)
    return write_history(tmp_path / "k.db", reviews)


def test_parameters_no_better_than_the_defaults_are_not_stored(enough_reviews, monkeypatch):
    same = Score(0.5, 0.1, 598)
    monkeypatch.setattr(fsrs_fit, "time_series_scores", lambda histories: (same, same))
    result = run("optimize", "--db", enough_reviews, "--json")
    figures = json.loads(result.output)
    assert figures["default"] == figures["fitted"] == {"log_loss": 0.5, "rmse_bins": 0.1}
    assert figures["stored"] is False
    assert figures["optimal_retention"]["simulated_with"] == "current"
    assert read_settings(open_db(enough_reviews, write=False)).fsrs_parameters is None
    assert run("optimize", "--db", enough_reviews).output.splitlines()[5] == (
        "Not stored: fits predict the later reviews no better than FSRS's defaults;"
        " fsrs-parameters is unchanged."
    )


def test_a_dry_run_stores_nothing(enough_reviews):
    result = run("optimize", "--db", enough_reviews, "--dry-run")
    assert result.output.splitlines()[5] == "Not stored (--dry-run)."
    assert read_settings(open_db(enough_reviews, write=False)).fsrs_parameters is None


def test_the_json_names_what_the_optimal_retention_assumed(enough_reviews):
    figures = json.loads(run("optimize", "--db", enough_reviews, "--json", "--dry-run").output)
    assert figures["fit"]["reviews"] == 717
    assert figures["tested"] == {"reviews": 598}
    assert figures["default"] == {"log_loss": 0.511651, "rmse_bins": 0.136308}
    assert figures["fitted"] == {"log_loss": 0.498236, "rmse_bins": 0.122006}
    retention = figures["optimal_retention"]
    deck = retention.pop("deck_size")
    assert deck > 45  # the bank's questions and the history's
    assert retention == {
        "retention": 0.7, "simulated_with": "fitted", "new_per_day": 10, "days": 365,
        "daily_minutes": 30, "own_figures": 7,
    }  # fmt: skip


def test_fits_are_kept_only_when_they_predict_better_than_the_defaults():
    better = Fit(5, 900, 700, Score(0.52, 0.14, 580), Score(0.50, 0.12, 580), (), 0.1)
    worse = Fit(5, 900, 700, Score(0.50, 0.12, 580), Score(0.50, 0.11, 580), (), 0.1)
    assert (better.better, worse.better) == (True, False)


START = datetime(2025, 3, 3, 9, tzinfo=timezone.utc)


def test_the_users_costs_come_from_their_own_answers_once_there_are_enough():
    timed = {}
    for n in range(6):
        day0 = START + timedelta(minutes=n)
        timed[f"q{n}"] = [
            (day0, 3, 12_000),  # first: learning, Good, 12 s
            (day0 + timedelta(minutes=10), 3, 8_000),  # the same day: learning, Good
            (day0 + timedelta(days=2), 1 if n < 5 else 4, 40_000),  # review: Again / Easy
            (day0 + timedelta(days=2, minutes=10), 3, 9_000 + n * 1000),  # relearning
        ]
    timed["q4"][3] = (timed["q4"][3][0], 3, 3_600_000)  # an hour: left out
    costs = user_costs(timed)
    assert costs.first_rating_prob == (0.0, 0.0, 1.0, 0.0)  # six firsts, all Good
    assert costs.review_rating_prob == (0.224, 0.631, 0.145)  # one recall: fsrs-rs's
    learning, review, relearning = costs.state_rating_costs
    # the median of six 12 s, six 8 s and q5's 14 s (the same day after an Easy)
    assert learning[2] == 12.0
    assert review[0] == 40.0 and review[3] == 8.94  # 5 Agains; 1 Easy: the default
    # after an Again: 9 to 12 s and an hour left out, four timed: fsrs-rs's default
    assert relearning[2] == 12.32
    assert learning[0] == 19.58  # no Again on a first review: fsrs-rs's default
    assert costs.own == 4 + 2  # the first answers' shares, two costs


def test_the_optimal_retention_rises_when_forgetting_costs_more():
    defaults = rs.default_simulator_config()
    usual = Costs(
        tuple(defaults.first_rating_prob), tuple(defaults.review_rating_prob),
        tuple(tuple(row) for row in defaults.state_rating_costs), 0,
    )  # fmt: skip
    dear = Costs(
        usual.first_rating_prob, usual.review_rating_prob,
        (usual.state_rating_costs[0], (120.0, *usual.state_rating_costs[1][1:]), (120.0,) * 4),
        0,
    )  # fmt: skip
    assert [
        optimal_retention(DEFAULT_PARAMETERS, simulator_config(c, deck_size=200, new_per_day=10))
        for c in (usual, dear)
    ] == [0.7, 0.9]


def test_the_quiz_with_fitted_parameters_loads_none_of_the_fitting_packages(tmp_path):
    db = tmp_path / "k.db"
    open_db(db).conn.close()
    fitted = json.dumps([*DEFAULT_PARAMETERS[:20], 0.3])
    assert run("config", "fsrs-parameters", fitted, "--db", db).exit_code == 0
    script = (
        "import sys\n"
        "from drill.cli import cli\n"
        f"cli.main(['quiz', '--db', {str(db)!r}, '--max', '1', '--seed', '3'],\n"
        "         prog_name='kvdrill', standalone_mode=False)\n"
        "import drill.storage.history_in, drill.reports.stats_html\n"  # every module that uses sqlite-utils
        "print(sorted(m for m in ('fsrs_rs_python', 'torch', 'pandas', 'tqdm')"
        " if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], input="1 GiB\n\n", capture_output=True, text=True,
        cwd=REPO, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Saved:" in done.stdout
    assert done.stdout.rstrip().endswith("[]")
