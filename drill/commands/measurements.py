"""The user's latest measurements for the commands that draw questions from them
(drill.serving.measured): read from the database when one exists, never created."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def measured_at(db_path: Path | None) -> dict[str, Any]:
    """The fields of the latest engine and probe runs stored in the database at `db_path`
    (the default database when None); {} when there is no database."""
    from drill.paths import default_db_path

    path = db_path or default_db_path()
    if not path.is_file() or path.stat().st_size == 0:
        return {}
    from drill.commands.options import open_database
    from drill.serving.measured import latest_measured

    db = open_database(path, write=False, older_schema=True)  # read as it is
    try:
        return latest_measured(db)
    finally:
        db.conn.close()
