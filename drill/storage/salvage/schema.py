"""The damaged file's schema, as salvage needs it: the reviews table's root page and
columns, and every index that lists every review."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

IDENTITY = ("id", "question_id", "reviewed_at")  # what an index entry says of its review


@dataclass(frozen=True)
class IndexInfo:
    name: str
    root: int
    columns: tuple[str, ...]  # its key columns; the rowid follows them


@dataclass(frozen=True)
class Schema:
    root: int  # the reviews table's root page
    columns: tuple[str, ...]  # the table's columns, in the order its records hold them
    reals: frozenset[int]  # the positions of columns of REAL affinity
    indexes: tuple[IndexInfo, ...]  # the indexes that list every review
    trees: tuple[tuple[int, bool], ...]  # (root page, is a table) of every b-tree


def read_schema(conn: sqlite3.Connection) -> Schema:
    info = conn.execute("pragma table_info(reviews)").fetchall()
    if not info:
        raise sqlite3.OperationalError("no such table: reviews")
    master = conn.execute(
        "select type, name, rootpage from sqlite_master where type in ('table', 'index')"
    ).fetchall()
    roots = {name: page for _, name, page in master if isinstance(page, int)}
    indexes = []
    for _, name, _unique, _origin, partial in conn.execute("pragma index_list(reviews)"):
        if partial or name not in roots:
            continue  # a partial index lists only some reviews
        xinfo = conn.execute(f"pragma index_xinfo({quoted(name)})").fetchall()
        keys = tuple(row[2] for row in xinfo if row[5])
        if all(isinstance(key, str) for key in keys) and any(k in IDENTITY for k in keys):
            indexes.append(IndexInfo(name, roots[name], keys))
    trees = [(1, True)] + [
        (page, kind == "table") for kind, _, page in master if isinstance(page, int) and page > 0
    ]
    return Schema(
        root=roots.get("reviews", 0),
        columns=tuple(row[1] for row in info),
        reals=frozenset(i for i, row in enumerate(info) if real_affinity(str(row[2] or ""))),
        indexes=tuple(indexes),
        trees=tuple(trees),
    )


def select_list(schema: Schema) -> str:
    """The review's fields (FIELDS) as a SELECT reads them from this table: a column the
    table lacks (a file from before the migration that added it) is read as null."""
    from drill.storage.review_record import FIELDS

    have = set(schema.columns)
    return ", ".join(name if name in have else f"null as {name}" for name in FIELDS)


def quoted(name: str) -> str:
    """A name from the schema as SQL quotes it (a damaged schema may hold anything)."""
    return '"' + name.replace('"', '""') + '"'


def real_affinity(declared: str) -> bool:
    """Whether a column declared so stores a whole number as an integer and reads it
    back as a float (SQLite's affinity rules)."""
    name = declared.upper()
    if "INT" in name or any(word in name for word in ("CHAR", "CLOB", "TEXT", "BLOB")):
        return False
    return any(word in name for word in ("REAL", "FLOA", "DOUB"))
