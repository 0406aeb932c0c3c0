import re
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import pytest
from click.testing import CliRunner

from drill.bank.loader import load_bank
from drill.cli import cli
from drill.kinds import make_instance
from drill.reports.sheet import (
    build_documents,
    choose_questions,
    item_seed,
    quotas,
    render_html,
    render_markdown,
    weak_weights,
)
from drill.srs import iso, make_scheduler, replay
from drill.storage.database import open_db

BANK = """\
deck: sheet-test
questions:
  - id: st-kv-bytes
    kind: numeric
    topic: sheet-test
    difficulty: 2
    prompt: >-
      A model has {layers} layers, {kv_heads} KV heads of dimension {head_dim} and a
      {dtype_bytes}-byte cache. How big is the cache of one request at {seq} tokens?
    params:
      layers: {choices: [32]}
      kv_heads: {choices: [8]}
      head_dim: {choices: [128]}
      seq: {choices: [4096]}
      dtype_bytes: {choices: [2]}
    derived:
      per_token: 2 * layers * kv_heads * head_dim * dtype_bytes
    answer: per_token * seq
    unit: bytes
    solution:
      - "Per token: 2 × {layers} × {kv_heads} × {head_dim} × {dtype_bytes} = {per_token} bytes."
      - "Times {seq} tokens."
    misconceptions:
      - id: forgot-kv-factor
        expr: per_token * seq / 2
  - id: st-concept
    kind: concept
    topic: sheet-test
    difficulty: 1
    prompt: "<script>alert(1)</script> Why is decode memory-bound?"
    answer: "MODEL-ANSWER: each step reads every weight & the cache for one token <b>only</b>."
    key_points:
      - point: "KEY-POINT: weights are read once per step"
        cues: [weights]
  - id: st-choice
    kind: choice
    topic: sheet-test
    difficulty: 3
    prompt: "Which phase is compute-bound?"
    options:
      - {text: "PREFILL-OPTION", correct: true, why: "WHY-RIGHT"}
      - {text: "DECODE-OPTION <i>", why: "WHY-WRONG"}
  - id: st-order
    kind: order
    topic: sheet-test
    difficulty: 1
    prompt: "Order the steps."
    items: ["STEP-ONE", "STEP-TWO", "STEP-THREE"]
"""


@pytest.fixture
def bank_file(tmp_path):
    path = tmp_path / "sheet_test.yaml"
    path.write_text(BANK, encoding="utf-8")
    return path


@pytest.fixture
def questions(bank_file):
    return list(load_bank([bank_file]))


def run(*args):
    result = CliRunner().invoke(cli, ["sheet", *map(str, args)])
    assert result.exit_code == 0, result.output
    return result


# --------------------------------------------------------------------- choosing


def test_quotas_give_each_group_one_then_split_the_rest_by_size():
    sizes = {"numeric": 38, "concept": 24, "choice": 19, "order": 2}
    assert quotas(sizes, 10) == {"numeric": 4, "concept": 3, "choice": 2, "order": 1}
    assert quotas(sizes, 2) == {"numeric": 1, "concept": 1, "choice": 0, "order": 0}
    assert quotas({"a": 2, "b": 1}, 50) == {"a": 2, "b": 1}


@dataclass(frozen=True)
class Q:
    id: str
    kind: str
    difficulty: int


POOL = [
    Q(f"{kind}-{d}-{i}", kind, d)
    for kind in ("order", "choice", "concept", "numeric")
    for d in (1, 2, 3)
    for i in range(4)
]


def test_choice_mixes_kinds_and_difficulties_in_sheet_order():
    chosen = choose_questions(POOL, 12, seed=5)
    assert [q.kind for q in chosen] == ["numeric"] * 3 + ["concept"] * 3 + ["choice"] * 3 + [
        "order"
    ] * 3
    assert [q.difficulty for q in chosen] == [1, 2, 3] * 4
    assert len({q.id for q in chosen}) == 12


def test_choice_depends_on_the_seed_not_on_bank_order():
    assert choose_questions(POOL, 8, seed=3) == choose_questions(POOL[::-1], 8, seed=3)
    draws = {tuple(q.id for q in choose_questions(POOL, 8, seed=s)) for s in range(10)}
    assert len(draws) > 1


def test_a_heavy_weight_wins_the_draw():
    pool = [Q(f"n-{i:02d}", "numeric", 2) for i in range(20)]
    for seed in range(20):
        assert [q.id for q in choose_questions(pool, 1, seed, weights={"n-07": 1e6})] == ["n-07"]


def test_weak_weights_run_from_strong_to_weak():
    figures = [
        {"question_id": "weak", "retrievability": 0.0, "accuracy": 0.0},
        {"question_id": "strong", "retrievability": 1.0, "accuracy": 1.0},
        {"question_id": "half", "retrievability": 0.5, "accuracy": None},
    ]
    weights = weak_weights(figures)
    assert weights["weak"] == pytest.approx(100.0)
    assert weights["strong"] == pytest.approx(0.5)
    assert weights["half"] == pytest.approx(0.5 * 200**0.75)  # strength 0.25: 26.59


def test_focus_weak_draws_the_five_weakest_far_more_often():
    # 60 questions, 30 with history: 25 always right, and 5 never right (the weakest)
    pool = [Q(f"{kind}-{d}-{i}", kind, d) for kind in ("numeric", "concept") for d in (1, 2, 3)
            for i in range(10)]  # fmt: skip
    five = ["numeric-1-0", "numeric-2-0", "numeric-3-0", "concept-1-0", "concept-2-0"]
    figures = [
        {"question_id": q.id, "retrievability": 0.5 if q.id in five else 0.98,
         "accuracy": 0.0 if q.id in five else 1.0}
        for q in pool[::2]
    ]  # fmt: skip
    weights = weak_weights(figures)

    def appearances(weights):
        return sum(
            sum(q.id in five for q in choose_questions(pool, 10, seed, weights=weights))
            for seed in range(400)
        )

    # over 400 sheets of 10: 0.87 of the five per sheet without focus, 4.64 with it
    assert appearances(None) == 349
    assert appearances(weights) == 1857


def test_item_seed_is_pinned():
    # the first 31 bits of sha256("kvdrill-sheet:SEED:ID"), worked with hashlib directly
    assert item_seed(7, "st-kv-bytes") == 2_082_145_057
    assert item_seed(8, "st-kv-bytes") == 260_013_404
    assert item_seed(7, "x") == 706_489_047


# ------------------------------------------------------------------ sheet vs key


def test_the_sheet_asks_and_the_key_answers(questions):
    chosen = choose_questions(questions, 4, seed=1)
    assert [q.kind for q in chosen] == ["numeric", "concept", "choice", "order"]
    sheet, key = (render_markdown(d) for d in build_documents(chosen, 1, make_instance))

    assert "32 layers, 8 KV heads of dimension 128" in sheet
    answers = [
        "512 MiB",
        "536,870,912 bytes",
        "537 MB",
        "2 × 32 × 8 × 128 × 2 = 131,072 bytes",
        "forgot the K+V factor of 2: 256 MiB",  # the catalogue's name for forgot-kv-factor
        "MODEL-ANSWER",
        "KEY-POINT",
        "WHY-RIGHT",
        "WHY-WRONG",
        "(right)",
    ]
    for text in answers:
        assert text not in sheet, text
        assert text in key, text
    # every option and step is on the sheet, shuffled; the key has the right order
    for text in ("PREFILL-OPTION", "DECODE-OPTION", "STEP-ONE", "STEP-TWO", "STEP-THREE"):
        assert text in sheet
    steps = re.findall(r"^\d\. (STEP-\w+)", key, flags=re.M)
    assert steps == ["STEP-ONE", "STEP-TWO", "STEP-THREE"]
    order_letters = re.search(r"### 4\. st-order\n\n\*\*Answer:\*\* ([A-C, ]+)", key).group(1)
    shown = re.findall(r"^- ([A-C])\. (STEP-\w+)", sheet, flags=re.M)
    by_letter = dict(shown)
    assert [by_letter[x] for x in order_letters.split(", ")] == steps
    assert "kvdrill ask st-kv-bytes --seed 411936782" in key  # item_seed(1, "st-kv-bytes")


def commonmark_items(markdown: str) -> list[list[str]]:
    """The text of each list's items, list by list, as a CommonMark renderer reads them."""
    from markdown_it import MarkdownIt

    lists: list[list[str]] = []
    depth = 0
    for token in MarkdownIt("commonmark").parse(markdown):
        if token.type in ("bullet_list_open", "ordered_list_open"):
            lists.append([])
        elif token.type == "list_item_open":
            depth += 1
        elif token.type == "list_item_close":
            depth -= 1
        elif token.type == "inline" and depth:
            lists[-1].append(token.content)
    return lists


def test_markdown_options_and_order_items_are_commonmark_list_items(questions):
    chosen = choose_questions(questions, 4, seed=1)
    sheet, key = (render_markdown(d) for d in build_documents(chosen, 1, make_instance))
    sheet_lists = commonmark_items(sheet)
    # the choice's two options and the order question's three items, one item each
    assert sheet_lists == [
        ["A. PREFILL-OPTION", "B. DECODE-OPTION &lt;i&gt;"],
        ["A. STEP-THREE", "B. STEP-TWO", "C. STEP-ONE"],
    ]
    key_lists = commonmark_items(key)
    assert ["STEP-ONE", "STEP-TWO", "STEP-THREE"] in key_lists
    assert ["A (right): PREFILL-OPTION — WHY-RIGHT", "B (wrong): DECODE-OPTION &lt;i&gt; — WHY-WRONG"] in key_lists


def test_html_escapes_hostile_bank_text(questions):
    sheet, key = (render_html(d) for d in build_documents(questions, 2, make_instance))
    for page in (sheet, key):
        assert "<script" not in page.lower()
        assert "<i>" not in page and "<b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; Why is decode memory-bound?" in sheet
    assert "DECODE-OPTION &lt;i&gt;" in sheet
    assert "weight &amp; the cache for one token &lt;b&gt;only&lt;/b&gt;." in key


def test_html_is_one_page_with_print_rules_and_no_outside_references(questions):
    page = render_html(build_documents(questions, 2, make_instance)[0])
    assert page.startswith("<!DOCTYPE html>")
    assert "@media print" in page and "break-before: page" in page
    assert "break-inside: avoid" in page
    assert not re.search(r"(src|href)=|url\(|@import", page)
    assert page.count('<div class="line"></div>') == 5 + 8 + 1 + 1  # room to write


# ------------------------------------------------------------------------- CLI


def test_same_seed_and_bank_give_byte_identical_files(bank_file, tmp_path):
    outputs = []
    for run_no in range(2):
        for fmt in ("md", "html"):
            sheet = tmp_path / f"run{run_no}.{fmt}"
            key = tmp_path / f"run{run_no}-key.{fmt}"
            run(
                "--bank",
                bank_file,
                "--topic",
                "sheet-test",
                "--seed",
                42,
                "-n",
                3,
                "--format",
                fmt,
                "-o",
                sheet,
                "--key",
                key,
            )
            outputs.append((sheet.read_bytes(), key.read_bytes()))
    assert outputs[0] == outputs[2] and outputs[1] == outputs[3]
    assert outputs[0] != outputs[1]
    other = tmp_path / "other.md"
    run("--bank", bank_file, "--topic", "sheet-test", "--seed", 43, "-n", 3, "-o", other)
    assert other.read_bytes() != outputs[0][0]


def test_markdown_goes_to_stdout_and_the_key_next_to_an_output_file(bank_file, tmp_path):
    result = run("--bank", bank_file, "--topic", "sheet-test", "--seed", 1)
    assert result.stdout.startswith("# kvdrill mock interview\n\nSheet 1 · 4 questions.")
    assert "no key written" in result.stderr
    run("--bank", bank_file, "--topic", "sheet-test", "--seed", 1, "-o", tmp_path / "s.html")
    assert (tmp_path / "s.html").read_text().startswith("<!DOCTYPE html>")
    assert "Answer key" in (tmp_path / "s.key.html").read_text()


def test_unknown_topic_is_a_one_line_error(bank_file):
    result = CliRunner().invoke(cli, ["sheet", "--bank", str(bank_file), "--topic", "nope"])
    assert result.exit_code == 1
    assert result.output.startswith("Error: no questions with topic 'nope'")
    assert len(result.output.splitlines()) == 1


def test_focus_weak_draws_the_weak_question_more_often(tmp_path):
    lines = ["deck: weak-test", "questions:"]
    for i in range(6):
        lines += [
            f"  - id: wq-{i}",
            "    kind: order",
            "    topic: weak-test",
            f"    prompt: Order {i}.",
            "    items: [a, b]",
        ]
    bank = tmp_path / "weak.yaml"
    bank.write_text("\n".join(lines) + "\n")
    now = datetime(2026, 11, 18, 12, tzinfo=timezone.utc)
    db_path = tmp_path / "weak.db"
    db = open_db(db_path)
    for i in range(6):
        for d in range(3):
            db["reviews"].insert(
                {
                    "id": str(uuid.uuid4()),
                    "question_id": f"wq-{i}",
                    "reviewed_at": iso(now - timedelta(days=d + 1)),
                    "rating": 1 if i == 3 else 4,
                    "correct": 0 if i == 3 else 1,
                }
            )
    history = db.query("select * from reviews order by reviewed_at, id")
    db["cards"].insert_all(replay(make_scheduler(fuzz=False), history).values())
    db.conn.close()

    def picks(*extra):
        chosen = []
        for seed in range(30):
            result = run(
                "--bank",
                bank,
                "--topic",
                "weak-test",
                "--seed",
                seed,
                "-n",
                1,
                "--db",
                db_path,
                "--now",
                iso(now),
                "--key",
                tmp_path / "k.md",
                *extra,
            )
            chosen.append("Order 3." in result.stdout)
        return sum(chosen)

    weak, plain = picks("--focus", "weak"), picks()
    assert weak > plain


def test_every_built_in_question_renders_on_a_sheet_and_a_key(tmp_path):
    result = run("--seed", 0, "-n", 10_000, "--format", "html", "--key", tmp_path / "k.html")
    from drill.bank.loader import load_default_bank

    count = len(load_default_bank())
    assert result.stdout.count("<article>") == count
    assert (tmp_path / "k.html").read_text().count("<article>") == count


def test_markdown_shows_bank_links_and_html_as_text_and_code_as_written():
    from markdown_it import MarkdownIt

    from drill.reports.sheet import md_escape

    def rendered(text: str) -> str:
        return MarkdownIt("commonmark").render(md_escape(text))

    assert rendered("see [docs](javascript:alert(1)) now") == (
        "<p>see [docs](javascript:alert(1)) now</p>\n"
    )
    assert rendered("[ref]: javascript:alert(1)\n\n[ref]") == (
        "<p>[ref]: javascript:alert(1)</p>\n<p>[ref]</p>\n"
    )
    assert rendered("<img src=x onerror=alert(1)> & shape [b, h]") == (
        "<p>&lt;img src=x onerror=alert(1)&gt; &amp; shape [b, h]</p>\n"
    )
    # a code span keeps its text: brackets, < and & show as typed
    assert rendered("`kv[0] < n & m` is <b>") == (
        "<p><code>kv[0] &lt; n &amp; m</code> is &lt;b&gt;</p>\n"
    )
