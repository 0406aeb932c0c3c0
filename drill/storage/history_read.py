"""Reading a review history file: JSON Lines or CSV, one record per review, each checked.

A record holds the fields of `drill.storage.review_record.Review`, in its order (FIELDS); that module
documents and checks them.

JSON Lines: one JSON object per line; blank lines are skipped; fields other than these
are an error. CSV: a header row naming the columns (any order; the four required ones
must be present), then one row per review; an empty cell is null, `correct` and `cram` are
`true`/`false` (or 1/0), `params` is the object as JSON text; one leading `'` is taken
off a text cell (question_id, answer, unit, misconception, session_id), the mark an export
puts before text a spreadsheet could run as a formula, before `'` itself and as empty
text (drill.storage.history_out). Files are UTF-8.

Limits: a line of at most MAX_LINE_BYTES (1 MiB), read in bounded chunks; JSON nested at
most 64 levels deep, without NaN or Infinity; an `answer` of at most MAX_ANSWER_CHARS
(10,000) characters; other text fields of at most MAX_NAME_CHARS (1,000) characters,
without control characters; `reviewed_at` in the years 1970 to 9000 (drill.moments); see drill.storage.review_record.

The file is opened once and read once from the start, so a pipe, a FIFO, /dev/stdin or
a process substitution imports as a file does (`Source`).
"""

from __future__ import annotations

import csv
import operator
import os
import re
import stat
import tempfile
from array import array
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import IO, Any, NamedTuple, Protocol

import orjson

from drill.errors import HistoryError
from drill.json_input import JSONInputError, parse_json
from drill.storage.history_out import CSV_TEXT_FIELDS
from drill.storage.review_record import (
    FIELDS,
    MAX_NAME_CHARS,
    REQUIRED,
    RecordError,
    checked_values,
    plain_rows,
    plain_values,
)

FORMATS = ("jsonl", "csv")
MAX_LINE_BYTES = 1024 * 1024  # one record's line (a CSV row may span lines)
READ_BYTES = 8 * 1024 * 1024  # a file is read this much at a time
# records checked, inserted and replayed together: a block small enough that a column's
# checks find its records still in the CPU's cache
BLOCK_RECORDS = 500


class _Readable(Protocol):
    def read(self, size: int, /) -> bytes: ...


DETECT_BYTES = 4096  # the format is told from the first non-blank byte of this much


def detect_format(path: Path, head: bytes | None = None) -> str:
    """`jsonl` or `csv`, from the file's extension, else from its first non-blank byte
    (in `head`, the file's first bytes when the caller has read them already)."""
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    if suffix == ".csv":
        return "csv"
    if head is None:
        with path.open("rb") as fh:
            head = fh.read(DETECT_BYTES)
    head = head[:DETECT_BYTES].lstrip(b"\xef\xbb\xbf \t\r\n")
    return "jsonl" if head.startswith(b"{") else "csv"


class Source:
    """A history file, opened once and read once from the start.

    Its first bytes are read ahead (to tell the format) and handed out again in front
    of the rest. A file that is not a regular file (a
    pipe, a FIFO, /dev/stdin, a process substitution) cannot be read a second time:
    what is read of it is copied, as it is read, into an anonymous temporary file in the
    temporary folder, so the copy never holds more than the import has read. `again()`
    reads from the start once more (to tell an id repeated with the same record from one
    repeated with another, and name both lines): the regular file itself, or that copy. Every message names `path`,
    the path the user gave.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.fh = path.open("rb")
        except OSError as exc:
            raise HistoryError(f"cannot read {path}: {exc.strerror}") from None
        try:
            info = os.fstat(self.fh.fileno())
            self.regular = stat.S_ISREG(info.st_mode)
            self._stamp = (info.st_size, info.st_mtime_ns)
            self.copy: IO[bytes] | None = None if self.regular else self._temporary()
            self.head = self._read(DETECT_BYTES)
        except BaseException:
            self.close()
            raise

    def _temporary(self) -> IO[bytes]:
        try:
            return tempfile.TemporaryFile(prefix="kvdrill-import-")
        except OSError as exc:
            raise self._copy_error(exc) from None

    def _copy_error(self, exc: OSError) -> HistoryError:
        return HistoryError(
            f"cannot copy {self.path} into the temporary folder {tempfile.gettempdir()}"
            f" as it is read: {exc.strerror}"
        )

    def _read(self, size: int) -> bytes:
        try:
            data = self.fh.read(size)
        except OSError as exc:
            raise HistoryError(f"cannot read {self.path}: {exc.strerror}") from None
        if self.copy is not None and data:
            try:
                self.copy.write(data)
            except OSError as exc:
                raise self._copy_error(exc) from None
        return data

    def read(self, size: int) -> bytes:
        """Up to `size` bytes (the bytes read ahead first, however many); b"" at the end."""
        if self.head:
            data, self.head = self.head, b""
            return data
        return self._read(size)

    def again(self) -> IO[bytes]:
        """The file's bytes from the start, once more: HistoryError when a regular file
        changed since it was opened (its second reading would not be its first)."""
        again = self.fh if self.copy is None else self.copy
        try:
            if self.copy is None:
                info = os.fstat(again.fileno())
                if (info.st_size, info.st_mtime_ns) != self._stamp:
                    raise HistoryError(
                        f"{self.path} changed while it was being imported; nothing was "
                        "imported, import it again once nothing writes to it"
                    )
            again.seek(0)
        except OSError as exc:
            raise HistoryError(f"cannot read {self.path} again: {exc.strerror}") from None
        return again

    def close(self) -> None:
        for fh in (getattr(self, "copy", None), getattr(self, "fh", None)):
            if fh is not None:
                fh.close()

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _chunks(fh: _Readable, path: Path) -> Iterator[tuple[int, list[bytes], bytes, bool]]:
    """(number of the first line, the lines without their newlines, the bytes they were cut
    from, whether the last of them ended in a newline) of each block the file is read in.
    The file is read READ_BYTES at a time, and a line longer than MAX_LINE_BYTES stops it,
    so memory stays bounded."""
    number, tail = 1, b""
    while block := fh.read(READ_BYTES):
        data = tail + block
        lines = data.split(b"\n")
        tail = lines.pop()
        if lines and max(map(len, lines)) >= MAX_LINE_BYTES:
            index = next(i for i, line in enumerate(lines) if len(line) >= MAX_LINE_BYTES)
            raise HistoryError(f"{path}:{number + index}: the line is longer than 1 MiB")
        if len(tail) > MAX_LINE_BYTES:
            raise HistoryError(f"{path}:{number + len(lines)}: the line is longer than 1 MiB")
        if lines:
            yield number, lines, data, True
            number += len(lines)
    if tail:
        yield number, [tail], tail, False


def _with_newlines(lines: list[bytes], ended: bool) -> list[bytes]:
    """The lines as the file holds them: each with its newline (the last one only when
    `ended`)."""
    whole = [line + b"\n" for line in lines]
    if not ended:
        whole[-1] = lines[-1]
    return whole


def _line_blocks(fh: _Readable, path: Path) -> Iterator[tuple[int, list[bytes]]]:
    """(number of the first line, the lines) of each block the file is read in, every
    line ending in its newline (the last one may have none)."""
    for first, lines, _data, ended in _chunks(fh, path):
        yield first, _with_newlines(lines, ended)


def _raw_lines(fh: _Readable, path: Path) -> Iterator[tuple[int, bytes]]:
    """(number, bytes) of each line."""
    for first, lines in _line_blocks(fh, path):
        yield from enumerate(lines, start=first)


def _text(number: int, raw: bytes, path: Path) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise HistoryError(f"{path}:{number}: not UTF-8 text") from None
    return text.removeprefix("\ufeff") if number == 1 else text


def _decoded_lines(fh: _Readable, path: Path) -> Iterator[str]:
    """The file's lines as text."""
    for number, raw in _raw_lines(fh, path):
        yield _text(number, raw, path)


# A line that orjson may read and drill.storage.review_record.plain_values check is short enough that no
# text in it is too long, and holds no backslash (so no escape: no control character, no
# surrogate, no quote inside a text), DEL or C1 control character (U+0080..U+009F, which
# UTF-8 writes as C2 80..C2 9F).
_C1 = re.compile(rb"\xc2[\x80-\x9f]")


def _unescaped(raw: bytes) -> bool:
    """Whether `raw` holds no backslash, DEL or C1 control character (the block road,
    plain_rows, takes lines whose bytes are all so). Each test is one scan in C."""
    return (
        b"\\" not in raw and b"\x7f" not in raw and (b"\xc2" not in raw or not _C1.search(raw))
    )


def _plain(raw: bytes) -> bool:
    return len(raw) <= MAX_NAME_CHARS and _unescaped(raw)


class RecordBlock(NamedTuple):
    """Records read from a history file: the line of each, its column values (FIELDS
    order) and, when the block road read them, the time of each as a datetime."""

    numbers: Sequence[int]
    rows: list[tuple]
    times: list[datetime] | None


def _jsonl_blocks(fh: _Readable, path: Path, size: int) -> Iterator[RecordBlock]:
    """The records of a JSON Lines file, `size` lines at a time.

    Lines as `kvdrill export` writes them take the block road: orjson reads each line
    and plain_rows checks the block's records a column at a time. A block it turns down
    is read line by line (_line_by_line): the fast road for each line, else the careful
    one, whose messages name what is wrong and where.
    """
    loads, decode_error = orjson.loads, orjson.JSONDecodeError
    for first, lines, data, ended in _chunks(fh, path):
        clean = _unescaped(data)
        for start in range(0, len(lines), size):
            part = lines[start : start + size]
            if clean or _unescaped(b"\n".join(part)):
                try:
                    plain = plain_rows(list(map(loads, part)))
                except decode_error:
                    plain = None
                if plain is not None:
                    number = first + start
                    yield RecordBlock(range(number, number + len(part)), *plain)
                    continue
            whole = _with_newlines(part, ended or start + size < len(lines))
            yield _line_by_line(first + start, whole, path)


def _line_by_line(first: int, lines: list[bytes], path: Path) -> RecordBlock:
    """Lines (each with its newline, as the file holds it) read one by one.

    A line as `kvdrill export` writes it takes the fast road: orjson reads it and
    plain_values checks it. Any other line (or one the fast road turns down) is read by
    drill.json_input and checked by checked_values, whose messages name what is wrong.
    """
    loads, decode_error = orjson.loads, orjson.JSONDecodeError
    numbers: list[int] = []
    rows: list[tuple] = []
    for number, raw in enumerate(lines, start=first):
        if _plain(raw):
            try:
                record = loads(raw)
            except decode_error:
                record = None
            if type(record) is dict:
                values = plain_values(record)
                if values is not None:
                    numbers.append(number)
                    rows.append(values)
                    continue
        values = _slow_jsonl_line(number, raw, path)
        if values is not None:
            numbers.append(number)
            rows.append(values)
    return RecordBlock(numbers, rows, None)


def _slow_jsonl_line(number: int, raw: bytes, path: Path) -> tuple | None:
    """One line read by drill.json_input and checked by checked_values (None if blank)."""
    line = _text(number, raw, path)
    if not line.strip():
        return None
    try:
        record = parse_json(line)
    except JSONInputError as exc:
        raise HistoryError(f"{path}:{number}: not valid JSON ({exc.reason})") from None
    if not isinstance(record, dict):
        raise HistoryError(f"{path}:{number}: expected a JSON object per line")
    return _checked(record, number, path)


def _checked(record: Any, number: int, path: Path) -> tuple:
    try:
        return checked_values(record)
    except RecordError as exc:
        raise HistoryError(f"{path}:{number}: {exc}") from None


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
        # the text cells an export made inert for a spreadsheet: one leading ' comes off
        texts = [h for h in header if h in CSV_TEXT_FIELDS]
        start = reader.line_num + 1
        for cells in reader:
            number, start = start, reader.line_num + 1
            if not any(c.strip() for c in cells):
                continue
            if len(cells) != len(header):
                raise HistoryError(
                    f"{path}:{number}: {len(cells)} cells, the header has {len(header)}"
                )
            record = {h: (c if c != "" else None) for h, c in zip(header, cells, strict=True)}
            for name in texts:
                text = record[name]
                if text is not None and text[:1] == "'":
                    record[name] = text[1:]
            yield number, record
    except csv.Error as exc:
        raise HistoryError(f"{path}:{reader.line_num}: malformed CSV ({exc})") from None


def _csv_blocks(fh: _Readable, path: Path, size: int) -> Iterator[RecordBlock]:
    numbers: list[int] = []
    rows: list[tuple] = []
    for number, record in _csv_records(_decoded_lines(fh, path), path):
        numbers.append(number)
        rows.append(_checked(record, number, path))
        if len(rows) >= size:
            yield RecordBlock(numbers, rows, None)
            numbers, rows = [], []
    if rows:
        yield RecordBlock(numbers, rows, None)


def record_blocks(
    fh: _Readable, path: Path, fmt: str, size: int = BLOCK_RECORDS
) -> Iterator[RecordBlock]:
    """The records read from `fh`, a history file of format `fmt` that messages call
    `path`, in blocks of at most `size` (a JSON Lines block: `size` lines)."""
    if fmt == "jsonl":
        return _jsonl_blocks(fh, path, size)
    return _csv_blocks(fh, path, size)


def record_values(fh: _Readable, path: Path, fmt: str) -> Iterator[tuple[int, tuple]]:
    """(line, column values in FIELDS order) of each record read from `fh`, a history
    file of format `fmt` that messages call `path`."""
    for block in record_blocks(fh, path, fmt):
        yield from zip(block.numbers, block.rows, strict=True)


def resolve_format(source: Source, fmt: str | None) -> str:
    fmt = fmt or detect_format(source.path, source.head)
    if fmt not in FORMATS:
        raise HistoryError(f"unknown history format {fmt!r}; use jsonl or csv")
    return fmt


_FIRST = operator.itemgetter(0)


class SeenIds:
    """The ids of one file, to tell a repeated record from one that contradicts it.

    Per record, a hash of its id, a hash of the whole record and its line go into
    arrays of machine integers (20 bytes a record: a million records take 20 MB
    where a dict would take 150); `repeats` compares them once the file is read.
    """

    def __init__(self) -> None:
        self.ids, self.records, self.lines = array("q"), array("q"), array("q")

    def add(self, block: RecordBlock) -> None:
        """A block of records: their lines and their values in FIELDS order (the id first)."""
        self.ids.extend(map(hash, map(_FIRST, block.rows)))
        self.records.extend(map(hash, block.rows))
        self.lines.extend(block.numbers)

    def repeats(self) -> tuple[int, list[tuple[int, int]]]:
        """(how many records repeat an earlier one exactly, and (first line, later line)
        of each later record whose id hash matches an earlier one but whose content
        does not), later lines in file order."""
        if len(self.ids) < 2:
            return 0, []
        import numpy as np

        ids = np.frombuffer(self.ids, dtype=np.int64)
        records = np.frombuffer(self.records, dtype=np.int64)
        lines = np.frombuffer(self.lines, dtype=np.int64)
        order = np.argsort(ids, kind="stable")  # equal ids stay in file order
        starts_group = np.concatenate(([True], ids[order][1:] != ids[order][:-1]))
        first = order[np.flatnonzero(starts_group)[np.cumsum(starts_group) - 1]]
        later = order[~starts_group]
        first = first[~starts_group]
        same = records[later] == records[first]
        pairs = sorted(zip(lines[later[~same]].tolist(), lines[first[~same]].tolist(), strict=True))
        return int(same.sum()), [(a, b) for b, a in pairs]


def _ids_at(source: Source, fmt: str, wanted: set[int]) -> dict[int, str]:
    """The review ids on the lines `wanted` (read again, for an error message)."""
    return {
        number: values[0]
        for number, values in record_values(source.again(), source.path, fmt)
        if number in wanted
    }


def check_repeats(source: Source, fmt: str) -> int:
    """How many records of the file repeat an earlier one exactly; HistoryError for an id
    whose records differ, naming both lines. Reads the file again from the start."""
    seen = SeenIds()
    for block in record_blocks(source.again(), source.path, fmt):
        seen.add(block)
    identical, suspects = seen.repeats()
    if suspects:
        ids = _ids_at(source, fmt, {line for pair in suspects for line in pair})
        for first, later in suspects:
            if ids[first] == ids[later]:  # not two ids with one hash
                raise HistoryError(
                    f"{source.path}:{later}: review id {ids[later]} also on line {first} "
                    "with different content"
                )
    return identical
