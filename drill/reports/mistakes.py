"""The named mistakes (`kvdrill mistakes`): the catalogue, with how often the user made
each and when last, and how many questions of the bank name it.

The rows are a pure function of the catalogue, the bank's questions and the user's
tallies (`mistake_tallies` reads those from the reviews).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from drill.srs import iso


@dataclass(frozen=True)
class Tally:
    count: int  # answers (cram and drill included) where the grader named the mistake
    last_seen: str  # the latest of them, ISO-8601 UTC


def mistake_tallies(db, now: datetime) -> dict[str, Tally]:
    """Mistake id -> how often the user's answers up to `now` made it, and when last."""
    rows = db.execute(
        "select misconception, count(*), max(reviewed_at) from reviews"
        " where misconception is not null and misconception != '' and reviewed_at <= ?"
        " group by misconception",
        [iso(now)],
    ).fetchall()
    return {mid: Tally(n, last) for mid, n, last in rows}


def mistake_rows(
    catalogue: Mapping[str, str], questions: Iterable[Any], tallies: Mapping[str, Tally]
) -> list[dict[str, Any]]:
    """One row per mistake: the catalogue's (`catalogue`: id -> name, in its order) and any
    other the reviews or the questions name; those made most often first, then the latest
    made, then the catalogue's order (others after it, by id)."""
    named: dict[str, int] = {}
    for q in questions:
        for m in getattr(q, "misconceptions", ()):
            named[m.id] = named.get(m.id, 0) + 1
    ids = list(catalogue) + sorted((set(tallies) | set(named)) - set(catalogue))
    rows: list[dict[str, Any]] = []
    for mid in ids:
        tally = tallies.get(mid)
        rows.append({
            "id": mid,
            "name": catalogue.get(mid, mid.replace("-", " ")),
            "count": tally.count if tally else 0,
            "last_seen": tally.last_seen if tally else None,
            "questions": named.get(mid, 0),
        })  # fmt: skip
    made = sorted((r for r in rows if r["count"]), key=lambda r: r["last_seen"], reverse=True)
    made.sort(key=lambda r: -r["count"])  # stable: the latest first within a count
    return made + [r for r in rows if not r["count"]]


def render_mistakes(rows: list[dict[str, Any]], known: int, local: Any) -> str:
    """The rows (some of the `known` mistakes) as a table; `local` turns an ISO time into
    the user's clock text."""
    from drill.reports.stats_text import text_table

    made = [r for r in rows if r["count"]]
    total = sum(r["count"] for r in made)
    if made:
        head = (
            f"{len(made)} of {known} mistakes made, {total} time{'s' * (total != 1)} in "
            "all; `kvdrill quiz --drill ID` practises one."
        )
    else:
        head = f"None of the {known} mistakes made yet."
    if not rows:
        return head + "\n"
    table = [
        [
            str(r["count"]) if r["count"] else "-",
            local(r["last_seen"]) if r["last_seen"] else "-",
            r["id"],
            r["name"],
        ]
        for r in rows
    ]
    lines = text_table(["made", "last", "id", "mistake"], table, align="rlll")
    return "\n".join([head, "", *lines]) + "\n"
