"""Suspend (`!`), bury (`-`), `kvdrill unsuspend`, leeches with the mistake behind their
lapses, and `kvdrill quiz --drill`."""

import json
import sqlite3
import uuid
from dataclasses import replace
from datetime import timedelta

from click.testing import CliRunner
from test_session import BANK_DIR, FIXTURE, T0, reviews, run  # noqa: I001

from drill.bank.loader import load_default_bank
from drill.cli import cli
from drill.reports.stats import collect_stats
from drill.srs import becomes_leech, iso, make_scheduler, new_card_row, parse_iso, review_row
from drill.storage.database import open_db
from drill.storage.review_record import Review
from drill.storage.reviews import get_card, record_answer, start_session
from drill.study.leech import lapse_cause, questions_testing

TOMORROW = T0.replace(hour=0) + timedelta(days=1)  # UTC days in these tests


def cli_run(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


def fixture_quiz(db_path, lines, *extra):
    args = ["quiz", "--db", db_path, "--bank", BANK_DIR, "--topic", "quiz-fixture",
            "--tick", "20", "--no-fuzz", "--seed", "1", *extra]  # fmt: skip
    return cli_run(*args, input="".join(line + "\n" for line in lines))


# --------------------------------------------------------------------------- suspend


def test_a_suspended_question_is_not_asked_until_unsuspended(tmp_path):
    db = open_db(tmp_path / "k.db")
    result, term = run(db, ["!", "q"])
    assert "Suspended until `kvdrill unsuspend qf-kv-bytes`." in term.text
    assert "[1 done, 2 left] quiz-fixture · new" in term.text
    row = get_card(db, "qf-kv-bytes")
    assert (row["suspended_at"], row["reps"], row["buried_until"]) == (
        iso(T0 + timedelta(seconds=20)), 0, None)  # fmt: skip
    assert result.suspended == 1 and "Held back: 1 suspended." in term.text
    later, term = run(db, ["q"], start=T0 + timedelta(days=3))
    assert later.planned == 2 and "qf-kv-bytes" not in term.text
    db.conn.close()

    listing = cli_run("unsuspend", "--list", "--db", tmp_path / "k.db")
    assert listing.exit_code == 0, listing.output
    assert listing.output.splitlines()[1].split() == [
        "qf-kv-bytes", "suspended", "2026-11-02", "08:00", "0", "-"]  # fmt: skip
    back = cli_run("unsuspend", "qf-kv-bytes", "--db", tmp_path / "k.db")
    assert back.output == "qf-kv-bytes is back in the schedule as a new question.\n"
    db = open_db(tmp_path / "k.db")
    assert get_card(db, "qf-kv-bytes") is None
    result, _ = run(db, ["q"], start=T0 + timedelta(days=3))
    assert result.planned == 3


def test_a_reviewed_card_keeps_its_schedule_while_suspended(tmp_path):
    db = open_db(tmp_path / "k.db")
    run(db, ["1 MiB", "", "q"])
    scheduled = get_card(db, "qf-kv-bytes")
    run(db, ["!", "q"], start=T0 + timedelta(days=1))
    held = get_card(db, "qf-kv-bytes")
    assert held == {**scheduled, "suspended_at": iso(T0 + timedelta(days=1, seconds=20))}
    db.conn.close()
    again = cli_run("unsuspend", "qf-kv-bytes", "--db", tmp_path / "k.db")
    assert again.output == "qf-kv-bytes is back in the schedule.\n"
    assert get_card(open_db(tmp_path / "k.db"), "qf-kv-bytes") == scheduled


def test_unsuspend_refuses_a_question_not_held_and_changes_nothing(tmp_path):
    db = open_db(tmp_path / "k.db")
    run(db, ["!", "q"])
    db.conn.close()
    result = cli_run("unsuspend", "qf-kv-bytes", "qf-choice", "--db", tmp_path / "k.db")
    assert result.exit_code == 1
    assert result.output == "Error: qf-choice is neither suspended nor buried; nothing was changed\n"
    typo = cli_run("unsuspend", "qf-kv-byte", "--db", tmp_path / "k.db")
    assert (typo.exit_code, typo.output) == (1, (
        "Error: qf-kv-byte is neither suspended nor buried; nothing was changed (did you mean "
        "qf-kv-bytes?)\n"))  # fmt: skip
    assert get_card(open_db(tmp_path / "k.db"), "qf-kv-bytes")["suspended_at"] is not None
    assert cli_run("unsuspend", "--db", tmp_path / "k.db").exit_code == 2


# --------------------------------------------------------------------------- bury


def test_a_buried_question_comes_back_the_next_day(tmp_path):
    db = open_db(tmp_path / "k.db")
    run(db, ["1 MiB", "", "q"])  # qf-kv-bytes in learning, due in a minute
    result, term = run(db, ["-", "-", "q"], start=T0 + timedelta(hours=1))
    assert "Buried until tomorrow (Tue 3 Nov, 00:00)." in term.text
    assert result.buried == 2
    assert get_card(db, "qf-kv-bytes")["buried_until"] == iso(TOMORROW)
    assert get_card(db, "qf-decode-bound")["reps"] == 0  # never answered: a placeholder row
    # due counts skip the buried card today and count it from tomorrow
    figures = collect_stats(db, T0 + timedelta(hours=2))
    assert figures["due"] == {"now": 0, "later_today": 0}
    assert [d["due"] for d in figures["forecast"][:2]] == [0, 1]
    assert (figures["totals"]["buried"], figures["totals"]["suspended"]) == (2, 0)
    same_day, _ = run(db, ["q"], start=T0 + timedelta(hours=3))
    assert same_day.planned == 1  # only qf-choice, which is new
    next_day, term = run(db, ["q"], start=TOMORROW + timedelta(hours=8))
    assert "3 questions: 1 due, 2 new." in term.text
    assert get_card(db, "qf-decode-bound") is None  # new again
    assert get_card(db, "qf-kv-bytes")["buried_until"] is None
    assert next_day.planned == 3


# --------------------------------------------------------------------------- leeches


def test_the_leech_rule_counts_lapses_at_the_threshold_then_every_half_threshold():
    assert [n for n in range(1, 21) if becomes_leech(n - 1, n, 8)] == [8, 12, 16, 20]
    assert [n for n in range(1, 5) if becomes_leech(n - 1, n, 1)] == [1, 2, 3, 4]
    assert not becomes_leech(8, 8, 8)  # no new lapse
    assert not becomes_leech(7, 8, 0)  # 0 turns leeches off


def test_the_mistake_behind_most_lapses_wins_and_a_tie_goes_to_the_latest():
    flags = [False, True, True, True, False, True]
    named = ["a", "a", "b", "a", "b", "b"]
    cause = lapse_cause(flags, named)
    # lapses name a, b, a, b: two each; b was named last
    assert (cause.lapses, cause.misconception, cause.count) == (4, "b", 2)
    assert lapse_cause([True, False], [None, "a"]).misconception is None


def seven_lapses(db):
    """qf-kv-bytes's history: four Agains while learning, all named query-heads (not
    lapses), then seven lapses, each relearned. Returns when the card is due next."""
    scheduler = make_scheduler(fuzz=False)
    start = T0 - timedelta(days=400)
    start_session(db, "old", iso(start), "review")

    def answer(rating, at, misconception=None):
        review = Review(
            id=str(uuid.uuid4()), question_id="qf-kv-bytes", reviewed_at=iso(at), rating=rating,
            correct=int(rating > 1), misconception=misconception, session_id="old",
        )  # fmt: skip
        change = record_answer(
            db, review,
            lambda row: review_row(scheduler, row or new_card_row("qf-kv-bytes", at), rating, at),
            counted_correct=rating > 1, leech_threshold=8,
        )  # fmt: skip
        assert not change.leech
        return parse_iso(change.after["due"])

    due = start
    for _ in range(4):
        due = answer(1, due, "query-heads")
    due = answer(3, due)
    due = answer(3, due)  # in review
    lapses = ["forgot-kv-factor", "query-heads", "forgot-kv-factor", None,
              "forgot-kv-factor", "forgot-kv-factor", "query-heads"]  # fmt: skip
    for misconception in lapses:
        due = answer(1, due, misconception)
        due = answer(3, due)
    return due


def test_the_eighth_lapse_makes_a_leech_suspended_with_its_mistake_named(tmp_path):
    db = open_db(tmp_path / "k.db")
    due = seven_lapses(db)
    assert get_card(db, "qf-kv-bytes")["lapses"] == 7
    options = replace(FIXTURE, leech_threshold=8)
    result, term = run(db, ["1 MiB", "", "q"], options=options, start=due)
    assert (
        "Leech: qf-kv-bytes has lapsed 8 times and is suspended "
        "(`kvdrill unsuspend qf-kv-bytes` brings it back).\n"
        "Behind 5 of its 8 lapses: forgot the K+V factor of 2. Practise it with "
        "`kvdrill quiz --drill forgot-kv-factor`.\n"
    ) in term.text
    row = get_card(db, "qf-kv-bytes")
    answered_at = iso(due + timedelta(seconds=40))
    assert (row["lapses"], row["leech_at"], row["suspended_at"]) == (8, answered_at, answered_at)
    # in relearning, but suspended: it does not come back in the session
    assert term.text.count("A model has 2 layers") == 1
    assert collect_stats(db, due + timedelta(hours=1))["totals"]["leeches"] == 1
    db.conn.close()

    listing = cli_run("unsuspend", "--list", "--json", "--db", tmp_path / "k.db")
    (record,) = json.loads(listing.output)
    assert record == {
        "question_id": "qf-kv-bytes", "held": "suspended", "suspended_at": answered_at,
        "buried_until": None, "leech_at": answered_at, "lapses": 8,
        "lapse_misconception": "forgot-kv-factor",
        "lapse_misconception_name": "forgot the K+V factor of 2", "lapses_with_it": 5,
    }  # fmt: skip
    text = cli_run("unsuspend", "--list", "--db", tmp_path / "k.db").output
    assert "forgot the K+V factor of 2 (5 of 8): kvdrill quiz --drill forgot-kv-factor" in text
    back = cli_run("unsuspend", "qf-kv-bytes", "--db", tmp_path / "k.db")
    assert back.output == "qf-kv-bytes is back in the schedule. It stays flagged a leech.\n"


def test_a_leech_threshold_of_zero_never_suspends(tmp_path):
    db = open_db(tmp_path / "k.db")
    due = seven_lapses(db)
    run(db, ["1 MiB", "", "q"], options=replace(FIXTURE, leech_threshold=0), start=due)
    assert get_card(db, "qf-kv-bytes")["suspended_at"] is None


# --------------------------------------------------------------------------- drill


def test_the_questions_that_test_a_mistake_are_those_that_name_it_and_those_it_was_seen_in():
    bank = list(load_default_bank())
    naming = [q.id for q in bank if "forgot-kv-factor" in {m.id for m in
                                                           getattr(q, "misconceptions", ())}]
    assert len(naming) >= 10
    seen = {"paging-analogy": 1, naming[3]: 4, "gone-from-the-bank": 9}
    chosen = [q.id for q in questions_testing(bank, "forgot-kv-factor", seen)]
    assert chosen == [naming[3], "paging-analogy", *[n for n in naming if n != naming[3]]]


def test_a_drill_practises_the_leech_and_leaves_the_schedule_alone(tmp_path):
    path = tmp_path / "k.db"
    db = open_db(path)
    due = seven_lapses(db)
    run(db, ["1 MiB", "", "q"], start=due)  # now a suspended leech
    before = get_card(db, "qf-kv-bytes")
    db.conn.close()
    result = fixture_quiz(path, ["2 MiB", "", ""], "--drill", "forgot-kv-factor",
                          "--now", iso(due + timedelta(hours=1)))
    assert result.exit_code == 0, result.output
    assert result.output.startswith(
        'Drill on "forgot the K+V factor of 2": 1 question, practice only (the schedule is '
        "not changed)."
    )
    assert "[0 done, 1 left] quiz-fixture · drill" in result.output
    assert "Drill session: the schedule was not changed." in result.output
    db = open_db(path)
    assert get_card(db, "qf-kv-bytes") == before
    last = reviews(db)[-1]
    assert (last["answer"], last["cram"], last["correct"]) == ("2 MiB", 1, 1)
    mode = db.execute("select mode from sessions order by started_at desc limit 1").fetchone()
    assert mode == ("drill",)


def test_a_drill_on_a_mistake_no_question_tests_is_one_line(tmp_path):
    result = fixture_quiz(tmp_path / "k.db", [], "--drill", "ms-vs-s")  # none of the topic's
    assert result.exit_code == 1
    assert result.output == (
        "Error: no question tests the misconception 'ms-vs-s': no numeric template names it "
        "and no review recorded it (`kvdrill mistakes` lists the mistakes and your counts)\n"
    )
    typo = fixture_quiz(tmp_path / "k.db", [], "--drill", "forgot-kv-factr")
    assert (typo.exit_code, typo.output) == (1, (  # the closest first
        "Error: unknown mistake 'forgot-kv-factr'; did you mean forgot-kv-factor, "
        "forgot-kv-reads, forgot-layers?\n"))  # fmt: skip
    unknown = fixture_quiz(tmp_path / "k.db", [], "--drill", "no-such-mistake")
    assert unknown.output == (
        "Error: unknown mistake 'no-such-mistake'; `kvdrill mistakes` lists them\n")
    both = fixture_quiz(tmp_path / "k.db", [], "--drill", "forgot-kv-factor", "--cram")
    assert both.exit_code == 2


# --------------------------------------------------------------------------- schema


def test_the_upgrade_adds_the_hold_columns_and_undo_uncounts_reviews(tmp_path):
    path = tmp_path / "k.db"
    db = open_db(path)
    run(db, ["2 MiB", "", "q"])
    db.conn.close()
    # the database as schema 4 left it
    conn = sqlite3.connect(path)
    conn.execute("drop trigger uncount_review")
    for column in ("suspended_at", "buried_until", "leech_at"):
        conn.execute(f"alter table cards drop column {column}")
    conn.execute("delete from _sqlite_migrations where name = 'm005_card_holds_and_undo'")
    conn.execute("pragma user_version = 4")
    conn.commit()
    conn.close()
    db = open_db(path)
    row = get_card(db, "qf-kv-bytes")
    assert (row["suspended_at"], row["buried_until"], row["leech_at"]) == (None, None, None)
    assert db.execute("select reviews from question_counts").fetchall() == [(1,)]
    db.execute("delete from reviews")
    assert db.execute("select count(*) from question_counts").fetchone() == (0,)
