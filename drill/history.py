"""Review history in and out: JSON Lines or CSV, one record per review.

A record has these fields, in this order (FIELDS):

    id             text, a UUID; the identity of the review (required)
    question_id    text, the question answered; need not be in the bank (required)
    reviewed_at    ISO-8601 time; without an offset it is read as UTC (required)
    rating         1 again, 2 hard, 3 good, 4 easy (required)
    correct        true / false as graded; null for a self-rated answer
    answer         the text the user typed, or null
    duration_ms    milliseconds spent answering (integer >= 0), or null
    seed           the integer seed that drew the question's numbers, or null
    params         the drawn params as an object, or null
    expected       the expected value in the base unit of `unit`, or null
    unit           the answer's dimension (e.g. bytes, seconds), or null
    misconception  id of the mistake the grader recognised, or null
    session_id     the quiz session, or null
    cram           true for practice that did not change the schedule (default false)

JSON Lines: one JSON object per line; blank lines are skipped; fields other than these
are an error. CSV: a header row naming the columns (any order; the four required ones
must be present), then one row per review; an empty cell is null, `correct` and `cram` are
`true`/`false` (or 1/0), `params` is the object as JSON text. Files are UTF-8.

Import merges by id: a review already in the database is left as it is, so importing a
file twice adds nothing. Then every card is rebuilt by replaying all non-cram reviews
through FSRS in time order. It is all one transaction: a file with any bad record imports
nothing, and the error names FILE:LINE.
"""

from __future__ import annotations

import csv
import json
import math
import re
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from sqlite_utils import Database

from drill.errors import HistoryError
from drill.review_store import REVIEW_COLUMNS, write_transaction
from drill.srs import iso, parse_iso, replay

# the export format's fields are the reviews table's columns, in its order
FIELDS = REVIEW_COLUMNS
REQUIRED = ("id", "question_id", "reviewed_at", "rating")
FORMATS = ("jsonl", "csv")
BATCH_SIZE = 5000
IMPORT_CACHE_KIB = 256 * 1024  # the most page cache an import may use


class RecordError(ValueError):
    """One record is wrong; the reader adds where it is."""


# ------------------------------------------------------------------------------ out


# one encoder for every record: json.dumps with options builds a new one per call
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def row_to_record(row: Mapping[str, Any]) -> dict[str, Any]:
    """A `reviews` row as an export record (booleans as booleans, params as an object)."""
    return _record(tuple(row.get(name) for name in FIELDS))


def _record(values: tuple) -> dict[str, Any]:
    record = dict(zip(FIELDS, values, strict=True))
    if record["correct"] is not None:
        record["correct"] = bool(record["correct"])
    record["cram"] = bool(record["cram"])
    if record["params"] is not None:
        record["params"] = json.loads(record["params"])
    return record


def iter_records(db: Database) -> Iterator[dict[str, Any]]:
    """Every review, oldest first (ties by id), as export records."""
    columns = ", ".join(FIELDS)
    for values in db.execute(f"select {columns} from reviews order by reviewed_at, id"):
        yield _record(values)


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return _ENCODER.encode(value)
    return str(value)  # str(float) is the shortest text that reads back exactly


def write_records(records: Iterable[Mapping[str, Any]], out: IO[str], fmt: str) -> int:
    """Write records to a text stream as `jsonl` or `csv`; return how many."""
    count = 0
    if fmt == "jsonl":
        for record in records:
            out.write(_ENCODER.encode(record) + "\n")
            count += 1
    elif fmt == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(FIELDS)
        for record in records:
            writer.writerow([_csv_cell(record[name]) for name in FIELDS])
            count += 1
    else:
        raise ValueError(f"unknown format {fmt!r}")
    return count


# ------------------------------------------------------------------------------- in


_INT64 = (-(2**63), 2**63 - 1)


def _integer(name: str, low: int = _INT64[0], high: int = _INT64[1]):
    """A check for an integer field within [low, high] (text allowed, as CSV gives)."""

    def check(value: Any) -> int:
        if type(value) is not int:  # bool is not an int here
            try:
                if not isinstance(value, str):
                    raise ValueError
                value = int(value.strip())
            except ValueError:
                raise RecordError(f"{name} must be an integer, not {value!r}") from None
        if low <= value <= high:
            return value
        if not _INT64[0] <= value <= _INT64[1]:
            raise RecordError(f"{name} does not fit in 64 bits: {value}")
        span = f"{low} to {high}" if high != _INT64[1] else f"at least {low}"
        raise RecordError(f"{name} must be {span}, not {value}")

    return check


def _boolean(name: str):
    """A check for a true/false field, stored as 1/0 (also "true"/"false"/"1"/"0", 1/0)."""

    def check(value: Any) -> int:
        if value is True or value is False or (type(value) is int and value in (0, 1)):
            return int(value)
        if isinstance(value, str):
            word = value.strip().lower()
            if word in ("true", "1"):
                return 1
            if word in ("false", "0"):
                return 0
        raise RecordError(f"{name} must be true or false, not {value!r}")

    return check


def _float(value: Any) -> float:
    if type(value) is not float:
        try:
            if isinstance(value, bool) or not isinstance(value, str | int):
                raise ValueError
            value = float(value.strip()) if isinstance(value, str) else float(value)
        except (ValueError, OverflowError):
            raise RecordError(f"expected must be a number, not {value!r}") from None
    if not math.isfinite(value):
        raise RecordError(f"expected must be a finite number, not {value!r}")
    return value


def _params(value: Any) -> str:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise RecordError("params must be a JSON object") from None
    if not isinstance(value, dict):
        raise RecordError(f"params must be an object, not {value!r}")
    return _ENCODER.encode(value)


# the forms this module writes; text already in them is checked, not rebuilt
_CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")
_CANONICAL_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00\Z")


def _uuid(value: Any) -> str:
    if isinstance(value, str) and _CANONICAL_UUID.match(value):
        return value
    try:
        return str(uuid.UUID(str(value).strip()))
    except ValueError:
        raise RecordError(f"id must be a UUID, not {value!r}") from None


def _time(value: Any) -> str:
    """The database's text form of an ISO-8601 time (UTC, microseconds)."""
    try:
        if not isinstance(value, str):
            raise ValueError
        if _CANONICAL_TIME.match(value):
            datetime.fromisoformat(value)  # a real date and time?
            return value
        return iso(parse_iso(value.strip()))
    except (ValueError, OverflowError):
        raise RecordError(f"reviewed_at must be an ISO-8601 time, not {value!r}") from None


def _text(name: str):
    def check(value: Any) -> str:
        if not isinstance(value, str):
            raise RecordError(f"{name} must be text, not {value!r}")
        return value

    return check


# field -> check of a non-null value, returning what the column stores
_CHECKS = {
    "id": _uuid,
    "question_id": _text("question_id"),
    "reviewed_at": _time,
    "rating": _integer("rating", 1, 4),
    "correct": _boolean("correct"),
    "answer": _text("answer"),
    "duration_ms": _integer("duration_ms", 0),
    "seed": _integer("seed"),
    "params": _params,
    "expected": _float,
    "unit": _text("unit"),
    "misconception": _text("misconception"),
    "session_id": _text("session_id"),
    "cram": _boolean("cram"),
}
_EMPTY_ROW = {**dict.fromkeys(FIELDS), "cram": 0}


def record_to_row(record: Mapping[str, Any]) -> dict[str, Any]:
    """Validate one record (from JSON or CSV text) into a `reviews` row; RecordError if bad."""
    for name in record:
        if name not in _CHECKS:
            raise RecordError(f"unknown field {name!r}")
    row = dict(_EMPTY_ROW)
    for name, value in record.items():
        if value is not None:
            row[name] = _CHECKS[name](value)
    for name in REQUIRED:
        if row[name] is None or row[name] == "":
            raise RecordError(f"missing {name}")
    return row


def detect_format(path: Path) -> str:
    """`jsonl` or `csv`, from the file's extension, else from its first non-blank byte."""
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    if suffix == ".csv":
        return "csv"
    with path.open("rb") as fh:
        head = fh.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    return "jsonl" if head.startswith(b"{") else "csv"


def _decoded_lines(fh: IO[bytes], path: Path) -> Iterator[str]:
    for number, raw in enumerate(fh, start=1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise HistoryError(f"{path}:{number}: not UTF-8 text") from None
        yield text.removeprefix("\ufeff") if number == 1 else text


def _jsonl_records(lines: Iterator[str], path: Path) -> Iterator[tuple[int, Any]]:
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise HistoryError(f"{path}:{number}: not valid JSON ({exc.msg})") from None
        if not isinstance(record, dict):
            raise HistoryError(f"{path}:{number}: expected a JSON object per line")
        yield number, record


def _csv_records(lines: Iterator[str], path: Path) -> Iterator[tuple[int, Any]]:
    reader = csv.reader(lines, strict=True)
    try:
        header = next(reader, None)
        if header is None:
            return
        header = [h.strip() for h in header]
        bad = [h for h in header if h not in FIELDS]
        if bad:
            raise HistoryError(f"{path}:1: unknown column {bad[0]!r}")
        missing = [h for h in REQUIRED if h not in header]
        if missing:
            raise HistoryError(f"{path}:1: the header has no {missing[0]!r} column")
        start = reader.line_num + 1
        for cells in reader:
            number, start = start, reader.line_num + 1
            if not any(c.strip() for c in cells):
                continue
            if len(cells) != len(header):
                raise HistoryError(
                    f"{path}:{number}: {len(cells)} cells, the header has {len(header)}"
                )
            yield number, {h: (c if c != "" else None) for h, c in zip(header, cells, strict=True)}
    except csv.Error as exc:
        raise HistoryError(f"{path}:{reader.line_num}: malformed CSV ({exc})") from None


def read_rows(path: Path, fmt: str | None = None) -> Iterator[dict[str, Any]]:
    """Stream validated `reviews` rows from a history file; HistoryError names FILE:LINE."""
    fmt = fmt or detect_format(path)
    if fmt not in FORMATS:
        raise HistoryError(f"unknown history format {fmt!r}; use jsonl or csv")
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise HistoryError(f"cannot read {path}: {exc.strerror}") from None
    with fh:
        lines = _decoded_lines(fh, path)
        records = _jsonl_records(lines, path) if fmt == "jsonl" else _csv_records(lines, path)
        for number, record in records:
            try:
                yield record_to_row(record)
            except RecordError as exc:
                raise HistoryError(f"{path}:{number}: {exc}") from None


@dataclass(frozen=True)
class ImportResult:
    read: int  # records in the file
    added: int  # reviews that were not in the database yet
    cards: int  # card rows rebuilt by replay


def _batches(rows: Iterable[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def rebuild_cards(db: Database, scheduler) -> int:
    """Replace every card that has non-cram reviews by the replay of its whole history."""
    cursor = db.execute(
        "select question_id, reviewed_at, rating from reviews"
        " where not coalesce(cram, 0) order by reviewed_at, id"
    )
    reviews = ({"question_id": q, "reviewed_at": t, "rating": r} for q, t, r in cursor)
    cards = replay(scheduler, reviews)
    db["cards"].insert_all(cards.values(), pk="question_id", replace=True, batch_size=BATCH_SIZE)
    return len(cards)


_INSERT_SQL = (
    f"insert or ignore into reviews ({', '.join(FIELDS)}) values ({', '.join('?' for _ in FIELDS)})"
)


def import_history(
    db: Database, path: Path, scheduler, *, fmt: str | None = None, batch_size: int = BATCH_SIZE
) -> ImportResult:
    """Merge a history file into the database by review id and rebuild the cards.

    One write transaction: on any bad record (HistoryError naming FILE:LINE) nothing
    changes. A quiz in another terminal waits for it (up to the busy timeout).
    Rows go in by `executemany` of INSERT OR IGNORE in batches: the id decides, and a
    review already present is left as it is.
    """

    read = 0
    conn = db.conn
    # IMMEDIATE (as the quiz writes): holding the write lock from the start means a
    # quiz answer committed meanwhile cannot make this transaction's upgrade fail
    cache_pages = conn.execute("pragma cache_size").fetchone()[0]
    # Random UUID keys scatter inserts over the id index; with SQLite's default 2 MiB
    # page cache a million-row import spends a third of its insert time re-reading pages.
    conn.execute(f"pragma cache_size = -{IMPORT_CACHE_KIB}")
    try:
        with write_transaction(db):
            before = conn.execute("select count(*) from reviews").fetchone()[0]
            for batch in _batches(read_rows(path, fmt), batch_size):
                read += len(batch)
                rows = [tuple(row[name] for name in FIELDS) for row in batch]
                conn.executemany(_INSERT_SQL, rows)
            after = conn.execute("select count(*) from reviews").fetchone()[0]
            cards = rebuild_cards(db, scheduler) if after > before else 0
    finally:
        conn.execute(f"pragma cache_size = {cache_pages}")
    return ImportResult(read=read, added=after - before, cards=cards)
