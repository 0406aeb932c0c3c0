"""`kvdrill bank export`: Anki, Moodle XML and GIFT files read back as their tools read them."""

from __future__ import annotations

import io
import json
import os
import re
import sqlite3
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from export_readers import GiftError, moodle_problems, read_gift

from drill.bank.loader import load_bank
from drill.cli import cli
from drill.exports import export_items, exporter
from drill.kinds import make_instance

REPO = Path(__file__).resolve().parent.parent
BANK = """\
deck: export-test
questions:
  - id: ex-kv
    kind: numeric
    topic: ex-kv
    tags: [kv formula]
    prompt: >-
      A model has {layers} layers and {kv_heads} KV heads of dimension 128, with a
      {dtype_bytes}-byte cache. How big is one request's cache at {seq:,} tokens?
    params:
      layers: {choices: [32, 40]}
      kv_heads: {choices: [8]}
      dtype_bytes: {choices: [1, 2]}
      seq: {choices: [4096]}
    derived:
      per_token: 2 * layers * kv_heads * 128 * dtype_bytes
    answer: per_token * seq
    unit: bytes
    show_as: MiB
    tolerance: {rel: 0.02}
    solution: ["{per_token} × {seq} = {answer:MiB}"]
    hint: "Count K and V."
    misconceptions:
      - {id: forgot-kv-factor, expr: per_token * seq / 2}
  - id: ex-model
    kind: numeric
    topic: ex-kv
    prompt: "How many bytes does {model} cache per token at FP16?"
    params:
      model: {preset: [llama-3-8b]}
    answer: 2 * model_layers * model_kv_heads * model_head_dim * 2
    unit: bytes
    tolerance: {abs: 10}
    solution: ["2 × {model_layers} × {model_kv_heads} × {model_head_dim} × 2"]
  - id: ex-pick
    kind: choice
    topic: ex-mixed
    prompt: "Which {braces} & <b>tags</b> stay text?"
    hint: All of them.
    options:
      - {text: "a ~tilde = sign", correct: true, why: "Right: # and : too."}
      - {text: "none", why: "Wrong."}
  - id: ex-why
    kind: concept
    topic: ex-mixed
    prompt: "Why cache K and V?"
    answer: "So decode does not recompute them."
    hint: Think of decode.
    key_points:
      - {point: "No recomputation", cues: [recompute]}
  - id: ex-order
    kind: order
    topic: ex-mixed
    prompt: "Order these."
    hint: First things first.
    items: [first, second]
"""
STAMP = 1_700_000_000.0
# bank text with code spans and powers, shares asked in %, float noise (3 × 0.1 s) and a
# named mistake below zero (weights not split: (80 − 140) / 2 sequences)
MARKUP_BANK = """\
deck: export-markup
questions:
  - id: mk-share
    kind: numeric
    topic: mk
    prompt: >-
      A model keeps {kv_heads} KV heads for {q_heads} query heads (`num_key_value_heads`
      in its config). What fraction of a multi-head cache does it save?
    params:
      kv_heads: {choices: [2, 8]}
      group: {choices: [4]}
    derived:
      q_heads: kv_heads * group
      kept: kv_heads / q_heads
    answer: 1 - kept
    unit: fraction
    show_as: "%"
    solution: ["1 − {kept} = {answer:%}"]
    misconceptions:
      - {id: percent-vs-fraction, expr: (1 - kept) * 100}
      - {id: complement-fraction, expr: kept, feedback: "{value:%} is what it keeps."}
  - id: mk-share-drawn
    kind: numeric
    topic: mk
    prompt: "With {name}'s {kv_heads} KV heads of 32, what fraction of the cache is saved?"
    params:
      name: {choices: [Mini]}
      kv_heads: {choices: [8]}
    answer: 1 - kv_heads / 32
    unit: fraction
    show_as: "%"
    tolerance: {abs: 0.005}
    solution: ["1 − {kv_heads} / 32"]
    misconceptions:
      - {id: percent-vs-fraction, expr: (1 - kv_heads / 32) * 100}
  - id: mk-steps
    kind: numeric
    topic: mk
    prompt: "A GPU has {cap} GB (10^9 bytes). How long do {steps} steps of 0.1 s take, and 2^{k} more?"
    params:
      name: {choices: [x]}
      cap: {choices: [80]}
      steps: {choices: [3]}
      k: {choices: [0]}
    answer: steps * 0.1
    unit: seconds
    show_as: s
    solution: ["{steps} × 0.1 s"]
    misconceptions:
      - {id: ms-vs-s, expr: steps * 0.1 / 1000}
  - id: mk-fit
    kind: numeric
    topic: mk
    prompt: "{name}: {cap} GB hold {weights} GB of weights split over {tp} GPUs and 2 GB a sequence. How many sequences fit on one GPU?"
    params:
      name: {choices: [Big]}
      cap: {choices: [80]}
      weights: {choices: [140]}
      tp: {choices: [4]}
    answer: (cap - weights / tp) // 2
    unit: requests
    tolerance: {abs: 0.5}
    solution: ["({cap} − {weights} / {tp}) / 2"]
    misconceptions:
      - {id: forgot-tp-split, expr: (cap - weights) / 2}
  - id: mk-pick
    kind: choice
    topic: mk
    prompt: "Which line computes 2^30 bytes: `a` or `b`?"
    options:
      - {text: "`1 << 30`", correct: true, why: "A shift by 30 is 2^30."}
      - {text: "`10**9`", why: "That is 10^9, a GB."}
  - id: mk-why
    kind: concept
    topic: mk
    prompt: "Why does `kv_bytes` grow with 2^n tokens?"
    answer: "Each token adds one `K` and one `V` row: 2^n tokens, 2^n rows."
    key_points:
      - {point: "One row per token (`seq_len`)", cues: [row]}
"""
GOLDEN = Path(__file__).parent / "golden" / "exports"
UPDATE = os.environ.get("KVDRILL_UPDATE_GOLDEN") == "1"


@pytest.fixture
def bank_file(tmp_path):
    path = tmp_path / "export.yaml"
    path.write_text(BANK, encoding="utf-8")
    return path


@pytest.fixture
def markup_file(tmp_path):
    path = tmp_path / "markup.yaml"
    path.write_text(MARKUP_BANK, encoding="utf-8")
    return path


def rendered(bank_file, fmt: str, draws: int = 3, seed: int = 2):
    questions = list(load_bank([bank_file]))
    return exporter(fmt).render(export_items(questions, draws, seed, make_instance), STAMP)


# ----------------------------------------------------------------------------- Anki


def anki_notes(data: bytes) -> tuple[list[str], dict, list[tuple[str, str, list[str]]]]:
    archive = zipfile.ZipFile(io.BytesIO(data))
    names = archive.namelist()
    with sqlite3.connect(":memory:") as conn:
        conn.deserialize(archive.read("collection.anki2"))
        models = json.loads(conn.execute("select models from col").fetchone()[0])
        notes = [
            (guid, tags.strip(), flds.split("\x1f"))
            for guid, tags, flds in conn.execute("select guid, tags, flds from notes order by id")
        ]
    return names, models, notes


def test_the_anki_package_holds_the_exact_notes_and_guids(bank_file):
    data, left_out = rendered(bank_file, "anki")
    names, models, notes = anki_notes(data)
    assert names == ["collection.anki2", "media"] and left_out == []
    (model,) = models.values()
    assert model["name"] == "kvdrill question"
    assert [f["name"] for f in model["flds"]] == ["Question", "Answer", "Details", "Source"]
    # genanki.guid_for(id) for fixed-text questions, guid_for(id, seed) for each draw
    assert [(guid, fields[3]) for guid, _, fields in notes] == [
        ("B0pOEz8{T:", "ex-kv · ex-kv · difficulty 2/3 · seed 2"),
        ("EXt~_,h.di", "ex-kv · ex-kv · difficulty 2/3 · seed 3"),
        ("dKzS(OMOTz", "ex-kv · ex-kv · difficulty 2/3 · seed 4"),
        ("NAn_JKk&P!", "ex-model · ex-kv · difficulty 2/3 · seed 2"),
        ("scY%vvDtk|", "ex-model · ex-kv · difficulty 2/3 · seed 3"),
        ("o8AB)tq!Y!", "ex-model · ex-kv · difficulty 2/3 · seed 4"),
        ("C]t:(ks#-$", "ex-order · ex-mixed · difficulty 2/3"),
        ("yWODv#n5$)", "ex-pick · ex-mixed · difficulty 2/3"),
        ("nsA2QCzxMk", "ex-why · ex-mixed · difficulty 2/3"),
    ]
    import genanki

    assert notes[2][0] == genanki.guid_for("ex-kv", 4)
    assert notes[8][0] == genanki.guid_for("ex-why")
    kv = notes[2][2]
    assert kv[:3] == [
        "<p>A model has 40 layers and 8 KV heads of dimension 128, with a 1-byte cache. How "
        "big is one request&#x27;s cache at 4,096 tokens?</p>",
        '<p class="answer">320 MiB (= 335,544,320 bytes; 336 MB)</p>',
        "<p>Accepted within ±2 %.</p><p class=\"label\">Worked solution</p><ol><li>81,920 × "
        "4,096 = 320 MiB</li></ol><p class=\"label\">Wrong answers and the mistake behind them"
        "</p><ul><li>forgot the K+V factor of 2: 160 MiB</li></ul>",
    ]
    assert notes[0][1] == "kvdrill numeric ex-kv kv_formula"
    pick = notes[7]
    assert pick[1] == "kvdrill choice ex-mixed"
    assert pick[2][:3] == [
        "<p>Which {braces} &amp; &lt;b&gt;tags&lt;/b&gt; stay text?</p><ol class=\"options\">"
        "<li>a ~tilde = sign</li><li>none</li></ol><p class=\"note\">Choose every option that "
        "is right.</p>",
        '<p class="answer">A. a ~tilde = sign</p>',
        "<ul><li>A (right): a ~tilde = sign — Right: # and : too.</li><li>B (wrong): none — "
        "Wrong.</li></ul>",
    ]
    assert notes[6][2][1:3] == ['<p class="answer">B, A</p>', "<ol><li>first</li><li>second</li></ol>"]
    assert notes[8][2][1:3] == [
        '<p class="answer">So decode does not recompute them.</p>',
        '<p class="label">Key points</p><ul><li>No recomputation</li></ul>',
    ]


def test_anki_guids_follow_the_draw_so_a_new_export_updates_the_same_notes(bank_file):
    first = [guid for guid, _, _ in anki_notes(rendered(bank_file, "anki", 2, seed=1)[0])[2]]
    later = [guid for guid, _, _ in anki_notes(rendered(bank_file, "anki", 2, seed=2)[0])[2]]
    assert first[1] == later[0]  # the draw with seed 2 is one note in both exports
    assert first[4:] == later[4:]  # a fixed-text question is always the same note


# ----------------------------------------------------------------------------- Moodle


def moodle_questions(data: bytes) -> dict[str, ET.Element]:
    root = ET.fromstring(data)
    assert root.tag == "quiz"
    return {q.findtext("name/text"): q for q in root if q.get("type") != "category"}


def moodle_value(formula: str, values: dict[str, str]) -> float:
    """A Moodle formula worked out in Python (the few functions the export writes)."""
    text = re.sub(r"\{(\w+)\}", lambda m: f"({values[m.group(1)]})", formula)
    return eval(text.replace("pow(", "_pow("), {"_pow": pow, "__builtins__": {}})  # test only


def test_moodle_xml_reads_back_with_the_banks_answers_and_tolerances(bank_file):
    data, notes = rendered(bank_file, "moodle")
    assert data.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n<!--\nExported from kvdrill.')
    questions = moodle_questions(data)
    assert sorted(questions) == [
        "ex-kv", "ex-model (seed 2)", "ex-model (seed 3)", "ex-model (seed 4)", "ex-pick",
        "ex-why",
    ]  # fmt: skip
    assert notes == [
        "left out 1 order question(s): ex-order",
        "1 numeric template(s) as drawn numerical questions (not calculated): ex-model",
    ]
    kv = questions["ex-kv"]
    assert kv.get("type") == "calculated"
    assert kv.findtext("questiontext/text") == (
        "<p>A model has {layers} layers and {kv_heads} KV heads of dimension 128, with a "
        "{dtype_bytes}-byte cache. How big is one request&#x27;s cache at {seq} tokens?</p>"
        "<p>Answer in MiB.</p>"
    )
    right, wrong = kv.findall("answer")
    assert (right.get("fraction"), right.findtext("tolerance"), right.findtext("tolerancetype")) == (
        "100", "0.02", "1",
    )  # fmt: skip
    assert right.findtext("text") == "(2 * {layers} * {kv_heads} * 128 * {dtype_bytes} * {seq}) / 1048576"
    assert wrong.get("fraction") == "0"
    assert "Mistake: forgot the K+V factor of 2." in wrong.findtext("feedback/text")
    assert kv.findtext("units/unit/unit_name") == "MiB"
    datasets = {
        d.findtext("name/text"): [v.text for v in d.findall("dataset_items/dataset_item/value")]
        for d in kv.findall("dataset_definitions/dataset_definition")
    }
    assert datasets == {
        "layers": ["32", "32", "40"], "kv_heads": ["8", "8", "8"],
        "dtype_bytes": ["2", "1", "1"], "seq": ["4096", "4096", "4096"],
    }  # fmt: skip
    # each dataset item gives the bank's answer for that draw, in MiB
    bank = load_bank([bank_file])
    for k, seed in enumerate((2, 3, 4)):
        instance = make_instance(bank.get("ex-kv"), seed)
        values = {name: items[k] for name, items in datasets.items()}
        assert moodle_value(right.findtext("text"), values) == instance.expected / 2**20
    assert kv.findtext("hint/text") == "<p>Count K and V.</p>"

    drawn = questions["ex-model (seed 2)"]
    assert drawn.get("type") == "numerical"  # a model preset: Moodle cannot draw it
    (answer,) = drawn.findall("answer")
    # 131,072 bytes in KiB, within the bank's ±10 bytes
    assert (answer.findtext("text"), answer.findtext("tolerance")) == ("128", "0.00976562")
    assert drawn.findtext("units/unit/unit_name") == "KiB"

    pick = questions["ex-pick"]
    assert pick.get("type") == "multichoice" and pick.findtext("single") == "true"
    assert [(a.get("fraction"), a.findtext("text"), a.findtext("feedback/text"))
            for a in pick.findall("answer")] == [
        ("100", "<p>a ~tilde = sign</p>", "<p>Right: # and : too.</p>"),
        ("0", "<p>none</p>", "<p>Wrong.</p>"),
    ]  # fmt: skip
    why = questions["ex-why"]
    assert why.get("type") == "essay"
    assert why.findtext("graderinfo/text") == (
        '<p class="answer">So decode does not recompute them.</p><p class="label">Key points'
        "</p><ul><li>No recomputation</li></ul>"
    )


# ----------------------------------------------------------------------------- GIFT


def test_gift_escapes_its_special_characters_and_carries_the_named_mistakes(bank_file):
    text = rendered(bank_file, "gift")[0].decode()
    assert text.startswith("// Exported from kvdrill. Not carried:\n// - order questions")
    assert (
        "::ex-pick::[html]<p>Which \\{braces\\} &amp; &lt;b&gt;tags&lt;/b&gt; stay text?</p>{\n"
        "    =<p>a \\~tilde \\= sign</p>#<p>Right\\: \\# and \\: too.</p>\n"
        "    ~<p>none</p>#<p>Wrong.</p>\n}"
    ) in text
    assert (
        "::ex-kv (seed 4)::[html]<p>A model has 40 layers and 8 KV heads of dimension 128, with "
        "a 1-byte cache. How big is one request&\\#x27;s cache at 4,096 tokens?</p><p>Answer in "
        "MiB.</p>{#\n    =320:6.4\n    =%0%160:3.2#<p>Mistake\\: forgot the K+V factor of 2."
    ) in text
    assert "::ex-why::[html]<p>Why cache K and V?</p>{####<p class\\=\"answer\">So decode" in text
    assert "ex-order" not in text.split("\n\n", 1)[1]


# ----------------------------------------------------------------------------- the command


@pytest.mark.parametrize("fmt", ["anki", "moodle", "gift"])
def test_re_export_is_byte_identical_for_the_same_seed(bank_file, tmp_path, fmt):
    outputs = []
    for name, seed in (("a", 1), ("b", 1), ("c", 5)):
        out = tmp_path / f"{name}.{fmt}"
        args = ["bank", "export", "--format", fmt, "--bank", str(bank_file), "--topic", "ex-kv",
                "-n", "2", "--seed", str(seed), "-o", str(out)]  # fmt: skip
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    assert outputs[0] != outputs[2]
    assert "Wrote" in result.stderr and "2 questions, 4 with the numeric draws" in result.stderr


def test_export_help_states_what_each_format_cannot_carry():
    result = CliRunner().invoke(cli, ["bank", "export", "-h"])
    assert result.exit_code == 0
    for text in ("anki    - grading: Anki shows the answer", "moodle  - order questions",
                 "gift    - order questions (GIFT has no ordering question)"):  # fmt: skip
        assert text in result.output


def test_genanki_is_imported_only_by_the_anki_export():
    script = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from drill.cli import cli\n"
        "CliRunner().invoke(cli, ['bank', 'export', '-h'])\n"
        "import drill.exports.moodle, drill.exports.gift, drill.exports.anki\n"
        "print('genanki' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO)
    assert done.stdout.strip() == "False", done.stderr


# ----------------------------------------------------------------------------- read back


def test_anki_imports_the_package_into_a_fresh_collection_with_the_notes_as_written(
    bank_file, markup_file, tmp_path
):
    from anki.collection import Collection, ImportAnkiPackageOptions, ImportAnkiPackageRequest

    package = tmp_path / "deck.apkg"
    package.write_bytes(rendered(markup_file, "anki", 2, seed=1)[0])
    collection = Collection(str(tmp_path / "collection.anki2"))
    try:
        request = ImportAnkiPackageRequest(
            package_path=str(package), options=ImportAnkiPackageOptions(with_scheduling=False)
        )
        log = collection.import_anki_package(request).log
        assert (log.found_notes, len(log.new), len(log.updated)) == (10, 10, 0)
        notes = {}
        for note_id in collection.find_notes(""):
            note = collection.get_note(note_id)
            notes[note["Source"].split(" · ")[0] + note["Source"].partition("seed")[2]] = note
        assert sorted(notes) == [
            "mk-fit 1", "mk-fit 2", "mk-pick", "mk-share 1", "mk-share 2", "mk-share-drawn 1",
            "mk-share-drawn 2", "mk-steps 1", "mk-steps 2", "mk-why",
        ]  # fmt: skip
        assert [d.name for d in collection.decks.all_names_and_ids()] == ["Default", "kvdrill"]
        pick = notes["mk-pick"]
        assert pick.note_type()["name"] == "kvdrill question"
        assert pick["Question"] == (
            "<p>Which line computes 2<sup>30</sup> bytes: <code>a</code> or <code>b</code>?</p>"
            '<ol class="options"><li><code>10**9</code></li><li><code>1 &lt;&lt; 30</code></li>'
            '</ol><p class="note">Choose every option that is right.</p>'
        )
        assert pick["Details"] == (
            "<ul><li>A (wrong): <code>10**9</code> — That is 10<sup>9</sup>, a GB.</li><li>B "
            "(right): <code>1 &lt;&lt; 30</code> — A shift by 30 is 2<sup>30</sup>.</li></ul>"
        )
        why = notes["mk-why"]
        assert (why["Question"], why["Answer"], why["Details"]) == (
            "<p>Why does <code>kv_bytes</code> grow with 2<sup>n</sup> tokens?</p>",
            '<p class="answer">Each token adds one <code>K</code> and one <code>V</code> row: '
            "2<sup>n</sup> tokens, 2<sup>n</sup> rows.</p>",
            '<p class="label">Key points</p><ul><li>One row per token (<code>seq_len</code>)'
            "</li></ul>",
        )
        assert notes["mk-steps 1"]["Question"] == (
            "<p>A GPU has 80 GB (10<sup>9</sup> bytes). How long do 3 steps of 0.1 s take, and "
            "2<sup>0</sup> more?</p>"
        )
        assert sorted(why.tags) == ["concept", "kvdrill", "mk"]
        import genanki

        assert notes["mk-share 2"].guid == genanki.guid_for("mk-share", 2)
    finally:
        collection.close()

    # importing a later export of the same draws updates those notes, adds none
    again = Collection(str(tmp_path / "collection.anki2"))
    try:
        package.write_bytes(rendered(bank_file, "anki", 2, seed=1)[0])
        request = ImportAnkiPackageRequest(
            package_path=str(package), options=ImportAnkiPackageOptions(with_scheduling=False)
        )
        assert len(again.import_anki_package(request).log.new) == 7
        assert len(again.find_notes("")) == 17
    finally:
        again.close()


def gift_questions(path, draws: int = 2, seed: int = 1) -> dict[str, dict]:
    return {q["title"]: q for q in read_gift(rendered(path, "gift", draws, seed)[0].decode())}


def test_gift_reads_back_strictly_with_percent_answers_no_noise_and_no_negative_count(
    markup_file,
):
    questions = gift_questions(markup_file)
    assert sorted(questions) == [
        "mk-fit (seed 1)", "mk-fit (seed 2)", "mk-pick", "mk-share (seed 1)", "mk-share (seed 2)",
        "mk-share-drawn (seed 1)", "mk-share-drawn (seed 2)", "mk-steps (seed 1)",
        "mk-steps (seed 2)", "mk-why",
    ]  # fmt: skip
    share = questions["mk-share (seed 1)"]
    assert (share["format"], share["category"]) == ("html", "$course$/top/kvdrill/mk")
    assert share["text"] == (
        "<p>A model keeps 2 KV heads for 8 query heads (<code>num_key_value_heads</code> in its "
        "config). What percentage of a multi-head cache does it save?</p><p>Answer in percent "
        "(75 for three quarters).</p>"
    )
    slip = (
        "<p>Mistake: mixed up a percentage and a fraction. That is the answer as a fraction; the "
        "question asks for a percentage, the fraction times 100.</p>"
    )
    assert [(a["fraction"], a["value"], a["margin"], a["feedback"]) for a in share["answers"]] == [
        (100, 75, 0.75, ""),
        (0, 0.75, 0.0075, slip),
        (0, 25, 0.25, "<p>Mistake: gave the other part of the whole. 25% is what it keeps.</p>"),
    ]
    # an absolute tolerance of 0.005 is half a percentage point, and 0.005 of a fraction
    drawn = questions["mk-share-drawn (seed 1)"]
    assert [(a["value"], a["margin"]) for a in drawn["answers"]] == [(75, 0.5), (0.75, 0.005)]
    # 3 × 0.1 s is 0.30000000000000004 in floating point
    steps = questions["mk-steps (seed 1)"]["answers"]
    assert [(a["value"], a["margin"]) for a in steps] == [(0.3, 0.003), (0.0003, 0.000003)]
    # the weights not split leave (80 − 140) / 2 = −30 sequences: no such answer is offered
    assert questions["mk-fit (seed 1)"]["answers"] == [
        {"fraction": 100, "value": 22, "margin": 0.5, "feedback": ""}
    ]
    pick = questions["mk-pick"]
    assert pick["text"] == (
        "<p>Which line computes 2<sup>30</sup> bytes: <code>a</code> or <code>b</code>?</p>"
    )
    assert [(a["fraction"], a["text"]) for a in pick["answers"]] == [
        (0, "<p><code>10**9</code></p>"), (100, "<p><code>1 &lt;&lt; 30</code></p>"),
    ]  # fmt: skip
    assert questions["mk-why"]["general_feedback"].startswith(
        '<p class="answer">Each token adds one <code>K</code>'
    )
    text = rendered(markup_file, "gift", 2, 1)[0].decode()
    assert "// - a named mistake whose value is below zero" in text
    assert ":0.000003#" in text and "e-0" not in text


def test_the_strict_gift_reader_refuses_what_the_export_must_not_write():
    good = "::q::[html]<p>a</p>{#\n    =0.3:0.003\n}\n"
    assert read_gift(good)[0]["answers"] == [
        {"fraction": 100, "value": 0.3, "margin": 0.003, "feedback": ""}
    ]
    for bad, why in (
        ("::q::[html]<p>a</p>{#\n    =-15:0.5\n}\n", "not an unsigned decimal: '-15'"),
        ("::q::[html]<p>a</p>{#\n    =3.9e-05:1\n}\n", "not an unsigned decimal: '3.9e-05'"),
        ("::q::[html]<p>a: b</p>{#\n    =1:1\n}\n", "unescaped ':'"),
        ("::q::[html]<p>a</p>{\n    =x#a#b\n}\n", "two feedbacks"),
        ("::q~x::[html]<p>a</p>{####}\n", "unescaped '~'"),
        ("::q::[html]<p>a</p>{####x}\ntail\n", "not one answer block at the end"),
        ("::q::[html]<p>a</p>{\n    ~%150%x\n    =y\n}\n", "bad percent weight"),
    ):
        with pytest.raises(GiftError, match=re.escape(why)):
            read_gift(bad)


def test_moodle_xml_asks_shares_in_percent_with_markup_rendered(markup_file):
    data, notes = rendered(markup_file, "moodle", 2, 1)
    assert moodle_problems(data) == []
    questions = moodle_questions(data)
    share = questions["mk-share"]
    assert share.get("type") == "calculated"
    assert share.findtext("questiontext/text") == (
        "<p>A model keeps {kv_heads} KV heads for {={kv_heads} * {group}} query heads "
        "(<code>num_key_value_heads</code> in its config). What percentage of a multi-head "
        "cache does it save?</p><p>Answer in percent (75 for three quarters).</p>"
    )
    answers = [
        (a.get("fraction"), a.findtext("text"), a.findtext("tolerance"),
         a.findtext("tolerancetype"))  # fmt: skip
        for a in share.findall("answer")
    ]
    assert answers == [
        ("100", "(1 - {kv_heads} / ({kv_heads} * {group})) / 0.01", "0.01", "1"),
        ("0", "1 - {kv_heads} / ({kv_heads} * {group})", "0.01", "1"),
        ("0", "({kv_heads} / ({kv_heads} * {group})) / 0.01", "0.01", "1"),
    ]
    assert "the question asks for a percentage" in share.findall("answer")[1].findtext(
        "feedback/text"
    )
    drawn = questions["mk-share-drawn (seed 1)"]
    assert [(a.findtext("text"), a.findtext("tolerance")) for a in drawn.findall("answer")] == [
        ("75", "0.5"), ("0.75", "0.005"),
    ]  # fmt: skip
    assert drawn.findtext("units/unit/unit_name") == "%"
    steps = questions["mk-steps (seed 1)"]
    assert [a.findtext("text") for a in steps.findall("answer")] == ["0.3", "0.0003"]
    # Moodle takes a signed number: the mistake that leaves -30 sequences keeps its feedback
    fit = questions["mk-fit (seed 1)"]
    assert [a.findtext("text") for a in fit.findall("answer")] == ["22", "-30"]
    assert questions["mk-why"].findtext("questiontext/text") == (
        "<p>Why does <code>kv_bytes</code> grow with 2<sup>n</sup> tokens?</p>"
    )


def test_the_built_in_deck_exports_files_the_readers_take():
    from drill.bank.loader import load_default_bank

    questions = list(load_default_bank(cached=False))
    items = export_items(questions, 2, 1, make_instance)
    gift = read_gift(exporter("gift").render(items, STAMP)[0].decode())
    order = sum(q.kind == "order" for q in questions)
    assert len(gift) == sum(len(i.instances) for i in items) - order
    assert moodle_problems(exporter("moodle").render(items, STAMP)[0]) == []
    for question in gift:
        assert "`" not in question["text"], question["title"]


@pytest.mark.parametrize("fmt, suffix", [("gift", "gift"), ("moodle", "xml")])
def test_the_small_banks_export_matches_the_golden_file(markup_file, fmt, suffix):
    """The whole file for a fixed bank and seed; rewrite with KVDRILL_UPDATE_GOLDEN=1 only
    for a deliberate change, and read the diff."""
    got = rendered(markup_file, fmt, 2, 1)[0]
    golden = GOLDEN / f"markup.{suffix}"
    if UPDATE:
        golden.parent.mkdir(exist_ok=True)
        golden.write_bytes(got)
    assert got == golden.read_bytes()
