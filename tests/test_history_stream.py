"""`kvdrill import` from a stream: a pipe into /dev/stdin, a FIFO, a process substitution.

A stream can be read once. The import reads it once from the start: the format is told
from the bytes read ahead (never by opening the file a second time), and an error that
must read lines again (an id twice with different content) reads a copy of what was
read. A large stream (more than one read block of drill.storage.history_in.READ_BYTES, 8 MiB) is
read whole; a bad record names the path given and its line.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import threading
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from drill.errors import HistoryError
from drill.srs import iso, make_scheduler
from drill.storage.database import open_db
from drill.storage.history_in import import_history
from drill.storage.history_read import READ_BYTES
from drill.storage.review_record import FIELDS

SCHED = make_scheduler(fuzz=False)
T0 = datetime(2026, 10, 1, 9, 0, tzinfo=timezone.utc)
LARGE = 1_000  # records of a large stream: 9,000-character answers, about 9.3 MiB


def record(n: int, answer_chars: int = 20) -> dict:
    return {
        "id": str(uuid.UUID(int=n)),
        "question_id": f"q-{n % 3}",
        "reviewed_at": iso(T0 + timedelta(minutes=7 * n)),
        "rating": 1 + n % 4,
        "correct": n % 2 == 0,
        "answer": (f"answer {n} " + "x" * answer_chars)[:answer_chars],
        "duration_ms": 1000 + n,
        "seed": n,
        "params": None,
        "expected": None,
        "unit": None,
        "misconception": None,
        "session_id": "s1",
        "cram": False,
        "ticks": None,
    }


def jsonl(records: list[dict]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def csv_bytes(records: list[dict]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(FIELDS)
    for r in records:
        writer.writerow(
            "" if r[f] is None else ("true" if r[f] is True else "false" if r[f] is False else r[f])
            for f in FIELDS
        )
    return out.getvalue().encode()


def small() -> list[dict]:
    return [record(n) for n in (1, 2, 3)]


def large() -> list[dict]:
    return [record(n, answer_chars=9_000) for n in range(1, LARGE + 1)]


def count(db_path: Path) -> int:
    db = open_db(db_path)
    try:
        return db.execute("select count(*) from reviews").fetchone()[0]
    finally:
        db.conn.close()


def import_from_pipe(db_path: Path, data: bytes, tmp: Path) -> subprocess.CompletedProcess:
    """`python -m drill import /dev/stdin` with `data` piped into it; its temporary
    folder is `tmp`."""
    tmp.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "drill", "import", "/dev/stdin", "--db", str(db_path)],
        input=data,
        capture_output=True,
        env={**os.environ, "TMPDIR": str(tmp)},
        timeout=120,
    )


def test_the_large_streams_span_more_than_one_read_block():
    assert READ_BYTES == 8 * 1024 * 1024
    assert len(jsonl(large())) > READ_BYTES
    assert len(csv_bytes(large())) > READ_BYTES


# ------------------------------------------------------------------ a pipe: /dev/stdin


@pytest.mark.parametrize("encode", [jsonl, csv_bytes], ids=["jsonl", "csv"])
def test_a_pipe_small_then_large_imports_every_review_once(tmp_path, encode):
    db = tmp_path / "k.db"
    assert count(db) == 0
    done = import_from_pipe(db, encode(small()), tmp_path / "tmp")
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode() == (
        "Imported 3 new reviews from /dev/stdin (0 already present); rebuilt 3 cards.\n"
    )
    assert count(db) == 3
    # the large stream holds the three again, with the same content
    again = [r | {"answer": record(r["seed"])["answer"]} if r["seed"] <= 3 else r for r in large()]
    done = import_from_pipe(db, encode(again), tmp_path / "tmp")
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode() == (
        "Imported 997 new reviews from /dev/stdin (3 already present); rebuilt 3 cards.\n"
    )
    assert count(db) == 1_000
    assert list((tmp_path / "tmp").iterdir()) == []  # the copy was never a named file


def test_a_bad_json_record_deep_in_a_large_pipe_names_dev_stdin_and_its_line(tmp_path):
    records = large()
    records[989]["rating"] = 9  # line 990, past the first 8 MiB
    assert len(jsonl(records[:989])) > READ_BYTES
    db = tmp_path / "k.db"
    done = import_from_pipe(db, jsonl(records), tmp_path / "tmp")
    assert (done.returncode, done.stdout) == (1, b"")
    assert done.stderr.decode() == "Error: /dev/stdin:990: rating must be 1 to 4, not 9\n"
    assert count(db) == 0


def test_a_bad_csv_row_deep_in_a_large_pipe_names_dev_stdin_and_its_line(tmp_path):
    data = csv_bytes(large()).split(b"\n")
    data.insert(995, b"00000000-0000-0000-0000-00000000ffff,q,2026-10-01T09:00:00Z")
    db = tmp_path / "k.db"
    done = import_from_pipe(db, b"\n".join(data), tmp_path / "tmp")
    assert (done.returncode, done.stdout) == (1, b"")
    assert done.stderr.decode() == "Error: /dev/stdin:996: 3 cells, the header has 15\n"
    assert count(db) == 0


def test_an_id_twice_with_different_content_in_a_pipe_names_both_lines_and_the_id(tmp_path):
    """The lines are read again from the copy the import kept of the stream."""
    records = large()
    records.append(record(2) | {"rating": 4, "reviewed_at": iso(T0 + timedelta(days=30))})
    db = tmp_path / "k.db"
    done = import_from_pipe(db, jsonl(records), tmp_path / "tmp")
    assert (done.returncode, done.stdout) == (1, b"")
    assert done.stderr.decode() == (
        "Error: /dev/stdin:1001: review id 00000000-0000-0000-0000-000000000002"
        " also on line 2 with different content\n"
    )
    assert count(db) == 0
    assert list((tmp_path / "tmp").iterdir()) == []


def test_a_process_substitution_path_imports_its_stream(tmp_path):
    """A path like /dev/fd/N (bash's <(...)): the read end of a pipe, opened by name."""
    db = tmp_path / "k.db"
    read_end, write_end = os.pipe()
    data = jsonl(small())
    writer = threading.Thread(target=_write_and_close, args=(write_end, data), daemon=True)
    writer.start()
    try:
        result = import_history(open_db(db), Path(f"/dev/fd/{read_end}"), SCHED)
    finally:
        os.close(read_end)
    writer.join(timeout=30)
    assert (result.read, result.added, result.cards) == (3, 3, 3)
    assert count(db) == 3


def _write_and_close(fd: int, data: bytes) -> None:
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


# ---------------------------------------------------------------------------- a FIFO


def feed_fifo(path: Path, data: bytes) -> threading.Thread:
    """A writer thread: opens the FIFO (waiting for the reader), writes `data`, closes."""

    def write() -> None:
        with open(path, "wb") as fh:
            fh.write(data)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("encode", [jsonl, csv_bytes], ids=["jsonl", "csv"])
def test_a_fifo_small_then_large_imports_every_review_once(tmp_path, encode):
    fifo = tmp_path / "history"  # no extension: the format is told from the bytes read ahead
    os.mkfifo(fifo)
    db = open_db(tmp_path / "k.db")
    assert db.execute("select count(*) from reviews").fetchone()[0] == 0
    writer = feed_fifo(fifo, encode(small()))
    result = import_history(db, fifo, SCHED)
    writer.join(timeout=30)
    assert (result.read, result.added, result.cards) == (3, 3, 3)
    assert db.execute("select count(*) from reviews").fetchone()[0] == 3
    writer = feed_fifo(fifo, encode(large()))
    result = import_history(db, fifo, SCHED)
    writer.join(timeout=30)
    assert (result.read, result.added, result.cards) == (1_000, 997, 3)
    assert db.execute("select count(*) from reviews").fetchone()[0] == 1_000


def test_a_bad_record_in_a_fifo_names_the_fifo_and_its_line(tmp_path):
    fifo = tmp_path / "history.jsonl"
    os.mkfifo(fifo)
    records = large()
    records[994]["reviewed_at"] = "yesterday"
    db = open_db(tmp_path / "k.db")
    writer = feed_fifo(fifo, jsonl(records))
    with pytest.raises(HistoryError) as caught:
        import_history(db, fifo, SCHED)
    writer.join(timeout=30)
    assert str(caught.value) == (
        f"{fifo}:995: reviewed_at must be an ISO-8601 time, not 'yesterday'"
    )
    assert db.execute("select count(*) from reviews").fetchone()[0] == 0


def test_a_fifo_the_writer_leaves_after_part_of_a_line_reads_what_was_written(tmp_path):
    """A writer that stops mid-line: the last line is read as it ends (here: not JSON)."""
    fifo = tmp_path / "history"
    os.mkfifo(fifo)
    data = jsonl(small()) + b'{"id": "00000000-0000'
    writer = feed_fifo(fifo, data)
    with pytest.raises(HistoryError) as caught:
        import_history(open_db(tmp_path / "k.db"), fifo, SCHED)
    writer.join(timeout=30)
    assert str(caught.value) == f"{fifo}:4: not valid JSON (Unterminated string starting at)"


def test_a_copy_the_temporary_folder_refuses_stops_the_import_in_one_line(tmp_path, monkeypatch):
    import errno
    import tempfile

    class Full(io.BytesIO):
        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    monkeypatch.setattr(tempfile, "TemporaryFile", lambda **kwargs: Full())
    fifo = tmp_path / "history"
    os.mkfifo(fifo)
    db = open_db(tmp_path / "k.db")
    writer = feed_fifo(fifo, jsonl(small()))
    with pytest.raises(HistoryError) as caught:
        import_history(db, fifo, SCHED)
    writer.join(timeout=30)
    assert str(caught.value) == (
        f"cannot copy {fifo} into the temporary folder {tmp_path / 'tmp'} as it is read:"
        " No space left on device"
    )
    assert db.execute("select count(*) from reviews").fetchone()[0] == 0


def test_a_large_pipe_into_an_empty_database_is_read_ahead_and_imported_whole(tmp_path):
    """Into an empty database a stream of more than one read block is replayed while it is
    read, as a file is."""
    db = tmp_path / "k.db"
    done = import_from_pipe(db, jsonl(large()), tmp_path / "tmp")
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode() == (
        "Imported 1000 new reviews from /dev/stdin (0 already present); rebuilt 3 cards.\n"
    )
    assert count(db) == 1_000


def test_a_file_that_changes_before_its_second_reading_is_refused(tmp_path):
    from drill.storage.history_read import Source

    path = tmp_path / "h.jsonl"
    path.write_text('{"a": 1}\n', encoding="utf-8")
    with Source(path) as source:
        assert source.again().read() == b'{"a": 1}\n'  # unchanged: read again as it was
        with path.open("a", encoding="utf-8") as more:
            more.write('{"a": 2}\n')
        with pytest.raises(HistoryError) as refused:
            source.again()
    assert str(refused.value) == (
        f"{path} changed while it was being imported; nothing was imported, import it "
        "again once nothing writes to it"
    )
