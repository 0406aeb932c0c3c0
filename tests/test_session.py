"""The quiz session: planning, storing, and whole sessions driven through injected I/O."""

import random
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from drill.bank.loader import eligible_questions, load_bank
from drill.errors import BankError
from drill.srs import iso, make_scheduler, new_card_row
from drill.storage.database import open_db
from drill.storage.review_record import Review
from drill.storage.reviews import (
    Performance,
    end_session,
    get_card,
    load_cards,
    new_cards_since,
    performance_by_question,
    record_answer,
    start_session,
)
from drill.study.days import UTC_DAYS
from drill.study.plan import (
    PlanItem,
    item_seed,
    plan_cram,
    plan_due,
    plan_new,
    plan_review,
)
from drill.study.session import run_session
from drill.study.session_io import SessionIO, SessionOptions
from drill.study.session_text import SessionResult, human_span, parse_rating, render_summary

T0 = datetime(2026, 11, 2, 8, 0, tzinfo=timezone.utc)
BANK_DIR = Path(__file__).parent / "banks_quiz"


@dataclass(frozen=True)
class Q:
    id: str
    topic: str = "t"
    difficulty: int = 2


def card(qid, state, due, **extra):
    row = new_card_row(qid, due)
    row.update(state=state, **extra)
    return row


# --------------------------------------------------------------------------- planning


def test_due_cards_learning_first_then_most_overdue_review_and_future_ones_left_out():
    questions = [Q("a"), Q("b"), Q("c"), Q("d"), Q("e")]
    cards = {
        "a": card("a", 2, T0 - timedelta(days=1)),
        "b": card("b", 2, T0 - timedelta(days=5)),
        "c": card("c", 1, T0 - timedelta(minutes=1)),
        "d": card("d", 2, T0 + timedelta(minutes=1)),
        "e": card("e", 3, T0 - timedelta(minutes=30)),
    }
    assert plan_due(questions, cards, T0) == [
        PlanItem("e", "learning"),
        PlanItem("c", "learning"),
        PlanItem("b", "due"),
        PlanItem("a", "due"),
    ]


def test_cards_of_questions_that_left_the_bank_are_not_planned():
    cards = {"gone": card("gone", 2, T0 - timedelta(days=3))}
    assert plan_due([Q("a")], cards, T0) == []


def test_new_questions_easier_first_then_bank_order_within_the_allowance():
    questions = [Q("h1", difficulty=3), Q("m1"), Q("e1", difficulty=1), Q("m2"), Q("seen")]
    cards = {"seen": card("seen", 2, T0 + timedelta(days=3))}
    assert [i.question_id for i in plan_new(questions, cards, 3)] == ["e1", "m1", "m2"]
    assert plan_new(questions, cards, 0) == []
    assert plan_new(questions, cards, -2) == []


def test_review_plan_counts_new_cards_already_started_today_and_caps_at_max():
    questions = [Q("due"), Q("n1"), Q("n2"), Q("n3")]
    cards = {"due": card("due", 2, T0 - timedelta(hours=1))}
    plan = plan_review(questions, cards, T0, new_today=8, new_limit=10, max_items=20)
    assert [i.question_id for i in plan] == ["due", "n1", "n2"]
    plan = plan_review(questions, cards, T0, new_today=0, new_limit=10, max_items=2)
    assert [i.question_id for i in plan] == ["due", "n1"]


def test_cram_puts_often_wrong_first_then_least_recalled():
    s = make_scheduler(fuzz=False)
    # strong: Easy two days ago, stability 8.3 days, recall now about 0.97;
    # weak: Hard thirty days ago, stability 1.3 days, recall now about 0.61
    strong = card("strong", 2, T0 + timedelta(days=6), step=None, stability=8.2956,
                  difficulty=1.0, last_review=iso(T0 - timedelta(days=2)), reps=1)
    weak = card("weak", 1, T0 - timedelta(days=30) + timedelta(minutes=6), stability=1.2931,
                difficulty=6.0, last_review=iso(T0 - timedelta(days=30)), reps=1)
    questions = [Q("strong"), Q("weak"), Q("wrong"), Q("unseen")]
    performance = {"wrong": Performance(reviews=4, wrong=3), "strong": Performance(1, 0)}
    plan = plan_cram(
        questions,
        {"strong": strong, "weak": weak},
        performance,
        T0,
        scheduler=s,
        rng=random.Random(1),
        max_items=10,
    )
    assert [i.question_id for i in plan] == ["wrong", "unseen", "weak", "strong"]
    assert {i.why for i in plan} == {"cram"}


def test_topic_filter_keeps_bank_order_and_names_the_topics_when_none_match():
    questions = [Q("a", "x"), Q("b", "y"), Q("c", "x")]
    assert [q.id for q in eligible_questions(questions, "x")] == ["a", "c"]
    with pytest.raises(BankError, match=r"no questions with topic 'z' \(topics: x, y\)"):
        eligible_questions(questions, "z")
    near = [Q("a", "kv-cache"), Q("b", "paging")]
    with pytest.raises(BankError) as typo:
        eligible_questions(near, "kv-cach")
    assert str(typo.value) == "no questions with topic 'kv-cach'; did you mean kv-cache?"


def test_item_seeds_are_pinned():
    # random.Random("kvdrill:SEED:POSITION").getrandbits(31), worked with random directly
    seeds = [item_seed(7, p) for p in range(1, 6)]
    assert seeds == [51_627_503, 694_459_611, 901_238_156, 184_560_705, 1_318_474_390]
    assert item_seed(8, 1) == 626_462_924


@pytest.mark.parametrize(
    ("text", "expected"),
    [("", 3), ("  ", 3), ("1", 1), ("4", 4), ("Easy", 4), ("again", 1), ("5", None), ("x", None)],
)
def test_parse_rating(text, expected):
    assert parse_rating(text, 3) == expected


def test_the_summary_counts_each_mistake_most_frequent_first_with_its_drill():
    result = SessionResult("s", "review", 6, T0, ended_at=T0 + timedelta(minutes=5),
                           answered=6, right=2, wrong=4)  # fmt: skip
    result.mistakes = [None, "gb-vs-gib", "forgot-kv-factor", None, "forgot-kv-factor",
                       "bits-vs-bytes"]  # fmt: skip
    result.mistake_names = {"gb-vs-gib": "GB read as GiB",
                            "forgot-kv-factor": "forgot the K+V factor of 2"}  # fmt: skip
    assert render_summary(result) == (
        "\n── summary ──\n"
        "6 answered: 2 right, 4 wrong; 5 min.\n"
        "Mistakes this session: 4; practise each with its drill:\n"
        "  2x forgot the K+V factor of 2: kvdrill quiz --drill forgot-kv-factor\n"
        "  1x GB read as GiB: kvdrill quiz --drill gb-vs-gib\n"
        "  1x bits vs bytes: kvdrill quiz --drill bits-vs-bytes\n"
        "Nothing scheduled yet.\n"
    )


def test_the_summary_lists_five_learning_cards_and_counts_the_rest():
    ended = T0 + timedelta(minutes=5)
    result = SessionResult("s", "review", 7, T0, ended_at=ended, answered=7, right=0, wrong=7)
    result.learning_left = [(ended + timedelta(minutes=m), f"q{m}") for m in (9, 1, 3, 4, 5, 7, 2)]
    assert render_summary(result).split("\n")[3:11] == [
        "Still learning: 7; `kvdrill quiz` shows each once it is back:",
        "  q1  back in 1 min",
        "  q2  back in 2 min",
        "  q3  back in 3 min",
        "  q4  back in 4 min",
        "  q5  back in 5 min",
        "  and 2 more, the last back in 9 min",
        "Nothing scheduled yet.",
    ]


def test_an_undone_answer_takes_its_mistake_out_of_the_summary(tmp_path):
    db = open_db(tmp_path / "k.db")
    # qf-kv-bytes wrong, then u at the next question: asked again and answered right
    result, term = run(db, ["1 MiB", "", "u", "2 MiB", "", "q"])
    assert result.mistakes == [None]
    assert "Mistakes this session" not in term.text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0 s"), (59, "59 s"), (60, "1 min"), (252, "4 min 12 s"), (3600, "1 h"),
     (3900, "1 h 5 min"), (86400, "1 day"), (8 * 86400, "8 days")],
)
def test_human_span(seconds, text):
    assert human_span(timedelta(seconds=seconds)) == text


# --------------------------------------------------------------------------- store


def _review(qid, at, session_id, rating=3, cram=0, correct=1):
    return Review(
        id=f"{qid}-{iso(at)}-{cram}",
        question_id=qid,
        reviewed_at=iso(at),
        rating=rating,
        correct=correct,
        answer="x",
        duration_ms=1000,
        seed=1,
        params="{}",
        session_id=session_id,
        cram=cram,
    )


def test_record_answer_writes_review_card_and_session_counts_together(tmp_path):
    db = open_db(tmp_path / "k.db")
    start_session(db, "s1", iso(T0), "review")
    # a new card after Good, as the scheduler leaves it (difficulty rounded): the second
    # learning step, 10 min out
    scheduled = {
        "question_id": "a", "state": 1, "step": 1, "stability": 2.3065, "difficulty": 2.1181,
        "due": iso(T0 + timedelta(minutes=10)), "last_review": iso(T0), "reps": 1, "lapses": 0,
    }  # fmt: skip

    def reschedule(row):
        assert row is None  # never scheduled before
        return dict(scheduled)

    change = record_answer(db, _review("a", T0, "s1"), reschedule, counted_correct=True)
    stored = {**scheduled, "suspended_at": None, "buried_until": None, "leech_at": None}
    assert (change.before, change.after) == (None, stored)
    assert get_card(db, "a") == stored
    record_answer(db, _review("a", T0, "s1", cram=1, rating=1, correct=0), None,
                  counted_correct=False)
    end_session(db, "s1", iso(T0 + timedelta(minutes=2)))
    assert get_card(db, "a") == stored  # cram left the schedule alone
    crams = db.execute("select cram from reviews where session_id = 's1' order by rowid")
    assert [cram for (cram,) in crams] == [0, 1]
    session = db["sessions"].get("s1")
    assert (session["answered"], session["correct"]) == (2, 1)
    assert session["ended_at"] == iso(T0 + timedelta(minutes=2))
    assert performance_by_question(db) == {"a": Performance(2, 1)}


def test_a_failing_reschedule_leaves_no_review_behind(tmp_path):
    db = open_db(tmp_path / "k.db")
    start_session(db, "s1", iso(T0), "review")

    def broken(row):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        record_answer(db, _review("a", T0, "s1"), broken, counted_correct=True)
    assert db["reviews"].count == 0
    assert db["sessions"].get("s1")["answered"] == 0


def test_new_cards_since_counts_first_scheduled_reviews_only(tmp_path):
    db = open_db(tmp_path / "k.db")
    yesterday = T0 - timedelta(days=1)
    start_session(db, "s", iso(yesterday), "review")
    for review in [
        _review("old", yesterday, "s"),
        _review("old", T0, "s"),
        _review("fresh", T0, "s"),
        _review("crammed", T0, "s", cram=1),
    ]:
        record_answer(db, review, None, counted_correct=True)
    assert new_cards_since(db, iso(UTC_DAYS.day_start(T0))) == 1
    assert new_cards_since(db, iso(yesterday)) == 2
    assert load_cards(db) == {}


# --------------------------------------------------------------------------- whole sessions


class Terminal:
    """Scripted input, captured output, and a clock that moves `tick_s` per line read."""

    def __init__(self, lines, start=T0, tick_s=20):
        self.lines = list(lines)
        self.out = []
        self.clock = start
        self.tick = timedelta(seconds=tick_s)

    def read_line(self):
        self.clock += self.tick
        if not self.lines:
            return None
        line = self.lines.pop(0)
        if line is KeyboardInterrupt:
            raise KeyboardInterrupt
        return line

    def io(self):
        return SessionIO(self.read_line, self.out.append, lambda: self.clock)

    @property
    def text(self):
        return "".join(self.out)


FIXTURE = SessionOptions(topic="quiz-fixture", seed=1, fuzz=False)


def no_evidence(claims):
    return [f"(evidence asked for: {', '.join(claims)})"]


def run(db, lines, options=FIXTURE, start=T0, tick_s=20):
    term = Terminal(lines, start, tick_s)
    result = run_session(
        db, load_bank([BANK_DIR]), options, term.io(), days=UTC_DAYS,
        evidence_lines=no_evidence,
    )
    return result, term


def reviews(db):
    return list(db.query("select * from reviews order by reviewed_at, rowid"))


def test_a_right_numeric_answer_is_stored_with_its_draw_and_scheduled_ten_minutes_out(tmp_path):
    db = open_db(tmp_path / "k.db")
    result, term = run(db, ["2 MiB", "", "q"])
    assert "[0 done, 3 left] quiz-fixture · new" in term.text
    assert "Right: 2 MiB (2,097,152 bytes)." in term.text
    (row,) = reviews(db)
    answered_at = T0 + timedelta(seconds=40)  # two lines read: the answer and the Enter
    assert row == {
        "id": result.review_ids[0],
        "question_id": "qf-kv-bytes",
        "reviewed_at": iso(answered_at),
        "rating": 3,
        "correct": 1,
        "answer": "2 MiB",
        "seed": 339_923_146,  # the session's first item: seed 1, position 1
        # compact, as an export writes it without a call into Python
        "params": '{"dtype_bytes":2,"head_dim":64,"kv":2097152,"kv_heads":4,"layers":2,'
        '"per_token":2048,"seq":1024}',
        "expected": 2097152.0,
        "unit": "bytes",
        "misconception": None,
        "duration_ms": 20_000,
        "session_id": result.session_id,
        "cram": 0,
        "ticks": None,  # a numeric answer: no key points to tick
    }
    assert get_card(db, "qf-kv-bytes") == {
        "question_id": "qf-kv-bytes",
        "state": 1,
        "step": 1,
        "stability": pytest.approx(2.3065),
        "difficulty": pytest.approx(2.118103970459016),
        "due": iso(answered_at + timedelta(minutes=10)),
        "last_review": iso(answered_at),
        "reps": 1,
        "lapses": 0,
        "suspended_at": None,
        "buried_until": None,
        "leech_at": None,
    }
    assert (result.answered, result.right, result.wrong, result.ended_by) == (1, 1, 0, "quit")
    assert "1 answered: 1 right, 0 wrong; 1 min." in term.text
    assert "Next due: in 9 min 40 s; 1 due within a day." in term.text


def test_a_fast_right_answer_suggests_easy(tmp_path):
    db = open_db(tmp_path / "k.db")
    run(db, ["2097152", "", "q"], tick_s=5)
    (row,) = reviews(db)
    assert row["rating"] == 4 and row["duration_ms"] == 5_000
    # Easy on a new card graduates it for days
    assert get_card(db, "qf-kv-bytes")["due"] == iso(T0 + timedelta(seconds=10, days=8))


def test_a_wrong_answer_names_its_misconception_and_comes_back_in_a_minute(tmp_path):
    db = open_db(tmp_path / "k.db")
    result, term = run(db, ["1 MiB", "", "q"])
    assert "Wrong. Answer: 2 MiB (2,097,152 bytes).\nMistake: forgot the K+V factor of 2.\n" in (
        term.text
    )
    assert "You gave 1 MiB; the answer is 2 MiB." in term.text
    assert "Per request: 2,048 × 1,024 = 2,097,152 bytes = 2 MiB." in term.text
    assert "[Enter = 1 again]" in term.text
    (row,) = reviews(db)
    assert (row["rating"], row["correct"], row["misconception"]) == (1, 0, "forgot-kv-factor")
    card = get_card(db, "qf-kv-bytes")
    assert card["due"] == iso(T0 + timedelta(seconds=40, minutes=1))
    assert (card["state"], card["step"], card["reps"]) == (1, 0, 1)
    assert (result.right, result.wrong) == (0, 1)


def test_the_user_overrides_the_suggested_rating(tmp_path):
    db = open_db(tmp_path / "k.db")
    run(db, ["1 MiB", "3", "q"])
    assert reviews(db)[0]["rating"] == 3
    assert get_card(db, "qf-kv-bytes")["due"] == iso(T0 + timedelta(seconds=40, minutes=10))


def test_a_hint_caps_the_suggestion_at_hard(tmp_path):
    db = open_db(tmp_path / "k.db")
    _, term = run(db, ["h", "2 MiB", "", "q"])
    assert "Hint 1 of 3: K and V, in every layer, for every KV head." in term.text
    assert "[Enter = 2 hard]" in term.text
    (row,) = reviews(db)
    assert (row["rating"], row["correct"], row["duration_ms"]) == (2, 1, 40_000)


def test_an_unreadable_answer_is_explained_and_asked_again(tmp_path):
    db = open_db(tmp_path / "k.db")
    _, term = run(db, ["about a lot", "", "2 MiB", "", "q"])
    assert "Cannot read 'about a lot'" in term.text
    assert "0.5 GiB" in term.text  # the message shows examples
    assert "Type an answer (answers look like" in term.text  # the empty line
    (row,) = reviews(db)
    assert (row["answer"], row["correct"]) == ("2 MiB", 1)


def test_a_concept_answer_shows_the_model_answer_marks_key_points_and_is_self_rated(tmp_path):
    db = open_db(tmp_path / "k.db")
    _, term = run(db, ["s", "it has to read all the weights every step", "", "4", "q"])
    assert "[1 done, 2 left] quiz-fixture · new" in term.text
    assert "Model answer:" in term.text
    assert "  [x] 1. every step reads all the weights" in term.text
    assert "  [ ] 2. little arithmetic per byte (low arithmetic intensity)" in term.text
    assert "(evidence asked for: decode_memory_bound)" in term.text
    assert "[Enter = 2 hard]" in term.text  # one key point of two: half
    (row,) = reviews(db)
    assert row["question_id"] == "qf-decode-bound"
    assert (row["rating"], row["correct"], row["expected"], row["unit"]) == (4, None, None, None)
    assert row["seed"] == 1_135_764_349  # seed 1, position 2
    assert row["ticks"] == "10"  # the grader's ticks, kept with Enter
    # the ticks prompt took one more line: 20 s on the test clock
    assert get_card(db, "qf-decode-bound")["due"] == iso(T0 + timedelta(seconds=80, days=8))


def test_skip_and_quit_store_nothing_and_end_with_the_summary(tmp_path):
    db = open_db(tmp_path / "k.db")
    result, term = run(db, ["s", "q"])
    assert "Skipped." in term.text
    assert "[1 done, 2 left]" in term.text and "[2 done, 1 left]" not in term.text
    assert reviews(db) == [] and load_cards(db) == {}
    assert (result.skipped, result.answered, result.ended_by) == (1, 0, "quit")
    assert "0 answered: 0 right, 0 wrong, 1 skipped; 40 s." in term.text
    assert "Nothing scheduled yet." in term.text
    session = db["sessions"].get(result.session_id)
    assert session == {
        "id": result.session_id,
        "started_at": iso(T0),
        "ended_at": iso(T0 + timedelta(seconds=40)),
        "mode": "review",
        "answered": 0,
        "correct": 0,
    }


def test_end_of_input_at_the_rating_keeps_the_answer_with_the_suggestion(tmp_path):
    db = open_db(tmp_path / "k.db")
    result, term = run(db, ["2 MiB"])
    assert result.ended_by == "eof"
    (row,) = reviews(db)
    assert (row["rating"], row["answer"]) == (3, "2 MiB")
    assert "── summary ──" in term.text


def test_ctrl_c_ends_with_the_summary_and_keeps_earlier_answers(tmp_path):
    db = open_db(tmp_path / "k.db")
    result, term = run(db, ["2 MiB", "", KeyboardInterrupt])
    assert result.ended_by == "interrupt"
    assert [r["answer"] for r in reviews(db)] == ["2 MiB"]
    assert "1 answered: 1 right, 0 wrong" in term.text
    assert db["sessions"].get(result.session_id)["ended_at"] == iso(T0 + timedelta(seconds=60))


def test_ctrl_c_at_the_rating_keeps_the_answer(tmp_path):
    db = open_db(tmp_path / "k.db")
    result, _ = run(db, ["2 MiB", KeyboardInterrupt])
    assert result.ended_by == "interrupt"
    assert [(r["answer"], r["rating"]) for r in reviews(db)] == [("2 MiB", 3)]


def test_choice_questions_are_graded_by_option_number(tmp_path):
    db = open_db(tmp_path / "k.db")
    # the third item's seed is 358,653,845 (position 3 of session seed 1); that draw
    # shows decode first, so prefill is option 2
    right = "2"
    _, term = run(db, ["s", "s", right, "", "q"])
    assert f"  {right}. prefill" in term.text
    assert f"Right: {right}." in term.text
    (row,) = reviews(db)
    assert (row["question_id"], row["answer"], row["correct"]) == ("qf-choice", right, 1)


def test_next_day_due_cards_come_first_and_the_new_limit_counts_today(tmp_path):
    db = open_db(tmp_path / "k.db")
    day1 = SessionOptions(topic="quiz-fixture", seed=1, fuzz=False, new_limit=2)
    run(db, ["1 MiB", "", "fixture weights", "", "", "q"], options=day1)
    # later the same day: both new cards of today's allowance are used up
    later, term = run(db, ["q"], options=day1, start=T0 + timedelta(hours=2))
    assert later.planned == 2
    assert "2 questions: 2 due, 0 new." in term.text
    # the next day: the two learning cards (most overdue first), then one new card
    next_day = T0 + timedelta(days=1)
    result, term = run(db, ["2 MiB", "", "q"], options=day1, start=next_day)
    assert result.planned == 3
    assert "3 questions: 2 due, 1 new." in term.text
    assert "[0 done, 3 left] quiz-fixture · again" in term.text
    assert "[0 done, 3 left] quiz-fixture · again\nA model has 2 layers" in term.text
    assert [r["question_id"] for r in reviews(db)] == [
        "qf-kv-bytes", "qf-decode-bound", "qf-kv-bytes",
    ]


def test_cram_logs_practice_without_touching_the_schedule(tmp_path):
    db = open_db(tmp_path / "k.db")
    run(db, ["1 MiB", "", "q"])
    before = load_cards(db)
    cram = SessionOptions(topic="quiz-fixture", seed=1, fuzz=False, cram=True, max_items=2)
    result, term = run(db, ["2 MiB", "", "q"], options=cram, start=T0 + timedelta(hours=1))
    # the question answered wrong before comes first
    assert "Cram: 2 questions" in term.text
    assert "[0 done, 2 left] quiz-fixture · cram\nA model has" in term.text
    assert load_cards(db) == before
    last = reviews(db)[-1]
    assert (last["cram"], last["correct"], last["session_id"]) == (1, 1, result.session_id)
    assert db["sessions"].get(result.session_id)["mode"] == "cram"
    assert "Cram session: the schedule was not changed." in term.text


def test_questions_that_left_the_bank_keep_their_history_and_are_skipped(tmp_path):
    db = open_db(tmp_path / "k.db")
    run(db, ["1 MiB", "", "q"])  # qf-kv-bytes: due again in a minute
    bank = [q for q in load_bank([BANK_DIR]) if q.id != "qf-kv-bytes"]
    term = Terminal(["q"], T0 + timedelta(days=1))
    result = run_session(db, bank, FIXTURE, term.io(), days=UTC_DAYS,
                         evidence_lines=no_evidence)
    assert result.planned == 2
    assert "qf-kv-bytes" in load_cards(db)
    assert [r["question_id"] for r in reviews(db)] == ["qf-kv-bytes"]


def test_desired_retention_changes_the_interval(tmp_path):
    db = open_db(tmp_path / "k.db")
    low = SessionOptions(topic="quiz-fixture", seed=1, fuzz=False, retention=0.8)
    run(db, ["2 MiB", "4", "q"], options=low)
    # Easy on a new card: stability w3 = 8.2956 days; the interval is
    # S / F · (R ** (-1 / w20) - 1) with w20 = 0.1542 and F = 0.9 ** (-1 / w20) - 1:
    # 8.2956 / 0.98034649 · (0.8 ** -6.48508431 - 1) = 27.51, so 28 days (8 at R = 0.9)
    assert get_card(db, "qf-kv-bytes")["due"] == iso(T0 + timedelta(seconds=40, days=28))


def test_the_same_seed_draws_the_same_session(tmp_path):
    first, a = run(open_db(tmp_path / "a.db"), ["s", "s", "s"])
    second, b = run(open_db(tmp_path / "b.db"), ["s", "s", "s"])
    strip = [line for line in a.text.splitlines() if "summary" not in line]
    assert strip == [line for line in b.text.splitlines() if "summary" not in line]


def test_a_question_whose_template_fails_is_skipped_and_the_session_goes_on(tmp_path):
    from drill.kinds import make_instance

    def flaky(question, seed):
        if question.id == "qf-kv-bytes":
            raise BankError("qf-kv-bytes: prompt: unknown name {layerz}")
        return make_instance(question, seed)

    db = open_db(tmp_path / "k.db")
    term = Terminal(["fixture weights", "", "", "q"])
    result = run_session(db, load_bank([BANK_DIR]), FIXTURE, term.io(), days=UTC_DAYS,
                         make_instance=flaky, evidence_lines=no_evidence)
    assert "[0 done, 3 left] skipped qf-kv-bytes: qf-kv-bytes: prompt: unknown name {layerz}" in term.text
    assert (result.skipped, result.answered) == (1, 1)
    assert [r["question_id"] for r in reviews(db)] == ["qf-decode-bound"]
