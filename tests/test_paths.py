"""Where kvdrill keeps its files when KVDRILL_HOME is not set: the folder click names."""

import sys

import click
import pytest

from drill import paths


@pytest.mark.parametrize("xdg", [None, "/srv/config"])
def test_the_user_folder_is_the_one_click_would_name(monkeypatch, xdg):
    monkeypatch.delenv("KVDRILL_HOME", raising=False)
    monkeypatch.setenv("HOME", "/home/ada")
    if xdg is None:
        monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_CONFIG_HOME", xdg)
    assert str(paths.user_dir()) == click.get_app_dir("kvdrill")
    expected = "/home/ada/.config/kvdrill" if xdg is None else "/srv/config/kvdrill"
    if sys.platform.startswith("linux"):
        assert str(paths.user_dir()) == expected
        assert str(paths.default_db_path()) == expected + "/kvdrill.db"


def test_the_user_folder_on_macos_and_windows(monkeypatch):
    monkeypatch.delenv("KVDRILL_HOME", raising=False)
    monkeypatch.setenv("HOME", "/Users/ada")
    monkeypatch.setattr(paths.sys, "platform", "darwin")
    assert paths.app_dir() == "/Users/ada/Library/Application Support/kvdrill"
    monkeypatch.setattr(paths.sys, "platform", "win32")
    monkeypatch.setenv("APPDATA", "/appdata")
    assert paths.app_dir().replace("\\", "/") == "/appdata/kvdrill"


def test_kvdrill_home_wins(monkeypatch, tmp_path):
    monkeypatch.setenv("KVDRILL_HOME", str(tmp_path))
    assert paths.user_dir() == tmp_path
