"""Questions drawn from the user's own measurements (question_bank/your_machine.yaml): the
numbers come from the latest engine run or probe stored in the database, and a question
whose run is not stored is left out.

Each expected value is a literal worked by hand from the fake run's figures (rounded to
three significant figures, as the prompt shows them) and the draw's params.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from drill.bank.loader import load_bank, load_default_bank
from drill.cli import cli
from drill.errors import BankError
from drill.kinds import make_instance
from drill.kinds.grade import grade
from drill.serving.measured import EXAMPLE_MEASURED, RUN_FIELDS, latest_measured, three_figures
from drill.storage.database import open_db
from drill.storage.engine_runs import save_engine_run
from drill.storage.probe_runs import save_probe_run

ENGINE_IDS = [
    "your-bandwidth-batch1-floor",
    "your-decode-tokens-per-s",
    "your-prefill-at-your-flops",
]
PROBE_IDS = ["your-server-littles-law", "your-server-throughput-from-tpot"]

CPU_RUN = {
    "device": "cpu",
    "device_name": "AMD EPYC 7B13",
    "created_at": "2026-03-02T09:15:00.000000+00:00",
    "config": {"params": 25_165_824},
    "decode": [
        {"batch": 1, "context_len": 1024, "ms": 61.0, "bytes_per_s": 1.8e9},
        {"batch": 1, "context_len": 128, "ms": 47.23, "bytes_per_s": 2.1347e9},
    ],
    "prefill": [
        {"prompt_len": 128, "ms": 30.0, "flops_per_s": 2.0e11},
        {"prompt_len": 512, "ms": 95.1, "flops_per_s": 2.4561e11},
    ],
    "peaks": {"bandwidth_bytes_per_s": 2.9876e10, "matmul_flops_per_s": 3.1e11},
}
GPU_RUN = {
    "device": "cuda",
    "device_name": "NVIDIA H200",
    "created_at": "2026-03-05T18:40:00.000000+00:00",
    "config": {"params": 151_000_000},
    "decode": [{"batch": 1, "context_len": 256, "ms": 2.118, "bytes_per_s": 3.2149e12}],
    "prefill": [{"prompt_len": 2048, "ms": 1.31, "flops_per_s": 4.8274e14}],
    "peaks": {"bandwidth_bytes_per_s": 4.2e12, "matmul_flops_per_s": 7.1e14},
}


def point(prompt, concurrency, completed, tpot, ttft, e2e, tokens_per_s, requests_per_s):
    return {"prompt_tokens": prompt, "concurrency": concurrency, "completed": completed,
            "tpot_ms": {"p50": tpot}, "ttft_ms": {"p50": ttft}, "e2e_ms": {"mean": e2e},
            "output_tokens_per_s": tokens_per_s, "requests_per_s": requests_per_s}  # fmt: skip


SMALL_PROBE = {
    "kind": "probe",
    "model": "llama-3.1-8b-instruct",
    "created_at": "2026-03-03T11:00:00.000000+00:00",
    "points": [
        point(512, 1, 8, 12.04, 40.0, 1600.0, 80.0, 0.6),
        point(512, 16, 32, 23.46, 181.2, 6093.7, 612.57, 2.5123),
        point(2048, 16, 16, 30.0, 400.0, 8000.0, 500.0, 2.0),  # same concurrency, longer prompt
    ],
}
BIG_PROBE = {
    "kind": "probe",
    "model": "qwen2.5-32b",
    "created_at": "2026-03-06T08:30:00.000000+00:00",
    "points": [point(1024, 64, 128, 41.26, 950.4, 12345.6, 1402.2, 5.01)],
}

UTC = timezone.utc


def store(db, engine=(), probes=()):
    for run in engine:
        save_engine_run(db, run, datetime.fromisoformat(run["created_at"]))
    for run in probes:
        save_probe_run(db, run, datetime.fromisoformat(run["created_at"]))
    return db


@pytest.fixture
def db(tmp_path):
    return open_db(tmp_path / "k.db")


def deck_with(db):
    return load_default_bank(cached=False).with_runs(latest_measured(db))


def test_without_a_run_they_are_left_out_and_say_what_they_wait_for():
    bank = load_default_bank(cached=False)
    assert [q.id for q in bank if q.topic == "your-measurements"] == []
    assert sorted(bank.waiting) == ENGINE_IDS + PROBE_IDS
    assert "your-decode-tokens-per-s" not in bank.ids
    with pytest.raises(BankError) as err:
        bank.get("your-decode-tokens-per-s")
    assert str(err.value) == (
        "your-decode-tokens-per-s is drawn from your latest engine run, and none is stored: "
        "`kvdrill engine run --quick` makes one"
    )
    with pytest.raises(BankError) as err:
        bank.get("your-server-littles-law")
    assert str(err.value) == (
        "your-server-littles-law is drawn from your latest probe run, and none is stored: "
        "`kvdrill engine probe URL` makes one"
    )


def test_the_fields_of_a_cpu_run_and_a_gpu_run(db):
    store(db, engine=[CPU_RUN])
    assert latest_measured(db) == {
        "engine.run": "1",
        "engine.device": "AMD EPYC 7B13",
        "engine.date": "2026-03-02",
        "engine.params": 25_165_824,
        "engine.decode_ms": 47.2,  # batch 1 at the shortest context, 47.23 to 3 figures
        "engine.decode_context": 128,
        "engine.decode_bytes_per_s": 2_130_000_000,
        "engine.prefill_ms": 95.1,  # the longest prompt
        "engine.prefill_tokens": 512,
        "engine.prefill_flops_per_s": 246_000_000_000,
        "engine.peak_bandwidth": 29_900_000_000,
        "engine.peak_flops": 310_000_000_000,
    }
    store(db, engine=[GPU_RUN])  # the latest run is the one read
    measured = latest_measured(db)
    assert measured["engine.run"] == "2"
    assert measured["engine.device"] == "NVIDIA H200"
    assert measured["engine.decode_ms"] == 2.12
    assert measured["engine.decode_bytes_per_s"] == 3_210_000_000_000
    assert measured["engine.prefill_flops_per_s"] == 483_000_000_000_000


def test_the_fields_of_a_probe_come_from_its_busiest_point(db):
    store(db, probes=[SMALL_PROBE])
    assert latest_measured(db) == {
        "probe.run": "1",
        "probe.model": "llama-3.1-8b-instruct",
        "probe.date": "2026-03-03",
        "probe.concurrency": 16,
        "probe.prompt_tokens": 512,  # of the two points at 16, the shorter prompt
        "probe.ttft_ms": 181,
        "probe.tpot_ms": 23.5,
        "probe.e2e_ms": 6090,
        "probe.output_tokens_per_s": 613,
        "probe.requests_per_s": 2.51,
    }


def test_three_figures():
    assert [three_figures(v) for v in (47.23, 2.1347e9, 0.0012345, 12345.6, 7, 0)] == [
        47.2, 2_130_000_000, 0.00123, 12300, 7, 0,
    ]  # fmt: skip


# fmt: off
# (runs stored, question, seed) -> (params drawn, expected) worked by hand
PINNED = [
    # 1000 / 47.2 ms
    ("cpu", "your-decode-tokens-per-s", 1, {"decode_ms": 47.2}, 21.186440677966102),
    # 1000 / 2.12 ms
    ("gpu", "your-decode-tokens-per-s", 2, {"decode_ms": 2.12}, 471.6981132075472),
    # 3e9 × 2 B = 6e9 B over 2.13e9 B/s
    ("cpu", "your-bandwidth-batch1-floor", 1, {"bw": 2_130_000_000, "size_b": 3}, 2.8169014084507045),
    # 1e9 × 2 B = 2e9 B over 2.13e9 B/s
    ("cpu", "your-bandwidth-batch1-floor", 2, {"bw": 2_130_000_000, "size_b": 1}, 0.9389671361502347),
    # 6e9 B over 3.21e12 B/s = 1.869 ms
    ("gpu", "your-bandwidth-batch1-floor", 1, {"bw": 3_210_000_000_000, "size_b": 3}, 0.001869158878504673),
    # 2 × 14e9 × 2048 = 5.7344e13 FLOPs over 2.46e11 FLOP/s
    ("cpu", "your-prefill-at-your-flops", 1, {"flops": 246_000_000_000, "size_b": 14, "prompt": 2048},
     233.10569105691056),
    # 2 × 14e9 × 4096 = 1.14688e14 FLOPs over 4.83e14 FLOP/s
    ("gpu", "your-prefill-at-your-flops", 2, {"flops": 483_000_000_000_000, "size_b": 14, "prompt": 4096},
     0.23744927536231885),
    # 16 requests × 1000 / 23.5 ms
    ("small", "your-server-throughput-from-tpot", 1, {"tpot_ms": 23.5, "conc": 16}, 680.8510638297872),
    # 64 × 1000 / 41.3 ms
    ("big", "your-server-throughput-from-tpot", 2, {"tpot_ms": 41.3, "conc": 64}, 1549.636803874092),
    # 16 in flight / 6.09 s
    ("small", "your-server-littles-law", 1, {"e2e_ms": 6090, "conc": 16}, 2.627257799671593),
    # 64 in flight / 12.3 s
    ("big", "your-server-littles-law", 2, {"e2e_ms": 12300, "conc": 64}, 5.203252032520325),
]
# fmt: on
RUNS = {
    "cpu": {"engine": [CPU_RUN]},
    "gpu": {"engine": [CPU_RUN, GPU_RUN]},
    "small": {"probes": [SMALL_PROBE]},
    "big": {"probes": [SMALL_PROBE, BIG_PROBE]},
}


@pytest.mark.parametrize(("runs", "qid", "seed", "params", "expected"), PINNED)
def test_each_draw_is_worked_from_the_stored_run(db, runs, qid, seed, params, expected):
    bank = deck_with(store(db, **RUNS[runs]))
    instance = make_instance(bank.get(qid), seed)
    assert {name: instance.params[name] for name in params} == params
    assert instance.expected == pytest.approx(expected, rel=1e-12)
    assert grade(instance, repr(expected)).correct is True


def test_every_template_is_pinned_for_both_of_its_runs():
    pinned = {(qid, runs in ("cpu", "small")) for runs, qid, *_ in PINNED}
    assert {qid for qid, _ in pinned} == set(ENGINE_IDS + PROBE_IDS)
    assert len(pinned) == 2 * len(ENGINE_IDS + PROBE_IDS)


def test_the_texts_say_where_each_number_came_from(db):
    bank = deck_with(store(db, engine=[CPU_RUN, GPU_RUN], probes=[BIG_PROBE]))
    decode = make_instance(bank.get("your-decode-tokens-per-s"), 1)
    assert decode.text == (
        "Your engine run 2 timed one decode step of its 151,000,000-parameter model at batch 1 "
        "on NVIDIA H200: 2.12 ms per step, at a context of 256 tokens. At that pace, how many "
        "tokens per second does that one sequence stream?"
    )
    assert decode.explanation.startswith(
        "2.12 ms was measured on NVIDIA H200 in engine run 2 on 2026-03-05."
    )
    throughput = make_instance(bank.get("your-server-throughput-from-tpot"), 1)
    assert throughput.explanation.startswith(
        "41.3 ms was measured against qwen2.5-32b in probe run 1 on 2026-03-06. The probe "
        "itself counted 1,400 output tokens/s at that point."  # 1,402.2 to three figures
    )


# fmt: off
@pytest.mark.parametrize(
    ("runs", "qid", "seed", "answer", "mistake"),
    [
        ("cpu", "your-decode-tokens-per-s", 1, "0.02119", "ms-vs-s"),  # 1 / 47.2
        ("cpu", "your-bandwidth-batch1-floor", 1, "1.408 s", "wrong-dtype-bytes"),  # 3e9 / 2.13e9
        ("gpu", "your-prefill-at-your-flops", 1, "6.667 ms", "bandwidth-for-prefill"),  # 28e9 / 4.2e12
        ("gpu", "your-prefill-at-your-flops", 1, "59.36 ms", "flops-2x"),  # 14e9 × 2048 / 4.83e14
        ("big", "your-server-throughput-from-tpot", 2, "24.21", "forgot-requests"),  # 1000 / 41.3
        ("big", "your-server-littles-law", 2, "0.0813", "forgot-requests"),  # 1 / 12.3 s
        ("small", "your-server-littles-law", 1, "0.3806", "inverted-ratio"),  # 6.09 s / 16
    ],
)
# fmt: on
def test_a_named_mistake_is_named(db, runs, qid, seed, answer, mistake):
    bank = deck_with(store(db, **RUNS[runs]))
    verdict = grade(make_instance(bank.get(qid), seed), answer)
    assert verdict.correct is False
    assert verdict.misconception == mistake


def test_an_engine_run_alone_leaves_the_probe_questions_waiting(db):
    bank = deck_with(store(db, engine=[CPU_RUN]))
    assert sorted(bank.waiting) == PROBE_IDS
    assert [q.id for q in bank if q.topic == "your-measurements"] == [
        "your-decode-tokens-per-s", "your-bandwidth-batch1-floor", "your-prefill-at-your-flops",
    ]  # fmt: skip


def test_an_older_run_without_a_field_leaves_only_its_question_waiting(db):
    older = {key: value for key, value in CPU_RUN.items() if key != "peaks"}
    bank = deck_with(store(db, engine=[older]))
    assert sorted(bank.waiting) == ["your-prefill-at-your-flops", *PROBE_IDS]
    with pytest.raises(BankError) as err:
        bank.get("your-prefill-at-your-flops")
    assert str(err.value) == (
        "your-prefill-at-your-flops needs engine.peak_bandwidth, which your latest engine run "
        "does not hold: `kvdrill engine run --quick` makes a new one"
    )


def test_a_damaged_stored_run_leaves_its_questions_waiting(db):
    db.conn.execute(
        "INSERT INTO engine_runs (created_at, device, torch_version, config, result) "
        "VALUES ('2026-03-02T00:00:00+00:00', 'x', NULL, 'null', 'not json')"
    )
    store(db, probes=[SMALL_PROBE])
    assert sorted(deck_with(db).waiting) == ENGINE_IDS


def test_an_unknown_run_field_is_refused_at_its_line(tmp_path):
    bank_file = tmp_path / "mine.yaml"
    bank_file.write_text(
        "deck: mine\nquestions:\n  - id: my-step\n    kind: numeric\n    topic: mine\n"
        "    prompt: 'One step took {t} ms. Tokens per second?'\n"
        "    params:\n      t: {run: engine.decode_s}\n"
        "    answer: 1000 / t\n    unit: tokens_per_s\n    solution: ['1000 / {t}']\n",
        encoding="utf-8",
    )
    with pytest.raises(BankError) as err:
        load_bank([bank_file])
    assert str(err.value) == (
        f"{bank_file}:8: my-step: params.t.run: unknown run field 'engine.decode_s'; "
        "did you mean engine.decode_ms, engine.device, engine.decode_context?"
    )


def test_the_example_run_has_every_field():
    assert list(EXAMPLE_MEASURED) == list(RUN_FIELDS)


def test_lint_checks_them_with_the_example_run():
    result = CliRunner().invoke(cli, ["bank", "lint", "--draws", "50", "question_bank/your_machine.yaml"])
    assert result.output == "ok: 5 questions in 1 file, 5 numeric templates × 50 draws\n"
    assert result.exit_code == 0


def home_db(home: Path, **runs):
    home.mkdir(parents=True, exist_ok=True)
    db = open_db(home / "kvdrill.db")
    store(db, **runs)
    db.conn.close()


def test_bank_list_says_in_one_line_what_waits(_isolated_home):
    result = CliRunner().invoke(cli, ["bank", "list"])
    assert result.exit_code == 0
    assert result.stderr == (
        "5 questions drawn from your own measurements wait for a stored run: 3 for "
        "`kvdrill engine run --quick`, 2 for `kvdrill engine probe URL`.\n"
    )
    result = CliRunner().invoke(cli, ["bank", "list", "--topic", "metrics"])
    assert (result.exit_code, result.stderr) == (0, "")
    result = CliRunner().invoke(cli, ["bank", "list", "--topic", "your-measurements"])
    assert result.exit_code == 1
    assert result.output == (
        "Error: 5 questions drawn from your own measurements wait for a stored run: 3 for "
        "`kvdrill engine run --quick`, 2 for `kvdrill engine probe URL`.\n"
    )
    home_db(_isolated_home, engine=[CPU_RUN], probes=[SMALL_PROBE])
    result = CliRunner().invoke(cli, ["bank", "list", "--topic", "your-measurements"])
    assert result.stderr == ""
    assert [line.split()[0] for line in result.stdout.splitlines()[1:]] == [
        "your-decode-tokens-per-s", "your-bandwidth-batch1-floor", "your-prefill-at-your-flops",
        "your-server-throughput-from-tpot", "your-server-littles-law",
    ]  # fmt: skip


def test_ask_and_check_read_the_stored_run(_isolated_home):
    result = CliRunner().invoke(cli, ["ask", "your-server-littles-law", "--seed", "1"])
    assert result.exit_code == 1
    assert result.output == (
        "Error: your-server-littles-law is drawn from your latest probe run, and none is "
        "stored: `kvdrill engine probe URL` makes one\n"
    )
    home_db(_isolated_home, probes=[SMALL_PROBE])
    result = CliRunner().invoke(cli, ["ask", "your-server-littles-law", "--seed", "1"])
    assert result.exit_code == 0
    assert "kept 16 requests in flight" in result.output
    assert "took 6,090 ms on average" in result.output
    result = CliRunner().invoke(
        cli, ["check", "your-server-littles-law", "--seed", "1", "--answer", "2.627 requests/s"]
    )
    assert result.exit_code == 0
    assert result.output.startswith("Right: 2.63 requests/s.\n")


def test_a_sheet_asks_them_only_once_a_run_is_stored(tmp_path):
    db_path = tmp_path / "k.db"
    args = ["sheet", "--topic", "your-measurements", "-n", "3", "--seed", "5", "--db", str(db_path)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1
    assert result.output == (
        "Error: 5 questions drawn from your own measurements wait for a stored run: 3 for "
        "`kvdrill engine run --quick`, 2 for `kvdrill engine probe URL`.\n"
    )
    store(open_db(db_path), engine=[GPU_RUN]).conn.close()
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0
    assert "NVIDIA H200" in result.stdout


def test_the_quiz_asks_them_once_a_run_is_stored(tmp_path):
    db_path = tmp_path / "k.db"
    args = ["quiz", "--db", str(db_path), "--topic", "your-measurements", "--seed", "1"]
    args += ["--now", "2026-03-07T08:00:00+00:00", "--no-fuzz"]
    result = CliRunner().invoke(cli, args, input="q\n")
    assert result.exit_code == 1
    assert result.output.endswith(
        "Error: 5 questions drawn from your own measurements wait for a stored run: 3 for "
        "`kvdrill engine run --quick`, 2 for `kvdrill engine probe URL`.\n"
    )
    store(open_db(db_path), probes=[SMALL_PROBE]).conn.close()
    result = CliRunner().invoke(cli, args, input="2.627\nq\n")
    assert result.exit_code == 0, result.output
    assert "Your probe 1 of llama-3.1-8b-instruct kept 16 requests in flight" in result.output
