"""Where kvdrill keeps its files.

`KVDRILL_HOME` wins (tests point it at a temporary folder); otherwise the
platform's per-user application folder, the one click's `get_app_dir` names (worked
out here, so that nothing below the command line imports click).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP_NAME = "kvdrill"


def user_dir() -> Path:
    env = os.environ.get("KVDRILL_HOME")
    if env:
        return Path(env)
    return Path(app_dir())


def app_dir() -> str:
    """The per-user application folder: %APPDATA%\\kvdrill on Windows, ~/Library/Application
    Support/kvdrill on macOS, $XDG_CONFIG_HOME/kvdrill (default ~/.config/kvdrill) elsewhere."""
    if sys.platform.startswith("win"):
        folder = os.environ.get("APPDATA")
        return os.path.join(os.path.expanduser("~") if folder is None else folder, APP_NAME)
    if sys.platform == "darwin":
        return os.path.join(os.path.expanduser("~/Library/Application Support"), APP_NAME)
    config = os.environ.get("XDG_CONFIG_HOME", os.path.expanduser("~/.config"))
    return os.path.join(config, APP_NAME)


def default_db_path() -> Path:
    return user_dir() / "kvdrill.db"


def bank_paths_from_env() -> list[Path]:
    """Extra bank files or folders from `KVDRILL_BANK` (os.pathsep separated)."""
    raw = os.environ.get("KVDRILL_BANK", "")
    return [Path(p) for p in raw.split(os.pathsep) if p.strip()]
