"""Stored mock interviews: `interview list`, `interview report ID` (the report shown again
from what was stored), the score trend in stats, repeated --report flags, Drill next's
ranking, and the report's Markdown and HTML structure."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from click.testing import CliRunner
from markdown_it import MarkdownIt

from drill.cli import cli
from drill.interview.report import QuestionRow, assemble_report, render_html, render_markdown

BANK = Path(__file__).parent / "banks" / "interview" / "interview.yaml"
NOW = "2026-11-18T12:00:00+00:00"
LATER = "2026-11-19T09:00:00+00:00"
CLOCK = ["--tick", "30", "--no-fuzz", "--bank", str(BANK)]
# the three iv-kv questions (the chain): right, the K+V mistake, right
KV = ["--topic", "iv-kv", "--seed", "1", "--n", "3", "--now", NOW, *CLOCK]
KV_ANSWERS = "512 MiB\n128 MiB\n1 GiB\n"
# the two explanations: iv-why-decode passed, then iv-why-cache with 1 of 2 key points
CONCEPTS = ["--topic", "iv-concepts", "--seed", "2", "--n", "2", "--now", LATER, *CLOCK]
CONCEPT_ANSWERS = "s\nIt avoids recomputation of earlier keys and values\n"


def run(*args, text: str = "", code: int = 0):
    result = CliRunner().invoke(cli, [str(a) for a in args], input=text)
    assert result.exit_code == code, result.output
    return result


def session_ids(db: Path) -> list[str]:
    conn = sqlite3.connect(db)
    return [row[0] for row in conn.execute("select id from sessions order by started_at")]


def two_interviews(tmp_path):
    db = tmp_path / "k.db"
    first = run("interview", *KV, "--db", db, text=KV_ANSWERS)
    second = run("interview", *CONCEPTS, "--db", db, text=CONCEPT_ANSWERS)
    return db, first, second


def test_interview_list_shows_each_interview_with_its_score_newest_first(tmp_path):
    db, _, _ = two_interviews(tmp_path)
    kv, concepts = (sid[:8] for sid in session_ids(db))
    listed = run("interview", "list", "--db", db, "--now", LATER).output
    assert listed == (
        "id        began             score            answered  time           seed\n"
        f"{concepts}  2026-11-19 09:00  0.5 of 2 (25 %)  2 of 2    1:00 of 45:00     2\n"
        f"{kv}  2026-11-18 12:00  2 of 3 (67 %)    3 of 3    1:30 of 45:00     1\n"
    )
    data = json.loads(run("interview", "list", "--db", db, "--json").output)
    assert [{k: v for k, v in item.items() if k != "id"} for item in data] == [
        {"started_at": "2026-11-19T09:00:00.000000+00:00", "answered": 2, "planned": 2,
         "points": 0.5, "percent": 25, "minutes": 45.0, "elapsed_s": 60.0, "seed": 2,
         "ended_by": "done", "report": True},
        {"started_at": "2026-11-18T12:00:00.000000+00:00", "answered": 3, "planned": 3,
         "points": 2.0, "percent": 67, "minutes": 45.0, "elapsed_s": 90.0, "seed": 1,
         "ended_by": "done", "report": True},
    ]  # fmt: skip


def test_interview_report_shows_the_report_the_interview_ended_with(tmp_path):
    db, first, second = two_interviews(tmp_path)
    kv, concepts = session_ids(db)
    again = run("interview", "report", kv[:6], "--db", db).stdout
    assert again == first.stdout[first.stdout.index("\nInterview report\n") :]
    assert again.splitlines()[2:12] == [
        "3 of 3 questions answered in 1:30 of 45:00 · score 2 of 3 (67 %) · seed 1",
        "",
        "1. iv-open · iv-kv · 0:30",
        "   Answer:  512 MiB",
        "   Verdict: Right: 512 MiB (536,870,912 bytes)",
        "",
        "2. iv-open · follow-up to 1 · 0:30",
        "   Answer:  128 MiB",
        "   Verdict: Wrong; the answer is 256 MiB (268,435,456 bytes)",
        "   Mistake: forgot the K+V factor of 2",
    ]
    shown = run("interview", "report", concepts, "--db", db).stdout
    assert shown == second.stdout[second.stdout.index("\nInterview report\n") :]
    assert shown.endswith(
        "Drill next\n"
        "  1. The key points of iv-why-decode (passed): kvdrill ask iv-why-decode\n"
        "  2. The key points of iv-why-cache (covered 1 of 2 key points): kvdrill ask iv-why-cache\n"
        "  3. The topic iv-concepts (0.5 of 2, 25 %): kvdrill quiz --topic iv-concepts --cram\n"
    )
    # JSON: the object the interview printed
    live = json.loads(run("interview", *KV, "--db", tmp_path / "j.db", "--json",
                          text=KV_ANSWERS).stdout)  # fmt: skip
    (jid,) = session_ids(tmp_path / "j.db")
    stored = json.loads(run("interview", "report", jid, "--db", tmp_path / "j.db", "--json").stdout)
    assert stored == live
    assert stored["drill_next"][0] == {
        "what": 'the mistake "forgot the K+V factor of 2"', "why": "question 2",
        "command": "kvdrill quiz --topic iv-kv --cram",
    }  # fmt: skip


def test_repeated_report_flags_write_each_file_and_the_stored_report_writes_them_again(tmp_path):
    db = tmp_path / "k.db"
    md, page = tmp_path / "r.md", tmp_path / "r.html"
    result = run("interview", *KV, "--db", db, "--report", md, "--report", page, text=KV_ANSWERS)
    assert result.stderr.endswith(f"Report written to {md}.\nReport written to {page}.\n")
    assert md.read_text().startswith("# kvdrill mock interview: report\n")
    assert page.read_text().startswith("<!DOCTYPE html>")
    (sid,) = session_ids(db)
    md2, page2 = tmp_path / "s.md", tmp_path / "s.html"
    run("interview", "report", sid[:8], "--db", db, "--report", page2, "--report", md2)
    assert md2.read_text() == md.read_text()
    assert page2.read_text() == page.read_text()


def test_an_interview_from_before_reports_were_kept_is_listed_without_a_report(tmp_path):
    db, _, _ = two_interviews(tmp_path)
    kv, _ = session_ids(db)
    conn = sqlite3.connect(db)
    with conn:  # as an interview held before the report was stored: session and reviews only
        conn.execute("delete from interviews where session_id = ?", [kv])
        conn.execute("delete from interview_answers where session_id = ?", [kv])
    conn.close()
    listed = run("interview", "list", "--db", db, "--now", LATER).output.splitlines()
    assert listed[2] == f"{kv[:8]}  2026-11-18 12:00  2 of 3 (67 %)    3         1:30              -  no report kept"
    result = run("interview", "report", kv[:8], "--db", db, code=1)
    assert result.output == (
        f"Error: interview {kv[:8]} was held before reports were kept; its answers are in the"
        " history (`kvdrill export`), its report cannot be shown again\n"
    )


def test_an_interview_whose_end_was_not_saved_is_cut_after_its_last_answer(tmp_path):
    db = tmp_path / "k.db"
    run("interview", *KV, "--db", db, text=KV_ANSWERS)
    conn = sqlite3.connect(db)
    with conn:  # a killed process: no end time, no ending
        conn.execute("update interviews set ended_by = null, elapsed_s = null")
        conn.execute("update sessions set ended_at = null")
    conn.close()
    (sid,) = session_ids(db)
    shown = run("interview", "report", sid, "--db", db).stdout.splitlines()
    assert shown[2] == (
        "3 of 3 questions answered in 1:30 of 45:00 · score 2 of 3 (67 %) · seed 1"
        " · cut short (its end was not saved)"
    )


def test_unknown_and_ambiguous_ids_and_interview_options_before_a_subcommand(tmp_path):
    db, _, _ = two_interviews(tmp_path)
    assert run("interview", "report", "zz", "--db", db, code=1).output == (
        "Error: no interview 'zz'; `kvdrill interview list` shows them\n"
    )
    result = run("interview", "report", "", "--db", db, code=1)
    assert result.output == "Error: no interview id given; `kvdrill interview list` shows them\n"
    conn = sqlite3.connect(db)
    with conn:  # two ids with the same start
        conn.execute("update sessions set id = 'abc' || id")
        conn.execute("update interviews set session_id = 'abc' || session_id")
    conn.close()
    result = run("interview", "report", "abc", "--db", db, code=1)
    assert result.output.startswith("Error: 'abc' names 2 interviews (abc")
    result = run("interview", "--seed", "3", "list", "--db", db, code=2)
    assert result.output.startswith(
        "Error: --seed starts an interview; give `list` its own options (see `"
    )


def test_stats_shows_the_trend_of_mock_scores(tmp_path):
    db, _, _ = two_interviews(tmp_path)
    now = "2026-11-19T10:00:00+00:00"
    data = json.loads(run("stats", "--db", db, "--now", now, "--json").stdout)
    assert data["mock_interviews"] == [
        {"date": "2026-11-18", "score": 0.6667, "answered": 3, "minutes": 1.5},
        {"date": "2026-11-19", "score": 0.25, "answered": 2, "minutes": 1.0},
    ]
    text = run("stats", "--db", db, "--now", now).stdout
    assert "\nMock interviews: 11-18 67% in 1.5 min · 11-19 25% in 1 min\n" in text
    # an interview after --now is not yet held
    early = json.loads(run("stats", "--db", db, "--now", NOW, "--json").stdout)
    assert [m["date"] for m in early["mock_interviews"]] == ["2026-11-18"]
    page_path = tmp_path / "s.html"
    run("stats", "--db", db, "--now", now, "--html", page_path)
    page = page_path.read_text()
    assert "<h2>Mock interviews</h2>" in page
    assert (
        '<tr><td class="text">2026-11-18</td><td class="num">67%</td><td class="num">3</td>'
        '<td class="num">1.5</td></tr>'
    ) in page


# ----------------------------------------------------------------------------- Drill next


def concept_row(number: int, got: int, total: int, qid: str) -> QuestionRow:
    return QuestionRow(
        number=number, question_id=qid, topic="t", kind="concept", follow_up_of=None,
        asked="?", answer="some words", verdict=f"{got} of {total} key points", expected="",
        mistake=None, missed=("p",) * (total - got), duration_ms=0, points=got / total,
        rating=2, details=(),
    )  # fmt: skip


def numeric_row(number: int, mistake_id: str | None, topic: str = "t") -> QuestionRow:
    return QuestionRow(
        number=number, question_id=f"n{number}", topic=topic, kind="numeric", follow_up_of=None,
        asked="?", answer="1 GB", verdict="Wrong", expected="2 GB",
        mistake="a named slip" if mistake_id else None, missed=(), duration_ms=0, points=0.0,
        rating=1, details=(), mistake_id=mistake_id,
    )  # fmt: skip


def test_drill_next_ranks_a_question_missing_4_of_5_points_above_one_missing_1_of_4():
    rows = [concept_row(1, 3, 4, "missed-one-of-four"), concept_row(2, 1, 5, "missed-four-of-five")]
    report = assemble_report(1, 45, 2, "done", 60, rows)
    assert [(s.what, s.why) for s in report.drill_next] == [
        ("the key points of missed-four-of-five", "covered 1 of 5 key points"),
        ("the key points of missed-one-of-four", "covered 3 of 4 key points"),
        ("the topic t", "0.95 of 2, 48 %"),
    ]


def test_drill_next_a_mistake_made_twice_first_then_by_points_lost_ties_to_the_earlier():
    rows = [
        concept_row(1, 1, 2, "half"),  # lost 0.5
        numeric_row(2, "slip-once", topic="a"),  # lost 1
        concept_row(3, 0, 3, "none-of-three"),  # lost 1, after question 2
        numeric_row(4, "slip-twice", topic="b"),  # lost 2 with question 5
        numeric_row(5, "slip-twice", topic="b"),
    ]
    report = assemble_report(1, 45, 5, "done", 60, rows)
    assert [(s.what, s.why, s.command) for s in report.drill_next] == [
        ('the mistake "a named slip"', "questions 4 and 5", "kvdrill quiz --topic b --cram"),
        ('the mistake "a named slip"', "question 2", "kvdrill quiz --topic a --cram"),
        ("the key points of none-of-three", "covered 0 of 3 key points",
         "kvdrill ask none-of-three"),
    ]  # fmt: skip


# ----------------------------------------------------------------------------- the files


def solved_row() -> QuestionRow:
    return QuestionRow(
        number=1, question_id="iv-open", topic="iv-kv", kind="numeric", follow_up_of=None,
        asked="How big?", answer="128 MiB", verdict="Wrong", expected="256 MiB",
        mistake="forgot the K+V factor of 2", missed=(), duration_ms=30_000, points=0.0,
        rating=1, mistake_id="forgot-kv-factor",
        details=("Wrong. Answer: 256 MiB.", "Solution:", "  2 × 32 × 8 = 512",
                 "  512 × 4,096 = 2 MiB", "Key points:", "  [x] 1. the factor of 2"),
    )  # fmt: skip


def test_the_markdown_report_keeps_the_solution_steps_under_their_heading():
    md = render_markdown(assemble_report(1, 45, 1, "done", 30, [solved_row()]))
    html = MarkdownIt("commonmark").render(md)
    assert (
        "<ul>\n"
        "<li>Wrong. Answer: 256 MiB.</li>\n"
        "<li>Solution:\n<ul>\n<li>2 × 32 × 8 = 512</li>\n<li>512 × 4,096 = 2 MiB</li>\n</ul>\n"
        "</li>\n"
        "<li>Key points:\n<ul>\n<li>[x] 1. the factor of 2</li>\n</ul>\n</li>\n"
        "</ul>\n"
    ) in html
    # the page shows the same nesting
    page = render_html(assemble_report(1, 45, 1, "done", 30, [solved_row()]))
    assert (
        '<ul class="details"><li>Wrong. Answer: 256 MiB.</li><li>Solution:<ul>'
        "<li>2 × 32 × 8 = 512</li><li>512 × 4,096 = 2 MiB</li></ul></li>"
    ) in page


def test_the_html_report_wraps_long_commands_inside_its_column():
    page = render_html(assemble_report(1, 45, 1, "done", 30, [solved_row()]))
    assert "white-space: pre-wrap; overflow-wrap: anywhere; }" in page  # code
    assert "td, li, p, blockquote { overflow-wrap: anywhere; }" in page
    assert "<li>The mistake &quot;forgot the K+V factor of 2&quot; (question 1): " \
           "<code>kvdrill quiz --topic iv-kv --cram</code></li>" in page
