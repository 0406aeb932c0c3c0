"""`kvdrill kv --gpu`: the per-GPU figures as printed and as JSON, and their errors."""

import json
from datetime import datetime, timezone

from click.testing import CliRunner

from drill.cli import cli
from drill.storage.database import open_db
from drill.storage.engine_runs import save_engine_run

LLAMA_TP4 = ("--preset", "llama-3-70b", "--gpu", "h100", "--tp", "4", "--seq", "8192")


def run(*args: str):
    return CliRunner().invoke(cli, ["kv", *args])


def test_llama_3_70b_on_four_h100s_with_stated_efficiencies():
    result = run(*LLAMA_TP4, "--latency", "--slo-tpot", "50ms", "--mfu", "0.5", "--mbu", "80%")
    assert result.exit_code == 0, result.output
    assert result.output.split("\n\n")[1].splitlines() == [
        "per GPU     H100 SXM (989 TFLOP/s bf16, 3.35 TB/s, 80 GiB) x 4, tensor parallel",
        "weights     35,300,000,000 bytes (32.9 GiB): 70,600,000,000 params x 2 bytes / 4",
        "KV cache    2 of 8 KV heads per GPU: 81,920 bytes per token, 671,088,640 bytes "
        "(640 MiB) per 8,192-token sequence",
        "memory      90% of it usable, 72 GiB; 39.1 GiB left for the KV cache",
        "fits        62 sequences of 8,192 tokens at once",
        "efficiency  MFU 50%, MBU 80% of the spec sheet, from --mfu and --mbu",
        "TTFT        629 ms for a prompt of 8,192 tokens (compute-bound)",
        "TPOT        13.4 ms at batch 1, 8,192 tokens each (memory-bound): 74.5 tokens/s",
        "SLO         50 ms per token: batches of up to 62 meet it (memory caps it)",
        "  (roofline times from the spec sheet's peaks; communication between GPUs, "
        "activations and allocator overhead are left out)",
    ]


def test_without_an_engine_run_the_defaults_are_named():
    result = run(*LLAMA_TP4, "--latency", "--json")
    assert result.exit_code == 0, result.output
    latency = json.loads(result.output)["serving"]["latency"]
    assert (latency["mfu"], latency["mbu"]) == (0.5, 0.7)
    assert latency["efficiency_source"].startswith("defaults")
    assert latency["slo_batch"] is None


def test_the_latest_engine_run_gives_the_efficiencies(tmp_path):
    db = tmp_path / "k.db"
    run_result = {
        "device_name": "Example CPU",
        "peaks": {"spec": None},
        "prefill": [{"prompt_len": 512, "mfu": 0.625}],
        "decode": [{"context_len": 128, "mbu": 0.25}],
        "created_at": "2026-11-02T07:00:00.000000+00:00",
    }
    save_engine_run(open_db(db), run_result, datetime(2026, 11, 2, 7, tzinfo=timezone.utc))
    result = run(*LLAMA_TP4, "--slo-tpot", "60ms", "--db", str(db))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert (
        "efficiency  MFU 62.5%, MBU 25% of the spec sheet, from your engine run of 2026-11-02 "
        "on Example CPU: prefill of 512 tokens and decode at context 128, against the peaks "
        "it measured"
    ) in lines
    # TPOT(B) = (35.3e9 + B x 671,088,640) / (3.35e12 x 0.25) <= 60 ms: B <= 22.3
    assert "SLO         60 ms per token: batches of up to 22 meet it (the target caps it)" in lines


def test_serving_json_keys_and_mla():
    result = run(
        *("--preset", "deepseek-v3", "--gpu", "h200", "--tp", "8", "--seq", "8192"),
        *("--weights-dtype", "fp8", "--json"),
    )
    assert result.exit_code == 0, result.output
    serving = json.loads(result.output)["serving"]
    assert serving["kv_heads_per_gpu"] is None and serving["kv_replicas"] == 8
    assert serving["kv_bytes_per_token_per_gpu"] == 70_272
    assert serving["max_sequences"] == 90
    assert "latency" not in serving


def test_options_that_need_a_gpu_say_so():
    for extra in (["--tp", "4"], ["--latency"], ["--slo-tpot", "50ms"]):
        result = run("--preset", "llama-3-70b", "--seq", "8192", *extra)
        assert result.exit_code == 2
        assert result.output == (
            "Error: --tp, --weights-dtype and --latency size a deployment: add --gpu NAME\n"
        )


def test_bad_values_are_one_line_errors():
    cases = {
        ("--slo-tpot", "50"): "Error: --slo-tpot must be a time with its unit, such as 50ms, "
        "got '50'\n",
        ("--mfu", "1.5", "--latency"): "Error: --mfu must be above 0 and at most 1 (or 100%), "
        "got '1.5'\n",
        ("--gpu", "h1000"): None,
    }
    for extra, message in cases.items():
        args = [*LLAMA_TP4, *extra] if extra[0] != "--gpu" else [
            "--preset", "llama-3-70b", "--seq", "8192", *extra
        ]  # fmt: skip
        result = run(*args)
        assert result.exit_code == 1, result.output
        if message:
            assert result.output == message
        else:
            assert result.output.startswith("Error: unknown GPU 'h1000'; did you mean h100")
