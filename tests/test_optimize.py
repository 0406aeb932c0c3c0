"""`kvdrill optimize`: FSRS fitted to the user's own history, tested on held-out questions."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from fsrs.scheduler import DEFAULT_PARAMETERS
from synthetic_history import TRUE_PARAMETERS, simulate, write_history

from drill.cli import cli
from drill.srs import iso, replay_rows
from drill.storage.database import open_db
from drill.study import fsrs_fit
from drill.study.fsrs_fit import Fit, Score, fit_reviews, is_held_out, score, split
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


def test_a_question_is_held_out_by_a_stable_hash_of_its_id():
    ids = [f"q{n:04d}" for n in range(1000)]
    held = [q for q in ids if is_held_out(q)]
    assert len(held) == 218  # about one in five
    assert held[:4] == ["q0004", "q0011", "q0021", "q0022"]  # the same on every machine


def test_the_fit_counts_the_reviews_fsrs_optimizer_learns_from():
    optimizer = pytest.importorskip("fsrs.optimizer")
    assert (fsrs_fit.MIN_FIT_REVIEWS, fsrs_fit.FIT_REVIEWS_PER_QUESTION) == (
        optimizer.mini_batch_size,
        optimizer.max_seq_len,
    )
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
    assert fit_reviews(week) == 2


def test_optimize_fits_a_synthetic_users_memory_better_than_the_defaults(tmp_path):
    pytest.importorskip("torch")
    # a user who forgets faster than FSRS's defaults, scheduled by the defaults for 300 days
    reviews = simulate(TRUE_PARAMETERS, questions=45, days=300, new_per_day=2, seed=1)
    db = write_history(tmp_path / "k.db", reviews)
    before = cards(db)
    result = run("optimize", "--db", db)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith(
        "Fitted FSRS to 35 questions (552 reviews a day or more after the one before) in "
    )
    assert lines[1:5] == [
        "Scored on 164 reviews of 10 held-out questions:",
        "                  log loss    RMSE",
        "  FSRS defaults     0.5412  0.4145",
        "  fitted            0.5162  0.4081",
    ]
    assert lines[5].startswith("Stored as fsrs-parameters")
    # the truth scores 0.5049 on the same reviews: the fit closes two thirds of the gap
    _, held_out = split(history_of(reviews))
    assert round(score(held_out, TRUE_PARAMETERS).log_loss, 4) == 0.5049
    # stored, and every card's memory state is the fitted parameters' (due dates kept)
    settings = read_settings(open_db(db, write=False))
    fitted = settings.fsrs_parameters
    assert [round(w, 4) for w in (fitted[0], fitted[3], fitted[8], fitted[20])] == [
        0.0365, 8.4899, 1.7206, 0.1,
    ]  # fmt: skip
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
        "Error: fitting FSRS needs 512 reviews made a day or more after the question's"
        " previous review; there are 53 on the questions it fits to (and 6 on those held"
        " out to test it, one in five)\n"
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


@pytest.mark.parametrize("missing", ["torch", "pandas", "tqdm"])
def test_without_the_optimize_extra_the_error_names_it(enough_reviews, monkeypatch, missing):
    monkeypatch.setitem(sys.modules, missing, None)  # `import missing` now raises ImportError
    result = run("optimize", "--db", enough_reviews)
    assert result.exit_code == 1
    assert result.output == (
        f"Error: fitting FSRS needs torch, pandas and tqdm ({missing} is not installed):"
        " pip install 'kvdrill[optimize]'\n"
    )


def test_parameters_no_better_than_the_defaults_are_not_stored(enough_reviews, monkeypatch):
    monkeypatch.setattr(fsrs_fit, "fit_parameters", lambda history, progress: DEFAULT_PARAMETERS)
    result = run("optimize", "--db", enough_reviews, "--json")
    figures = json.loads(result.output)
    assert figures["default"] == figures["fitted"]
    assert figures["stored"] is False
    assert read_settings(open_db(enough_reviews, write=False)).fsrs_parameters is None
    assert run("optimize", "--db", enough_reviews).output.splitlines()[-1] == (
        "Not stored: the fitted parameters predict the held-out reviews no better than FSRS's"
        " defaults; fsrs-parameters is unchanged."
    )


def test_a_dry_run_stores_nothing(enough_reviews, monkeypatch):
    faster = (*DEFAULT_PARAMETERS[:20], 0.3)
    monkeypatch.setattr(fsrs_fit, "fit_parameters", lambda history, progress: faster)
    result = run("optimize", "--db", enough_reviews, "--dry-run")
    assert result.output.splitlines()[-1] == "Not stored (--dry-run)."
    assert read_settings(open_db(enough_reviews, write=False)).fsrs_parameters is None


def test_fitted_parameters_are_kept_when_nothing_was_held_out_to_judge_them():
    nothing = Fit(1, 600, 1, 599, 0, None, None, DEFAULT_PARAMETERS, 1.0)
    worse = Fit(5, 600, 4, 560, 1, Score(0.4, 0.3, 9), Score(0.41, 0.3, 9), (), 1.0)
    assert (nothing.better, worse.better) == (True, False)


def test_the_quiz_with_fitted_parameters_loads_none_of_the_optimizers_packages(tmp_path):
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
        "print(sorted(m for m in ('torch', 'pandas', 'tqdm') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], input="1 GiB\n\n", capture_output=True, text=True,
        cwd=REPO, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Saved:" in done.stdout
    assert done.stdout.rstrip().endswith("[]")
