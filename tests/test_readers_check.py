"""No reader returns damaged data as fact: every open checks every page.

Each case names the failure it guards against: a reader trusting an earlier check
(a stamp beside the file) and printing counts from a file a failing disk changed
without changing its size or time; a reader upgrading a file it was only asked to
read; damage inside a record that only the full check sees.
"""

import json
import os
import sqlite3
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from dbstates import NOW, damage, run, settled_db, sha

import drill.storage.database
from drill.storage.database import open_db

T0 = datetime(2026, 10, 1, 9, 0, tzinfo=timezone.utc)
PAGE = 4096
HOUR_AGO = time.time() - 3600


@pytest.fixture
def checks(monkeypatch):
    """Count the page checks open_db runs."""
    calls = []
    real = drill.storage.database.quick_check

    def counted(conn):
        calls.append(1)
        return real(conn)

    monkeypatch.setattr(drill.storage.database, "quick_check", counted)
    return calls


def history_db(path: Path, count: int = 2000) -> Path:
    """A database of `count` reviews of seven questions, settled into one file."""
    db = open_db(path, now=T0)
    db["reviews"].insert_all(
        {
            "id": str(uuid.UUID(int=n + 1)),
            "question_id": f"q-{n % 7}",
            "reviewed_at": (T0 + timedelta(minutes=n)).isoformat(timespec="microseconds"),
            "rating": 1 + n % 4,
            "correct": n % 2,
            "answer": f"answer-{n:05d}",
            "cram": 0,
        }
        for n in range(count)
    )
    db.conn.close()
    conn = sqlite3.connect(path)
    conn.execute("pragma wal_checkpoint(truncate)")
    conn.execute("pragma journal_mode = delete")  # one file: the damage is all there is
    conn.close()
    os.utime(path, (HOUR_AGO, HOUR_AGO))
    return path


def leaf_pages(path: Path, name: str) -> list[int]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            "select pageno from dbstat where name = ? and pagetype = 'leaf' order by pageno",
            [name],
        ).fetchall()
    finally:
        conn.close()
    return [row[0] for row in rows]


def halve_cell_count(path: Path, page: int) -> None:
    """Halve the cell count of one b-tree page and put the file's times back, as damage
    from a failing disk would leave them: the same size, the same time."""
    st = path.stat()
    data = bytearray(path.read_bytes())
    start = (page - 1) * PAGE
    cells = int.from_bytes(data[start + 3 : start + 5], "big")
    data[start + 3 : start + 5] = (cells // 2).to_bytes(2, "big")
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_every_open_checks_every_page_a_readers_as_much_as_a_writers(tmp_path, checks):
    path = settled_db(tmp_path / "k.db")
    for write in (False, False, True, False):
        open_db(path, write=write).conn.close()
    assert len(checks) == 4


def test_a_stamp_left_by_an_older_kvdrill_vouches_for_nothing(tmp_path, checks):
    path = settled_db(tmp_path / "k.db")
    st = path.stat()
    state = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]
    stamp = path.with_name("k.db-checked")
    stamp.write_text(json.dumps({"db": state, "wal": None, "checked": time.time()}) + "\n")
    open_db(path, write=False).conn.close()
    assert len(checks) == 1
    damage(path, "middle")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    result = run("stats", "--db", path, "--now", NOW)
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {path} is damaged")


def test_an_index_page_that_lost_half_its_cells_is_refused_by_every_reader(tmp_path):
    """The review's case: export said "Exported 1969 reviews" from a 2,000-review file,
    stats --json showed wrong counts, sheet --focus weak chose other questions."""
    path = history_db(tmp_path / "k.db")
    assert run("export", "--db", path, "-o", tmp_path / "before.jsonl").exit_code == 0
    assert len((tmp_path / "before.jsonl").read_text().splitlines()) == 2000
    halve_cell_count(path, leaf_pages(path, "idx_reviews_time_cover")[5])
    before = sha(path)
    for args in (
        ["export", "-o", tmp_path / "after.jsonl"],
        ["stats", "--json", "--now", NOW],
        ["sheet", "--focus", "weak", "--seed", "1", "--now", NOW],
        ["backup"],
    ):
        result = run(*args, "--db", path)
        assert result.exit_code == 1, args
        lines = result.output.splitlines()
        assert len(lines) == 1 and lines[0].startswith(
            f"Error: {path} is damaged (*** in database main *** Fragmentation of "
        ), args
        assert lines[0].endswith(
            f"nothing was written. `kvdrill doctor --db {path}` checks it; `kvdrill restore "
            f"BACKUP --db {path}` brings back a copy from {tmp_path / 'backups'}{os.sep}"
        ), args
    assert not (tmp_path / "after.jsonl").exists()
    assert sha(path) == before


def test_a_table_page_that_lost_half_its_cells_is_refused(tmp_path):
    path = history_db(tmp_path / "k.db")
    halve_cell_count(path, leaf_pages(path, "reviews")[50])
    result = run("export", "--db", path)
    assert result.exit_code == 1
    assert result.stdout == ""


def test_a_flipped_byte_inside_a_record_is_found_by_doctor(tmp_path):
    """quick_check reads every page but does not compare the indexes with the table;
    doctor's full integrity_check does, and points at salvage and the backups."""
    path = history_db(tmp_path / "k.db")
    data = bytearray(path.read_bytes())
    page = leaf_pages(path, "reviews")[50]
    at = data.index(b"q-", (page - 1) * PAGE + 1000)
    data[at + 2] ^= 0x01  # q-3 becomes q-2, and so on: still a well-formed record
    path.write_bytes(bytes(data))
    result = run("doctor", "--json", "--db", path, "--now", NOW)
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["kind"] == "damaged"
    assert report["integrity"][0].startswith("row ")
    assert report["integrity"][0].endswith(" missing from index idx_reviews_question_cover")
    assert report["advice"][0] == (
        "first save the reviews that can still be read: kvdrill export --salvage -o "
        f"{tmp_path / 'k.db-salvaged.jsonl'} --db {path}"
    )


def test_a_reader_never_upgrades_an_older_schema(tmp_path):
    from dbstates import unmarked_v1

    path = unmarked_v1(tmp_path / "k.db", 1)
    before = sha(path)
    for args in (["stats"], ["export"], ["sheet", "--focus", "weak", "--seed", "1"]):
        result = run(*args, "--db", path, "--now", NOW) if args[0] != "export" else run(
            *args, "--db", path
        )
        assert result.exit_code == 1, args
        assert result.output == (
            f"Error: {path} has schema 1, older than this kvdrill's 8; a command that only "
            f"reads leaves it as it is. `kvdrill doctor --repair --db {path}` upgrades it "
            "(after a backup)\n"
        ), args
    assert sha(path) == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "kvdrill-home") == ["k.db"]
    # a backup copies it as it is
    assert run("backup", "--db", path, "-o", tmp_path / "copy.db").exit_code == 0
    assert sha(path) == before
