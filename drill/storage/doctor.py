"""`kvdrill doctor`: check a database file and say what is wrong and what would fix it.

`diagnose` reads only (its connection cannot write); `repair` does the safe fixes
that need no judgement: mark an unmarked kvdrill database, apply pending
migrations, close sessions a killed quiz left open, rebuild missing cards from the
history, and fold a large write-ahead log back into the file. A damaged database
is not repaired in place: the report names the newest backup that passes the same
checks, for `kvdrill restore`.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from drill.errors import SQLITE_READ_ERRORS as READ_ERRORS
from drill.errors import StoreError
from drill.storage.backup import BackupFile, check_copy, copy_source, list_backups, trusted_first
from drill.storage.files import connect_read_only

# a session with no answer for this long is not running any more
STALE_SESSION = timedelta(hours=1)
LARGE_WAL_BYTES = 64 * 1024 * 1024


@dataclass
class Diagnosis:
    path: Path
    size_bytes: int = 0
    kind: str = ""  # kvdrill | unmarked | blank | foreign | damaged | missing
    schema_version: int | None = None
    integrity: list[str] = field(default_factory=list)  # [] when the check passed
    counts: dict[str, int] = field(default_factory=dict)
    open_sessions: int = 0
    cardless_questions: int = 0  # reviewed questions that have no card row
    wal_bytes: int = 0
    backups: list[BackupFile] = field(default_factory=list)
    good_backup: Path | None = None  # the newest backup that passes check_copy
    problems: list[str] = field(default_factory=list)
    advice: list[str] = field(default_factory=list)  # what to do about the problems
    repairs: list[str] = field(default_factory=list)  # what `doctor --repair` would do

    def to_json(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "size_bytes": self.size_bytes,
            "kind": self.kind,
            "schema_version": self.schema_version,
            "integrity": "ok" if not self.integrity else self.integrity,
            "counts": self.counts,
            "open_sessions": self.open_sessions,
            "cardless_questions": self.cardless_questions,
            "wal_bytes": self.wal_bytes,
            "backups": [
                {"path": str(b.path), "taken_at": b.taken_at.isoformat(), "reason": b.reason}
                for b in self.backups
            ],
            "good_backup": None if self.good_backup is None else str(self.good_backup),
            "problems": self.problems,
            "advice": self.advice,
            "repairs": self.repairs,
        }


def diagnose(path: Path, now: datetime, *, full: bool = True) -> Diagnosis:
    """Everything `kvdrill doctor` reports about the database at `path`."""
    from drill.storage.files import check_header, file_size
    from drill.storage.migrations import SCHEMA_VERSION, database_kind

    report = Diagnosis(path)
    report.backups = list_backups(path)
    report.size_bytes = file_size(path)
    if not path.exists():
        report.kind = "missing"
        report.problems.append(f"no database at {path}")
        return report
    try:
        report.size_bytes = check_header(path)
        wal = path.with_name(path.name + "-wal")
        report.wal_bytes = wal.stat().st_size if wal.exists() else 0
    except StoreError as exc:
        report.kind = "damaged" if str(exc).startswith(f"{path} is damaged") else "foreign"
        report.problems.append(str(exc))
        _advise_restore(report, now)
        return report
    if report.size_bytes == 0:
        report.kind = "blank"
        report.problems.append(f"{path} is empty; the next `kvdrill quiz` initialises it")
        return report
    try:
        conn = connect_read_only(path)
    except READ_ERRORS as exc:  # even the schema cannot be read
        report.kind = "damaged"
        report.integrity = [str(exc)]
        report.problems.append(f"reading it failed: {exc}")
        _advise_restore(report, now)
        return report
    try:
        try:
            report.kind = database_kind(conn, path)
        except StoreError as exc:
            report.kind = "foreign"
            report.problems.append(str(exc))
            return report
        report.schema_version = conn.execute("PRAGMA user_version").fetchone()[0]
        check = "integrity_check" if full else "quick_check"
        try:
            rows = [" ".join(str(r[0]).split()) for r in conn.execute(f"PRAGMA {check}(20)")]
        except READ_ERRORS as exc:  # damage the check itself trips over
            rows = [str(exc)]
        report.integrity = [] if rows == ["ok"] else rows
        if report.integrity:
            report.kind = "damaged"
            report.problems.append(f"{check} found {len(rows)} problem(s), first: {rows[0]}")
            _advise_restore(report, now)
            return report
        if report.kind == "blank":
            report.problems.append(f"{path} holds no tables; the next `kvdrill quiz` initialises it")
            return report
        if report.kind == "unmarked":
            report.repairs.append("mark the file as a kvdrill database (PRAGMA application_id)")
        if report.schema_version > SCHEMA_VERSION:
            report.problems.append(
                f"written by a newer kvdrill (schema {report.schema_version}); upgrade kvdrill"
            )
            return report
        if report.schema_version < SCHEMA_VERSION:
            report.repairs.append(
                f"upgrade the schema from {report.schema_version} to {SCHEMA_VERSION} "
                "(after a backup)"
            )
        _count(conn, report, now)
    except READ_ERRORS as exc:
        report.kind = "damaged"
        report.integrity = report.integrity or [str(exc)]
        report.problems.append(f"reading it failed: {exc}")
        _advise_restore(report, now)
    finally:
        conn.close()
    if report.wal_bytes > LARGE_WAL_BYTES:
        report.repairs.append(f"fold the {report.wal_bytes:,}-byte write-ahead log into the file")
    return report


def _count(conn: sqlite3.Connection, report: Diagnosis, now: datetime) -> None:
    for table in ("cards", "reviews", "sessions", "engine_runs"):
        report.counts[table] = conn.execute(f"select count(*) from {table}").fetchone()[0]
    report.open_sessions = len(stale_sessions(conn, now))
    if report.open_sessions:
        report.repairs.append(f"close {report.open_sessions} session(s) a stopped quiz left open")
    report.cardless_questions = len(cardless_questions(conn))
    if report.cardless_questions:
        report.repairs.append(
            f"rebuild the card of {report.cardless_questions} reviewed question(s) "
            "that have none, by replaying their history"
        )


def stale_sessions(conn: sqlite3.Connection, now: datetime) -> list[tuple[str, str]]:
    """(id, time of its last sign of life) of each session with no end and no recent answer."""
    from drill.srs import iso

    rows = conn.execute(
        "select s.id, coalesce((select max(reviewed_at) from reviews r where r.session_id = s.id),"
        " s.started_at) as last from sessions s where s.ended_at is null"
    ).fetchall()
    cutoff = iso(now - STALE_SESSION)
    return [(sid, last) for sid, last in rows if last < cutoff]


def cardless_questions(conn: sqlite3.Connection) -> list[str]:
    """Questions with scheduled (non-cram) reviews but no card row."""
    rows = conn.execute(
        "select distinct question_id from reviews where not coalesce(cram, 0)"
        " and question_id not in (select question_id from cards) order by question_id"
    )
    return [row[0] for row in rows]


def _advise_restore(report: Diagnosis, now: datetime) -> None:
    """The restore to advise: the newest backup of this database that passes the checks,
    one dated after `now` (taken under a wrong clock) only when no other does."""
    # a damaged SQLite file still holds readable reviews; a file that is not one holds none
    salvage = report.kind == "damaged"
    saved = report.path.with_name(report.path.name + "-salvaged.jsonl")
    if salvage:
        report.advice.append(
            "first save the reviews that can still be read: "
            f"kvdrill export --salvage -o {saved} --db {report.path}"
        )
    for backup in trusted_first(report.backups, now):
        source = copy_source(backup.path)
        if source is not None and source != Path(os.path.realpath(report.path)):
            continue  # named like this database's, taken of another
        try:
            check_copy(backup.path)
        except StoreError:
            continue
        report.good_backup = backup.path
        clock = (
            f" (it is dated {backup.taken_at:%Y-%m-%d %H:%M} UTC, after now: the clock was "
            "wrong when it was taken)"
            if backup.taken_at > now
            else ""
        )
        report.advice.append(
            f"restore the newest sound backup{clock}: kvdrill restore {backup.path} "
            f"--db {report.path}"
        )
        if salvage:
            report.advice.append(
                f"then add back the reviews since that backup: kvdrill import {saved} "
                f"--db {report.path}"
            )
        return
    report.advice.append(
        f"no sound backup found; `kvdrill import {saved} --db NEW.db` puts the saved reviews "
        "into a new database (their cards rebuilt from them)"
        if salvage
        else "no sound backup found"
    )


def repair(path: Path, now: datetime, scheduler_of: Callable[[Any], Any]) -> list[str]:
    """Apply the repairs `diagnose` lists; returns what was done, in words.
    `scheduler_of(db)` is the user's FSRS scheduler (their parameters, no fuzz), for the
    cards rebuilt from their history."""
    from drill.srs import replay
    from drill.storage.database import open_db
    from drill.storage.reviews import CARD_COLUMNS, write_transaction

    before = diagnose(path, now, full=False)
    if before.kind not in ("kvdrill", "unmarked") or before.integrity:
        raise StoreError("; ".join(before.problems) or f"{path} cannot be repaired")
    done = [r for r in before.repairs if r.startswith(("mark", "upgrade"))]
    db = open_db(path, write=True, now=now)  # marks and migrates, after a backup
    conn = db.conn
    try:
        with write_transaction(db):
            stale = stale_sessions(conn, now)
            conn.executemany(
                "update sessions set ended_at = ? where id = ?", [(t, s) for s, t in stale]
            )
            missing = cardless_questions(conn)
            if missing:
                history = conn.execute(
                    "select question_id, reviewed_at, rating, cram from reviews where"
                    " question_id not in (select question_id from cards) order by reviewed_at, id"
                )
                keys = ("question_id", "reviewed_at", "rating", "cram")
                scheduler = scheduler_of(db)
                cards = replay(scheduler, (dict(zip(keys, r, strict=True)) for r in history))
                conn.executemany(
                    f"insert into cards ({', '.join(CARD_COLUMNS)})"
                    f" values ({', '.join('?' for _ in CARD_COLUMNS)})",
                    [[row[c] for c in CARD_COLUMNS] for row in cards.values()],
                )
        if stale:
            done.append(f"closed {len(stale)} session(s) left open")
        if missing:
            done.append(f"rebuilt the card of {len(missing)} question(s) from their history")
        if before.wal_bytes > LARGE_WAL_BYTES:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            done.append("folded the write-ahead log into the file")
    finally:
        conn.close()
    return done
