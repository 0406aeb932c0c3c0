"""The export written by SQLite is byte for byte what the reference writers give for each
record: drill.storage.review_record.ENCODER for JSON Lines, csv.writer for CSV (a carriage return quoted)."""

import csv
import io
import json
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drill.srs import iso
from drill.storage.database import open_db
from drill.storage.history_out import export_history
from drill.storage.review_record import ENCODER, FIELDS, Review

T0 = datetime(2026, 10, 1, 9, 0, tzinfo=timezone.utc)


# text cells a spreadsheet could read as a formula (or the escape itself, or empty text)
# get one leading ', which an import takes off again
TEXT_FIELDS = ("question_id", "answer", "unit", "misconception", "session_id")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "'", "\x00")


def reference(db, fmt: str) -> str:
    """The stored reviews as the record writers give them, oldest first (ties by id), a
    text cell that starts as a formula could, or is empty, with a ' before it."""
    columns = ", ".join(FIELDS)
    stored = db.execute(f"select {columns} from reviews order by reviewed_at, id").fetchall()
    records = [Review(*values).record() for values in stored]
    if fmt == "jsonl":
        return "".join(ENCODER.encode(record) + "\n" for record in records)
    out = io.StringIO()
    out.write(",".join(FIELDS) + "\n")
    for record in records:
        cells = []
        for name in FIELDS:
            value = record[name]
            if value is None:
                cells.append("")
            elif isinstance(value, bool):
                cells.append("true" if value else "false")
            elif isinstance(value, dict):
                cells.append(ENCODER.encode(value))
            elif name in TEXT_FIELDS and (value == "" or value.startswith(FORMULA_STARTS)):
                cells.append("'" + value)
            else:
                cells.append(str(value))
        # "\r\n" as the terminator makes csv.writer quote a cell holding either character
        line = io.StringIO()
        csv.writer(line, lineterminator="\r\n").writerow(cells)
        out.write(line.getvalue()[:-2] + "\n")
    return out.getvalue()


def export(db, fmt: str) -> str:
    out = io.BytesIO()
    count = export_history(db, out, fmt)
    assert count == db.execute("select count(*) from reviews").fetchone()[0]
    return out.getvalue().decode("utf-8")


_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
_name = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=12)
_params = st.dictionaries(
    _name,
    st.one_of(
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        _text,
        st.booleans(),
        st.none(),
        st.lists(st.integers(), max_size=3),
    ),
    max_size=4,
)


@st.composite
def reviews(draw):
    rows = []
    for _ in range(draw(st.integers(min_value=0, max_value=6))):
        params = draw(st.one_of(st.none(), _params))
        # what the quiz stores (json.dumps: spaces, \\u escapes, sorted) or an import (canonical)
        if params is not None:
            params = draw(
                st.sampled_from([json.dumps(params, sort_keys=True), ENCODER.encode(params)])
            )
        rows.append(
            {
                "id": str(uuid.UUID(int=draw(st.integers(min_value=0, max_value=2**128 - 1)))),
                "question_id": draw(_name),
                "reviewed_at": iso(T0 + timedelta(seconds=draw(st.integers(0, 3)))),
                "rating": draw(st.integers(min_value=1, max_value=4)),
                "correct": draw(st.sampled_from([None, 0, 1])),
                "answer": draw(st.one_of(st.none(), _text)),
                "duration_ms": draw(st.one_of(st.none(), st.integers(0, 2**40))),
                "seed": draw(st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1))),
                "params": params,
                "expected": draw(
                    st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False))
                ),
                "unit": draw(st.one_of(st.none(), _name)),
                "misconception": draw(st.one_of(st.none(), _name)),
                "session_id": draw(st.one_of(st.none(), _name)),
                "cram": draw(st.sampled_from([0, 1])),
                "ticks": draw(st.one_of(st.none(), st.from_regex(r"[01]{1,16}", fullmatch=True))),
            }
        )
    return rows


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=reviews())
def test_each_line_is_what_the_record_writers_write(tmp_path_factory, rows):
    db = open_db(tmp_path_factory.mktemp("db") / "k.db")
    unique = list({row["id"]: row for row in rows}.values())
    db["reviews"].insert_all(unique)
    for fmt in ("jsonl", "csv"):
        assert export(db, fmt) == reference(db, fmt)
    db.conn.close()


def test_awkward_values_by_hand(tmp_path):
    db = open_db(tmp_path / "k.db")
    row = dict.fromkeys(FIELDS)
    row.update(
        id=str(uuid.UUID(int=7)),
        question_id='q, "quoted"',
        reviewed_at=iso(T0),
        rating=2,
        correct=0,
        answer="line one\r\nline two, \u00e9\x01\x7f",
        params=json.dumps({"b": 1e16, "a": "\u00e9", "c": [1, 2]}, sort_keys=True),
        expected=1e-05,
        cram=1,
    )
    db["reviews"].insert(row)
    assert export(db, "jsonl") == (
        '{"id":"00000000-0000-0000-0000-000000000007","question_id":"q, \\"quoted\\"",'
        '"reviewed_at":"2026-10-01T09:00:00.000000+00:00","rating":2,"correct":false,'
        '"answer":"line one\\r\\nline two, \u00e9\\u0001\x7f","duration_ms":null,"seed":null,'
        '"params":{"a":"\u00e9","b":1e+16,"c":[1,2]},"expected":1e-05,"unit":null,'
        '"misconception":null,"session_id":null,"cram":true,"ticks":null}\n'
    )
    assert export(db, "csv").splitlines(keepends=True)[1:] == [
        '00000000-0000-0000-0000-000000000007,"q, ""quoted""",'
        '2026-10-01T09:00:00.000000+00:00,2,false,"line one\r\n',
        'line two, \u00e9\x01\x7f",,,"{""a"":""\u00e9"",""b"":1e+16,""c"":[1,2]}",1e-05,,,,true,\n',
    ]


def test_plain_rows_and_cells_just_outside_plain_text_by_hand(tmp_path):
    # the first row's text cells all start with a letter or a digit and hold no comma,
    # quote or line break; each of the second's is just outside that: a colon (above 9,
    # not a formula), empty text, a formula start, a comma
    db = open_db(tmp_path / "k.db")
    plain = dict.fromkeys(FIELDS)
    plain.update(
        id=str(uuid.UUID(int=2)), question_id="kv-bytes", reviewed_at=iso(T0), rating=1,
        correct=0, answer="512 MiB", duration_ms=900, params='{"layers":32}',
        expected=536870912.0, unit="bytes", session_id="9s", cram=1, ticks="101",
    )  # fmt: skip
    edge = dict.fromkeys(FIELDS)
    edge.update(
        id=str(uuid.UUID(int=1)), question_id="9lives", reviewed_at=iso(T0), rating=3,
        correct=1, answer=":colon", duration_ms=1200, seed=7, params='{"a": 1}', expected=2.0,
        unit="", misconception="@home", session_id="Zebra, striped", cram=0,
    )  # fmt: skip
    db["reviews"].insert_all([plain, edge])
    assert export(db, "csv").splitlines(keepends=True)[1:] == [
        "00000000-0000-0000-0000-000000000001,9lives,2026-10-01T09:00:00.000000+00:00,3,true,"
        ':colon,1200,7,"{""a"":1}",2.0,\',\'@home,"Zebra, striped",false,\n',
        "00000000-0000-0000-0000-000000000002,kv-bytes,2026-10-01T09:00:00.000000+00:00,1,"
        'false,512 MiB,900,,"{""layers"":32}",536870912.0,bytes,,9s,true,101\n',
    ]
    assert export(db, "csv") == reference(db, "csv")


@pytest.mark.parametrize(
    "expected, text",
    [
        (536870912.0, "536870912.0"),
        (-3.0, "-3.0"),
        (0.0, "0.0"),
        (-0.0, "0.0"),  # SQLite keeps no sign on a zero
        (999999999999999.0, "999999999999999.0"),
        (1e15, "1000000000000000.0"),
        (-1e15, "-1000000000000000.0"),
        (1e16, "1e+16"),
        (2.5, "2.5"),
        (1e-05, "1e-05"),
        (0.1, "0.1"),
        (None, "null"),
    ],
)
def test_expected_is_written_as_python_writes_it(tmp_path, expected, text):
    db = open_db(tmp_path / "k.db")
    row = dict.fromkeys(FIELDS)
    row.update(id=str(uuid.UUID(int=1)), question_id="q", reviewed_at=iso(T0), rating=3)
    row.update(expected=expected, cram=0)
    db["reviews"].insert(row)
    for fmt in ("jsonl", "csv"):
        assert export(db, fmt) == reference(db, fmt)
    assert f',"expected":{text},' in export(db, "jsonl")


@pytest.mark.parametrize(
    "answer, cell",
    [
        # a leading NUL is one of the formula starts: a ' goes before it
        ("\x00\n", '"\'\x00\n"'),
        ("a\x00, b", '"a\x00, b"'),
        ('\x00"', '"\'\x00"""'),
        ("a\x00b", "a\x00b"),
        ('a,\x00"\n', '"a,\x00""\n"'),
        ("\x00", "'\x00"),
        ("=\x00,", '"\'=\x00,"'),
    ],
)
def test_an_answer_holding_a_nul_is_quoted_as_csv_writer_quotes_it(tmp_path, answer, cell):
    """SQLite's glob and printf stop at a NUL: what follows it must still be seen."""
    db = open_db(tmp_path / "k.db")
    row = dict.fromkeys(FIELDS)
    row.update(id=str(uuid.UUID(int=3)), question_id="q", reviewed_at=iso(T0), rating=1, cram=0)
    db["reviews"].insert({**row, "answer": answer})
    line = export(db, "csv").split("\n", 1)[1]
    assert line == f"00000000-0000-0000-0000-000000000003,q,{iso(T0)},1,,{cell},,,,,,,,false,\n"
    assert export(db, "csv") == reference(db, "csv")
