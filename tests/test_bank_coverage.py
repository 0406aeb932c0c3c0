"""`kvdrill bank coverage`: counts by topic and kind, the KV-formula share, misconceptions
no question names, and near-duplicate numeric templates with their reasons."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from drill.bank.coverage import coverage_json, coverage_lines, deck_coverage
from drill.bank.loader import load_bank
from drill.bank.misconceptions import MisconceptionInfo
from drill.bank.schema import NumericQuestion, question_adapter
from drill.bank.template_formula import kv_product, name_role, template_roles
from drill.cli import cli
from drill.kinds import KINDS
from drill.serving.kvmath import load_presets

# A small deck: every figure below is counted by hand from it.
SMALL_DECK = """\
deck: coverage-fixture
questions:
  - id: kv-plain
    kind: numeric
    topic: kv
    tags: [kv-formula]
    prompt: "{layers} layers, {kv_heads} KV heads of {head_dim}, {dtype_bytes} B, {seq} tokens?"
    params:
      layers: {choices: [32, 40]}
      kv_heads: {choices: [4, 8]}
      head_dim: {choices: [64, 128]}
      dtype_bytes: {choices: [1, 2]}
      seq: {choices: [1024, 4096]}
    answer: 2 * layers * kv_heads * head_dim * dtype_bytes * seq
    unit: bytes
    solution: ["2 x layers x heads x dim x bytes x tokens"]
    misconceptions:
      - {id: forgot-kv-factor, expr: layers * kv_heads * head_dim * dtype_bytes * seq}

  - id: kv-preset
    kind: numeric
    topic: kv
    prompt: "{model}, {seq} tokens?"
    params:
      model: {preset: [llama-3-8b]}
      seq: {choices: [2048, 8192]}
    derived:
      per_token: model_dtype_bytes * 2 * model_head_dim * model_kv_heads * model_layers
    answer: seq * per_token
    unit: bytes
    solution: ["per token times tokens"]

  - id: kv-fixed
    kind: numeric
    topic: kv
    prompt: "{layers} layers, {ctx} tokens, 8 KV heads of 128 in BF16?"
    params:
      layers: {choices: [32]}
      ctx: {choices: [2048, 8192]}
    derived:
      kv_each: 2 * layers * 8 * 128 * ctx * 2
    answer: kv_each
    unit: bytes
    solution: ["2 x 32 x 8 x 128 x ctx x 2"]

  - id: ttft-hit
    kind: numeric
    topic: latency
    prompt: "{prompt} tokens, {shared} cached, {queue_ms} ms queue?"
    params:
      prompt: {choices: [4096, 8192]}
      shared: {choices: [1024, 2048]}
      queue_ms: {range: [100, 200], step: 50}
    answer: queue_ms / 1000 + 2 * 7 * 10**9 * (prompt - shared) / (300 * 10**12)
    unit: seconds
    solution: ["queue plus the new tokens' prefill"]
    misconceptions:
      - {id: per-token-not-total, expr: queue_ms / 1000}

  - id: ttft-mean
    kind: numeric
    topic: latency
    prompt: "{prompt} tokens, {shared} cached for {hit_pct}% of requests, {queue_ms} ms queue?"
    params:
      prompt: {choices: [4096, 8192]}
      shared: {choices: [1024, 2048]}
      hit_pct: {choices: [40, 80]}
      queue_ms: {range: [100, 200], step: 50}
    derived:
      mean_tokens: prompt - shared * (hit_pct / 100)
    answer: queue_ms / 1000 + mean_tokens * 2 * 7 * 10**9 / (300 * 10**12)
    unit: seconds
    solution: ["queue plus the mean new tokens' prefill"]

  - id: heads-ratio
    kind: numeric
    topic: kv
    prompt: "{q_heads} query heads over {kv_heads} KV heads?"
    params:
      q_heads: {choices: [32, 64]}
      kv_heads: {choices: [4, 8]}
    answer: q_heads / kv_heads
    unit: count
    solution: ["divide"]

  - id: mla-latent
    kind: numeric
    topic: mla
    tags: [kv-formula]
    prompt: "61 layers of a 576-wide latent, {dtype_bytes} B, {seq} tokens?"
    params:
      dtype_bytes: {choices: [1, 2]}
      seq: {choices: [4096, 8192]}
    answer: 61 * (512 + 64) * dtype_bytes * seq
    unit: bytes
    solution: ["61 x 576 x bytes x tokens"]

  - id: why-cache
    kind: concept
    topic: kv
    prompt: What is cached?
    answer: Keys and values.
    key_points: [{point: both, cues: [keys]}]

  - id: which-heads
    kind: choice
    topic: latency
    prompt: Which heads does the cache count?
    options:
      - {text: KV heads, correct: true}
      - {text: query heads}
"""

CATALOGUE = {
    key: MisconceptionInfo(key, name, "feedback")
    for key, name in [
        ("forgot-kv-factor", "forgot the K+V factor of 2"),
        ("per-token-not-total", "gave the per-token figure"),
        ("query-heads", "used query heads"),
        ("gb-vs-gib", "GB vs GiB"),
    ]
}


@pytest.fixture
def small(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("small.yaml").write_text(SMALL_DECK, encoding="utf-8")
    bank = load_bank([Path("small.yaml")])
    return deck_coverage(bank, bank, KINDS, CATALOGUE, load_presets(), draws=20)


def test_counts_by_topic_and_kind(small):
    assert small.topics == {
        "kv": {"numeric": 4, "concept": 1, "choice": 0, "order": 0},
        "latency": {"numeric": 2, "concept": 0, "choice": 1, "order": 0},
        "mla": {"numeric": 1, "concept": 0, "choice": 0, "order": 0},
    }
    assert small.totals == {"numeric": 7, "concept": 1, "choice": 1, "order": 0}
    assert small.questions == 9
    assert small.numeric == 7


def test_kv_formula_is_read_from_the_formula_and_the_tag_checked_against_it(small):
    assert [p.id for p in small.kv_templates] == ["kv-plain", "kv-preset", "kv-fixed"]
    # kv-preset and kv-fixed use it untagged; mla-latent is tagged but has no K+V factor
    assert [(p.id, tagged) for p, tagged in small.tag_disagrees] == [
        ("kv-preset", False),
        ("kv-fixed", False),
        ("mla-latent", True),
    ]


def test_misconceptions_no_question_names(small):
    assert small.unnamed_misconceptions == (
        ("query-heads", "used query heads"),
        ("gb-vs-gib", "GB vs GiB"),
    )


def test_near_duplicates_with_reasons_and_places(small):
    found = [(d.first.id, d.second.id, d.reason()) for d in small.near_duplicates]
    assert found == [
        ("kv-plain", "kv-preset", "same formula"),
        # kv-fixed fixes 8 heads of 128 in BF16: Llama 3 8B's, on every draw
        ("kv-fixed", "kv-preset", "same answers on 20 of 20 draws"),
        ("ttft-mean", "ttft-hit", "special case, hit_pct = 100, on 20 of 20 draws"),
    ]
    first = small.near_duplicates[0]
    assert (first.first.where(), first.second.where()) == ("small.yaml:3", "small.yaml:20")


def test_the_text_report(small):
    assert coverage_lines(small) == [
        "Questions by topic and kind: 9",
        "  topic    numeric  concept  choice  order  total",
        "  kv             4        1       0      0      5",
        "  latency        2        0       1      0      3",
        "  mla            1        0       0      0      1",
        "  total          7        1       1      0      9",
        "Numeric share: 7 of 9 questions (78%)",
        "",
        "KV-size formula: 3 of 7 numeric templates (43%); target at most 20% (1 of 7)",
        "  kv-plain   small.yaml:3",
        "  kv-preset  small.yaml:20",
        "  kv-fixed   small.yaml:33",
        "  The tag kv-formula says otherwise on 3:",
        "    kv-preset   small.yaml:20  a KV-size product, not tagged",
        "    kv-fixed    small.yaml:33  a KV-size product, not tagged",
        "    mla-latent  small.yaml:86  tagged, but no KV-size product",
        "",
        "Misconceptions no question names: 2 of 4",
        "  query-heads  used query heads",
        "  gb-vs-gib    GB vs GiB",
        "",
        "Near-duplicate numeric templates: 3 pairs",
        "  (same answers: the first's formula gives the second's answer on its draws;",
        "   special case: the first's formula with that role at one does)",
        "  kv-plain ≈ kv-preset: same formula",
        "    small.yaml:3  small.yaml:20",
        "  kv-fixed ≈ kv-preset: same answers on 20 of 20 draws",
        "    small.yaml:33  small.yaml:20",
        "  ttft-mean ≈ ttft-hit: special case, hit_pct = 100, on 20 of 20 draws",
        "    small.yaml:60  small.yaml:46",
    ]


def test_the_json_report(small):
    data = coverage_json(small)
    assert data["questions"] == 9
    assert data["kinds"] == ["numeric", "concept", "choice", "order"]
    assert data["topics"][1] == {
        "topic": "latency",
        "counts": {"numeric": 2, "concept": 0, "choice": 1, "order": 0},
        "total": 3,
    }
    assert data["numeric_share"] == 0.7778
    assert data["kv_formula"]["count"] == 3
    assert data["kv_formula"]["share"] == 0.4286
    assert data["kv_formula"]["tag_disagrees"][2] == {
        "id": "mla-latent",
        "file": "small.yaml",
        "line": 86,
        "tagged": True,
    }
    assert data["unnamed_misconceptions"] == [
        {"id": "query-heads", "name": "used query heads"},
        {"id": "gb-vs-gib", "name": "GB vs GiB"},
    ]
    assert data["near_duplicates"][2] == {
        "first": {"id": "ttft-mean", "file": "small.yaml", "line": 60},
        "second": {"id": "ttft-hit", "file": "small.yaml", "line": 46},
        "why": "special case",
        "agree": 20,
        "draws": 20,
        "fixed": "hit_pct = 100",
    }
    assert data["near_duplicates"][0]["fixed"] is None


# --------------------------------------------------------------------------- roles, the KV test


@pytest.mark.parametrize(
    ("name", "role", "scale"),
    [
        ("cap_gb", "memory", 1e9),
        ("params_b", "params", 1e9),
        ("queue_ms", "queue", 1e-3),
        ("hit_pct", "hit", 0.01),
        ("dtype_bits", "dtype_bytes", 0.125),
        ("ctx", "seq", 1.0),
        ("heads", "kv_heads", 1.0),
        ("kv_heads", "kv_heads", 1.0),
        ("b", "b", 1.0),  # a bare suffix is a name
    ],
)
def test_name_roles(name, role, scale):
    assert (name_role(name).name, name_role(name).scale) == (role, scale)


def numeric(answer: str, params: dict, derived: dict | None = None) -> NumericQuestion:
    fields = {"id": "tt", "kind": "numeric", "topic": "tt", "prompt": "?", "unit": "bytes"}
    fields |= {"params": params, "derived": derived or {}, "answer": answer, "solution": ["s"]}
    question = question_adapter().validate_python(fields)
    assert isinstance(question, NumericQuestion)
    return question


def choices(*names: str) -> dict:
    return {name: {"choices": [2, 3]} for name in names}


def test_a_preset_field_reads_as_its_field_and_a_clash_keeps_the_names():
    question = numeric(
        "m_kv_heads / tp",
        {"m": {"preset": ["llama-3-8b"]}, "tp": {"choices": [2]}},
        {"heads": "m_kv_heads / tp"},
    )
    roles = template_roles(question)
    assert roles["m_kv_heads"].name == "kv_heads"
    assert roles["m_layers"].name == "layers"
    # `heads` would be kv_heads too: a derived value never takes a drawn role
    assert roles["heads"].name == "heads"


@pytest.mark.parametrize(
    ("answer", "params", "derived", "uses"),
    [
        ("2 * layers * kv_heads * head_dim * dtype_bytes * seq", choices("layers", "kv_heads", "head_dim", "dtype_bytes", "seq"), {}, True),
        # per token: no tokens factor
        ("2 * layers * kv_heads * head_dim * dtype_bytes", choices("layers", "kv_heads", "head_dim", "dtype_bytes"), {}, True),
        # every factor but the tokens fixed
        ("2 * 32 * 8 * 128 * ctx * 2", choices("ctx"), {}, True),
        # bits per element, in a derived value
        ("per_token", choices("layers", "kv_heads", "head_dim", "dtype_bits"), {"per_token": "2 * layers * kv_heads * head_dim * (dtype_bits / 8)"}, True),
        # the size of a sequence divides free memory
        ("floor(free / (2 * layers * kv_heads * 128 * 2 * seq))", choices("free", "layers", "kv_heads", "seq"), {}, True),
        # a sum among the factors is multiplied out
        ("2 * kv_heads * head_dim * 2 * (g * seq + (layers - g) * window)", choices("kv_heads", "head_dim", "g", "seq", "layers", "window"), {}, True),
        # heads before a grouped-query retrofit
        ("2 * layers * kv_after * 128 * seq * 1", choices("layers", "kv_after", "seq"), {}, True),
        # MLA's latent: no K+V factor
        ("61 * (512 + 64) * dtype_bytes * seq", choices("dtype_bytes", "seq"), {}, False),
        # attention FLOPs: 4, not 2
        ("4 * layers * q_heads * head_dim * seq", choices("layers", "q_heads", "head_dim", "seq"), {}, False),
        # prefill FLOPs: 2 x params x tokens
        ("2 * params_b * 10**9 * prompt", choices("params_b", "prompt"), {}, False),
        # one layer's elements per token: no layers, no bytes
        ("2 * kv_heads * 128 / 576", choices("kv_heads"), {}, False),
        # a TP all-reduce's bytes: 2 per layer, 2-byte activations, a ring's 2(p - 1)/p; a
        # further 2 stands for 2-byte elements only, never for KV heads or head_dim
        ("2 * layers * batch * hidden * 2 * 2 * (tp - 1) / tp", choices("layers", "batch", "hidden", "tp"), {}, False),
        ("2 * layers * per_allreduce", choices("layers", "batch", "hidden", "tp"), {"per_allreduce": "batch * hidden * 2 * ring", "ring": "2 * (tp - 1) / tp"}, False),
        # the same shape with a head dimension given is the formula again
        ("2 * layers * 2 * head_dim * 2 * seq", choices("layers", "head_dim", "seq"), {}, False),
        ("2 * layers * 8 * head_dim * 2 * seq", choices("layers", "head_dim", "seq"), {}, True),
        # a derived value the answer does not use
        ("q_heads / kv_heads", choices("q_heads", "kv_heads", "layers"), {"kv": "2 * layers * kv_heads * 128 * 2"}, False),
    ],
)  # fmt: skip
def test_kv_product(answer, params, derived, uses):
    assert kv_product(numeric(answer, params, derived)) is uses


# --------------------------------------------------------------------------- the command

# near-duplicates an audit of the built-in deck found; (first, second, reason) as reported
PINNED_PAIRS = {
    ("mla-latent-per-request", "mla-tp-per-gpu", "same formula"),
    ("mla-latent-per-request", "bug-mla-latent-twice-fix", "same formula"),
    ("mla-tp-per-gpu", "bug-mla-latent-twice-fix", "same formula"),
    ("prefix-cache-mean-ttft", "ttft-with-prefix-hit", "special case, hit_pct = 100, on 20 of 20 draws"),
}  # fmt: skip
# duplicates in what they teach only: a different formula, and different answers
NOT_PAIRS = [
    # 90 % of the GPU's memory usable and the weights split over TP, against all of one
    {"tp-sequences-per-gpu-preset", "requests-fit-after-weights"},
    # the latent replicated on every TP rank, against the heads split between them
    {"mla-tp-per-gpu", "tp-kv-per-gpu-preset"},
]


@pytest.fixture(scope="module")
def deck_json():
    result = CliRunner().invoke(cli, ["bank", "coverage", "--json"], env={"KVDRILL_BANK": None})
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_the_deck_reports_the_audits_pairs(deck_json):
    reported = {(d["first"]["id"], d["second"]["id"]): d for d in deck_json["near_duplicates"]}
    for first, second, reason in PINNED_PAIRS:
        pair = reported[(first, second)]
        shown = pair["why"]
        if pair["why"] != "same formula":
            on = f"on {pair['agree']} of {pair['draws']} draws"
            shown += f", {pair['fixed']}, {on}" if pair["fixed"] else f" {on}"
        assert shown == reason
    files = {d["first"]["id"]: d["first"]["file"] for d in deck_json["near_duplicates"]}
    assert files["mla-latent-per-request"] == "question_bank/serving_architectures.yaml"
    assert files["kv-bytes-concurrent"] == "question_bank/kv_cache.yaml"
    unordered = [{first, second} for first, second in reported]
    for pair in NOT_PAIRS:
        assert pair not in unordered


def test_the_deck_counts_every_kind(deck_json):
    assert deck_json["kinds"] == ["numeric", "concept", "choice", "order"]
    assert sum(deck_json["totals"].values()) == deck_json["questions"]
    kv = deck_json["kv_formula"]
    assert {"kv-bytes-per-request", "decode-step-floor-with-kv", "bug-sliding-window-fix"} <= {
        t["id"] for t in kv["templates"]
    }
    # a TP all-reduce's bytes have the product's shape, not its factors
    not_kv = {"mla-latent-per-request", "prefill-ttft-tp-preset", "prefill-flops-total"}
    not_kv |= {"tp-allreduce-bytes-per-step", "tp-allreduce-step-time"}
    assert not not_kv & {t["id"] for t in kv["templates"]}
    assert kv["target_share"] == 0.2
    # the deck keeps the one formula to a fifth of its numeric templates
    assert kv["share"] <= 0.2


def test_the_text_names_the_sections():
    result = CliRunner().invoke(cli, ["bank", "coverage", "--topic", "mla"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[1] == "  topic  numeric  concept  choice  order  total"
    assert lines[2].split()[0] == "mla"
    assert "  mla-latent-per-request ≈ mla-tp-per-gpu: same formula" in lines


def test_an_unknown_topic_is_one_line():
    result = CliRunner().invoke(cli, ["bank", "coverage", "--topic", "astrology"])
    assert result.exit_code == 1
    assert result.output.startswith("Error: no questions with topic 'astrology' (topics: ")
    assert result.output.count("\n") == 1


def test_a_bank_file_with_an_error_is_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("bad.yaml").write_text(
        "deck: bad\nquestions:\n  - id: x\n    kind: numeric\n    topic: t\n", encoding="utf-8"
    )
    result = CliRunner().invoke(cli, ["bank", "coverage", "--bank", "bad.yaml"])
    assert result.exit_code == 1
    assert result.output.startswith("Error: bad.yaml:3: x: ")
    assert result.output.count("\n") == 1


def test_a_template_that_cannot_be_drawn_is_counted_and_compared_with_nothing(tmp_path):
    # `a` names itself: drawing it fails, and writing it out stops at itself
    bank_file = tmp_path / "self.yaml"
    bank_file.write_text(
        "deck: selfref\nquestions:\n"
        "  - {id: self-ref, kind: numeric, topic: tt, prompt: '{x}?', params: {x: {choices: [1]}},"
        " derived: {a: a * 2 * x}, answer: a, unit: bytes, solution: [s]}\n"
        "  - {id: plain, kind: numeric, topic: tt, prompt: '{x}?', params: {x: {choices: [1]}},"
        " answer: x * 4, unit: bytes, solution: [s]}\n",
        encoding="utf-8",
    )
    bank = load_bank([bank_file])
    report = deck_coverage(bank, bank, KINDS, CATALOGUE, {}, draws=5)
    assert report.numeric == 2
    assert report.kv_templates == ()
    assert report.near_duplicates == ()
