"""Follow-up chains: a numeric problem asked again with one thing changed, and their lint."""

from __future__ import annotations

import textwrap

import pytest

from drill.bank.lint import lint_bank
from drill.bank.loader import load_bank, load_default_bank
from drill.bank.schema import question_adapter
from drill.errors import BankError
from drill.kinds import kind_of
from drill.kinds.chains import chain_length, draw_chain

NUMERIC = kind_of("numeric")


def expected(step) -> str:
    return NUMERIC.expected_text(step.instance)


def test_a_chain_carries_the_numbers_and_changes_one_thing_at_a_time():
    bank = load_default_bank()
    steps = draw_chain(bank.get("kv-bytes-per-request"), bank.get, 7)
    assert [s.instance.question_id for s in steps] == [
        "kv-bytes-per-request",
        "kv-bytes-per-request",
        "kv-bytes-concurrent",
    ]
    opener, fp8, many = steps
    assert opener.ask is None and opener.instance.params["dtype_bytes"] == 2  # chain.start
    assert fp8.changed == {"dtype_bytes": 1}
    assert many.changed == {"requests": 16}
    for name in ("layers", "kv_heads", "head_dim", "seq"):
        assert many.instance.params[name] == opener.instance.params[name]
    assert many.instance.params["dtype_bytes"] == 1  # the FP8 of the step before
    assert [expected(s) for s in steps] == [
        "256 MiB (268,435,456 bytes)",
        "128 MiB (134,217,728 bytes)",
        "2 GiB (2,147,483,648 bytes)",
    ]
    assert many.ask == (
        "Keep the FP8 cache. Now 16 requests like that one run at once, each holding 16,384 "
        "tokens. How much live KV cache do they hold together?"
    )


def test_a_change_may_be_an_expression_over_the_values_so_far(tmp_path):
    chain = """\
start: {dtype_bytes: 2}
follow_ups:
  - {ask: "Now twice as long.", change: {seq: seq * 2}}
  - {ask: "Now {requests} at once.", question: ct-many, change: {requests: layers + 2}}
"""
    assert chain_problems(tmp_path, chain) == []
    bank = load_bank([tmp_path / "chain.yaml"])
    opener, longer, many = draw_chain(bank.get("ct-open"), bank.get, 7)
    assert {k: opener.instance.params[k] for k in ("layers", "dtype_bytes", "seq")} == {
        "layers": 5, "dtype_bytes": 2, "seq": 1000,
    }  # fmt: skip
    assert longer.changed == {"seq": 2000}  # seq * 2 of the step before
    assert many.changed == {"requests": 7}  # layers + 2
    # 5 x 2 x 1,000; 5 x 2 x 2,000; 7 requests of those
    assert [s.instance.expected for s in (opener, longer, many)] == [10000, 20000, 140000]


def test_a_follow_up_answered_as_before_the_change_is_named_so():
    from drill.kinds.grade import grade

    bank = load_default_bank()
    opener, fp8, many = draw_chain(bank.get("kv-bytes-per-request"), bank.get, 0)
    # 2 query heads per KV head: the query-heads mistake gives the same number as the
    # FP8 follow-up answered with 2-byte elements; the chain's own mistake is named
    assert opener.instance.params["group"] == 2
    assert (opener.instance.expected, fp8.instance.expected) == (50331648, 25165824)
    verdict = grade(fp8.instance, "50,331,648 bytes")
    assert (verdict.correct, verdict.misconception) == (False, "follow-up-unchanged")
    assert verdict.misconception_name == "kept the answer from before the change"
    assert verdict.feedback == (
        "That is the answer to the question before this follow-up. The interviewer changed "
        "one thing; work the number again with the new value. The change, as asked: \"Now "
        'the cache is FP8: one byte per element, everything else as before." '
        "You gave 48 MiB; the answer is 24 MiB."
    )
    assert grade(many.instance, "24 MiB").misconception == "follow-up-unchanged"
    # the opener has no step before it; the right answer is still right
    assert "follow-up-unchanged" not in [m.id for m in opener.instance.misconceptions]
    assert grade(fp8.instance, "24 MiB").correct is True


def test_the_change_is_quoted_in_the_interviewers_words_never_by_param_names():
    from drill.kinds.chains import change_words

    bank = load_default_bank()
    steps = draw_chain(bank.get("decode-step-floor-bandwidth"), bank.get, 0)
    unchanged = [m for m in steps[2].instance.misconceptions if m.id == "follow-up-unchanged"]
    assert unchanged[0].feedback.endswith(
        'The change, as asked: "Keep the FP8 weights and move to an H200, whose HBM delivers '
        '4.8 TB/s."'
    )
    assert "g_bandwidth" not in unchanged[0].feedback and " = " not in unchanged[0].feedback
    assert change_words("Keep those weights. At  batch 1 it reads 3.35 TB/s.\nHow long?") == (
        "Keep those weights. At batch 1 it reads 3.35 TB/s."
    )
    assert change_words("How big is it at 1 byte? And now?") == ""


def test_the_built_in_chains():
    bank = load_default_bank()
    lengths = {q.id: chain_length(q) for q in bank if chain_length(q) > 1}
    assert lengths == {
        "naive-attention-score-traffic": 3,
        "flash-decoding-splits": 2,
        "kv-bytes-per-request": 3,
        "hybrid-attention-kv": 2,
        "kv-offload-reload-time": 2,
        "lora-adapter-bytes": 3,
        "vit-image-tokens": 2,
        "tp-allreduce-step-time": 2,
        "decode-step-floor-bandwidth": 3,
        "tree-verify-step-floor": 2,
        "wq-w4-model-bytes": 3,
    }
    steps = draw_chain(bank.get("decode-step-floor-bandwidth"), bank.get, 7)
    assert [expected(s) for s in steps] == ["7.76 ms", "3.88 ms", "2.71 ms"]


def test_the_schema_refuses_an_empty_change_and_unknown_keys():
    base = {
        "id": "a-b", "kind": "numeric", "topic": "t-t", "prompt": "{x}",
        "params": {"x": {"choices": [1, 2]}}, "answer": "x", "unit": "bytes",
        "solution": ["x"],
    }  # fmt: skip
    for chain in (
        {"follow_ups": []},
        {"follow_ups": [{"ask": "Now?", "change": {}}]},
        {"follow_ups": [{"ask": "Now?", "change": {"x": 1}, "why": "?"}]},
        {"follow_ups": [{"ask": "Now?", "change": {"x": 1e300}}]},
    ):
        with pytest.raises(ValueError):
            question_adapter().validate_python({**base, "chain": chain})


CHAIN_BANK = """\
deck: chain-test
questions:
  - id: ct-open
    kind: numeric
    topic: chain-test
    prompt: "A cache of {layers} layers with {dtype_bytes}-byte elements holds {seq} tokens. Bytes?"
    params:
      layers: {choices: [3, 5]}
      dtype_bytes: {choices: [1, 2]}
      seq: {choices: [1000, 3000]}
    answer: layers * dtype_bytes * seq
    unit: bytes
    solution: ["{layers} × {dtype_bytes} × {seq}"]
    harmless_slips:
      - {slip: drop factor dtype_bytes, why: one byte}
    chain:
      CHAIN
  - id: ct-many
    kind: numeric
    topic: chain-test
    prompt: "{requests} requests, {layers} layers, {dtype_bytes}-byte, {seq} tokens. Bytes?"
    params:
      requests: {choices: [3, 5]}
      layers: {choices: [3, 5]}
      dtype_bytes: {choices: [1, 2]}
      seq: {choices: [1000, 3000]}
    answer: requests * layers * dtype_bytes * seq
    unit: bytes
    solution: ["x"]
    misconceptions:
      - {id: forgot-requests, expr: layers * dtype_bytes * seq}
    harmless_slips:
      - {slip: drop factor dtype_bytes, why: one byte}
  - id: ct-concept
    kind: concept
    topic: chain-test
    prompt: Why?
    answer: Because.
    hint: Think.
    key_points: [{point: the reason, cues: [reason]}]
"""


def chain_problems(tmp_path, chain: str) -> list[str]:
    path = tmp_path / "chain.yaml"
    path.write_text(CHAIN_BANK.replace("CHAIN", textwrap.indent(chain, " " * 6).strip()))
    return [f"{e.line}: {e.message}" for e in lint_bank(load_bank([path]), draws=20)]


def test_a_good_chain_passes(tmp_path):
    chain = """\
start: {dtype_bytes: 2}
follow_ups:
  - {ask: "Now FP8.", change: {dtype_bytes: 1}}
  - {ask: "Now {requests} at once.", question: ct-many, change: {requests: 5}}
"""
    assert chain_problems(tmp_path, chain) == []


def test_lint_names_each_broken_link_of_a_chain(tmp_path):
    chain = """\
start: {dtype_bytes: 4, nope: 1}
follow_ups:
  - {ask: "Now FP8. {missing}", change: {dtype_bytes: 1}}
  - {ask: "Now many.", question: ct-nothere, change: {requests: 2}}
"""
    assert chain_problems(tmp_path, chain) == [
        "17: chain.start.dtype_bytes: 4 is not a value 'dtype_bytes' can draw",
        "17: chain.start.nope: 'nope' is not a param of this template",
        "19: chain.follow_ups[0].ask: unknown placeholder {missing}: not a value of ct-open",
        "20: chain.follow_ups[1].question: unknown question id 'ct-nothere'; "
        "`kvdrill bank list` shows them all",
    ]


def test_a_follow_up_is_numeric_and_shares_the_problem(tmp_path):
    chain = """\
follow_ups:
  - {ask: "Explain.", question: ct-concept, change: {x: 1}}
"""
    assert chain_problems(tmp_path, chain) == [
        "18: chain.follow_ups[0].question: 'ct-concept' is a concept question; a follow-up is "
        "a numeric template"
    ]
    chain = """\
start: {dtype_bytes: 2}
follow_ups:
  - ask: "Now FP8 and many."
    question: ct-many
    change: {dtype_bytes: 1, seq: 99, layers: 1, requests: 2}
  - {ask: "Now more.", question: ct-many, change: {seq: "layers * tokens", tier: 1}}
"""
    assert chain_problems(tmp_path, chain) == [
        "21: chain.follow_ups[0].change: changes every param of ct-many: a follow-up keeps "
        "the problem and changes one thing",
        "22: chain.follow_ups[1].change.seq: 'tokens' is not a value of the questions before it",
        "22: chain.follow_ups[1].change.tier: 'tier' is not a param of ct-many",
    ]


def test_a_follow_up_carries_every_param_it_does_not_change(tmp_path):
    chain = """\
follow_ups:
  - {ask: "Now many.", question: ct-many, change: {seq: 2000}}
"""
    assert chain_problems(tmp_path, chain) == [
        "18: chain.follow_ups[0].change: ct-many's param 'requests' is neither carried over "
        "from the questions before it nor set here"
    ]


def test_a_change_must_change_what_it_says_on_every_draw(tmp_path):
    # without start the opener draws 1-byte elements on some seeds: "now FP8" would
    # ask the same question twice
    chain = """\
follow_ups:
  - {ask: "Now FP8.", change: {dtype_bytes: 1}}
"""
    assert chain_problems(tmp_path, chain) == [
        "18: chain.follow_ups[0].change.dtype_bytes: changes nothing on seed 0: "
        "'dtype_bytes' is 1 already; set it to a value the questions before it never have "
        "(or fix it there with start)"
    ]


def test_the_grader_must_tell_a_follow_ups_answer_from_its_named_mistakes(tmp_path):
    # at 1 request, the named mistake of leaving the requests out is the answer
    chain = """\
start: {dtype_bytes: 2}
follow_ups:
  - {ask: "Now one request.", question: ct-many, change: {requests: 1}}
"""
    assert chain_problems(tmp_path, chain) == [
        "19: chain.follow_ups[0]: ct-many with the chain's numbers: misconceptions[0].expr: "
        "'forgot-requests' gives the right answer (18000) on seed 0"
    ]


def test_drawing_a_broken_chain_is_a_bank_error(tmp_path):
    path = tmp_path / "chain.yaml"
    chain = '{follow_ups: [{ask: "Now.", question: ct-many, change: {seq: 1}}]}'
    path.write_text(CHAIN_BANK.replace("chain:\n      CHAIN", f"chain: {chain}"))
    bank = load_bank([path])
    with pytest.raises(BankError, match="ct-open: chain.follow_ups\\[0\\]: ct-many's param"):
        draw_chain(bank.get("ct-open"), bank.get, 1)


GPU_CHAIN_BANK = """\
deck: chain-gpu
questions:
  - id: cg-floor
    kind: numeric
    topic: chain-gpu
    prompt: "{params_b}B one-byte weights on an {g} ({g.bandwidth}). Floor?"
    params:
      params_b: {choices: [7, 13]}
      g: {gpu: [a100-80gb, h100, h200]}
    answer: params_b * 10**9 / g_bandwidth
    unit: seconds
    solution: ["{params_b}e9 / {g.bandwidth}"]
    chain:
      CHAIN
"""


def gpu_chain_bank(tmp_path, chain: str):
    path = tmp_path / "gpu-chain.yaml"
    path.write_text(GPU_CHAIN_BANK.replace("CHAIN", textwrap.indent(chain, " " * 6).strip()))
    return load_bank([path])


def test_a_chain_fixes_and_changes_a_gpu_by_its_key(tmp_path):
    bank = gpu_chain_bank(
        tmp_path,
        """\
start: {g: a100-80gb}
follow_ups:
  - {ask: "Now an {g}, {g.bandwidth}.", change: {g: h200}}
""",
    )
    assert lint_bank(bank, draws=20) == []
    opener, follow = draw_chain(bank.get("cg-floor"), bank.get, 1)
    # 7e9 B / 2.039e12 B/s = 3.4331 ms; 7e9 B / 4.8e12 B/s = 1.4583 ms
    assert opener.instance.params["params_b"] == 7
    assert opener.instance.params["g"] == "A100 80GB SXM"
    assert opener.instance.expected == pytest.approx(0.003433055419323198, rel=1e-12)
    assert follow.ask == "Now an H200, 4.8 TB/s."
    assert follow.changed == {"g": "H200"}
    assert follow.instance.params["g_bandwidth"] == 4_800_000_000_000
    assert follow.instance.expected == pytest.approx(0.0014583333333333333, rel=1e-12)


def test_a_chain_names_a_gpu_its_param_cannot_draw(tmp_path):
    bank = gpu_chain_bank(
        tmp_path,
        """\
start: {g: l4}
follow_ups:
  - {ask: "Now.", change: {g: 4.8}}
""",
    )
    assert [f"{e.line}: {e.message}" for e in lint_bank(bank, draws=20)] == [
        "14: chain.start.g: 'l4' is not one of its GPUs (a100-80gb, h100, h200)",
        "16: chain.follow_ups[0].change.g: 4.8 is not one of its GPUs (a100-80gb, h100, h200)",
    ]
