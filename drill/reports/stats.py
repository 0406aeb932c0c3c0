"""Progress figures from the review history: what is due, streak, heatmap, retention, mastery.

Every figure is relative to an injected `now` (UTC-aware) and counted in the user's
days (`drill.study.days.DayClock`: their zone, starting at the rollover hour; plain UTC
calendar days when none is given). Times in the database are `drill.srs.iso` text
in UTC; a day is the range of times from its start to the next day's start, so day
counts are indexed range queries.

Counting is done in SQL; Python only walks per-card rows (one per question), never
per-review rows.

True retention (`retention`; per week, `weekly_retention`) follows Anki's rule, made
exact for kvdrill:
- the window is the last `RETENTION_DAYS` days, today included, up to `now` (for
  `weekly_retention`, the heatmap's weeks);
- cram reviews are left out (they do not touch the schedule);
- a review counts when the question's previous (non-cram) review was on an earlier day:
  the first review of a question each day, of a question that was already being
  recalled from memory rather than learned that day;
- it passes when its rating is Hard, Good or Easy and fails on Again;
- as in Anki, a review is `mature` when the card's interval (the time since that
  previous review) was at least MATURE_DAYS days, else `young`.

Accuracy of a question is the share of its reviews (cram included) that were right:
`correct` where the grader decided it, else the self-rating (anything but Again).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from datetime import date, datetime, timedelta
from typing import Any

from drill.srs import iso, parse_iso, retrievability
from drill.storage.sqlite_library import Database
from drill.study.days import UTC_DAYS, DayClock
from drill.study.plan import LEARNING_STATES
from drill.study.settings import read_settings

RETENTION_DAYS = 30
MATURE_DAYS = 21  # Anki's line between a young card and a mature one
HEATMAP_WEEKS = 16
FORECAST_DAYS = 7
WEAKEST_LIMIT = 10
MISCONCEPTION_LIMIT = 5
MISSED_POINTS_LIMIT = 5
REMOVED_TOPIC = "(removed)"
# a card still in learning is shown with its recall this long after its last answer
LEARNING_RECALL_AFTER = timedelta(days=1)

WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

# "right" for one review: the grader's verdict, else the self-rating
_RIGHT_SQL = "coalesce(correct, rating > 1)"


def _day(d: date) -> str:
    return d.isoformat()


def _count_between(db: Database, sql: str, start: datetime, end: datetime, *args: Any) -> int:
    return db.execute(sql, [iso(start), iso(end), *args]).fetchone()[0]


def describe_days(days: DayClock) -> dict[str, Any]:
    """The days figures are counted in: their zone's name and the hour they begin."""
    zone = getattr(days.tz, "key", None) or (days.tz.tzname(None) if days.tz else "local")
    return {"zone": zone, "rollover_hour": days.rollover_hour}


# ------------------------------------------------------------------------------ due


def _bank_filter(active_ids: list[str] | None) -> tuple[str, list[Any]]:
    if active_ids is None:
        return "", []
    return " and question_id in (select value from json_each(?))", [json.dumps(active_ids)]


# a card that counts as due: not suspended, and not buried past its due time (a buried
# card is due when its bury ends); the second form finds those buried past their due,
# leaving out a question buried before its first answer (reps 0), which is new
_DUE_NOT_HELD = "suspended_at is null and (buried_until is null or buried_until <= due)"
_BURIED_PAST_DUE = "suspended_at is null and buried_until > due and reps > 0"
# when each card counts as due (the two forms above are exclusive), null for one never due:
# one pass over the cards, which reads the bank's ids (a JSON array) only once
_DUE_AT = (
    f"select case when {_DUE_NOT_HELD} then due when {_BURIED_PAST_DUE} then buried_until end"
    " as at from cards"
)


def due_counts(
    db: Database, now: datetime, active_ids: list[str] | None = None, days: DayClock = UTC_DAYS
) -> dict[str, int]:
    """Cards due by `now`, and due later in the user's day; suspended cards are left
    out, and a buried one counts from when its bury ends."""
    where, args = _bank_filter(active_ids)
    sql = (
        "select coalesce(sum(at <= ?), 0), coalesce(sum(at > ?), 0)"
        f" from ({_DUE_AT} where 1{where}) where at < ?"
    )
    row = db.execute(sql, [iso(now), iso(now), *args, iso(days.next_day_start(now))]).fetchone()
    return {"now": row[0], "later_today": row[1]}


def forecast(
    db: Database,
    now: datetime,
    active_ids: list[str] | None = None,
    count: int = FORECAST_DAYS,
    days: DayClock = UTC_DAYS,
) -> list[dict[str, Any]]:
    """Cards due on each of the next `count` days; today's count includes overdue cards.
    Suspended cards are left out; a buried card counts on the day its bury ends."""
    if count <= 0:
        return []
    today = days.day_of(now)
    where, args = _bank_filter(active_ids)
    # from the first day's start back to the beginning of time: overdue cards count today
    bounds = ["", *(iso(days.start_of(today + timedelta(days=i + 1))) for i in range(count))]
    sums = ", ".join(["coalesce(sum(at >= ? and at < ?), 0)"] * count)
    row = db.execute(
        f"select {sums} from ({_DUE_AT} where 1{where}) where at < ?",
        [*(b for i in range(count) for b in bounds[i : i + 2]), *args, bounds[-1]],
    ).fetchone()
    return [{"date": _day(today + timedelta(days=i)), "due": row[i]} for i in range(count)]


def held_counts(db: Database, now: datetime) -> dict[str, int]:
    """Cards suspended, buried (until after `now`) and flagged as leeches."""
    row = db.execute(
        "select coalesce(sum(suspended_at is not null), 0),"
        " coalesce(sum(suspended_at is null and buried_until > ?), 0),"
        " coalesce(sum(leech_at is not null), 0) from cards",
        [iso(now)],
    ).fetchone()
    return {"suspended": row[0], "buried": row[1], "leeches": row[2]}


# --------------------------------------------------------------------------- activity


def _reviewed_on(db: Database, day: date, now: datetime, days: DayClock) -> bool:
    row = db.execute(
        "select exists(select 1 from reviews where reviewed_at >= ? and reviewed_at < ?"
        " and reviewed_at <= ?)",
        [iso(days.start_of(day)), iso(days.start_of(day + timedelta(days=1))), iso(now)],
    ).fetchone()
    return bool(row[0])


def streak(db: Database, now: datetime, days: DayClock = UTC_DAYS) -> dict[str, Any]:
    """Consecutive days with at least one review, ending today or, if today has
    none yet, yesterday (a streak is not lost until the day is over)."""
    today = days.day_of(now)
    reviewed_today = _reviewed_on(db, today, now, days)
    day = today if reviewed_today else today - timedelta(days=1)
    count = 0
    # one indexed probe per day of the streak: cheap even for a streak of years
    while _reviewed_on(db, day, now, days):
        count += 1
        day -= timedelta(days=1)
    return {"days": count, "reviewed_today": reviewed_today}


def heatmap_start(today: date, weeks: int = HEATMAP_WEEKS) -> date:
    """The Monday that begins the first column: `weeks` columns end with this week."""
    return today - timedelta(days=today.weekday()) - timedelta(weeks=weeks - 1)


def reviews_per_day(
    db: Database, now: datetime, weeks: int = HEATMAP_WEEKS, days: DayClock = UTC_DAYS
) -> list[dict[str, Any]]:
    """Reviews (cram included) on each day from the heatmap's first Monday to today."""
    today = days.day_of(now)
    sql = (
        "select count(*) from reviews"
        " where reviewed_at >= ? and reviewed_at < ? and reviewed_at <= ?"
    )
    out = []
    day = heatmap_start(today, weeks)
    # one indexed range count per day: cheaper than grouping a hundred thousand rows
    while day <= today:
        start, end = days.start_of(day), days.start_of(day + timedelta(days=1))
        out.append({"date": _day(day), "reviews": _count_between(db, sql, start, end, iso(now))})
        day += timedelta(days=1)
    return out


def heatmap_level(count: int, busiest: int) -> int:
    """0 for no reviews, else 1..4 by the share of the busiest day (4 = at least 3/4 of it)."""
    if count <= 0 or busiest <= 0:
        return 0
    return min(4, max(1, math.ceil(4 * count / busiest)))


# -------------------------------------------------------------------------- retention


# Per day (`n`, its place in the JSON array `:starts` of day starts, which ends with the
# start of the day after the last) the young and mature reviews that count for true
# retention, and those passed. Per review, `m` is 1 when mature, 0 when young, null when it
# does not count (no earlier review, or one earlier the same day). `prev`, the question's
# previous non-cram review, is the newest one first in the per-question index, so each
# probe stops at once; these probes are nearly all of the query's time. The days drive the
# join (cross join keeps them outside), each an indexed range of review times, and the
# window's own bounds are filters only (`+`), so that no day's range is widened to the
# window; `limit -1` keeps the subquery from being flattened into the sums, which would
# run the probe once per sum.
_RETENTION_BY_DAY_SQL = """
select n, coalesce(sum(m = 0), 0), coalesce(sum(m = 0 and rating > 1), 0),
       coalesce(sum(m = 1), 0), coalesce(sum(m = 1 and rating > 1), 0)
from (
    select d.key as n, w.rating as rating, (
        select case when p.reviewed_at >= d.value then null
                    else julianday(w.reviewed_at) - julianday(p.reviewed_at) >= :mature end
        from reviews p
        where p.question_id = w.question_id and p.reviewed_at < w.reviewed_at
          and not coalesce(p.cram, 0)
        order by p.reviewed_at desc limit 1
    ) as m
    from json_each(:starts) d cross join reviews w
      on w.reviewed_at >= d.value
     and w.reviewed_at < json_extract(:starts, '$[' || (d.key + 1) || ']')
    where +w.reviewed_at >= :since and +w.reviewed_at <= :now and not coalesce(w.cram, 0)
    limit -1
)
group by n order by n
"""


def retention_by_day(
    db: Database, since: datetime, now: datetime, days: DayClock
) -> list[tuple[str, bool, int, int]]:
    """(user day, mature, reviews counted, passed) for each day from `since` to `now`
    with reviews that count for true retention (the rule is in the module docstring), in
    one query. A day is the range of times from its start to the next day's start, and a
    review's previous one was on an earlier day when it lies before that start."""
    first, last = days.day_of(since), days.day_of(now)
    dates = [first + timedelta(days=i) for i in range((last - first).days + 2)]
    found = db.execute(
        _RETENTION_BY_DAY_SQL,
        {
            "starts": json.dumps([iso(days.start_of(day)) for day in dates]),
            "since": iso(since),
            "now": iso(now),
            "mature": MATURE_DAYS,
        },
    ).fetchall()
    rows: list[tuple[str, bool, int, int]] = []
    for n, young, young_passed, mature, mature_passed in found:
        for is_mature, count, passed in (
            (False, young, young_passed),
            (True, mature, mature_passed),
        ):
            if count:
                rows.append((_day(dates[n]), is_mature, count, passed))
    return rows


def _retention_shares(rows: list[tuple[str, bool, int, int]]) -> dict[str, Any]:
    """{reviews, passed, rate, young, mature} summed over `retention_by_day` rows."""

    def share(group: list[tuple[str, bool, int, int]]) -> dict[str, Any]:
        n, passed = sum(r[2] for r in group), sum(r[3] for r in group)
        return {"reviews": n, "passed": passed, "rate": passed / n if n else None}

    return {
        **share(rows),
        "young": share([r for r in rows if not r[1]]),
        "mature": share([r for r in rows if r[1]]),
    }


def retention(
    db: Database, now: datetime, count: int = RETENTION_DAYS, days: DayClock = UTC_DAYS
) -> dict[str, Any]:
    """True retention over the last `count` days (the rule is in the module docstring)."""
    first_day = days.day_of(now) - timedelta(days=count - 1)
    rows = retention_by_day(db, days.start_of(first_day), now, days)
    return {"window_days": count, "since": _day(first_day), **_retention_shares(rows)}


def weekly_retention(
    db: Database, now: datetime, weeks: int = HEATMAP_WEEKS, days: DayClock = UTC_DAYS
) -> list[dict[str, Any]]:
    """True retention in each week (Monday to Sunday) of the heatmap's window, oldest
    first: [{week, reviews, passed, rate, young, mature}], `week` its Monday; the last
    week ends at `now`."""
    first_monday = heatmap_start(days.day_of(now), weeks)
    rows = retention_by_day(db, days.start_of(first_monday), now, days)
    by_week: list[list[tuple[str, bool, int, int]]] = [[] for _ in range(weeks)]
    for row in rows:
        by_week[(date.fromisoformat(row[0]) - first_monday).days // 7].append(row)
    return [
        {"week": _day(first_monday + timedelta(weeks=i)), **_retention_shares(group)}
        for i, group in enumerate(by_week)
    ]


# ---------------------------------------------------------------------------- mastery


def question_figures(
    db: Database, now: datetime, topics: Mapping[str, str] | None, scheduler=None
) -> list[dict[str, Any]]:
    """Per reviewed question: topic, retrievability now, accuracy, reviews and lapses.

    `topics` maps each question id in the bank to its topic; a question with history
    that is no longer in the bank gets REMOVED_TOPIC. With `topics` None every question
    keeps its history but no topic (None).
    """
    scheduler = scheduler or read_settings(db).scheduler(fuzz=False)  # the user's FSRS curve
    # Reviews after `now` exist only when the clock is set back (tests, --now); leaving
    # the bound out otherwise makes this full-index pass about a third cheaper.
    latest = db.execute("select max(reviewed_at) from reviews").fetchone()[0]
    bound, args = (
        ("", [])
        if latest is None or latest <= iso(now)
        else (" where reviewed_at <= ?", [iso(now)])
    )
    # every review counts: the per-question counters hold the same sums, one row per
    # question, unless the clock was set back or the database predates them
    counted = not bound and db.execute(
        "select 1 from sqlite_master where type = 'table' and name = 'question_counts'"
    ).fetchone()
    query = (
        "select question_id, reviews, answered_right from question_counts"
        if counted
        else f"select question_id, count(*), sum({_RIGHT_SQL}) from reviews{bound}"
        " group by question_id"
    )
    answered = {qid: (n, right) for qid, n, right in db.execute(query, args).fetchall()}
    # plain rows, not one dict per card: ten thousand cards are read on every stats
    cards = {
        row[0]: row[1:]
        for row in db.execute(
            "select question_id, state, last_review, stability, lapses from cards"
            " where last_review is not null"
        ).fetchall()
    }
    figures = []
    for qid in sorted(answered.keys() | cards.keys()):
        n, right = answered.get(qid, (0, 0))
        card = cards.get(qid)
        if card is None:
            recall, lapses, learning = 0.0, 0, False
        else:
            state, last_review, stability, lapses = card
            learning = state in LEARNING_STATES
            recall = shown_recall(scheduler, learning, last_review, stability, now)
        figures.append(
            {
                "question_id": qid,
                "topic": None if topics is None else topics.get(qid, REMOVED_TOPIC),
                "retrievability": recall,
                "accuracy": right / n if n else None,
                "reviews": n,
                "lapses": lapses,
                "learning": learning,
            }
        )
    return figures


def shown_recall(
    scheduler, learning: bool, last_review: str | None, stability: float | None, now: datetime
) -> float:
    """The recall stats show for a card: FSRS's retrievability now, except for a card still
    in learning (failed, or new and on its steps), whose recall is near 100 % for minutes
    after any answer, the one just failed included: its recall a day after its last answer
    (or now, when that day has passed), the figure a failure really moves."""
    if learning and last_review:
        now = max(now, parse_iso(last_review) + LEARNING_RECALL_AFTER)
    return retrievability(scheduler, {"last_review": last_review, "stability": stability}, now)


def weakness(figure: Mapping[str, Any]) -> float:
    """Lower is weaker: the mean of retrievability and accuracy (no answers: accuracy 0)."""
    return (figure["retrievability"] + (figure["accuracy"] or 0.0)) / 2


def weakest(figures: list[dict[str, Any]], limit: int = WEAKEST_LIMIT) -> list[dict[str, Any]]:
    """The weakest questions still in the bank, weakest first (ties by id)."""
    live = [f for f in figures if f["topic"] != REMOVED_TOPIC]
    return sorted(live, key=lambda f: (weakness(f), f["question_id"]))[:limit]


def topic_mastery(figures: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per topic: questions, reviews, mean retrievability and pooled accuracy; by topic name."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for f in figures:
        grouped.setdefault(f["topic"] or "", []).append(f)
    rows = []
    for topic in sorted(grouped, key=lambda t: (t == REMOVED_TOPIC, t)):
        group = grouped[topic]
        reviews = sum(f["reviews"] for f in group)
        right = sum((f["accuracy"] or 0.0) * f["reviews"] for f in group)
        rows.append(
            {
                "topic": topic or None,
                "questions": len(group),
                "reviews": reviews,
                "retrievability": sum(f["retrievability"] for f in group) / len(group),
                "accuracy": right / reviews if reviews else None,
            }
        )
    return rows


def missed_points(
    db: Database,
    now: datetime,
    key_points: Mapping[str, Sequence[str]],
    limit: int = MISSED_POINTS_LIMIT,
) -> list[dict[str, Any]]:
    """The key points the user's concept answers missed most: in how many reviews each
    point was left unticked, of those that ticked that question's points; most first
    (then the larger share). Only questions still in the bank count, and only reviews
    ticked against as many points as the question has now (its points may have changed)."""
    missed: dict[tuple[str, int], int] = {}
    seen: dict[str, int] = {}
    rows = db.execute(
        "select question_id, ticks from reviews indexed by idx_reviews_ticks"
        " where ticks is not null and reviewed_at <= ?",
        [iso(now)],
    )
    for qid, ticks in rows:
        points = key_points.get(qid)
        if points is None or len(ticks) != len(points):
            continue
        seen[qid] = seen.get(qid, 0) + 1
        for i, tick in enumerate(ticks):
            if tick == "0":
                missed[qid, i] = missed.get((qid, i), 0) + 1
    ranked = sorted(missed.items(), key=lambda kv: (-kv[1], -kv[1] / seen[kv[0][0]], kv[0]))
    return [
        {"question_id": qid, "point": i + 1, "text": key_points[qid][i], "missed": count,
         "reviews": seen[qid]}
        for (qid, i), count in ranked[:limit]
    ]  # fmt: skip


def frequent_misconceptions(
    db: Database, now: datetime, names: Mapping[str, str], limit: int = MISCONCEPTION_LIMIT
) -> list[dict[str, Any]]:
    """The misconceptions the grader saw most often in the user's answers, most first."""
    rows = db.execute(
        "select misconception, count(*) as n from reviews"
        " where misconception is not null and misconception != '' and reviewed_at <= ?"
        " group by misconception order by n desc, misconception limit ?",
        [iso(now), limit],
    ).fetchall()
    return [{"id": mid, "name": names.get(mid, mid), "count": n} for mid, n in rows]


# ------------------------------------------------------------------------------- all


def collect_stats(
    db: Database,
    now: datetime,
    *,
    topics: Mapping[str, str] | None = None,
    misconception_names: Mapping[str, str] | None = None,
    key_points: Mapping[str, Sequence[str]] | None = None,
    scheduler=None,
    days: DayClock = UTC_DAYS,
    interview: date | None = None,
) -> dict[str, Any]:
    """Everything `kvdrill stats` shows, as one JSON-ready object (keys in its help).

    With `topics` (question id -> topic for the bank), due counts cover only questions
    in the bank and the removed ones are grouped under REMOVED_TOPIC. `days` are the
    user's days (plain UTC days by default). With an `interview` date the object has
    an `interview` entry (`interview_readiness`).
    """
    active_ids = sorted(topics) if topics is not None else None
    figures = question_figures(db, now, topics, scheduler)
    cards = db.execute("select count(*) from cards").fetchone()[0]
    extra = {}
    if interview is not None:
        extra["interview"] = interview_readiness(db, now, interview, topics, days, scheduler)
    return {
        "now": iso(now),
        "days": describe_days(days),
        "due": due_counts(db, now, active_ids, days),
        "forecast": forecast(db, now, active_ids, days=days),
        "streak": streak(db, now, days),
        "heatmap": reviews_per_day(db, now, days=days),
        "retention": retention(db, now, days=days),
        "topics": topic_mastery(figures),
        "weakest": weakest(figures),
        "misconceptions": frequent_misconceptions(db, now, misconception_names or {}),
        "missed_points": missed_points(db, now, key_points or {}),
        "mock_interviews": mock_interviews(db, now, days),
        "totals": {
            "cards": cards,
            "reviews": sum(f["reviews"] for f in figures),
            **held_counts(db, now),
        },
        **extra,
    }


MOCK_INTERVIEWS_LIMIT = 5  # the mock interviews stats lists, the latest


def mock_interviews(
    db: Database, now: datetime, days: DayClock = UTC_DAYS, limit: int = MOCK_INTERVIEWS_LIMIT
) -> list[dict[str, Any]]:
    """The trend of mock interview scores: the `limit` latest interviews begun before
    `now`, the oldest first, as [{date, score, answered, minutes}]: the user's day it began,
    its score as a share of the questions answered (drill.storage.interviews scores as the
    report does; null with none answered), and the minutes it took (null when unknown)."""
    from drill.storage.interviews import interview_scores

    trend = []
    for item in reversed(interview_scores(db, limit, before=iso(now))):
        began = parse_iso(item["started_at"])
        seconds = item["elapsed_s"]
        if seconds is None and item["ended_at"] is not None:
            seconds = (parse_iso(item["ended_at"]) - began).total_seconds()
        answered = item["answered"]
        trend.append({
            "date": _day(days.day_of(began)),
            "score": round(item["points"] / answered, 4) if answered else None,
            "answered": answered,
            "minutes": round(seconds / 60, 1) if seconds is not None else None,
        })  # fmt: skip
    return trend


INTERVIEW_FORECAST_DAYS = 60  # the most days of workload listed before an interview


def interview_readiness(
    db: Database,
    now: datetime,
    interview: date,
    topics: Mapping[str, str] | None,
    days: DayClock = UTC_DAYS,
    scheduler=None,
) -> dict[str, Any]:
    """How the days up to an interview look: the reviews due on each day before it, and
    per topic the recall predicted for its morning if no review came before then (a
    floor: the scheduled reviews raise it)."""
    left = (interview - days.day_of(now)).days
    day_start = days.start_of(interview)
    active_ids = sorted(topics) if topics is not None else None
    workload = (
        forecast(db, now, active_ids, count=min(left, INTERVIEW_FORECAST_DAYS), days=days)
        if left > 0
        else []
    )
    on_the_day = question_figures(db, max(now, day_start), topics, scheduler)
    plan = {}
    if left > 0 and topics:  # the days to it simulated (drill.study.readiness, `kvdrill plan`)
        from drill.study.readiness import Deck, plan_figures

        plan["plan"] = plan_figures(db, Deck(tuple(topics), topics), read_settings(db), days,
                                    now, interview)  # fmt: skip
    return {
        "date": interview.isoformat(),
        "days_left": left,
        "reviews_before": sum(d["due"] for d in workload),
        "workload": workload,
        "topics": [
            {"topic": t["topic"], "questions": t["questions"], "recall": t["retrievability"]}
            for t in topic_mastery(on_the_day)
            if t["topic"] != REMOVED_TOPIC
        ],
        **plan,
    }


