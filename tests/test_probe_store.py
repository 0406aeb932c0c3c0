"""Probe runs are stored beside engine runs, in their own table, newest first."""

from __future__ import annotations

from datetime import datetime, timezone

from drill.storage.database import open_db
from drill.storage.engine_runs import latest_engine_run
from drill.storage.probe_runs import probe_runs, save_probe_run


def test_probe_runs_are_kept_apart_from_engine_runs_and_listed_newest_first(tmp_path):
    db = open_db(tmp_path / "k.db")
    first = {"kind": "probe", "url": "http://127.0.0.1:8000/v1", "model": "a", "points": []}
    second = {"kind": "probe", "url": "http://127.0.0.1:9000/v1", "model": "b", "points": []}
    save_probe_run(db, first, datetime(2026, 11, 2, 7, tzinfo=timezone.utc))
    save_probe_run(db, second, datetime(2026, 11, 2, 8, tzinfo=timezone.utc))
    runs = probe_runs(db)
    assert [(r["id"], r["model"]) for r in runs] == [(2, "b"), (1, "a")]
    assert latest_engine_run(db) is None  # the calculator never reads a probe as an engine run
    row = db.conn.execute("select url, model from probe_runs where id = 1").fetchone()
    assert row == ("http://127.0.0.1:8000/v1", "a")
