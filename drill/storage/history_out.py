"""Review history out: every review as a JSON Lines record or a CSV row (the format is in
drill.storage.history_in), oldest first, each line built by SQLite.

A million reviews leave as fast as the sqlite3 shell writes the same table: the query
itself writes each line, so Python handles one string per review instead of fourteen
values. What Python still does is what SQLite would do differently:

* `expected` is written as Python writes a float (`repr`: the shortest text that reads
  back exactly), which SQLite's own number format is not;
* `params` is written as stored when it is in the canonical form (compact, non-ASCII as
  is: what an import stores); text another writer stored (`json.dumps` with its spaces
  and \\u escapes) is re-encoded.

The lines are byte for byte what `drill.storage.review_record.ENCODER` (JSON) and `csv.writer` (CSV,
`lineterminator="\\n"`) write for `Review.record()`, except that a CSV cell holding a
carriage return is quoted, so it reads back (csv.writer leaves it bare), and that CSV's
text cells are made inert for a spreadsheet:

A spreadsheet runs a cell that starts with `=`, `+`, `-` or `@` (and, in some, a tab, a
carriage return or a NUL) as a formula: an answer typed as `=HYPERLINK("http://x","y")`
would be a link in the sheet. So a text cell (CSV_TEXT_FIELDS: question_id, answer, unit,
misconception, session_id) that starts with one of those, or with `'` itself, gets one
`'` in front, as OWASP recommends, and empty text (not null) is written as a lone `'`; an
import takes exactly one leading `'` off these cells (drill.storage.history_in), so every text reads
back as it was. Numbers (rating, duration_ms, seed, expected) stay numbers, a negative one
included: a spreadsheet reads `-3` as the number. The id and the time are stored in their
canonical forms (hex, digits) and params is a quoted JSON object: none starts so.
"""

from __future__ import annotations

import json
from operator import itemgetter
from typing import IO, Any

from drill.storage.review_record import ENCODER, FIELDS

BATCH_ROWS = 20_000
_first = itemgetter(0)
_NEWLINE = "\n"  # inside an SQL string: the line break itself
# a CSV cell is quoted when it holds a comma, a quote or a line break
_CSV_SPECIAL = '*[,"\r\n]*'
# a text cell gets a leading ' when it starts with what a spreadsheet may take for a
# formula, or with the ' itself (glob stops at a NUL: an answer holding one goes to Python)
FORMULA_STARTS = "=+-@\t\r'\x00"
_CSV_FORMULA = "[=+@'\t\r-]*"
CSV_TEXT_FIELDS = ("question_id", "answer", "unit", "misconception", "session_id")
# what json.dumps (its default separators, ASCII escapes) leaves in text, never ENCODER;
# canonical text seldom holds a space at all, so most rows are settled by two looks
_PARAMS = (
    "case when (instr(params, ' ') and (instr(params, ', ') or instr(params, ': ')))"
    " or instr(params, '\\u') then canonical_params(params) else params end"
)
# a whole number below 1e15 (most answers: bytes, counts) is written by SQLite as Python
# writes it ("536870912.0"), without a call into Python; zero goes to Python for its sign
_EXPECTED = (
    "case when expected is null then null"
    " when expected != 0 and abs(expected) < 1e15 and expected = cast(expected as integer)"
    " then cast(cast(expected as integer) as text) || '.0'"
    " else float_text(expected) end"
)


def _bool(column: str, true: str, false: str) -> str:
    return f"case when {column} is null then null when {column} then {true} else {false} end"


def _jsonl_sql() -> str:
    true, false = "json('true')", "json('false')"
    values = {
        "correct": _bool("correct", true, false),
        "params": f"json({_PARAMS})",
        "expected": f"json({_EXPECTED})",
        "cram": f"case when cram then {true} else {false} end",
    }
    pairs = ", ".join(f"'{name}', {values.get(name, name)}" for name in FIELDS)
    return f"select json_object({pairs}) from reviews order by reviewed_at, id"


def _csv_text(column: str) -> str:
    """A text column's cell (see csv_text): a leading `'` where a spreadsheet could see a
    formula or the text is empty; quoted when it holds a comma, a quote or a line break."""
    escaped = f"replace({column}, '\"', '\"\"')"
    return (
        f"case when {column} glob :formula then"
        f" case when {column} glob :special then '\"''' || {escaped} || '\"'"
        f" else '''' || {column} end"
        f" when {column} glob :special then '\"' || {escaped} || '\"'"
        f" when {column} = '' then '''' else {column} end"
    )


def _csv_cells() -> dict[str, str]:
    """The cells every CSV line writes the same way: booleans as true/false, `expected`
    as Python writes it; the other columns as stored (ids, times, integers, ticks)."""
    return {
        "correct": _bool("correct", "'true'", "'false'"),
        "expected": _EXPECTED,
        "cram": "case when cram then 'true' else 'false' end",
    }


def _csv_exact_line() -> str:
    """One review's CSV line, newline included, each text cell looked at as csv_text does."""
    cells = _csv_cells()
    # an object's JSON text holds quotes unless it is {}: no need to look
    cells["params"] = (
        "case when params is null or params = '{}' then params"
        f" else '\"' || replace({_PARAMS}, '\"', '\"\"') || '\"' end"
    )
    # integers never need quotes, and neither do the id and the time: every record is
    # checked on its way in (drill.storage.review_record), and they are stored in their canonical forms
    for name in ("id", "reviewed_at", "rating", "duration_ms", "seed", "ticks"):
        cells[name] = name
    # printf writes NULL as an empty cell; but it stops at a NUL character, which only an
    # answer may hold, so the answer is joined in with ||. glob stops there too: an answer
    # holding a NUL (found in its bytes) is quoted by Python, as csv.writer would
    before, after = FIELDS[: FIELDS.index("answer")], FIELDS[FIELDS.index("answer") + 1 :]
    cells["answer"] = (
        "case when instr(cast(answer as blob), x'00') then csv_cell(answer)"
        f" else {_csv_text('answer')} end"
    )

    def printf(names: tuple[str, ...], lead: str, trail: str) -> str:
        row = ", ".join(cells.get(name, _csv_text(name)) for name in names)
        return f"printf('{lead}{','.join(['%s'] * len(names))}{trail}', {row})"

    answer = f"coalesce({cells['answer']}, '')"
    return f"{printf(before, '', ',')} || {answer} || {printf(after, ',', _NEWLINE)}"


def _plain_text(column: str) -> str:
    """True when a text cell is written as it is stored, and that is certain without a
    closer look: null, or text (not a blob: every text sorts below every blob) that starts
    with a letter (or any character above @) or a digit, so with nothing a spreadsheet takes
    for a formula, and holds no comma, quote or line break."""
    starts = f"({column} >= 'A' or ({column} >= '0' and {column} < ':')) and {column} < x''"
    return f"({column} is null or ({starts} and not {column} glob :special))"


def _csv_sql() -> str:
    """Each review's CSV line, oldest first. Nearly every line has only plain text cells
    (_plain_text) and an answer without a NUL: those are written by one printf, which quotes
    params itself (%w doubles its quotes), with no copy of a cell and one look at each; the
    others cell by cell (_csv_exact_line). Both give the same bytes."""
    cells = _csv_cells()

    def printf(params_quoted: bool, params: str) -> str:
        marks = ('"%w"' if name == "params" and params_quoted else "%s" for name in FIELDS)
        values = ", ".join(params if name == "params" else cells.get(name, name) for name in FIELDS)
        return f"printf('{','.join(marks)}{_NEWLINE}', {values})"

    plain = " and ".join(_plain_text(name) for name in CSV_TEXT_FIELDS)
    line = (
        f"case when {plain} and not instr(cast(answer as blob), x'00') then"
        f" case when params is null or params = '{{}}' then {printf(False, 'params')}"
        f" else {printf(True, _PARAMS)} end"
        f" else {_csv_exact_line()} end"
    )
    return f"select {line} from reviews order by reviewed_at, id"


def csv_text(text: str) -> str:
    """One text cell as the export writes it: a leading `'` when the text starts with one
    of FORMULA_STARTS or is empty, then quoted as csv.writer quotes (when it holds a comma,
    a quote or a line break, a carriage return included)."""
    if not text or text[0] in FORMULA_STARTS:
        text = "'" + text
    if any(c in text for c in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _canonical_params(text: str) -> str:
    return ENCODER.encode(json.loads(text))


def export_history(db: Any, out: IO[bytes], fmt: str) -> int:
    """Write every review to the binary stream `out` as UTF-8 `jsonl` or `csv`, oldest
    first (ties by id); return how many."""
    if fmt not in ("jsonl", "csv"):
        raise ValueError(f"unknown format {fmt!r}")
    conn = db.conn
    conn.create_function("canonical_params", 1, _canonical_params, deterministic=True)
    conn.create_function("float_text", 1, float.__repr__, deterministic=True)
    conn.create_function("csv_cell", 1, csv_text, deterministic=True)
    text_factory = conn.text_factory
    conn.text_factory = bytes  # each line stays the UTF-8 SQLite made, never decoded
    count = 0
    try:
        if fmt == "jsonl":
            cursor = conn.execute(_jsonl_sql())
        else:
            out.write(",".join(FIELDS).encode() + b"\n")
            cursor = conn.execute(_csv_sql(), {"special": _CSV_SPECIAL, "formula": _CSV_FORMULA})
        # a CSV line ends with its newline; a JSON Lines one gets it here
        end = b"" if fmt == "csv" else b"\n"
        while rows := cursor.fetchmany(BATCH_ROWS):
            out.write(end.join(map(_first, rows)))
            out.write(end)
            count += len(rows)
    finally:
        conn.text_factory = text_factory
    return count
