"""Review history in: a history file (JSON Lines or CSV, drill.storage.history_read) merged
into the database by review id, then the cards rebuilt.

Import merges by id: a review already in the database is left as it is, so importing a
file twice adds nothing. An id twice in one file is read once when both records are the
same, and is an error naming both lines when they differ. Then every card is rebuilt by
replaying all non-cram reviews through FSRS in time order. It is all one transaction: a
file with any bad record imports nothing, and the error names FILE:LINE.
"""

from __future__ import annotations

import gc
import itertools
import operator
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from drill.srs import Replay, parse_iso, replay_rows
from drill.storage.history_read import (
    BLOCK_RECORDS,
    RecordBlock,
    Source,
    check_repeats,
    record_blocks,
    resolve_format,
)
from drill.storage.review_record import FIELDS
from drill.storage.reviews import write_transaction
from drill.storage.sqlite_library import Database

BATCH_SIZE = BLOCK_RECORDS
# the most page cache an import may use: enough for the id index of a million reviews, and
# the sort that builds each index again uses as much, so a million-review import peaks
# near 280 MiB
IMPORT_CACHE_KIB = 128 * 1024


# Writing a history out is drill.storage.history_out.export_history.


@dataclass(frozen=True)
class ImportResult:
    read: int  # records in the file (a record repeated exactly counts once)
    added: int  # reviews that were not in the database yet
    cards: int  # card rows rebuilt by replay


def rebuild_cards(
    db: Database,
    scheduler,
    cards: dict[str, dict] | None = None,
    *,
    questions: Iterable[str] | None = None,
    place: Callable[[Database, dict[str, dict]], None] | None = None,
) -> int:
    """Replace every card that has non-cram reviews by the replay of its whole history
    (or by `cards`, that replay made already); with `questions`, only those cards.
    `place(db, cards)` may then move the replayed due dates (the load balancer)."""
    if cards is None:
        where = ""
        args: list[str] = []
        if questions is not None:
            import json

            where = " and question_id in (select value from json_each(?))"
            args = [json.dumps(sorted(set(questions)))]
        cursor = db.execute(
            "select question_id, reviewed_at, rating from reviews"
            f" where not coalesce(cram, 0){where} order by reviewed_at, id",
            args,
        )
        cards = replay_rows(scheduler, cursor)
    if place is not None:
        place(db, cards)
    # an upsert sets the schedule's columns and keeps the rest: a question suspended,
    # buried or flagged a leech stays so after an import
    db.table("cards").upsert_all(cards.values(), pk="question_id", batch_size=BATCH_SIZE)
    return len(cards)


class _ReplayInOrder:
    """The replay of a file's reviews as they are read, for an import into a database
    without reviews: when the file holds each review once, in time order (ties by id),
    as an export writes it, that is the replay of the database afterwards, and reading
    the reviews back is saved. `cards()` is None when the file was not in that order."""

    def __init__(self, scheduler) -> None:
        self.replay: Replay | None = Replay(scheduler)
        self.last: tuple[str, str] = ("", "")

    def add(self, block: RecordBlock) -> None:
        rows = block.rows
        if self.replay is None or not rows:
            return
        moments = list(map(_AT, rows))
        if not (moments[0] > self.last[0] and _increasing(moments)):  # ties: by id
            keys = list(zip(moments, map(_ID, rows), strict=True))
            if keys[0] <= self.last or not _increasing(keys):
                self.replay = None  # out of order, or a repeat: the database decides
                return
        self.last = (moments[-1], rows[-1][0])
        times = block.times if block.times is not None else list(map(parse_iso, map(_AT, rows)))
        self.replay.add_all(map(_QUESTION, rows), times, map(_RATING, rows), map(_CRAM, rows))

    def cards(self) -> dict[str, dict] | None:
        replay, self.replay = self.replay, None
        return None if replay is None else replay.card_rows()


def _increasing(keys: list) -> bool:
    """Whether each of `keys` is greater than the one before it."""
    return all(map(operator.lt, keys, itertools.islice(keys, 1, None)))


_ID, _QUESTION, _AT, _RATING, _CRAM = (
    operator.itemgetter(FIELDS.index(name))
    for name in ("id", "question_id", "reviewed_at", "rating", "cram")
)


@contextmanager
def _counting_once(conn: Any) -> Iterator[None]:
    """Inside a write transaction: the per-question counters (migration m004) are kept by
    a trigger that costs each inserted review an upsert; a bulk insert drops the trigger,
    counts every question once at the end and puts the trigger back as it was. On an
    error the rollback restores both."""
    row = conn.execute(
        "select sql from sqlite_master where type = 'trigger' and name = 'count_review'"
    ).fetchone()
    if row is not None:
        conn.execute("drop trigger count_review")
    yield
    if row is not None:
        conn.execute("delete from question_counts")
        conn.execute(
            "insert into question_counts (question_id, reviews, answered_right)"
            " select question_id, count(*), coalesce(sum(coalesce(correct, rating > 1)), 0)"
            " from reviews group by question_id"
        )
        conn.execute(row[0])


@contextmanager
def _without_cycle_collection() -> Iterator[None]:
    """Python's cycle collector off while a file is read: a block's records hold no
    reference cycle, and the collector would walk each block's fresh objects again and
    again (a tenth of the reading time). Back on afterwards, as it was."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def _indexes_after(conn: Any, bulk: bool) -> Iterator[None]:
    """Inside a write transaction: for a bulk insert (`bulk`: into an empty table) the
    secondary indexes of reviews are dropped and built again at the end, a sort of the
    finished table instead of a million scattered index inserts (a third of the insert
    time). The primary key stays: it decides which reviews are new. On an error the
    rollback restores them."""
    rows = (
        conn.execute(
            "select name, sql from sqlite_master"
            " where type = 'index' and tbl_name = 'reviews' and sql is not null"
        ).fetchall()
        if bulk
        else []
    )
    for name, _sql in rows:
        conn.execute(f'drop index "{name}"')
    yield
    for _name, sql in rows:
        conn.execute(sql)


_INSERT_SQL = (
    f"insert or ignore into reviews ({', '.join(FIELDS)}) values ({', '.join('?' for _ in FIELDS)})"
)


def import_history(
    db: Database,
    path: Path,
    scheduler,
    *,
    fmt: str | None = None,
    batch_size: int = BATCH_SIZE,
    only_its_questions: bool = False,
    place: Callable[[Database, dict[str, dict]], None] | None = None,
) -> ImportResult:
    """Merge a history file into the database by review id and rebuild the cards (with
    `only_its_questions`, only the cards of the questions the file names: the other
    cards keep their due dates as they are).

    One write transaction: on any bad record (HistoryError naming FILE:LINE) nothing
    changes. A quiz in another terminal waits for it (up to the busy timeout).
    Rows go in by `executemany` of INSERT OR IGNORE, `batch_size` records at a time:
    the id decides, and a review already present is left as it is. When some record
    was not inserted, the file is read again to tell an id repeated with the same
    record (read once) from one repeated with a different record (an error naming
    both lines), still inside the transaction. Into an empty database, a file in time
    order is replayed while it is read.

    `path` is read from the start: a pipe, a FIFO or /dev/stdin as well as a file (see
    Source); the file is opened before the transaction begins.
    """
    with Source(path) as source:
        fmt = resolve_format(source, fmt)
        return _import_from(db, source, fmt, scheduler, batch_size, only_its_questions, place)


def _import_from(
    db: Database,
    source: Source,
    fmt: str,
    scheduler,
    batch_size: int,
    only_its_questions: bool,
    place: Callable[[Database, dict[str, dict]], None] | None,
) -> ImportResult:
    read = 0
    conn = db.conn
    # IMMEDIATE (as the quiz writes): holding the write lock from the start means a
    # quiz answer committed meanwhile cannot make this transaction's upgrade fail
    cache_pages = conn.execute("pragma cache_size").fetchone()[0]
    # Random UUID keys scatter inserts over the id index; with SQLite's default 2 MiB
    # page cache a million-row import spends a third of its insert time re-reading pages.
    conn.execute(f"pragma cache_size = -{IMPORT_CACHE_KIB}")
    try:
        with write_transaction(db), _counting_once(conn):
            empty = conn.execute("select not exists (select 1 from reviews)").fetchone()[0]
            in_order = _ReplayInOrder(scheduler) if empty else None
            added = 0
            named: set[str] | None = set() if only_its_questions else None
            with _indexes_after(conn, bulk=empty), _without_cycle_collection():
                for block in record_blocks(source, source.path, fmt, batch_size):
                    read += len(block.rows)
                    if in_order is not None:
                        in_order.add(block)
                    if named is not None:
                        named.update(map(_QUESTION, block.rows))
                    # rowcount: the rows inserted, a review already present not counted
                    added += conn.executemany(_INSERT_SQL, block.rows).rowcount
            if added < read:  # a review already present, or an id twice in the file
                read -= check_repeats(source, fmt)
            replayed = in_order.cards() if in_order is not None else None
            cards = (
                rebuild_cards(db, scheduler, replayed, questions=named, place=place) if added else 0
            )
    finally:
        conn.execute(f"pragma cache_size = {cache_pages}")
    return ImportResult(read=read, added=added, cards=cards)
