"""Stored `kvdrill engine probe` runs, in the `probe_runs` table (migration m008).

Each row keeps the whole result object as JSON, exactly as `engine probe --json` printed
it, plus the URL and model to list runs without parsing it. The result never holds the
API key (the probe reads it from the environment and keeps it out of every message).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from drill.errors import StoreError
from drill.srs import iso


def save_probe_run(db, result: dict[str, Any], now: datetime) -> int:
    """Store one probe's result (created at `now`, a UTC-aware time); returns the row id."""
    try:
        result_json = json.dumps(result, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"probe result cannot be stored as JSON: {exc}") from None
    cursor = db.conn.execute(
        "INSERT INTO probe_runs (created_at, url, model, result) VALUES (?, ?, ?, ?)",
        [iso(now), str(result.get("url") or ""), result.get("model"), result_json],
    )
    return int(cursor.lastrowid)


def probe_runs(db, limit: int = 20) -> list[dict[str, Any]]:
    """The latest `limit` stored probe results, newest first (each with its row `id`)."""
    rows = db.conn.execute(
        "SELECT id, result FROM probe_runs ORDER BY created_at DESC, id DESC LIMIT ?", [limit]
    ).fetchall()
    found = []
    for run_id, text in rows:
        try:
            result = json.loads(text)
        except (TypeError, ValueError):
            raise StoreError(f"stored probe run {run_id} is not valid JSON") from None
        if not isinstance(result, dict):
            raise StoreError(f"stored probe run {run_id} is not a JSON object")
        found.append({"id": run_id, **result})
    return found
