"""`kvdrill interview`: a scripted interview on a fixed clock, its report and what it stores."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

from browser import needs_browser, screenshot
from click.testing import CliRunner

from drill.bank.loader import load_bank
from drill.cli import cli
from drill.interview.loop import InterviewIO, run_interview
from drill.interview.plan import clock, plan_interview
from drill.interview.report import build_report, render_html, render_markdown, render_text
from drill.kinds import make_instance
from drill.srs import make_scheduler, new_card_row, review_row
from drill.storage.database import open_db
from drill.study.screen import Screen

BANK = Path(__file__).parent / "banks" / "interview" / "interview.yaml"
START = datetime(2026, 11, 18, 12, tzinfo=timezone.utc)
NOW = "2026-11-18T12:00:00+00:00"

# seed 1 asks: the chain (1-3), an explanation, a problem, an explanation
SCRIPT = [
    (30, "512 MiB"),  # 1 iv-open: right
    (45, "128 MiB"),  # 2 FP8 follow-up: 256 MiB; 128 MiB forgets the K+V factor
    (10, ""),  # 3 an empty answer is asked again...
    (20, "1 GiB"),  # ...then right: 30 s in all
    (60, "It avoids recomputation of earlier keys and values"),  # 4: 1 of 2 points
    (5, "s"),  # 5 iv-step: passed
    (90, "Every weight is read each step and there is little math per byte"),  # 6: 2 of 2
]


class ScriptedIO:
    """Lines typed after a delay each, on a clock that moves only as they are typed;
    KeyboardInterrupt in the script is raised as Ctrl-C would be."""

    def __init__(self, script):
        self.script = list(script)
        self.moment = START
        self.out: list[str] = []
        self.saved: list = []

    def read_line(self):
        if not self.script:
            return None
        delay, line = self.script.pop(0)
        self.moment += timedelta(seconds=delay)
        if line is KeyboardInterrupt:
            raise KeyboardInterrupt
        return line

    def io(self) -> InterviewIO:
        return InterviewIO(self.read_line, self.out.append, lambda: self.moment)

    @property
    def text(self) -> str:
        return "".join(self.out)


def turns(seed: int = 1, n: int = 6):
    bank = load_bank([BANK])
    return plan_interview(list(bank), n, seed, bank.get, make_instance)


def interview(script, *, minutes: float = 45, seed: int = 1):
    scripted = ScriptedIO(script)
    result = run_interview(turns(seed), minutes, scripted.io(), scripted.saved.append)
    return scripted, result


# ----------------------------------------------------------------------------- the plan


def test_a_chain_is_asked_in_order_then_problems_and_explanations_take_turns():
    planned = turns()
    assert [(t.number, t.question_id, t.follow_up_of) for t in planned] == [
        (1, "iv-open", None),
        (2, "iv-open", 1),
        (3, "iv-many", 1),
        (4, "iv-why-cache", None),
        (5, "iv-step", None),
        (6, "iv-why-decode", None),
    ]
    assert [t.instance.params.get("dtype_bytes") for t in planned[:3]] == [2, 1, 1]
    assert planned[1].ask == "FOLLOW-UP-FP8: now the cache is FP8. How big is it at 4,096 tokens?"
    assert planned[2].ask == "FOLLOW-UP-MANY: now 4 such requests. How much cache in all?"
    assert all(t.instance.kind != "order" for t in planned)  # no order questions
    # the opener's start fixed a param and follow-ups carry theirs: no seed redraws them
    assert [t.drawn_seed for t in planned[:3]] == [None, None, None]
    assert planned[3].drawn_seed == 1_007_257_063


def test_focus_weak_draws_the_weak_explanation_every_time():
    bank = load_bank([BANK])
    weights = {"iv-why-decode": 100.0, "iv-why-cache": 0.5}  # weak_weights' two ends
    chosen = [
        [t.question_id for t in plan_interview(list(bank), 2, seed, bank.get, make_instance,
                                               weights=weights)]
        for seed in range(40)
    ]  # fmt: skip
    plain = [[t.question_id for t in plan_interview(list(bank), 2, s, bank.get, make_instance)]
             for s in range(40)]  # fmt: skip
    # with n 2: one problem, one explanation
    assert sum("iv-why-decode" in c for c in chosen) == 40
    assert sum("iv-why-decode" in c for c in plain) == 17


def test_clock_format():
    assert [clock(s) for s in (0, 42.9, 600, 3723)] == ["0:00", "0:42", "10:00", "1:02:03"]


# ----------------------------------------------------------------------------- the loop


def test_the_clock_shows_with_each_prompt_and_nothing_is_marked_before_the_end():
    scripted, result = interview(SCRIPT)
    text = scripted.text
    headings = [line for line in text.splitlines() if line.startswith("Question ")]
    assert headings == [
        "Question 1 of 6 · iv-kv · 0:00 gone, 45:00 left",
        "Question 2 of 6 · follow-up to 1 · 0:30 gone, 44:30 left",
        "Question 3 of 6 · follow-up to 1 · 1:15 gone, 43:45 left",
        "Question 4 of 6 · iv-concepts · 1:45 gone, 43:15 left",
        "Question 5 of 6 · iv-time · 2:45 gone, 42:15 left",
        "Question 6 of 6 · iv-concepts · 2:50 gone, 42:10 left",
    ]
    assert "Noted (0:30 on this question; the share is 7:30)." in text
    assert "Passed (0:05 on this question; the share is 7:30)." in text
    # a follow-up is asked in the interviewer's words, not with its whole text again
    assert "FOLLOW-UP-FP8" in text and "requests of 4,096 tokens run" not in text
    for marked in ("Right", "Wrong", "256 MiB", "K+V", "MODEL-", "KEY-", "Mistake", "points"):
        assert marked not in text, marked
    assert result.ended_by == "done"


def test_at_a_terminal_of_80_columns_the_interview_breaks_lines_between_words():
    scripted = ScriptedIO(SCRIPT)
    io = replace(scripted.io(), screen=Screen(width=lambda: 80))
    run_interview(turns(), 45, io, scripted.saved.append)
    assert scripted.text.startswith(
        "Mock interview: 6 questions in 45:00, about 7:30 each.\n"
        "Answer as you would aloud: a number with its unit, or a few sentences. Nothing\n"
        "is marked until the end. s passes on a question, q ends the interview; every\n"
        "answer is saved as you give it.\n"
    )
    assert max(len(line) for line in scripted.text.splitlines()) == 80


def test_each_answer_is_saved_before_the_next_question_with_its_time():
    scripted, result = interview(SCRIPT)
    saved = scripted.saved
    assert [a.turn.number for a in saved] == [1, 2, 3, 4, 5, 6]
    assert [a.duration_ms for a in saved] == [30_000, 45_000, 30_000, 60_000, 5_000, 90_000]
    assert [a.text for a in saved][4] is None  # passed
    assert [a.rating for a in saved] == [3, 1, 3, 2, 1, 3]
    assert saved == result.answers


def test_the_report_scores_each_question_each_topic_and_names_three_things_to_drill():
    _, result = interview(SCRIPT)
    report = build_report(result, seed=1)
    rows = [
        (r.number, r.verdict, r.expected if r.kind == "numeric" else "", r.mistake,
         clock(r.duration_ms / 1000), r.points)
        for r in report.rows
    ]  # fmt: skip
    assert rows == [
        (1, "Right", "512 MiB (536,870,912 bytes)", None, "0:30", 1.0),
        (2, "Wrong", "256 MiB (268,435,456 bytes)", "forgot the K+V factor of 2", "0:45", 0.0),
        (3, "Right", "1 GiB (1,073,741,824 bytes)", None, "0:30", 1.0),
        (4, "1 of 2 key points", "", None, "1:00", 0.5),
        (5, "Passed", "5 ms", None, "0:05", 0.0),
        (6, "2 of 2 key points", "", None, "1:30", 1.0),
    ]
    assert report.rows[3].missed == ("KEY-MEMORY: costs memory per token",)
    assert [(t.topic, t.asked, t.points, t.percent) for t in report.topics] == [
        ("iv-concepts", 2, 1.5, 75),
        ("iv-kv", 3, 2.0, 67),
        ("iv-time", 1, 0.0, 0),
    ]
    assert (report.points, report.percent, report.elapsed_s) == (3.5, 58, 260.0)
    assert [(s.what, s.why, s.command) for s in report.drill_next] == [
        ('the mistake "forgot the K+V factor of 2"', "question 2",
         "kvdrill quiz --topic iv-kv --cram"),
        ("the key points of iv-why-cache", "covered 1 of 2 key points",
         "kvdrill ask iv-why-cache"),
        ("the topic iv-time", "0 of 1, 0 %", "kvdrill quiz --topic iv-time --cram"),
    ]  # fmt: skip
    text = render_text(report)
    assert "6 of 6 questions answered in 4:20 of 45:00 · score 3.5 of 6 (58 %) · seed 1" in text
    assert "2. iv-open · follow-up to 1 · 0:45\n   Answer:  128 MiB\n" in text
    assert "   Verdict: Wrong; the answer is 256 MiB (268,435,456 bytes)\n" in text
    assert "   Mistake: forgot the K+V factor of 2\n" in text
    assert "  iv-concepts  1.5 of 2   75 %\n" in text
    assert "  1. The mistake \"forgot the K+V factor of 2\" (question 2): kvdrill quiz" in text


def test_time_up_asks_no_more_and_keeps_the_answers_given():
    scripted, result = interview([(40, "512 MiB"), (40, "256 MiB"), (40, "1 GiB")], minutes=1)
    assert result.ended_by == "time"
    assert [a.text for a in scripted.saved] == ["512 MiB", "256 MiB"]
    assert "Time is up: 1:20 gone; 4 not asked." in scripted.text
    report = build_report(result, seed=1)
    assert render_text(report).splitlines()[2] == (
        "2 of 6 questions answered in 1:20 of 1:00 · score 2 of 2 (100 %) · seed 1 · time was up"
    )
    assert report.drill_next == ()


def test_an_interview_with_no_answer_does_not_say_every_answer_was_right():
    _, result = interview([(5, "q")])
    report = build_report(result, seed=1)
    assert report.rows == () and report.drill_next == ()
    assert render_text(report).endswith("Drill next\n  Nothing answered, so nothing to drill yet.\n")
    assert "Nothing answered, so nothing to drill yet." in render_markdown(report)
    assert "<li>Nothing answered, so nothing to drill yet.</li>" in render_html(report)
    assert "every answer was right" not in render_text(report) + render_markdown(report)


def test_ctrl_c_keeps_every_answer_given():
    script = [(30, "512 MiB"), (45, "128 MiB"), (5, KeyboardInterrupt)]
    scripted, result = interview(script)
    assert result.ended_by == "interrupt"
    assert [a.text for a in scripted.saved] == ["512 MiB", "128 MiB"]
    assert [r.verdict for r in build_report(result, seed=1).rows] == ["Right", "Wrong"]


def test_an_unreadable_answer_is_asked_again_without_a_verdict():
    scripted, _ = interview([(10, "lots of bytes"), (10, "512 MiB"), (1, "q")])
    assert "Cannot read" in scripted.text
    assert [a.text for a in scripted.saved] == ["512 MiB"]
    assert scripted.saved[0].duration_ms == 20_000


# ----------------------------------------------------------------------------- the command


def run(args, text=""):
    result = CliRunner().invoke(cli, ["interview", "--bank", str(BANK), *map(str, args)], input=text)
    assert result.exit_code == 0, result.output
    return result


ARGS = ["--topic", "iv-kv", "--seed", 1, "--n", 3, "--now", NOW, "--tick", 30, "--no-fuzz"]


def test_interview_answers_are_stored_as_reviews_of_an_interview_session(tmp_path):
    db = tmp_path / "k.db"
    run([*ARGS, "--db", db], "512 MiB\n128 MiB\n1 GiB\n")
    conn = sqlite3.connect(db)
    assert conn.execute("select mode, answered, correct, ended_at from sessions").fetchall() == [
        ("interview", 3, 2, "2026-11-18T12:01:30.000000+00:00")
    ]
    reviews = conn.execute(
        "select question_id, rating, correct, seed, duration_ms, misconception, cram"
        " from reviews order by reviewed_at"
    ).fetchall()
    assert reviews == [
        ("iv-open", 3, 1, None, 30_000, None, 0),
        ("iv-open", 1, 0, None, 30_000, "forgot-kv-factor", 0),
        ("iv-many", 3, 1, None, 30_000, None, 0),
    ]
    # the reviews fed the schedule: two reviews of iv-open, the last one wrong
    cards = conn.execute("select question_id, reps, lapses, due from cards order by 1").fetchall()
    assert [(q, reps) for q, reps, _, _ in cards] == [("iv-many", 1), ("iv-open", 2)]
    params = conn.execute("select params from reviews where question_id = 'iv-many'").fetchone()[0]
    assert params == (  # compact, as an export writes it without a call into Python
        '{"dtype_bytes":1,"head_dim":128,"kv_heads":8,"layers":32,"per_request":268435456,'
        '"requests":4,"seq":4096,"total":1073741824}'
    )


def test_with_an_interview_date_an_answer_brings_its_card_back_in_the_week_before(tmp_path):
    path = tmp_path / "k.db"
    db = open_db(path)
    row = new_card_row("iv-many", START - timedelta(days=30))
    for days_before in (30, 29, 20):  # right every time: a long interval by now
        row = review_row(make_scheduler(fuzz=False), row, 3, START - timedelta(days=days_before))
    db.table("cards").insert(row)
    db.conn.close()
    config = CliRunner().invoke(cli, ["config", "interview-date", "2026-12-01", "--db", str(path),
                                      "--now", NOW])  # fmt: skip
    assert config.exit_code == 0, config.output
    run([*ARGS, "--db", path], "512 MiB\n128 MiB\n1 GiB\n")  # iv-many right, rated Good
    conn = sqlite3.connect(path)
    # without the date it would come back on 2027-02-23; with it, in the week before the day
    assert conn.execute("select due from cards where question_id = 'iv-many'").fetchone() == (
        "2026-11-24T04:00:00.000000+00:00",)  # fmt: skip


def test_ctrl_c_at_the_command_keeps_the_answers_and_prints_the_report(tmp_path, monkeypatch):
    import drill.commands.terminal as terminal_module

    lines = iter(["512 MiB\n", "128 MiB\n"])

    def read_input_line(stream):
        try:
            return next(lines).rstrip("\n")
        except StopIteration:
            raise KeyboardInterrupt from None

    monkeypatch.setattr(terminal_module, "read_input_line", read_input_line)
    db = tmp_path / "k.db"
    result = run([*ARGS, "--db", db])
    assert "2 of 3 questions answered in 1:30 of 45:00" in result.stdout  # 30 s before Ctrl-C
    assert "interrupted" in result.stdout
    conn = sqlite3.connect(db)
    assert conn.execute("select count(*) from reviews").fetchone() == (2,)
    assert conn.execute("select answered, ended_at is not null from sessions").fetchone() == (2, 1)


def test_json_report_on_stdout_with_the_prompts_on_stderr(tmp_path):
    result = run([*ARGS, "--db", tmp_path / "k.db", "--json"], "512 MiB\n128 MiB\n1 GiB\n")
    data = json.loads(result.stdout)
    assert "Question 1 of 3" in result.stderr
    assert data["score"] == {"points": 2.0, "of": 3, "percent": 67}
    assert [q["verdict"] for q in data["questions"]] == ["Right", "Wrong", "Right"]
    assert data["questions"][1]["follow_up_of"] == 1
    assert data["questions"][1]["mistake"] == "forgot the K+V factor of 2"
    assert data["drill_next"][0]["command"] == "kvdrill quiz --topic iv-kv --cram"


# ----------------------------------------------------------------------------- report files


def hostile_report():
    script = [*SCRIPT[:4], (60, "<script>alert(1)</script> | 5"), *SCRIPT[5:]]
    _, result = interview(script)
    return build_report(result, seed=1)


def test_markdown_and_html_reports_escape_what_was_typed(tmp_path):
    md = render_markdown(hostile_report())
    assert "&lt;script&gt;alert(1)&lt;/script&gt; \\| 5" in md  # a table cell
    assert "## By topic" in md and "## Drill next" in md
    page = render_html(hostile_report())
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt; | 5" in page
    assert "Content-Security-Policy" in page


def test_report_file_is_written_by_its_extension(tmp_path):
    for name in ("r.md", "r.html"):
        run([*ARGS, "--db", tmp_path / "k.db", "--report", tmp_path / name], "512 MiB\n")
    assert (tmp_path / "r.md").read_text().startswith("# kvdrill mock interview: report\n")
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    result = CliRunner().invoke(
        cli, ["interview", "--db", str(tmp_path / "k.db"), "--report", str(tmp_path / "k.db")]
    )
    assert result.exit_code == 1 and "refusing to write over" in result.output


@needs_browser
def test_the_html_report_renders_in_chromium(tmp_path):
    _, result = interview(SCRIPT)
    image = screenshot(render_html(build_report(result, seed=1)), tmp_path, 1000, 1800)
    colours = {rgb for _, rgb in image.getcolors(1 << 24)}
    # the verdict colours (right green, wrong red, partial amber) and the topic bars' green
    for rgb in ((0x1A, 0x7F, 0x37), (0xB4, 0x23, 0x18), (0x9A, 0x67, 0x00), (0x22, 0xBB, 0x66)):
        assert rgb in colours, rgb


def test_the_readme_transcript_is_what_seed_12_asks(tmp_path):
    # the README shows this interview: its questions, and the follow-up answered with the
    # number from before the change
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    result = CliRunner().invoke(
        cli,
        ["interview", "--n", "4", "--minutes", "20", "--seed", "12", "--db", tmp_path / "k.db"],
        input="5 GiB\n5 GiB\ns\ns\n",
    )
    assert result.exit_code == 0, result.output
    report = result.output.split("Interview report\n", 1)[1].splitlines()
    asked = [line.split(" · ")[0] for line in report if line[:3] in ("1. ", "2. ", "3. ", "4. ")]
    assert asked == [
        "1. kv-bytes-per-request",
        "2. kv-bytes-per-request",
        "3. wq-activations-harder",
        "4. kv-offload-tiers",
    ]
    # 2 x 80 layers x 8 KV heads x 128 x 1 byte x 16,384 tokens = 2.5 GiB
    second = report[report.index("2. kv-bytes-per-request · follow-up to 1 · 0:00") + 1 :][:3]
    assert second == [
        "   Answer:  5 GiB",
        "   Verdict: Wrong; the answer is 2.5 GiB (2,684,354,560 bytes)",
        "   Mistake: kept the answer from before the change",
    ]
    for line in second:
        assert f"\n{line}\n" in readme
    for question in ("wq-activations-harder", "kv-offload-tiers"):
        assert f"kvdrill ask {question}\n" in readme


def test_an_interviews_concept_answers_keep_the_graders_ticks():
    from drill.interview.loop import review_of

    scripted, result = interview(SCRIPT)
    rows = [review_of(answer, f"r{i}", "s") for i, answer in enumerate(result.answers)]
    assert [(r.question_id, r.rating, r.ticks) for r in rows] == [
        ("iv-open", 3, None),
        ("iv-open", 1, None),
        ("iv-many", 3, None),
        ("iv-why-cache", 2, "10"),  # one point of two: half, Hard
        ("iv-step", 1, None),  # passed
        ("iv-why-decode", 3, "11"),
    ]
