import pytest


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    """Every test gets its own kvdrill home and no user banks from the environment."""
    home = tmp_path / "kvdrill-home"
    monkeypatch.setenv("KVDRILL_HOME", str(home))
    monkeypatch.delenv("KVDRILL_BANK", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    return home
