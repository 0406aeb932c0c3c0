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
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from sqlite_utils import Database

from drill.errors import KvdrillError
from drill.srs import iso, parse_iso, replay

FIELDS = (
    "id",
    "question_id",
    "reviewed_at",
    "rating",
    "correct",
    "answer",
    "duration_ms",
    "seed",
    "params",
    "expected",
    "unit",
    "misconception",
    "session_id",
    "cram",
)
REQUIRED = ("id", "question_id", "reviewed_at", "rating")
FORMATS = ("jsonl", "csv")
BATCH_SIZE = 5000
_TEXT_FIELDS = ("question_id", "answer", "unit", "misconception", "session_id")


class HistoryError(KvdrillError):
    """A history file that cannot be imported; the message names FILE:LINE."""


class RecordError(ValueError):
    """One record is wrong; the reader adds where it is."""


# ------------------------------------------------------------------------------ out


def row_to_record(row: Mapping[str, Any]) -> dict[str, Any]:
    """A `reviews` row as an export record (booleans as booleans, params as an object)."""
    record = {name: row.get(name) for name in FIELDS}
    if record["correct"] is not None:
        record["correct"] = bool(record["correct"])
    record["cram"] = bool(record["cram"])
    if record["params"] is not None:
        record["params"] = json.loads(record["params"])
    return record


def iter_records(db: Database) -> Iterator[dict[str, Any]]:
    """Every review, oldest first (ties by id), as export records."""
    columns = ", ".join(FIELDS)
    cursor = db.execute(f"select {columns} from reviews order by reviewed_at, id")
    for values in cursor:
        yield row_to_record(dict(zip(FIELDS, values, strict=True)))


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)  # str(float) is the shortest text that reads back exactly


def write_records(records: Iterable[Mapping[str, Any]], out: IO[str], fmt: str) -> int:
    """Write records to a text stream as `jsonl` or `csv`; return how many."""
    count = 0
    if fmt == "jsonl":
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
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


def _int(value: Any, name: str, *, low: int | None = None, high: int | None = None) -> int:
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise RecordError(f"{name} must be an integer, not {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecordError(f"{name} must be an integer, not {value!r}")
    if not -(2**63) <= value < 2**63:
        raise RecordError(f"{name} does not fit in 64 bits: {value}")
    if (low is not None and value < low) or (high is not None and value > high):
        span = f"{low} to {high}" if high is not None else f"at least {low}"
        raise RecordError(f"{name} must be {span}, not {value}")
    return value


def _bool(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "1"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("false", "0"):
        return False
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise RecordError(f"{name} must be true or false, not {value!r}")


def _float(value: Any, name: str) -> float:
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise RecordError(f"{name} must be a number, not {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RecordError(f"{name} must be a number, not {value!r}")
    if not math.isfinite(value):
        raise RecordError(f"{name} must be a finite number, not {value!r}")
    return float(value)


def _params(value: Any) -> str:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise RecordError("params must be a JSON object") from None
    if not isinstance(value, dict):
        raise RecordError(f"params must be an object, not {value!r}")
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def record_to_row(record: Mapping[str, Any]) -> dict[str, Any]:
    """Validate one record (from JSON or CSV text) into a `reviews` row; RecordError if bad."""
    unknown = [k for k in record if k not in FIELDS]
    if unknown:
        raise RecordError(f"unknown field {unknown[0]!r}")
    for name in REQUIRED:
        if record.get(name) in (None, ""):
            raise RecordError(f"missing {name}")
    row: dict[str, Any] = dict.fromkeys(FIELDS)
    try:
        row["id"] = str(uuid.UUID(str(record["id"]).strip()))
    except ValueError:
        raise RecordError(f"id must be a UUID, not {record['id']!r}") from None
    for name in _TEXT_FIELDS:
        value = record.get(name)
        if value is not None and not isinstance(value, str):
            raise RecordError(f"{name} must be text, not {value!r}")
        row[name] = value
    text = record["reviewed_at"]
    try:
        if not isinstance(text, str):
            raise ValueError
        row["reviewed_at"] = iso(parse_iso(text.strip()))
    except (ValueError, OverflowError):
        raise RecordError(f"reviewed_at must be an ISO-8601 time, not {text!r}") from None
    row["rating"] = _int(record["rating"], "rating", low=1, high=4)
    present = {k: v for k, v in record.items() if v is not None}
    if "correct" in present:
        row["correct"] = int(_bool(present["correct"], "correct"))
    if "duration_ms" in present:
        row["duration_ms"] = _int(present["duration_ms"], "duration_ms", low=0)
    if "seed" in present:
        row["seed"] = _int(present["seed"], "seed")
    if "params" in present:
        row["params"] = _params(present["params"])
    if "expected" in present:
        row["expected"] = _float(present["expected"], "expected")
    row["cram"] = int(_bool(present["cram"], "cram")) if "cram" in present else 0
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


def import_history(
    db: Database, path: Path, scheduler, *, fmt: str | None = None, batch_size: int = BATCH_SIZE
) -> ImportResult:
    """Merge a history file into the database by review id and rebuild the cards.

    One transaction: on any bad record (HistoryError naming FILE:LINE) nothing changes.
    """
    read = 0
    with db.atomic():
        before = db.execute("select count(*) from reviews").fetchone()[0]
        for batch in _batches(read_rows(path, fmt), batch_size):
            read += len(batch)
            db["reviews"].insert_all(batch, pk="id", ignore=True, batch_size=batch_size)
        after = db.execute("select count(*) from reviews").fetchone()[0]
        cards = rebuild_cards(db, scheduler) if after > before else 0
    return ImportResult(read=read, added=after - before, cards=cards)
