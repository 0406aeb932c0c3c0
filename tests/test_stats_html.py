"""`kvdrill stats --html`: the report page for a small known history."""

import re
import subprocess
import sys
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from browser import needs_browser, screenshot
from click.testing import CliRunner

from drill.cli import cli
from drill.reports.stats_html import collect_report, render_report
from drill.srs import iso, new_card_row
from drill.storage.database import open_db
from drill.study.days import DayClock

REPO = Path(__file__).resolve().parent.parent
# Wednesday 18 November 2026, 15:00 UTC; days begin at 04:00 UTC
NOW = datetime(2026, 11, 18, 15, 0, tzinfo=timezone.utc)
NOW_TEXT = "2026-11-18T15:00:00Z"
DAYS = DayClock(timezone.utc, 4)
HOSTILE_TOPIC = "<script>alert('t')</script>"
HOSTILE_MISTAKE = "<script>alert('m')</script>"
TOPICS = {"strong": "kv-cache", "shaky": "kv-cache", "evil": HOSTILE_TOPIC}


def at(days_ago: int, hour: int = 10) -> datetime:
    return (NOW - timedelta(days=days_ago)).replace(hour=hour)


def seed_history(path: Path) -> None:
    """Three questions: strong (2 right), shaky (right, wrong, right), evil (wrong today)."""
    db = open_db(path)
    history = [
        ("strong", at(3), 4, 1, None),
        ("strong", at(1), 3, 1, None),
        ("shaky", at(20), 3, 1, None),
        ("shaky", at(10), 1, 0, "forgot-kv-factor"),
        ("shaky", at(9), 3, None, None),
        ("evil", at(0), 1, 0, HOSTILE_MISTAKE),
    ]
    db["reviews"].insert_all(
        {
            "id": str(uuid.UUID(int=i)),
            "question_id": qid,
            "reviewed_at": iso(when),
            "rating": rating,
            "correct": correct,
            "cram": 0,
            "misconception": mistake,
        }
        for i, (qid, when, rating, correct, mistake) in enumerate(history)
    )
    cards = []
    for qid, last, stability, due, lapses in (
        ("strong", at(1), 10.0, NOW + timedelta(days=10), 0),  # 28 Nov
        ("shaky", at(9), 3.0, NOW - timedelta(days=1), 1),  # overdue
        ("evil", at(0), 1.0, NOW + timedelta(hours=3), 1),  # later today
    ):
        row = new_card_row(qid, due)
        row.update(state=2, step=None, stability=stability, difficulty=5.0, reps=2, lapses=lapses)
        row["last_review"] = iso(last)
        cards.append(row)
    db["cards"].insert_all(cards)
    db.conn.close()


@pytest.fixture
def history_db(tmp_path):
    path = tmp_path / "history.db"
    seed_history(path)
    return path


@pytest.fixture
def page(history_db):
    db = open_db(history_db)
    names = {"forgot-kv-factor": "forgot the K+V factor of 2"}
    report = collect_report(
        db, NOW, topics=TOPICS, misconception_names=names, days=DAYS, target_retention=0.9
    )
    return render_report(report)


def test_headline_numbers(page):
    # shaky is overdue, evil due at 18:00; strong is due on 28 Nov. Reviews today and
    # yesterday make the streak. Counted for retention: strong's second review (pass),
    # shaky's second (fail) and third (pass), all within 21 days of the one before.
    for tile in (
        '<span class="big">1</span><span class="what">due now</span>'
        '<span class="sub">1 more later today</span>',
        '<span class="big">2</span><span class="what">due this week</span>',
        '<span class="big">2 days</span><span class="what">streak</span>'
        '<span class="sub">reviewed today</span>',
        '<span class="big">66.7%</span><span class="what">true retention</span>'
        '<span class="sub">2 of 3 in 30 days; young 66.7%</span>',
        '<span class="big">6</span><span class="what">reviews</span>'
        '<span class="sub">3 cards scheduled</span>',
    ):
        assert tile in page
    assert "As of 2026-11-18 15:00 (UTC); days begin at 04:00." in page
    assert "6 reviews on 6 of 108 days, cram included" in page


def test_weakest_and_mistake_tables_escape_what_the_database_holds(page):
    # recall now, FSRS-6 with fractional days (see test_stats): evil S=1 after 5/24 day
    # 97%; shaky S=3 after 9 5/24 days 81%; strong S=10 after 1 5/24 days 98%
    weakest_rows = [
        '<tr><td class="text id">evil</td>'
        '<td class="text">&lt;script&gt;alert(&#x27;t&#x27;)&lt;/script&gt;</td>'
        '<td class="num">97%</td><td class="num">0%</td><td class="num">1</td>'
        '<td class="num">1</td></tr>',
        '<tr><td class="text id">shaky</td><td class="text">kv-cache</td>'
        '<td class="num">81%</td><td class="num">67%</td><td class="num">3</td>'
        '<td class="num">1</td></tr>',
        '<tr><td class="text id">strong</td><td class="text">kv-cache</td>'
        '<td class="num">98%</td><td class="num">100%</td><td class="num">2</td>'
        '<td class="num">0</td></tr>',
    ]
    assert "\n".join(weakest_rows) in page
    mistake_rows = [
        '<tr><td class="num">1</td>'
        '<td class="text">&lt;script&gt;alert(&#x27;m&#x27;)&lt;/script&gt;</td>'
        '<td class="text id">&lt;script&gt;alert(&#x27;m&#x27;)&lt;/script&gt;</td></tr>',
        '<tr><td class="num">1</td><td class="text">forgot the K+V factor of 2</td>'
        '<td class="text id">forgot-kv-factor</td></tr>',
    ]
    assert "\n".join(mistake_rows) in page
    # the topic chart names the topic as text, escaped by the SVG writer
    assert "&lt;script&gt;alert('t')&lt;/script&gt; (1)</text>" in page
    assert "<script" not in page.lower()


def test_four_inline_charts_and_nothing_that_loads_or_runs(page):
    assert page.count("<svg ") == 4 and page.count("</svg>") == 4
    labels = re.findall(r'<svg class="chart" role="img" aria-label="([^"]+)"', page)
    assert labels == [
        "reviews per day as a calendar",
        "true retention per week",
        "cards due on each coming day",
        "recall now and accuracy per topic",
    ]
    assert "content=\"default-src 'none'; style-src 'unsafe-inline'\"" in page
    assert "<?xml" not in page and "<!DOCTYPE svg" not in page
    assert re.search(r"\b(src|href)=\"(?!#)", page) is None  # no file or address is loaded
    # every id is unique in the page, and every reference points at one of them
    ids = re.findall(r' id="([^"]+)"', page)
    assert len(ids) == len(set(ids))
    references = set(re.findall(r'url\(#([^)]+)\)|href="#([^"]+)"', page))
    assert {a or b for a, b in references} <= set(ids)


def test_no_date_and_the_same_page_twice(page, history_db):
    db = open_db(history_db)
    again = render_report(collect_report(db, NOW, topics=TOPICS, days=DAYS, target_retention=0.9))
    assert "dc:date" not in page and "<metadata>" not in page
    # a different catalogue name would change the page; the rest is the same bytes
    assert again == page.replace("forgot the K+V factor of 2", "forgot-kv-factor")


def test_the_command_writes_the_same_file_in_another_process(history_db, tmp_path):
    first, second = tmp_path / "first.html", tmp_path / "second.html"
    args = ["stats", "--db", str(history_db), "--now", NOW_TEXT]
    result = CliRunner().invoke(cli, [*args, "--html", str(first)])
    assert result.exit_code == 0, result.output
    assert result.output == f"Report written to {first}.\n"
    script = (
        "from drill.cli import cli\n"
        f"cli.main({[*args, '--html', str(second)]!r}, prog_name='kvdrill')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert first.read_bytes() == second.read_bytes()
    text = first.read_text(encoding="utf-8")
    # from the command, topics come from the built-in bank: none of these is in it
    assert "(removed) (3)</text>" in text
    assert "forgot the K+V factor of 2" in text  # the catalogue's name


def test_the_report_is_never_written_over_the_database(history_db):
    before = history_db.read_bytes()
    args = ["stats", "--db", str(history_db), "--now", NOW_TEXT, "--html", str(history_db)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1
    assert f"refusing to write over {history_db}: it is kvdrill's database" in result.output
    assert history_db.read_bytes() == before


def test_html_and_json_together_is_a_usage_error(history_db, tmp_path):
    args = ["stats", "--db", str(history_db), "--json", "--html", str(tmp_path / "r.html")]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert "--html and --json cannot be used together" in result.output
    assert not (tmp_path / "r.html").exists()


def test_the_report_is_in_the_users_zone(history_db, tmp_path):
    runner = CliRunner()
    config = ["config", "--db", str(history_db), "timezone", "America/New_York"]
    assert runner.invoke(cli, config).exit_code == 0
    out = tmp_path / "r.html"
    args = ["stats", "--db", str(history_db), "--now", NOW_TEXT, "--html", str(out)]
    assert runner.invoke(cli, args).exit_code == 0
    text = out.read_text(encoding="utf-8")
    assert "As of 2026-11-18 10:00 (America/New_York); days begin at 04:00." in text


def test_text_stats_never_import_matplotlib(history_db):
    script = (
        "import sys\n"
        "from drill.cli import cli\n"
        f"for extra in ([], ['--json']):\n"
        f"    cli.main(['stats', '--db', {str(history_db)!r}, '--now', {NOW_TEXT!r}, *extra],\n"
        "             prog_name='kvdrill', standalone_mode=False)\n"
        "print('MATPLOTLIB LOADED' if 'matplotlib' in sys.modules else 'NO MATPLOTLIB')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "Streak: 2 days (reviewed today)" in done.stdout
    assert done.stdout.rstrip().endswith("NO MATPLOTLIB")


# ----------------------------------------------------------------------- browser

@needs_browser
def test_the_page_renders_with_its_charts_in_chromium(page, tmp_path):
    image = screenshot(page, tmp_path, 1000, 2600)
    assert image.size == (1000, 2600)
    colours = {rgb for _, rgb in image.getcolors(1 << 24)}
    assert len(colours) > 50  # text, charts and tables, not a blank page
    # the charts were drawn with their own colours (the policy let their styles through):
    # the calendar's greens, today's bar, the young-cards line and the accuracy bars
    for rgb in ((0x21, 0x6E, 0x39), (0xD5, 0x5E, 0x00), (0x00, 0x72, 0xB2), (0x00, 0x9E, 0x73)):
        assert rgb in colours


def test_the_page_marks_a_card_in_learning_among_the_weakest():
    from drill.reports.stats_html import table_sections

    weakest = [
        {"question_id": "kv-bytes", "topic": "kv-cache", "retrievability": 0.8458846451494336,
         "accuracy": 0.0, "reviews": 1, "lapses": 1, "learning": True},
        {"question_id": "paging", "topic": "paging", "retrievability": 0.9, "accuracy": 1.0,
         "reviews": 2, "lapses": 0, "learning": False},
    ]  # fmt: skip
    (section,) = table_sections({"weakest": weakest, "misconceptions": []})
    assert '<td class="num">85%*</td>' in section
    assert '<td class="num">90%</td>' in section
    assert "* Still learning (failed, or new): recall a day after its last answer" in section
