"""Database files in known states, for the store and backup tests."""

import hashlib
import sqlite3
from pathlib import Path

from click.testing import CliRunner

from drill.cli import cli
from drill.storage.migrations import migrations

BANK_DIR = Path(__file__).parent / "banks_quiz"
NOW = "2026-11-20T09:00:00+00:00"
QUIZ = ["--bank", str(BANK_DIR), "--topic", "quiz-fixture", "--now", NOW, "--no-fuzz",
        "--seed", "1"]  # fmt: skip


def run(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


def kvdrill_db(path: Path) -> Path:
    """A kvdrill database holding one answered review (made on NOW)."""
    result = run("quiz", "--db", path, *QUIZ, input="2 MiB\n\nq\n")
    assert result.exit_code == 0, result.output
    return path


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def foreign(path: Path, statements: list[str]) -> Path:
    conn = sqlite3.connect(path)
    for sql in statements:
        conn.execute(sql)
    conn.commit()
    conn.close()
    return path


def unmarked_v1(path: Path, version: int) -> Path:
    """A database as kvdrill 0.1 left it: migrations applied, no application id."""
    from sqlite_utils import Database

    db = Database(path)
    names = [m.name for m in migrations.pending(db)]  # every migration, in order
    migrations.apply(db, stop_before=names[version] if version < len(names) else None)
    db.execute(f"pragma user_version = {version}")
    db.execute(
        "insert into reviews (id, question_id, reviewed_at, rating, cram)"
        " values ('r1', 'qf-kv-bytes', '2026-11-19T09:00:00.000000+00:00', 3, 0)"
    )
    db.conn.commit()
    db.conn.close()
    return path


def damage(path: Path, where: str) -> None:
    data = bytearray(path.read_bytes())
    page = 4096
    pages = len(data) // page
    if where == "truncated":
        path.write_bytes(bytes(data[: page * (pages - 2)]))
        return
    number = {"schema": 0, "middle": pages // 2, "last": pages - 1}[where]
    start = number * page + (100 if number == 0 else 0)  # keep the file header
    data[start : (number + 1) * page] = b"\xa5" * ((number + 1) * page - start)
    path.write_bytes(bytes(data))


def settled_db(path: Path) -> Path:
    kvdrill_db(path)
    conn = sqlite3.connect(path)
    conn.execute("pragma wal_checkpoint(truncate)")
    conn.execute("pragma journal_mode = delete")  # one file: the damage is all there is
    conn.close()
    return path
