import os

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run, so a run here and the CI run agree;
# KVDRILL_FUZZ_RANDOM=1 draws new ones (and keeps failures in .hypothesis) to look for
# bugs the fixed draws miss. No example has a deadline: speed is measured in benchmarks/,
# and a per-example time limit fails at random on a busy machine.
settings.register_profile("fixed", derandomize=True, database=None, deadline=None)
settings.register_profile("random", derandomize=False, deadline=None)
settings.load_profile("random" if os.environ.get("KVDRILL_FUZZ_RANDOM") else "fixed")


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    """Every test gets its own kvdrill home and no user banks from the environment."""
    home = tmp_path / "kvdrill-home"
    monkeypatch.setenv("KVDRILL_HOME", str(home))
    monkeypatch.delenv("KVDRILL_BANK", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("COLUMNS", raising=False)  # text wraps only where a test sets it
    return home


@pytest.fixture(scope="session")
def builtin_deck_lint(tmp_path_factory):
    """`kvdrill bank lint --draws 500` on the built-in deck, run once for the whole suite."""
    from click.testing import CliRunner

    from drill.cli import cli

    home = tmp_path_factory.mktemp("deck-lint-home")
    env = {"KVDRILL_HOME": str(home), "KVDRILL_BANK": None, "NO_COLOR": "1"}
    return CliRunner().invoke(cli, ["bank", "lint", "--draws", "500"], env=env)
