"""An import reads an exported line by a fast road (orjson and drill.storage.review_record.plain_values)
and anything else by the careful one (drill.json_input and checked_values): both give the
same values, or the same error; and the cards it replays while reading a file in time
order into an empty database are those a replay of the database gives."""

import json
import random
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drill.errors import HistoryError
from drill.srs import iso, make_scheduler
from drill.storage import history_read
from drill.storage.database import open_db
from drill.storage.history_in import import_history, rebuild_cards
from drill.storage.review_record import (
    FIELDS,
    RecordError,
    checked_values,
    plain_rows,
    plain_values,
)

SCHED = make_scheduler(fuzz=False)
# the counting trigger as migration m004 made it, back after an import
COUNT_TRIGGER = (
    "CREATE TRIGGER count_review after insert on reviews begin"
    " insert into question_counts (question_id, reviews, answered_right)"
    " values (new.question_id, 1, coalesce(new.correct, new.rating > 1))"
    " on conflict (question_id) do update"
    " set reviews = reviews + 1, answered_right = answered_right + excluded.answered_right;"
    " end",
)
T0 = datetime(2026, 10, 1, 9, 0, tzinfo=timezone.utc)


def exported(n: int, **extra) -> dict:
    record = {
        "id": str(uuid.UUID(int=n)),
        "question_id": f"q-{n % 3}",
        "reviewed_at": iso(T0 + timedelta(minutes=7 * n)),
        "rating": 1 + n % 4,
        "correct": [None, True, False][n % 3],
        "answer": "0.5 GiB",
        "duration_ms": 1000 + n,
        "seed": -n,
        "params": {"layers": 32, "model": "Llama 3 8B", "gqa": True, "x": None},
        "expected": 536870912.0,
        "unit": "µs",
        "misconception": None,
        "session_id": "s1",
        "cram": n % 5 == 0,
    }
    return {**record, **extra}


def careful(line: str):
    """What the careful road makes of one line (with its newline, as a file holds it): its
    values, None for a blank, or the error."""
    from drill.json_input import JSONInputError, parse_json

    if not line.strip():
        return None
    try:
        record = parse_json(line)
    except JSONInputError as exc:
        return f"not valid JSON ({exc.reason})"
    if not isinstance(record, dict):
        return "expected a JSON object per line"
    try:
        return checked_values(record)
    except RecordError as exc:
        return str(exc)


def numbered_values(path, fmt):
    """(line, column values in FIELDS order) of each record of a history file, as an
    import reads them."""
    with history_read.Source(path) as source:
        yield from history_read.record_values(
            source, path, history_read.resolve_format(source, fmt)
        )


def imported(tmp_path, line: str):
    path = tmp_path / "one.jsonl"
    path.write_bytes(line.encode("utf-8", "surrogatepass") + b"\n")
    try:
        got = list(numbered_values(path, "jsonl"))
    except HistoryError as exc:
        return str(exc).split(": ", 1)[1]
    return got[0][1] if got else None


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),
    st.text(max_size=6),
)
_fields = {
    name: st.one_of(_scalars, st.just(value))
    for name, value in exported(1).items()
} | {
    "params": st.one_of(
        st.none(),
        st.dictionaries(st.text(max_size=3), _scalars, max_size=3),
        st.just({"nested": {"a": [1, 2.5]}}),
    ),
    "reviewed_at": st.sampled_from(
        ["2026-10-01T09:00:00.000000+00:00", "2026-02-30T09:00:00.000000+00:00",
         "1969-12-31T23:59:59.000000+00:00", "2026-10-01T09:00:00+02:00", "2026-10-01 09:00",
         "9000-12-31T23:59:59.999999+00:00", "9001-01-01T00:00:00.000000+00:00",
         "1970-01-01T00:00:00.000000+00:00", "2026-10-01T09:00:00.000000+01:00"]
    ),
    "id": st.sampled_from(
        [str(uuid.UUID(int=5)), str(uuid.UUID(int=5)).upper(), "not-a-uuid", ""]
    ),
}  # fmt: skip


@settings(max_examples=400)
@given(st.fixed_dictionaries({}, optional={**_fields, "extra": st.just(1)}))
def test_the_fast_road_agrees_with_checked_values(record):
    fast = plain_values(record)
    if fast is None:
        return
    assert fast == checked_values(record)


# an exported record (every field, ticks too) with up to two fields changed, each to a
# value drawn for that field or any scalar, so that most blocks are in export form and
# some are not
_changed_values = {
    **{name: strategy | _scalars | st.integers(-1, 5) for name, strategy in _fields.items()},
    "ticks": st.sampled_from(["", "2", "1" * 17, "01", None]) | _scalars,
    "extra": st.just(1),
}
_near_exported = st.builds(
    lambda n, ticks, changes: {**exported(n, ticks=ticks), **dict(changes)},
    st.integers(0, 50),
    st.sampled_from([None, "1", "0110"]),
    st.lists(
        st.sampled_from(sorted(_changed_values)).flatmap(
            lambda name: st.tuples(st.just(name), _changed_values[name])
        ),
        max_size=2,
    ),
)


@settings(max_examples=400)
@given(st.lists(_near_exported, min_size=1, max_size=4))
def test_the_block_road_agrees_with_the_fast_road(records):
    block = plain_rows(records)
    one_by_one = [plain_values(record) for record in records]
    if block is None:
        assert None in one_by_one
        return
    rows, times = block
    assert rows == one_by_one
    assert [list(map(type, row)) for row in rows] == [list(map(type, v)) for v in one_by_one]
    assert [iso(t) for t in times] == [r["reviewed_at"] for r in records]


def test_the_block_road_takes_exported_records():
    records = [exported(n, ticks="101") for n in range(5)]
    rows, times = plain_rows(records)
    assert rows[1] == (
        "00000000-0000-0000-0000-000000000001", "q-1", "2026-10-01T09:07:00.000000+00:00", 2,
        1, "0.5 GiB", 1001, -1, '{"layers":32,"model":"Llama 3 8B","gqa":true,"x":null}',
        536870912.0, "µs", None, "s1", 0, "101",
    )  # fmt: skip
    assert times[4] == datetime(2026, 10, 1, 9, 28, tzinfo=timezone.utc)
    assert plain_rows([*records[:4], {**records[4], "rating": True}]) is None
    assert plain_rows([*records[:4], {**records[4], "cram": None}]) is None
    assert plain_rows([*records[:4], exported(4, ticks="1", extra=1)]) is None
    assert plain_rows([*records[:4], {k: v for k, v in records[4].items() if k != "ticks"}]) is None


@pytest.mark.parametrize(
    "change",
    [
        {"id": "00000000-0000-0000-0000-00000000ABCD"},
        {"id": "00000000-0000-0000-0000-00000000abcg"},
        {"id": "00000000-0000-0000-0000_00000000abcd"},
        {"id": "00000000-0000-0000-0000-0000000٠abcd"},  # an Arabic-Indic zero
        {"reviewed_at": "9001-01-01T00:00:00.000000+00:00"},
        {"reviewed_at": "1969-12-31T23:59:59.999999+00:00"},
        {"reviewed_at": "2026-10-01T09:00:00.000000+01:00"},
        {"reviewed_at": "2026-10-01 09:00:00.000000+00:00"},
        {"reviewed_at": "2026-02-30T09:00:00.000000+00:00"},
        {"reviewed_at": "2026-10-01T09:00:00.000000Z00:00"},
        {"question_id": ""},
        {"rating": True},
        {"rating": 5},
        {"rating": 3.0},
        {"correct": 1},
        {"cram": None},
        {"duration_ms": -1},
        {"duration_ms": 2**63},
        {"seed": 2**63},
        {"expected": 5},
        {"params": {"nested": {"a": 1}}},
        {"params": {"x": 1.5}},
        {"params": []},
        {"ticks": ""},
        {"ticks": "012"},
        {"answer": "x" * 10_001},
        {"unit": "u" * 1_001},
        {"session_id": 7},
        {"extra": 1},
    ],
)
def test_the_block_road_turns_down_a_block_with_one_record_it_cannot_take(change):
    records = [exported(n, ticks="1") for n in range(4)]
    assert plain_rows(records) is not None
    assert plain_rows([*records, {**exported(4, ticks="1"), **change}]) is None


@pytest.mark.parametrize(
    "change",
    [
        {"reviewed_at": "9000-12-31T23:59:59.999999+00:00"},
        {"reviewed_at": "1970-01-01T00:00:00.000000+00:00"},
        {"id": "ffffffff-ffff-ffff-ffff-ffffffffffff"},
        {"seed": -(2**63), "duration_ms": 2**63 - 1},
        {"answer": "é" * 10_000, "unit": "u" * 1_000, "misconception": "m" * 1_000},
        {"params": {}, "ticks": "0" * 16, "correct": None, "expected": None},
    ],
)
def test_the_block_road_takes_a_record_at_the_edge_of_each_limit(change):
    record = {**exported(4, ticks="1"), **change}
    rows, _times = plain_rows([exported(3, ticks="1"), record])
    assert rows[1] == checked_values(record)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        _near_exported.map(lambda r: json.dumps(r, ensure_ascii=False, separators=(",", ":"))),
        min_size=1,
        max_size=5,
    )
)
def test_a_file_reads_as_the_careful_road_reads_each_line(tmp_path_factory, lines):
    """Blocks of 2 lines: a block the block road turns down is read line by line, and its
    first bad line is the error."""
    path = tmp_path_factory.mktemp("f") / "h.jsonl"
    path.write_bytes("".join(f"{line}\n" for line in lines).encode("utf-8", "surrogatepass"))
    expected: list = []
    for number, line in enumerate(lines, start=1):
        values = careful(line + "\n")
        if isinstance(values, str):
            expected = f"{path}:{number}: {values}"
            break
        expected.append((number, values))
    with history_read.Source(path) as source:
        try:
            got = [
                (number, values)
                for block in history_read.record_blocks(source, path, "jsonl", 2)
                for number, values in zip(block.numbers, block.rows, strict=True)
            ]
        except HistoryError as exc:
            got = str(exc)
    assert got == expected


@settings(max_examples=300, deadline=None)
@given(
    st.fixed_dictionaries({}, optional=_fields).map(
        lambda r: json.dumps(r, ensure_ascii=False, separators=(",", ":"))
    )
    | st.text(max_size=40)
)
def test_a_line_reads_as_the_careful_road_reads_it(tmp_path_factory, line):
    line = line.replace("\n", " ").replace("\r", " ")
    assert imported(tmp_path_factory.mktemp("l"), line) == careful(line + "\n")


@pytest.mark.parametrize(
    "line",
    [
        json.dumps(exported(3), ensure_ascii=False, separators=(",", ":")),
        json.dumps(exported(3)),  # spaces, \\u escapes: the careful road
        json.dumps(exported(3, seed=2**64)),  # orjson would read it as a float
        json.dumps(exported(3, params={"big": 2**70})),
        json.dumps(exported(3, expected=1e-05)),  # orjson writes 0.00001
        json.dumps(exported(3, answer="tab\there")),
        json.dumps(exported(3, question_id="bell\u0085")),  # a C1 control: refused
        json.dumps(exported(3, answer="x" * 2000)),
        '{"id":"00000000-0000-0000-0000-000000000003","rating":3,"rating":9}',
        "\ufeff" + json.dumps(exported(3)),
        "[1, 2]",
        "   ",
    ],
)
def test_awkward_lines_by_hand(tmp_path, line):
    assert imported(tmp_path, line) == careful(line.removeprefix("\ufeff") + "\n")


def write(path, records):
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)
    )


def cards_of(db):
    return {row["question_id"]: row for row in db.query("select * from cards")}


# not fsrs's defaults: the replay while reading must use the user's own curve
OWN = make_scheduler(
    0.85,
    fuzz=False,
    parameters=[0.3, 1.1, 2.5, 7.9, 6.2, 0.7, 2.9, 0.01, 1.7, 0.15, 0.8, 1.5, 0.07, 0.25,
                1.6, 0.55, 1.9, 0.5, 0.1, 0.07, 0.15],
)  # fmt: skip


def test_the_replay_across_blocks_uses_the_users_scheduler(tmp_path):
    write(tmp_path / "h.jsonl", [exported(n) for n in range(60)])
    db = open_db(tmp_path / "k.db")
    result = import_history(db, tmp_path / "h.jsonl", OWN, batch_size=7)
    assert (result.read, result.added, result.cards) == (60, 60, 3)
    after_import = cards_of(db)
    assert after_import["q-0"]["reps"] == 16  # 20 reviews, 4 of them cram
    db.execute("delete from cards")
    rebuild_cards(db, OWN)
    assert cards_of(db) == after_import
    db.execute("delete from cards")
    rebuild_cards(db, SCHED)
    assert cards_of(db) != after_import


@pytest.mark.parametrize("order", ["in time order", "shuffled", "with a repeat"])
def test_the_replay_while_reading_is_the_replay_of_the_database(tmp_path, order):
    records = [exported(n) for n in range(60)]
    if order == "shuffled":
        random.Random(4).shuffle(records)
    elif order == "with a repeat":
        records.insert(30, records[10])
    write(tmp_path / "h.jsonl", records)
    db = open_db(tmp_path / "k.db")
    result = import_history(db, tmp_path / "h.jsonl", SCHED)
    assert (result.read, result.added, result.cards) == (60, 60, 3)
    after_import = cards_of(db)
    db.execute("delete from cards")
    rebuild_cards(db, SCHED)
    assert cards_of(db) == after_import
    counts = db.execute("select * from question_counts order by question_id").fetchall()
    assert (
        counts
        == db.execute(
            "select question_id, count(*), sum(coalesce(correct, rating > 1)) from reviews"
            " group by question_id order by question_id"
        ).fetchall()
    )
    assert COUNT_TRIGGER in db.execute("select sql from sqlite_master").fetchall()


def test_a_failed_import_keeps_the_counting_trigger(tmp_path):
    write(tmp_path / "h.jsonl", [exported(1), exported(2, rating=7)])
    db = open_db(tmp_path / "k.db")
    with pytest.raises(HistoryError, match=r"h.jsonl:2: rating must be 1 to 4, not 7"):
        import_history(db, tmp_path / "h.jsonl", SCHED)
    assert db.execute("select count(*) from reviews").fetchone()[0] == 0
    assert COUNT_TRIGGER in db.execute("select sql from sqlite_master").fetchall()


REVIEW_INDEXES = [
    ("idx_reviews_misconception", "reviews"),
    ("idx_reviews_question_cover", "reviews"),
    ("idx_reviews_ticks", "reviews"),
    ("idx_reviews_time_cover", "reviews"),
    ("sqlite_autoindex_reviews_1", "reviews"),
]


def review_indexes(db) -> list[tuple[str, str]]:
    return db.execute(
        "select name, tbl_name from sqlite_master where type = 'index' and tbl_name = 'reviews'"
        " order by name"
    ).fetchall()


def test_a_bulk_import_builds_the_review_indexes_again(tmp_path):
    # into an empty database the secondary indexes are dropped and built at the end
    write(tmp_path / "h.jsonl", [exported(n) for n in range(12)])
    db = open_db(tmp_path / "k.db")
    import_history(db, tmp_path / "h.jsonl", SCHED)
    assert review_indexes(db) == REVIEW_INDEXES
    plan = db.execute(
        "explain query plan select reviewed_at from reviews where question_id = 'q-1'"
        " order by reviewed_at desc limit 1"
    ).fetchall()
    assert plan[0][3] == (
        "SEARCH reviews USING COVERING INDEX idx_reviews_question_cover (question_id=?)"
    )
    assert db.execute("pragma integrity_check").fetchall() == [("ok",)]


def test_a_failed_bulk_import_keeps_the_review_indexes(tmp_path):
    write(tmp_path / "h.jsonl", [exported(1), exported(2, rating=7)])
    db = open_db(tmp_path / "k.db")
    with pytest.raises(HistoryError):
        import_history(db, tmp_path / "h.jsonl", SCHED)
    assert review_indexes(db) == REVIEW_INDEXES


def test_lines_are_read_in_blocks_and_a_long_line_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(history_read, "READ_BYTES", 64)  # lines straddle the blocks
    records = [exported(n) for n in range(5)]
    write(tmp_path / "h.jsonl", records)
    values = [v for _, v in numbered_values(tmp_path / "h.jsonl", "jsonl")]
    assert values == [checked_values(r) for r in records]
    monkeypatch.setattr(history_read, "MAX_LINE_BYTES", 200)
    with pytest.raises(HistoryError, match=r"h.jsonl:1: the line is longer than 1 MiB"):
        list(numbered_values(tmp_path / "h.jsonl", "jsonl"))
    assert FIELDS[0] == "id"
