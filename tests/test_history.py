import json
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from drill.cli import cli
from drill.errors import HistoryError
from drill.srs import iso, make_scheduler
from drill.storage.database import open_db
from drill.storage.history_in import import_history
from drill.storage.history_out import export_history
from drill.storage.history_read import detect_format
from drill.storage.review_record import FIELDS, RecordError, Review, checked_values

T0 = datetime(2026, 10, 1, 9, 0, tzinfo=timezone.utc)
SCHED = make_scheduler(fuzz=False)


def record_to_row(record):
    return dict(zip(FIELDS, checked_values(record), strict=True))


def row_to_record(row):
    return Review(**row).record()


def review(n, qid, minutes, rating, **extra):
    row = dict.fromkeys(FIELDS)
    row.update(
        id=str(uuid.UUID(int=n)),
        question_id=qid,
        reviewed_at=iso(T0 + timedelta(minutes=minutes)),
        rating=rating,
        cram=0,
    )
    row.update(extra)
    return row


HISTORY = [
    review(
        1,
        "kv-bytes-per-token",
        0,
        3,
        correct=1,
        answer="2*32*8*128*2 B",
        duration_ms=8400,
        seed=12345,
        params=json.dumps({"layers": 32, "model": 'Llama, "3" 8B'}),
        expected=0.1 + 0.2,
        unit="bytes",
        session_id="s1",
    ),
    review(
        2,
        "kv-bytes-per-token",
        60 * 24 * 3,
        1,
        correct=0,
        answer="64 KiB",
        misconception="forgot-kv",
        expected=131072.0,
        unit="bytes",
        seed=7,
    ),
    review(3, "prefill-vs-decode", 5, 3, answer="décodage, line one\nline two", duration_ms=0),
    review(4, "prefill-vs-decode", 60 * 24 * 2, 4, cram=1),
    review(5, "question-long-gone", 60 * 24, 2, correct=1, seed=-3),
    review(6, "kv-bytes-per-token", 60 * 24 * 10, 3, correct=1),
]


@pytest.fixture
def filled(tmp_path):
    db = open_db(tmp_path / "source.db")
    db["reviews"].insert_all(HISTORY)
    return db


def export_text(db, fmt):
    import io

    buf = io.BytesIO()
    export_history(db, buf, fmt)
    return buf.getvalue().decode("utf-8")


def all_reviews(db):
    """Rows by id, params parsed (its JSON text may differ in spacing)."""
    rows = list(db.query("select * from reviews order by id"))
    for row in rows:
        row["params"] = json.loads(row["params"]) if row["params"] else None
    return rows


def all_cards(db):
    return {r["question_id"]: r for r in db.query("select * from cards")}


# -------------------------------------------------------------------- round trip


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_export_import_export_gives_the_same_records(filled, tmp_path, fmt):
    first = export_text(filled, fmt)
    path = tmp_path / f"history.{fmt}"
    path.write_text(first, encoding="utf-8")
    fresh = open_db(tmp_path / "fresh.db")
    result = import_history(fresh, path, SCHED)
    assert (result.read, result.added, result.cards) == (6, 6, 3)
    assert export_text(fresh, fmt) == first
    assert all_reviews(fresh) == all_reviews(filled)


def test_jsonl_records_look_as_documented(filled):
    lines = export_text(filled, "jsonl").splitlines()
    first = json.loads(lines[0])
    assert list(first) == list(FIELDS)
    assert first["params"] == {"layers": 32, "model": 'Llama, "3" 8B'}
    assert first["correct"] is True and first["cram"] is False
    assert first["expected"] == 0.30000000000000004
    # oldest first
    assert [json.loads(line)["id"][-1] for line in lines] == ["1", "3", "5", "4", "2", "6"]


def test_csv_header_and_cells(filled):
    lines = export_text(filled, "csv").splitlines()
    assert lines[0] == ",".join(FIELDS)
    assert lines[1] == (
        "00000000-0000-0000-0000-000000000001,kv-bytes-per-token,"
        "2026-10-01T09:00:00.000000+00:00,3,true,2*32*8*128*2 B,8400,12345,"
        '"{""layers"":32,""model"":""Llama, \\""3\\"" 8B""}",0.30000000000000004,bytes,,s1,false,'
    )  # the last cell: ticks, null for a numeric answer


def test_importing_twice_adds_nothing(filled, tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_text(export_text(filled, "jsonl"))
    db = open_db(tmp_path / "fresh.db")
    import_history(db, path, SCHED)
    reviews, cards = all_reviews(db), all_cards(db)
    again = import_history(db, path, SCHED)
    assert (again.read, again.added) == (6, 0)
    assert all_reviews(db) == reviews and all_cards(db) == cards


def test_import_merges_with_reviews_already_there_and_keeps_them(filled, tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_text(export_text(filled, "jsonl"))
    db = open_db(tmp_path / "fresh.db")
    mine = dict(HISTORY[0], answer="my own answer")  # same id, different content
    db["reviews"].insert_all([mine, review(99, "local-only", 30, 3)])
    result = import_history(db, path, SCHED)
    assert (result.read, result.added) == (6, 5)
    assert db["reviews"].count == 7
    assert db["reviews"].get(mine["id"])["answer"] == "my own answer"


def test_cards_after_import_are_rebuilt_from_all_reviews(filled, tmp_path):
    path = tmp_path / "h.csv"
    path.write_text(export_text(filled, "csv"))
    db = open_db(tmp_path / "fresh.db")
    stale = review(98, "prefill-vs-decode", 1, 1)
    db["reviews"].insert(stale)
    db["cards"].insert(
        {"question_id": "prefill-vs-decode", "state": 2, "due": iso(T0), "reps": 40, "lapses": 9}
    )
    import_history(db, path, SCHED)
    # The merged history in time order, scheduled by hand with FSRS's learning steps
    # (1 min, 10 min: Again goes back to the first, Good moves on, Hard on the first
    # waits their mean, 5.5 min); a lapse is counted only for a card in review:
    #   kv-bytes-per-token  Good at 0, Again at day 3, Good at day 10: step 2 again
    #   prefill-vs-decode   Again at 1 min (the local review kept), Good at 5 min, and
    #                       the cram review at day 2 left out
    #   question-long-gone  Hard at day 1
    cards = all_cards(db)
    shown = ("state", "step", "due", "last_review", "reps", "lapses")
    assert {qid: tuple(row[k] for k in shown) for qid, row in cards.items()} == {
        "kv-bytes-per-token": (
            1, 1, iso(T0 + timedelta(days=10, minutes=10)), iso(T0 + timedelta(days=10)), 3, 0,
        ),
        "prefill-vs-decode": (
            1, 1, iso(T0 + timedelta(minutes=15)), iso(T0 + timedelta(minutes=5)), 2, 0,
        ),
        "question-long-gone": (
            1, 0, iso(T0 + timedelta(days=1, minutes=5.5)), iso(T0 + timedelta(days=1)), 1, 0,
        ),
    }  # fmt: skip


# ------------------------------------------------------------------- bad files


def test_a_malformed_line_fails_the_whole_import_naming_the_line(filled, tmp_path):
    lines = export_text(filled, "jsonl").splitlines()
    bad = json.loads(lines[3])
    bad["rating"] = 5
    lines[3] = json.dumps(bad)
    path = tmp_path / "h.jsonl"
    path.write_text("\n".join(lines) + "\n")
    db = open_db(tmp_path / "fresh.db")
    db["reviews"].insert(review(99, "local-only", 30, 3))
    with pytest.raises(HistoryError) as err:
        import_history(db, path, SCHED, batch_size=2)  # two batches in before the bad line
    assert str(err.value) == f"{path}:4: rating must be 1 to 4, not 5"
    assert [r["id"] for r in all_reviews(db)] == [str(uuid.UUID(int=99))]
    assert all_cards(db) == {}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "not valid JSON (Expecting property name enclosed in double quotes)"),
        ("[1, 2]", "expected a JSON object per line"),
        (
            '{"id": "x", "question_id": "q", "reviewed_at": "2026-10-01", "rating": 3}',
            "id must be a UUID, not 'x'",
        ),
        ('{"question_id": "q", "reviewed_at": "2026-10-01", "rating": 3}', "missing id"),
        (
            '{"id": "00000000-0000-0000-0000-000000000001", "question_id": "q",'
            ' "reviewed_at": "yesterday", "rating": 3}',
            "reviewed_at must be an ISO-8601 time, not 'yesterday'",
        ),
        (
            '{"id": "00000000-0000-0000-0000-000000000001", "question_id": "q",'
            ' "reviewed_at": "2026-10-01", "rating": 3, "mood": "good"}',
            "unknown field 'mood'",
        ),
        (
            '{"id": "00000000-0000-0000-0000-000000000001", "question_id": "q",'
            ' "reviewed_at": "2026-10-01", "rating": 3, "correct": "maybe"}',
            "correct must be true or false, not 'maybe'",
        ),
        (
            '{"id": "00000000-0000-0000-0000-000000000001", "question_id": "q",'
            ' "reviewed_at": "0001-01-01T00:00:00+01:00", "rating": 3}',
            "reviewed_at must be an ISO-8601 time, not '0001-01-01T00:00:00+01:00'",
        ),
        (
            '{"id": "00000000-0000-0000-0000-000000000001", "question_id": "q",'
            ' "reviewed_at": "2026-10-01", "rating": 3, "seed": 18446744073709551616}',
            "seed does not fit in 64 bits: 18446744073709551616",
        ),
        (
            '{"id": "00000000-0000-0000-0000-000000000001", "question_id": "q",'
            ' "reviewed_at": "2026-10-01", "rating": true}',
            "rating must be an integer, not True",
        ),
    ],
)
def test_bad_jsonl_lines_are_reported_with_file_and_line(tmp_path, line, message):
    good = json.dumps(row_to_record(HISTORY[0]))
    path = tmp_path / "h.jsonl"
    path.write_text(good + "\n\n" + line + "\n")
    with pytest.raises(HistoryError) as err:
        import_history(open_db(tmp_path / "x.db"), path, SCHED)
    assert str(err.value) == f"{path}:3: {message}"


def test_bad_csv_rows_name_their_line(tmp_path):
    path = tmp_path / "h.csv"
    path.write_text(
        "id,question_id,reviewed_at,rating,answer\n"
        '00000000-0000-0000-0000-000000000001,q,2026-10-01T10:00:00Z,3,"two\nlines"\n'
        "00000000-0000-0000-0000-000000000002,q,2026-10-02T10:00:00Z,3\n"
    )
    with pytest.raises(HistoryError) as err:
        import_history(open_db(tmp_path / "x.db"), path, SCHED)
    assert str(err.value) == f"{path}:4: 4 cells, the header has 5"
    path.write_text("id,question_id,rating\n")
    with pytest.raises(HistoryError, match=r"h.csv:1: the header has no 'reviewed_at' column"):
        import_history(open_db(tmp_path / "x.db"), path, SCHED)


def test_non_utf8_bytes_are_reported_with_their_line(tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_bytes(json.dumps(row_to_record(HISTORY[0])).encode() + b"\n\xff\xfe\n")
    with pytest.raises(HistoryError, match=r"h.jsonl:2: not UTF-8 text"):
        import_history(open_db(tmp_path / "x.db"), path, SCHED)


def test_a_csv_with_only_the_required_columns_and_local_offsets(tmp_path):
    path = tmp_path / "h.csv"
    path.write_text(
        "\ufeffrating,reviewed_at,question_id,id\n"
        "4,2026-10-01T11:00:00+02:00,q,{00000000-0000-0000-0000-0000000000AA}\n"
    )
    db = open_db(tmp_path / "x.db")
    assert import_history(db, path, SCHED).added == 1
    (row,) = all_reviews(db)
    assert row["id"] == "00000000-0000-0000-0000-0000000000aa"
    assert row["reviewed_at"] == "2026-10-01T09:00:00.000000+00:00"
    assert row["correct"] is None and row["cram"] == 0


def test_format_is_detected_by_extension_then_by_content(tmp_path):
    for name, text, fmt in [
        ("a.jsonl", "", "jsonl"),
        ("a.CSV", "{", "csv"),
        ("history", '  {"id": 1}', "jsonl"),
        ("history.txt", "id,question_id", "csv"),
    ]:
        (tmp_path / name).write_text(text)
        assert detect_format(tmp_path / name) == fmt


# ---------------------------------------------------------------------- parser


_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=8),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@given(st.dictionaries(st.sampled_from([*FIELDS, "extra"]), _values))
def test_any_json_object_is_a_row_or_a_record_error(record):
    try:
        row = record_to_row(record)
    except RecordError:
        return
    assert set(row) == set(FIELDS)
    assert 1 <= row["rating"] <= 4


# what the quiz stores: ids without control characters, answers of at most 10,000 characters
_ids = st.text(st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=1_000)


@given(
    st.builds(
        review,
        st.integers(min_value=0, max_value=2**128 - 1),
        _ids,
        st.integers(min_value=0, max_value=10**7),
        st.integers(min_value=1, max_value=4),
        correct=st.sampled_from([None, 0, 1]),
        answer=st.one_of(st.none(), st.text(max_size=10_000)),
        expected=st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False)),
        seed=st.one_of(st.none(), st.integers(min_value=-(2**63), max_value=2**63 - 1)),
        cram=st.sampled_from([0, 1]),
    )
)
def test_record_round_trip_through_json(row):
    record = json.loads(json.dumps(row_to_record(row)))
    assert record_to_row(record) == row


# -------------------------------------------------------------------------- CLI


def test_cli_export_then_import(filled, tmp_path):
    filled.conn.close()
    runner = CliRunner()
    src, out = tmp_path / "source.db", tmp_path / "out.csv"
    result = runner.invoke(cli, ["export", "--db", str(src), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text().startswith("id,question_id,")
    stdout = runner.invoke(cli, ["export", "--db", str(src)])
    assert len(stdout.output.splitlines()) == 6 and stdout.output.startswith('{"id":')
    result = runner.invoke(cli, ["import", str(out), "--db", str(tmp_path / "new.db")])
    assert result.exit_code == 0, result.output
    assert (
        result.output
        == f"Imported 6 new reviews from {out} (0 already present); rebuilt 3 cards.\n"
    )


def test_cli_import_of_a_bad_file_is_one_line_and_exit_1(tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_text("{}\n")
    result = CliRunner().invoke(cli, ["import", str(path), "--db", str(tmp_path / "x.db")])
    assert result.exit_code == 1
    assert result.output == f"Error: {path}:1: missing id\n"


def test_an_import_keeps_a_question_suspended_buried_or_flagged(tmp_path):
    def history_file(name, rows):
        path = tmp_path / name
        path.write_text("".join(json.dumps(row_to_record(r)) + "\n" for r in rows))
        return path

    db = open_db(tmp_path / "k.db")
    import_history(db, history_file("one.jsonl", HISTORY[:1]), SCHED)
    db.execute(
        "update cards set suspended_at = '2026-10-02T00:00:00.000000+00:00',"
        " buried_until = '2026-10-03T04:00:00.000000+00:00',"
        " leech_at = '2026-10-02T00:00:00.000000+00:00'"
    )
    db.conn.commit()
    import_history(db, history_file("two.jsonl", HISTORY[:2]), SCHED)
    assert db.execute(
        "select question_id, reps, suspended_at, buried_until, leech_at from cards"
    ).fetchall() == [
        ("kv-bytes-per-token", 2, "2026-10-02T00:00:00.000000+00:00",
         "2026-10-03T04:00:00.000000+00:00", "2026-10-02T00:00:00.000000+00:00"),
    ]  # fmt: skip


def test_two_imports_of_one_history_give_identical_cards(tmp_path):
    # 40 questions, 8 reviews each over two months, ratings drawn from a fixed seed: long
    # enough intervals that fsrs's fuzz range spans several days for most cards, so an
    # import that drew its fuzz at random would differ between the two databases
    import random

    rng = random.Random(7)
    rows = []
    for q in range(40):
        minutes = q * 7
        for k in range(8):
            minutes += rng.choice([1, 3, 9, 20]) * 60 * 24
            rows.append(review(q * 8 + k, f"q-{q:02d}", minutes, rng.choice([1, 3, 3, 3, 4])))
    path = tmp_path / "history.jsonl"
    path.write_text("".join(json.dumps(row_to_record(r)) + "\n" for r in rows))
    cards = []
    for name in ("a.db", "b.db"):
        result = CliRunner().invoke(cli, ["import", str(path), "--db", str(tmp_path / name)])
        assert result.exit_code == 0, result.output
        db = open_db(tmp_path / name)
        cards.append(db.execute("select * from cards order by question_id").fetchall())
        dues = db.execute("select due from cards").fetchall()
        db.conn.close()
    assert len(cards[0]) == 40
    assert cards[0] == cards[1]
    # the cards are not all due on one day: the spread is there, only drawn the same way
    assert len(set(dues)) > 10
