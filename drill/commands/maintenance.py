"""`kvdrill backup`, `kvdrill restore` and `kvdrill doctor`: keeping the database safe."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import click

from drill.commands.options import (
    db_option,
    now_option,
    open_database,
    output_option,
    parse_now,
)

BACKUP_HELP = """Copy the database now, into its backups folder or to -o FILE.

kvdrill also backs up by itself: before every schema upgrade and on the first
write of each UTC day, into the `backups` folder beside the database, keeping
the newest KVDRILL_BACKUP_KEEP copies (default 10; 0 turns automatic backups
off). The copy is made with SQLite's online backup API, so a quiz may run
meanwhile, and is checked before it is written.
"""

RESTORE_HELP = """Replace the database by a backup, after checking the backup.

FILE must be a sound kvdrill database (integrity check, schema this version
knows). The database as it was is first saved in the backups folder (reason
`restore`), so a restore can itself be undone.
"""

DOCTOR_HELP = """Check the database: integrity, counts, and what --repair would fix.

\b
--json prints one object:
  path, size_bytes, kind (kvdrill | unmarked | blank | foreign | damaged | missing),
  schema_version, integrity ("ok" or a list of SQLite's messages),
  counts {cards, reviews, sessions, engine_runs}, open_sessions,
  cardless_questions, wal_bytes, backups [{path, taken_at, reason}],
  good_backup (newest backup that passes the checks, or null),
  problems [text], advice [text]: what to do about them,
  repairs [text]: what --repair would do.
The exit status is 1 when there is a problem --repair cannot fix.
"""


def _warn(message: str) -> None:
    click.echo(f"Warning: {message}", err=True)


def _db_path(db_path: Path | None) -> Path:
    from drill.commands.options import database_path

    return database_path(db_path)


@click.command("backup", help=BACKUP_HELP, short_help="Copy the database now.")
@output_option("Write the copy here instead of the backups folder.")
@db_option()
@now_option
def backup_cmd(output: Path | None, db_path: Path | None, now_text: str | None) -> None:
    import sqlite3

    from drill.errors import StoreError, reason_of
    from drill.storage.backup import (
        backup_keep,
        check_backup_target,
        copy_database,
        prune_backups,
        take_backup,
    )
    from drill.storage.files import backups_dir, quick_check

    now = parse_now(now_text).astimezone(timezone.utc)
    path = _db_path(db_path)
    if output is not None:
        check_backup_target(output, path)  # before the database is even opened
    # a file of an older schema is copied as it is
    conn = open_database(path, write=False, now=now, older_schema=True).conn
    try:
        problems = quick_check(conn)
        if problems:
            raise StoreError(
                f"{path} is damaged ({problems[0]}); a copy would be too. "
                f"`kvdrill doctor --db {path}` lists the backups to restore from"
            )
        if output is None:
            try:
                target = take_backup(conn, path, now, "manual")
            except (OSError, sqlite3.Error) as exc:
                raise StoreError(
                    f"cannot write the backup into {backups_dir(path)}: {reason_of(exc)}; "
                    f"{path} was left as it was"
                ) from None
            keep = backup_keep()
            if keep:
                prune_backups(path, keep, now, spare=target)
        else:
            target = output
            check_backup_target(output, path)  # a database may have appeared meanwhile
            try:
                copy_database(conn, output, copy_of=path)
            except (OSError, sqlite3.Error) as exc:
                raise StoreError(
                    f"cannot write the backup to {output}: {reason_of(exc)}; {path} was left as it was"
                ) from None
    finally:
        conn.close()
    click.echo(f"Backed up {path} to {target}.")


@click.command("restore", help=RESTORE_HELP, short_help="Replace the database by a backup.")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@db_option()
@now_option
def restore_cmd(file: Path, db_path: Path | None, now_text: str | None) -> None:
    from drill.storage.restore import restore_database

    now = parse_now(now_text).astimezone(timezone.utc)
    path = _db_path(db_path)
    result = restore_database(path, file, now, warn=_warn)
    summary = result.summary
    click.echo(
        f"Restored {path} from {file}: {summary.reviews} reviews, {summary.cards} cards"
        + (f", last review {summary.last_review[:10]}" if summary.last_review else "")
        + "."
    )
    if result.saved_as is not None:
        click.echo(f"The database as it was is saved in {result.saved_as}.")


@click.command("doctor", help=DOCTOR_HELP, short_help="Check the database and repair it.")
@click.option("--repair", is_flag=True, help="Apply the repairs listed (after a backup).")
@click.option("--quick", is_flag=True, help="quick_check instead of the full integrity_check.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (keys above).")
@db_option()
@now_option
def doctor_cmd(
    repair: bool, quick: bool, as_json: bool, db_path: Path | None, now_text: str | None
) -> None:
    from drill.errors import StoreError
    from drill.storage.doctor import diagnose
    from drill.storage.doctor import repair as apply_repairs

    now = parse_now(now_text).astimezone(timezone.utc)
    path = _db_path(db_path)
    report = diagnose(path, now, full=not quick)
    if repair and report.repairs and not report.problems:
        for line in apply_repairs(path, now, _scheduler_without_fuzz):
            click.echo(f"Repaired: {line}.", err=True)
        report = diagnose(path, now, full=not quick)
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        click.echo(_render(report, now), nl=False)
    if report.problems:
        raise StoreError(
            f"{path}: {len(report.problems)} problem(s) that --repair cannot fix; see above"
        )


def _scheduler_without_fuzz(db):
    """The user's FSRS scheduler (their parameters and retention), due dates unfuzzed."""
    from drill.study.settings import read_settings

    return read_settings(db).scheduler(fuzz=False)


def _render(report, now: datetime) -> str:
    lines = [f"Database  {report.path}"]
    lines.append(f"Size      {report.size_bytes:,} bytes (write-ahead log {report.wal_bytes:,})")
    schema = "" if report.schema_version is None else f", schema {report.schema_version}"
    lines.append(f"Kind      {report.kind}{schema}")
    if report.kind in ("kvdrill", "unmarked", "damaged") and report.schema_version is not None:
        lines.append("Integrity " + ("ok" if not report.integrity else report.integrity[0]))
    if report.counts:
        lines.append("Holds     " + ", ".join(f"{n:,} {t}" for t, n in report.counts.items()))
    if not report.backups:
        lines.append("Backups   none yet")
    else:
        from drill.storage.backup import trusted_first

        newest = trusted_first(report.backups, now)[0]
        days = (now - newest.taken_at).days
        when = "dated after now" if newest.taken_at > now else "today" if days < 1 else (
            f"{days} days ago"
        )
        lines.append(f"Backups   {len(report.backups)}; newest {newest.path.name} ({when})")
    for problem in report.problems:
        lines.append(f"Problem   {problem}")
    for advice in report.advice:
        lines.append(f"Advice    {advice}")
    for fix in report.repairs:
        lines.append(f"Would     {fix}  (kvdrill doctor --repair)")
    if not report.problems and not report.repairs:
        lines.append("All good.")
    return "\n".join(lines) + "\n"
