"""The floor of `kvdrill import`: the least one process can do to import an exported JSON
Lines history into an empty kvdrill database, with the same libraries and none of kvdrill.

    python benchmarks/import_floor.py FILE DATABASE CACHE_KIB

DATABASE is an empty kvdrill database (created and migrated beforehand); CACHE_KIB the
import's page cache (drill.storage.history_in.IMPORT_CACHE_KIB). This script
imports orjson, sqlite3 and fsrs only, and leaves the database as the import does:

- orjson reads each line; the record becomes the row's column values (booleans as 1/0,
  params as compact JSON text) with no check at all;
- one transaction, holding the write lock from the start, with the import's page cache:
  the counting trigger and the secondary indexes of reviews dropped, one executemany of
  the rows, the indexes built again, question_counts filled by one query, the trigger
  put back (the state the import leaves, reached the way the import reaches it);
- the replay: fsrs's review_card for each non-cram review in file order (an export is in
  time order), no fuzz, on datetimes parsed by datetime.fromisoformat; the card rows
  (fsrs's state, reps, lapses) inserted at the end. No load balancing: placing due dates
  is kvdrill's own work, and is counted against it.

It prints the number of reviews inserted and of cards written. The database's reviews
and question_counts come out identical to the import's; its cards differ only in `due`
where the import's load balancer moved a due date.
"""

from __future__ import annotations

import sqlite3
import sys
from datetime import datetime, timezone

import orjson
from fsrs import Card, Rating, Scheduler, State

FIELDS = (
    "id", "question_id", "reviewed_at", "rating", "correct", "answer", "duration_ms", "seed",
    "params", "expected", "unit", "misconception", "session_id", "cram", "ticks",
)  # fmt: skip


def main(path: str, database: str, cache_kib: int) -> None:
    conn = sqlite3.connect(database, isolation_level=None)
    conn.execute(f"pragma cache_size = -{cache_kib}")
    conn.execute("begin immediate")
    indexes = conn.execute(
        "select name, sql from sqlite_master"
        " where type = 'index' and tbl_name = 'reviews' and sql is not null"
    ).fetchall()
    trigger = conn.execute(
        "select sql from sqlite_master where type = 'trigger' and name = 'count_review'"
    ).fetchone()[0]
    conn.execute("drop trigger count_review")
    for name, _sql in indexes:
        conn.execute(f'drop index "{name}"')

    scheduler = Scheduler(enable_fuzzing=False)
    review = scheduler.review_card
    ratings = {int(rating): rating for rating in Rating}
    parse = datetime.fromisoformat
    dumps = orjson.dumps
    cards: dict[str, list] = {}  # question_id -> [Card, reps, lapses]

    def rows():
        with open(path, "rb") as fh:
            for line in fh:
                r = orjson.loads(line)
                correct, params, cram = r["correct"], r["params"], r["cram"]
                if not cram:
                    question, at, rating = r["question_id"], parse(r["reviewed_at"]), r["rating"]
                    entry = cards.get(question)
                    if entry is None:
                        entry = cards[question] = [Card(card_id=0, due=at), 0, 0]
                    card = entry[0]
                    lapse = card.state == State.Review and rating == 1
                    entry[0] = review(card, ratings[rating], at)[0]
                    entry[1] += 1
                    entry[2] += lapse
                yield (
                    r["id"], r["question_id"], r["reviewed_at"], r["rating"],
                    None if correct is None else int(correct), r["answer"], r["duration_ms"],
                    r["seed"], None if params is None else dumps(params).decode(),
                    r["expected"], r["unit"], r["misconception"], r["session_id"], int(cram),
                    r["ticks"],
                )  # fmt: skip

    inserted = conn.executemany(
        f"insert into reviews ({', '.join(FIELDS)}) values ({', '.join('?' * len(FIELDS))})",
        rows(),
    ).rowcount
    for _name, sql in indexes:
        conn.execute(sql)
    conn.execute("delete from question_counts")
    conn.execute(
        "insert into question_counts (question_id, reviews, answered_right)"
        " select question_id, count(*), coalesce(sum(coalesce(correct, rating > 1)), 0)"
        " from reviews group by question_id"
    )
    conn.execute(trigger)

    def when(moment: datetime | None) -> str | None:
        if moment is None:
            return None
        return moment.astimezone(timezone.utc).isoformat(timespec="microseconds")

    conn.executemany(
        "insert into cards (question_id, state, step, stability, difficulty, due, last_review,"
        " reps, lapses) values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (question, int(card.state), card.step, card.stability, card.difficulty,
             when(card.due), when(card.last_review), reps, lapses)
            for question, (card, reps, lapses) in cards.items()
        ],
    )  # fmt: skip
    conn.execute("commit")
    conn.close()
    print(inserted, len(cards))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
