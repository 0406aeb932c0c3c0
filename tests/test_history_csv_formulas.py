"""CSV export leaves no formula live in a spreadsheet, and an import reads every text back.

A text cell (question_id, answer, unit, misconception, session_id) that starts with `=`,
`+`, `-`, `@`, a tab, a carriage return, a NUL or `'` gets one `'` in front, and empty
text is a lone `'`; an import takes one leading `'` off. Numbers stay numbers."""

from __future__ import annotations

import csv
import io
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drill.cli import cli
from drill.srs import iso, make_scheduler
from drill.storage.database import open_db
from drill.storage.history_in import import_history
from drill.storage.history_out import export_history
from drill.storage.review_record import FIELDS

SCHED = make_scheduler(fuzz=False)
T0 = datetime(2026, 10, 1, 9, 0, tzinfo=timezone.utc)
HYPERLINK = '=HYPERLINK("http://x","click")'


def row(n: int, **values) -> dict:
    base = dict.fromkeys(FIELDS)
    base.update(
        id=str(uuid.UUID(int=n)),
        question_id="q",
        reviewed_at=iso(T0 + timedelta(minutes=n)),
        rating=3,
        cram=0,
    )
    return base | values


def csv_export(db) -> str:
    out = io.BytesIO()
    export_history(db, out, "csv")
    return out.getvalue().decode("utf-8")


def cells(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


def stored(db) -> list[dict]:
    return [dict(r) for r in db.query("select * from reviews order by id")]


@pytest.mark.parametrize(
    ("answer", "cell", "line"),
    [
        (HYPERLINK, "'" + HYPERLINK, '"\'=HYPERLINK(""http://x"",""click"")"'),
        ("=1+1", "'=1+1", "'=1+1"),
        ("+1", "'+1", "'+1"),
        ("-5", "'-5", "'-5"),
        ("@SUM(A1:A9)", "'@SUM(A1:A9)", "'@SUM(A1:A9)"),
        ("\t=1", "'\t=1", "'\t=1"),
        ("\r=1", "'\r=1", '"\'\r=1"'),
        ("'quoted'", "''quoted'", "''quoted'"),
        ("'", "''", "''"),
        ("", "'", "'"),
        (None, "", ""),
        ("0.5 GiB", "0.5 GiB", "0.5 GiB"),
        ("a = b - c", "a = b - c", "a = b - c"),
        (" =1", " =1", " =1"),  # a space first: no spreadsheet reads a formula
    ],
)
def test_an_answer_cell_by_hand(tmp_path, answer, cell, line):
    db = open_db(tmp_path / "k.db")
    db["reviews"].insert(row(1, answer=answer))
    text = csv_export(db)
    assert text.split("\n", 1)[1] == (
        f"00000000-0000-0000-0000-000000000001,q,{iso(T0 + timedelta(minutes=1))},3,,{line},"
        ",,,,,,,false,\n"  # the last cell: ticks, null
    )
    assert cells(text)[0]["answer"] == cell
    path = tmp_path / "h.csv"
    path.write_text(text, encoding="utf-8", newline="")
    fresh = open_db(tmp_path / "fresh.db")
    assert import_history(fresh, path, SCHED).added == 1
    assert fresh.execute("select answer from reviews").fetchone()[0] == answer


def test_every_text_column_is_neutralised_and_numbers_stay_numbers(tmp_path):
    db = open_db(tmp_path / "k.db")
    db["reviews"].insert(
        row(
            2,
            question_id="=cmd|' /C calc'!A0",
            answer="-3",
            duration_ms=0,
            seed=-3,
            expected=-3.0,
            unit="+bytes",
            misconception="@mistake",
            session_id="'s1",
        )
    )
    text = csv_export(db)
    assert text.split("\n", 1)[1] == (
        "00000000-0000-0000-0000-000000000002,'=cmd|' /C calc'!A0,"
        f"{iso(T0 + timedelta(minutes=2))},3,,'-3,0,-3,,-3.0,'+bytes,'@mistake,''s1,false,\n"
    )
    path = tmp_path / "h.csv"
    path.write_text(text, encoding="utf-8", newline="")
    fresh = open_db(tmp_path / "fresh.db")
    import_history(fresh, path, SCHED)
    assert fresh.execute(
        "select question_id, answer, seed, expected, unit, misconception, session_id from reviews"
    ).fetchone() == ("=cmd|' /C calc'!A0", "-3", -3, -3.0, "+bytes", "@mistake", "'s1")


def test_a_formula_answer_is_not_live_through_the_cli(tmp_path):
    db = open_db(tmp_path / "k.db")
    db["reviews"].insert_all(
        [row(1, answer=HYPERLINK), row(2, answer="-5"), row(3, answer="5"), row(4, answer="'")]
    )
    db.conn.close()
    out = tmp_path / "h.csv"
    runner = CliRunner()
    result = runner.invoke(
        cli, ["export", "--format", "csv", "--db", str(tmp_path / "k.db"), "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    answers = [c["answer"] for c in cells(out.read_text(encoding="utf-8"))]
    assert answers == ["'" + HYPERLINK, "'-5", "5", "''"]
    new_db = tmp_path / "new.db"
    result = runner.invoke(cli, ["import", str(out), "--db", str(new_db)])
    assert result.exit_code == 0, result.output
    assert result.output == (
        f"Imported 4 new reviews from {out} (0 already present); rebuilt 1 cards.\n"
    )
    assert [r["answer"] for r in stored(open_db(new_db))] == [HYPERLINK, "-5", "5", "'"]


# any text: leading formula characters often, every other character too
_starts = st.sampled_from(["=", "+", "-", "@", "\t", "\r", "'", "\x00", "''", ""])
_answer = st.one_of(
    st.none(),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=30),
    st.tuples(_starts, st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)).map(
        "".join
    ),
)
# the other text fields hold no control characters (drill.storage.review_record)
_name_chars = st.characters(blacklist_categories=("Cs", "Cc"))
_name = st.tuples(
    st.sampled_from(["=", "+", "-", "@", "'", ""]), st.text(_name_chars, max_size=12)
).map("".join)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    answers=st.lists(_answer, min_size=1, max_size=5),
    question=_name.filter(bool),
    unit=st.one_of(st.none(), _name),
    session=st.one_of(st.none(), _name),
    seed=st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)),
)
def test_any_text_exported_as_csv_imports_back_identical(
    tmp_path_factory, answers, question, unit, session, seed
):
    folder = tmp_path_factory.mktemp("csv")
    db = open_db(folder / "k.db")
    rows = [
        row(n, answer=a, question_id=question, unit=unit, session_id=session, seed=seed)
        for n, a in enumerate(answers, start=1)
    ]
    db["reviews"].insert_all(rows)
    text = csv_export(db)
    for cell in cells(text):
        for name in ("question_id", "answer", "unit", "session_id"):
            # no cell starts as a formula would, unless the ' made it text
            assert cell[name][:1] not in ("=", "+", "-", "@", "\t", "\r", "\x00")
    path = folder / "h.csv"
    path.write_text(text, encoding="utf-8", newline="")
    fresh = open_db(folder / "fresh.db")
    assert import_history(fresh, path, SCHED).added == len(rows)
    assert stored(fresh) == stored(db)
    db.conn.close()
    fresh.conn.close()
