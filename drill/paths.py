"""Where kvdrill keeps its files.

`KVDRILL_HOME` wins (tests point it at a temporary folder); otherwise the
platform's per-user application folder from click.
"""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "kvdrill"


def user_dir() -> Path:
    env = os.environ.get("KVDRILL_HOME")
    if env:
        return Path(env)
    import click

    return Path(click.get_app_dir(APP_NAME))


def default_db_path() -> Path:
    return user_dir() / "kvdrill.db"


def bank_paths_from_env() -> list[Path]:
    """Extra bank files or folders from `KVDRILL_BANK` (os.pathsep separated)."""
    raw = os.environ.get("KVDRILL_BANK", "")
    return [Path(p) for p in raw.split(os.pathsep) if p.strip()]
