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
        "params      70,600,000,000 (70.6B), as its authors publish it",
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


H100_SPEC = {
    "name": "H100 SXM",
    "bf16_dense_flops_per_s": 989e12,
    "hbm_bytes_per_s": 3.35e12,
    "memory_bytes": 85_899_345_920,
}
H100_RUN = {
    "device": "cuda",
    "device_name": "NVIDIA H100 80GB HBM3",
    "peaks": {"spec": H100_SPEC},
    # 593.4 / 989 = 60% of the spec sheet's FLOP/s; 0.8375 / 3.35 = 25% of its bandwidth
    "prefill": [{"prompt_len": 512, "flops_per_s": 593.4e12, "mfu": 0.9}],
    "decode": [{"context_len": 128, "bytes_per_s": 0.8375e12, "mbu": 0.9}],
    "created_at": "2026-11-02T07:00:00.000000+00:00",
}
CPU_RUN = {
    "device": "cpu",
    "device_name": "AMD EPYC 7B13",
    "peaks": {"spec": None},
    "prefill": [{"prompt_len": 512, "mfu": 0.891}],
    "decode": [{"context_len": 128, "mbu": 0.773}],
    "created_at": "2026-11-03T07:00:00.000000+00:00",
}


def _store(db, *runs):
    for day, result in enumerate(runs, start=2):
        save_engine_run(open_db(db), result, datetime(2026, 11, day, 7, tzinfo=timezone.utc))


def test_the_latest_engine_run_on_the_same_gpu_gives_the_efficiencies(tmp_path):
    db = tmp_path / "k.db"
    _store(db, H100_RUN, CPU_RUN)  # the CPU run is newer, and not used for an H100
    result = run(*LLAMA_TP4, "--slo-tpot", "60ms", "--db", str(db))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert (
        "efficiency  MFU 60%, MBU 25% of the spec sheet, from your engine run 1 of 2026-11-02 "
        "on NVIDIA H100 80GB HBM3: prefill of 512 tokens and decode at context 128, against "
        "the H100 SXM spec sheet"
    ) in lines
    # TPOT(B) = (35.3e9 + B x 671,088,640) / (3.35e12 x 0.25) <= 60 ms: B <= 22.3
    assert "SLO         60 ms per token: batches of up to 22 meet it (the target caps it)" in lines


def test_a_decode_step_of_several_sequences_takes_the_runs_batch_efficiencies(tmp_path):
    db = tmp_path / "k.db"
    swept = {
        **H100_RUN,
        # batch 8 streams the weights at 0.67 / 3.35 = 20% of the spec sheet; batch 512,
        # past the ridge at 300, computes at 296.7 / 989 = 30% of its FLOP/s
        "batch": [
            {"batch": 1, "bytes_per_s": 0.8375e12, "flops_per_s": 0.1e12},
            {"batch": 8, "bytes_per_s": 0.67e12, "flops_per_s": 0.8e12},
            {"batch": 512, "bytes_per_s": 0.5e12, "flops_per_s": 296.7e12},
        ],
        "batch_ridge": 300,
    }
    _store(db, swept)
    result = run(*LLAMA_TP4, "--slo-tpot", "60ms", "--requests", "8", "--db", str(db))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert (
        "efficiency  MFU 60%, MBU 25%, decode MFU 30%, batch MBU 20% of the spec sheet, from "
        "your engine run 1 of 2026-11-02 on NVIDIA H100 80GB HBM3: prefill of 512 tokens and "
        "decode at context 128, batch MBU at batch 8, decode MFU at batch 512, against the H100 "
        "SXM spec sheet"
    ) in lines
    # (35.3e9 + 8 x 671,088,640) / (3.35e12 x 20%) = 60.7 ms
    assert (
        "TPOT        60.7 ms at batch 8, 8,192 tokens each (memory-bound): 132 tokens/s"
    ) in lines
    # batches above 1 at 20%: (35.3e9 + B x 671,088,640) / 0.67e12 <= 60 ms: B <= 7.3
    assert "SLO         60 ms per token: batches of up to 7 meet it (the target caps it)" in lines
    given = run(*LLAMA_TP4, "--latency", "--mbu", "0.25", "--json", "--db", str(db)).output
    latency = json.loads(given)["serving"]["latency"]
    # a given MBU stands for a batch's too; the decode MFU still comes from the run
    assert (latency["batch_mbu"], round(latency["decode_mfu"], 6)) == (None, 0.3)
    assert latency["efficiency_source"].startswith(
        "--mbu (for a decode step of any batch too), the other from your engine run 1 of "
    )


def test_a_stored_cpu_run_is_not_applied_to_an_h100(tmp_path):
    db = tmp_path / "k.db"
    _store(db, CPU_RUN)
    result = run(*LLAMA_TP4, "--latency", "--db", str(db))
    assert result.exit_code == 0, result.output
    assert result.output.split("\n\n")[1].splitlines()[6:9] == [
        "efficiency  MFU 50%, MBU 70% of the spec sheet, from defaults typical of a tuned server "
        "(none of your engine runs measured the H100 SXM; they measured AMD EPYC 7B13 (run 1), "
        "and one device's efficiencies say nothing about another)",
        # 8,192 x 2 x 70.6e9 + attention FLOPs over 4 GPUs, at 989e12 x 50%: as with no run
        "TTFT        629 ms for a prompt of 8,192 tokens (compute-bound)",
        "TPOT        15.3 ms at batch 1, 8,192 tokens each (memory-bound): 65.2 tokens/s",
    ]


def test_a_run_on_another_h100_model_is_another_device(tmp_path):
    db = tmp_path / "k.db"
    _store(db, {**H100_RUN, "device_name": "NVIDIA H100 PCIe"})
    output = run(*LLAMA_TP4, "--latency", "--json", "--db", str(db)).output
    latency = json.loads(output)["serving"]["latency"]
    assert (latency["mfu"], latency["mbu"]) == (0.5, 0.7)
    assert latency["efficiency_source"] == (
        "defaults typical of a tuned server (none of your engine runs measured the H100 SXM; "
        "they measured NVIDIA H100 PCIe (run 1), and one device's efficiencies say nothing "
        "about another)"
    )


def test_efficiencies_choose_a_run_or_the_defaults(tmp_path):
    db = tmp_path / "k.db"
    _store(db, H100_RUN, CPU_RUN)
    chosen = run(*LLAMA_TP4, "--latency", "--db", str(db), "--efficiencies", "run:2")
    assert chosen.exit_code == 0, chosen.output
    assert (
        "efficiency  MFU 89.1%, MBU 77.3% of the spec sheet, from your engine run 2 of "
        "2026-11-03 on AMD EPYC 7B13: prefill of 512 tokens and decode at context 128, against "
        "the peaks it measured; not the H100 SXM, but --efficiencies chose it"
    ) in chosen.output.splitlines()
    defaults = run(*LLAMA_TP4, "--db", str(db), "--efficiencies", "defaults")
    assert (
        "efficiency  MFU 50%, MBU 70% of the spec sheet, from defaults typical of a tuned server "
        "(as --efficiencies asked)"
    ) in defaults.output.splitlines()
    missing = run(*LLAMA_TP4, "--db", str(db), "--efficiencies", "run:7")
    assert (missing.exit_code, missing.output) == (
        1,
        "Error: no engine run 7 is stored (stored runs: 1, 2)\n",
    )
    both = run(*LLAMA_TP4, "--mfu", "0.5", "--mbu", "0.5", "--efficiencies", "run:1")
    assert (both.exit_code, both.output) == (
        1,
        "Error: --efficiencies has nothing to choose when --mfu and --mbu are given\n",
    )
    bad = run(*LLAMA_TP4, "--db", str(db), "--efficiencies", "latest")
    assert (bad.exit_code, bad.output) == (
        1,
        "Error: --efficiencies must be auto, defaults or run:ID (a stored engine run), "
        "got 'latest'\n",
    )


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
            "Error: --tp, --weights-dtype, --params and --latency size a deployment: "
            "add --gpu NAME\n"
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
