"""Stored `kvdrill engine run` results, in the `engine_runs` table (see drill.storage.database).

Each row keeps the whole result object as JSON, exactly as `engine run --json`
printed it, plus a few columns to list runs without parsing it. No torch here:
the quiz reads these rows to quote the user's own measurements.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from drill.errors import StoreError
from drill.srs import iso


def save_engine_run(db, result: dict[str, Any], now: datetime) -> int:
    """Store one run's result (created at `now`, a UTC-aware time); returns the row id."""
    try:
        result_json = json.dumps(result, allow_nan=False)
        config_json = json.dumps(result.get("config"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"engine result cannot be stored as JSON: {exc}") from None
    row = {
        "created_at": iso(now),
        "device": result.get("device_name") or result.get("device"),
        "torch_version": result.get("torch_version"),
        "config": config_json,
        "result": result_json,
    }
    # one INSERT: atomic on its own, in autocommit as open_db() leaves the connection
    cursor = db.conn.execute(
        "INSERT INTO engine_runs (created_at, device, torch_version, config, result) "
        "VALUES (:created_at, :device, :torch_version, :config, :result)",
        row,
    )
    return int(cursor.lastrowid)


def latest_engine_run(db) -> dict[str, Any] | None:
    """The most recently created run's result object, or None when none is stored."""
    found = latest_engine_run_with_id(db)
    return None if found is None else found[1]


def latest_engine_run_with_id(db) -> tuple[int, dict[str, Any]] | None:
    """(id, result object) of the most recently created run, or None when none is stored."""
    row = db.conn.execute(
        "SELECT id, result FROM engine_runs ORDER BY created_at DESC, id DESC LIMIT 1"
    ).fetchone()
    return None if row is None else (int(row[0]), _result(*row))


def engine_run_index(db) -> list[tuple[int, str | None]]:
    """(id, device name) of every stored run, newest first; no result is parsed, so this
    stays cheap however many runs are stored."""
    rows = db.conn.execute(
        "SELECT id, device FROM engine_runs ORDER BY created_at DESC, id DESC"
    ).fetchall()
    return [(int(run_id), device) for run_id, device in rows]


def engine_run_by_id(db, run_id: int) -> dict[str, Any] | None:
    """Run `run_id`'s result object, or None when no run has that id."""
    row = db.conn.execute("SELECT id, result FROM engine_runs WHERE id = ?", (run_id,)).fetchone()
    return None if row is None else _result(*row)


def _result(run_id: int, text: str) -> dict[str, Any]:
    try:
        result = json.loads(text)
    except (TypeError, ValueError):
        raise StoreError(
            f"stored engine run {run_id} is not valid JSON; run `kvdrill engine run` again"
        ) from None
    if not isinstance(result, dict):
        raise StoreError(f"stored engine run {run_id} is not a JSON object")
    return result
