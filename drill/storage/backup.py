"""Copies of the kvdrill database: automatic ones and `kvdrill backup`, and the checks a
copy must pass before `kvdrill restore` (drill.storage.restore) takes it.

Backups are whole-database copies made with SQLite's online backup API (a
consistent snapshot even while another kvdrill writes), in a `backups` folder
beside the database, named after the database's full file name:
`<db name>-YYYYMMDD-HHMMSS-<reason>.db` in UTC (`kvdrill.db-20261201-090000-daily.db`),
so `work.db` and `work.sqlite` in one folder never share, prune or recommend each
other's copies. (Copies made before were named after the stem, `kvdrill-...`; they
count as the backups of `<stem>.db`.) Each is written to a temporary file and renamed
into place, so a half-written copy never looks like a backup. One is taken before
every migration and on the first write of each UTC day; the newest
KVDRILL_BACKUP_KEEP (default 10; 0 turns the automatic ones off) are kept, the copy
just taken always among them.

Every copy carries a table, COPY_TABLE, naming the database it was taken from: that
is how `kvdrill backup -o FILE` knows FILE is its own earlier copy of the same
database, the only existing file it replaces. A copy that a command has written to
since (it became a database of its own: a live kvdrill database keeps a write-ahead
log) is no longer one. A restore drops the table from the restored database.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from drill.errors import SQLITE_READ_ERRORS as READ_ERRORS
from drill.errors import StoreError, reason_of
from drill.storage.files import backups_dir, check_header, connect_read_only, file_head
from drill.storage.migrations import SCHEMA_VERSION, database_kind
from drill.storage.outfile import (
    database_at,
    database_sign,
    protected_files,
    refuse_database_files,
    temporary_beside,
)

KEEP_ENV = "KVDRILL_BACKUP_KEEP"
DEFAULT_KEEP = 10
MAX_KEEP = 10_000
COPY_TABLE = "kvdrill_copy_of"  # in a copy: (database, taken_at) of the database copied


def backup_keep() -> int:
    """How many automatic backups to keep, from KVDRILL_BACKUP_KEEP (0: none are made)."""
    raw = os.environ.get(KEEP_ENV, "").strip()
    if not raw:
        return DEFAULT_KEEP
    if not raw.isdigit() or len(raw) > 6 or int(raw) > MAX_KEEP:
        raise StoreError(f"{KEEP_ENV} must be a whole number from 0 to {MAX_KEEP}, not {raw[:20]!r}")
    return int(raw)


_WHEN_AND_WHY = r"-(\d{8}-\d{6})-([a-z]+(?:-[a-z]+)*)(?:-\d+)?\.db"


def _name_patterns(db_path: Path) -> list[re.Pattern[str]]:
    """The names of the database's backups: by its full name, and the older form by its
    stem for a database named `<stem>.db` (a stem without a dot of its own, so that
    `x.db.db` does not claim the copies of `x.db`)."""
    patterns = [re.compile(re.escape(db_path.name) + _WHEN_AND_WHY)]
    stem = Path(db_path.stem)
    if db_path.suffix == ".db" and not stem.suffix:
        patterns.append(re.compile(re.escape(db_path.stem) + _WHEN_AND_WHY))
    return patterns


@dataclass(frozen=True)
class BackupFile:
    path: Path
    taken_at: datetime
    reason: str  # daily, migration, restore, manual


def list_backups(db_path: Path) -> list[BackupFile]:
    """The database's backups in its backups folder, oldest first."""
    patterns = _name_patterns(db_path)
    found = []
    try:
        entries = list(backups_dir(db_path).iterdir())
    except OSError:
        return []
    for entry in entries:
        match = next((m for p in patterns if (m := p.fullmatch(entry.name))), None)
        if match is None or not entry.is_file():
            continue
        try:
            taken = datetime.strptime(match[1], "%Y%m%d-%H%M%S").replace(tzinfo=timezone.utc)
        except ValueError:
            continue
        found.append(BackupFile(entry, taken, match[2]))
    found.sort(key=lambda b: (b.taken_at, b.path.name))
    return found


def trusted_first(backups: list[BackupFile], now: datetime) -> list[BackupFile]:
    """The backups newest first, those dated after `now` last: a copy named under a wrong
    clock (`--now 2035`, a clock set ahead) is no newer than the others for being so."""
    return sorted(backups, key=lambda b: (b.taken_at <= now, b.taken_at, b.path.name), reverse=True)


def copy_database(source: sqlite3.Connection, target: Path, *, copy_of: Path | None) -> None:
    """Write a consistent copy of `source` to `target`, atomically (temporary file + rename).

    The copy is a single self-contained file (rollback journal, not WAL). With `copy_of`
    it is marked as a copy of that database (COPY_TABLE); without, a mark the source
    carried is dropped.
    """
    temp = temporary_beside(target)
    try:
        copy = sqlite3.connect(str(temp), isolation_level=None)
        try:
            source.backup(copy)
            copy.execute("PRAGMA journal_mode = DELETE")
            copy.execute(f"drop table if exists {COPY_TABLE}")
            if copy_of is not None:
                copy.execute(f"create table {COPY_TABLE} (database text not null, taken_at text)")
                copy.execute(
                    f"insert into {COPY_TABLE} values (?, datetime('now'))", [str(_full(copy_of))]
                )
        finally:
            copy.close()
        with temp.open("rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def _full(path: Path) -> Path:
    return Path(os.path.realpath(path))


def copy_source(path: Path) -> Path | None:
    """The database the file at `path` is an untouched copy of (COPY_TABLE, a file in
    rollback-journal mode with no log beside it); None for anything else."""
    if database_sign(path) not in ("kvdrill", "sqlite") or file_head(path)[18:20] != b"\x01\x01":
        return None  # a log or journal beside it, or in WAL mode: a live database, not a copy
    try:
        conn = connect_read_only(path)
        try:
            row = conn.execute(f"select database from {COPY_TABLE}").fetchone()
        finally:
            conn.close()
    except READ_ERRORS:
        return None
    return Path(row[0]) if row and isinstance(row[0], str) else None


def check_backup_target(target: Path, db_path: Path) -> None:
    """StoreError unless `kvdrill backup -o target` may write there: a new file in a
    folder that exists, or an untouched copy that `kvdrill backup` made earlier of this
    same database. Never the database itself, another file's companion, another
    database, another database's copy or backup, nor any other existing file."""
    refuse_database_files(target, protected_files(db_path))
    if not os.path.lexists(target):
        reason = database_at(target)  # a log beside a file not yet there
        if reason is not None:
            raise StoreError(f"refusing to write the backup to {target}: {reason}")
        folder = target.parent if str(target.parent) else Path(".")
        if not folder.is_dir():
            raise StoreError(f"cannot write the backup to {target}: there is no folder {folder}")
        return
    source = copy_source(target)
    if source is not None and source == _full(db_path):
        return  # its own earlier copy: renewed
    if source is not None:
        why = f"it is a copy of another database, {source}"
    elif not target.is_file():
        why = "it is not a regular file"
    else:
        why = database_at(target) or "it exists and is not a copy that kvdrill backup made"
    raise StoreError(
        f"refusing to write the backup to {target}: {why}. `kvdrill backup -o` writes a new "
        f"file or renews its own earlier copy of {db_path}; choose another name"
    )


def unused_backup_name(folder: Path, db_path: Path, now: datetime, reason: str) -> Path:
    stamp = now.astimezone(timezone.utc).strftime("%Y%m%d-%H%M%S")
    candidate = folder / f"{db_path.name}-{stamp}-{reason}.db"
    number = 2
    while candidate.exists():
        candidate = folder / f"{db_path.name}-{stamp}-{reason}-{number}.db"
        number += 1
    return candidate


def take_backup(source: sqlite3.Connection, db_path: Path, now: datetime, reason: str) -> Path:
    """Copy the open database into its backups folder; return the new file's path."""
    folder = backups_dir(db_path)
    folder.mkdir(parents=True, exist_ok=True)
    target = unused_backup_name(folder, db_path, now, reason)
    copy_database(source, target, copy_of=db_path)
    return target


def prune_backups(db_path: Path, keep: int, now: datetime, *, spare: Path | None = None) -> list[Path]:
    """Delete all but `keep` backups (at least one): `spare` (the copy just taken) always
    stays, then the newest of the others, those dated after `now` counted as oldest
    (see trusted_first)."""
    others = [b for b in list_backups(db_path) if spare is None or b.path != spare]
    slots = max(keep, 1) - (1 if spare is not None else 0)
    doomed = [b.path for b in trusted_first(others, now)[slots:]]
    for path in doomed:
        path.unlink(missing_ok=True)
    return doomed


def backed_up_on(db_path: Path, now: datetime) -> bool:
    day = now.astimezone(timezone.utc).date()
    return any(b.taken_at.date() == day for b in list_backups(db_path))


def backup_before(
    conn: sqlite3.Connection,
    db_path: Path,
    now: datetime,
    reason: str,
    *,
    warn: Callable[[str], None] | None,
    always: bool,
) -> Path | None:
    """The automatic backup of a checked database before a write.

    Without `always` (the daily backup) nothing happens when automatic backups are
    off or one was already taken on `now`'s UTC day. A copy that cannot be made is
    fatal before a migration and a warning otherwise.
    """
    keep = backup_keep()
    if not always and (keep == 0 or backed_up_on(db_path, now)):
        return None
    try:
        target = take_backup(conn, db_path, now, reason)
        if keep:
            prune_backups(db_path, keep, now, spare=target)
    except (OSError, sqlite3.Error) as exc:
        message = f"cannot back up {db_path} into {backups_dir(db_path)}: {reason_of(exc)}"
        if always:
            raise StoreError(message + "; nothing was changed") from None
        if warn is not None:
            warn(message)
        return None
    return target


# ------------------------------------------------------------------ checking a copy


@dataclass(frozen=True)
class Summary:
    """What a database file holds, once it has passed every check."""

    schema_version: int
    cards: int
    reviews: int
    last_review: str | None


def check_copy(path: Path) -> Summary:
    """Check that `path` is a sound kvdrill database this version can use; StoreError if not."""
    if not path.exists():
        raise StoreError(f"no file at {path}")
    if check_header(path) == 0:
        raise StoreError(f"{path} is empty, not a kvdrill backup")
    try:
        conn = connect_read_only(path)
    except READ_ERRORS as exc:
        raise StoreError(f"cannot open {path}: {exc}") from None
    try:
        kind = database_kind(conn, path)
        if kind == "blank":
            raise StoreError(f"{path} holds no kvdrill tables")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{path} was written by a newer kvdrill (schema {version}, this one knows "
                f"{SCHEMA_VERSION})"
            )
        problems = [row[0] for row in conn.execute("PRAGMA integrity_check(10)")]
        if problems != ["ok"]:
            raise StoreError(f"{path} is damaged: {problems[0]}")
        bad = _invalid_row(conn)
        if bad is not None:
            raise StoreError(f"{path} holds a row kvdrill cannot use: {bad}")
        cards = conn.execute("select count(*) from cards").fetchone()[0]
        reviews, last = conn.execute("select count(*), max(reviewed_at) from reviews").fetchone()
        return Summary(version, cards, reviews, last)
    except READ_ERRORS as exc:
        raise StoreError(f"{path} is damaged or not a kvdrill database: {exc}") from None
    finally:
        conn.close()


# A time as kvdrill writes it: ISO-8601 with a date, a time and an offset; julianday()
# is null for anything it cannot read, and the pattern refuses its words ('now').
_ISO = "glob '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]T[0-2][0-9]:*' and julianday({c}) is not null"
_ROW_CHECKS = (
    ("cards", "question_id", "typeof(question_id) != 'text' or question_id = ''"),
    ("cards", "state", "typeof(state) != 'integer' or state not between 0 and 3"),
    ("cards", "due", "not (due " + _ISO.format(c="due") + ")"),
    ("cards", "last_review",
     "last_review is not null and not (last_review " + _ISO.format(c="last_review") + ")"),
    ("cards", "reps", "typeof(reps) != 'integer' or reps < 0"),
    ("cards", "lapses", "typeof(lapses) != 'integer' or lapses < 0"),
    ("cards", "stability", "stability is not null and typeof(stability) not in ('real', 'integer')"),
    ("cards", "difficulty",
     "difficulty is not null and typeof(difficulty) not in ('real', 'integer')"),
    ("reviews", "question_id", "typeof(question_id) != 'text' or question_id = ''"),
    ("reviews", "reviewed_at", "not (reviewed_at " + _ISO.format(c="reviewed_at") + ")"),
    ("reviews", "rating", "typeof(rating) != 'integer' or rating not between 1 and 4"),
    ("reviews", "correct", "correct is not null and correct not in (0, 1)"),
    ("reviews", "cram", "cram is not null and cram not in (0, 1)"),
)  # fmt: skip


def _invalid_row(conn: sqlite3.Connection) -> str | None:
    """The first card or review whose values the quiz cannot read ("cards row of
    'q-1': due 'garbage'"), checked in SQL (a million reviews in about a second);
    None when every row reads."""
    for table, column, bad in _ROW_CHECKS:
        key = "question_id" if table == "cards" else "id"
        row = conn.execute(f"select {key}, {column} from {table} where {bad} limit 1").fetchone()
        if row is not None:
            from drill.text import printable

            shown = printable(repr(row[1])[:60])
            return f"{table} row {printable(repr(row[0])[:60])}: {column} {shown}"
    return None


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file (following links); False when either is missing."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return a.resolve() == b.resolve()


