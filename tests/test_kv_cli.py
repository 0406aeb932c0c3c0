"""`kvdrill kv` through the CLI: output, --json, --list-presets, and one-line errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from drill.cli import cli

CONFIGS = Path(__file__).parent / "configs"


def run(*args: str):
    return CliRunner().invoke(cli, ["kv", *args])


def run_json(*args: str) -> dict:
    result = run(*args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_lesson_example_by_hand():
    result = run("--layers", "32", "--kv-heads", "8", "--head-dim", "128", "--seq", "4096")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "2 · layers · kv_heads · head_dim · seq_len · dtype_bytes\n" in out
    assert "= 2 · 32 · 8 · 128 · 4096 · 2\n" in out
    assert "536,870,912 bytes (512 MiB = 537 MB) for 4,096 tokens" in out
    assert "fp16, 2 bytes per element" in out
    assert "131,072 bytes (128 KiB = 131 kB)" in out


def test_sixteen_requests_with_a_reservation():
    result = run(
        *("--layers", "32", "--kv-heads", "8", "--head-dim", "128"),
        *("--seq", "2048", "--requests", "16", "--reserve", "8192"),
    )
    assert result.exit_code == 0, result.output
    out = result.output
    assert "4,294,967,296 bytes (4 GiB = 4.29 GB) for 16 requests" in out
    assert "17,179,869,184 bytes (16 GiB = 17.2 GB) for 8,192 tokens per request" in out
    assert "75% of the reservation is empty" in out


def test_json_for_the_lesson_example():
    data = run_json(
        *("--layers", "32", "--kv-heads", "8", "--head-dim", "128"),
        *("--seq", "4096", "--requests", "16", "--reserve", "8192"),
    )
    assert data["bytes_per_token"] == 131_072
    assert data["bytes_per_request"] == 536_870_912
    assert data["total_bytes"] == 8 * 2**30
    assert data["reserved_bytes"] == 16 * 2**30
    assert data["waste_fraction"] == 0.5
    assert (data["seq_len"], data["requests"], data["cached_tokens"]) == (4096, 16, 4096)
    assert (data["dtype"], data["dtype_bytes"]) == ("fp16", 2)
    assert data["shape"]["layers"] == 32 and data["shape"]["kv_heads"] == 8
    assert data["shape"]["q_heads"] is None
    assert data["notes"] == []
    assert data["formula"].endswith("= 2 · 32 · 8 · 128 · 4096 · 2 · 16 = 8,589,934,592 bytes")


def test_json_without_reserve_has_no_reservation_keys():
    data = run_json("--preset", "llama-3-8b", "--seq", "4096")
    assert "reserved_bytes" not in data and "waste_fraction" not in data


def test_pitfall_with_fewer_kv_heads_and_fp8():
    data = run_json(
        *("--layers", "32", "--kv-heads", "2", "--head-dim", "128"),
        *("--seq", "4096", "--dtype", "fp8"),
    )
    assert data["bytes_per_request"] == 2 * 32 * 2 * 128 * 4096 * 1  # 67,108,864


def test_preset_opt_13b_is_800_kib_per_token():
    data = run_json("--preset", "OPT-13B", "--seq", "2048")
    assert data["bytes_per_token"] == 819_200
    assert data["bytes_per_request"] == 1_677_721_600  # 819,200 · 2,048
    assert data["shape"]["name"] == "opt-13b"


def test_preset_dtype_can_be_overridden():
    data = run_json("--preset", "llama-3-70b", "--seq", "1", "--dtype", "int4")
    assert data["bytes_per_token"] == 81_920  # 2·80·8·128·0.5
    assert (data["dtype"], data["dtype_bytes"]) == ("int4", 0.5)


def test_config_with_a_window_explains_it():
    result = run("--config", str(CONFIGS / "mistral-7b-v0.1.json"), "--seq", "8192")
    assert result.exit_code == 0, result.output
    assert "536,870,912 bytes (512 MiB = 537 MB) for 8,192 tokens" in result.output
    assert "sliding window: every layer keeps only the last 4,096 tokens" in result.output
    data = run_json("--config", str(CONFIGS / "mistral-7b-v0.1.json"), "--seq", "8192")
    assert (data["cached_tokens"], data["bytes_per_request"]) == (4096, 536_870_912)
    ignored = run_json(
        "--config", str(CONFIGS / "mistral-7b-v0.1.json"), "--seq", "8192", "--ignore-window"
    )
    assert (ignored["cached_tokens"], ignored["bytes_per_request"]) == (8192, 1_073_741_824)


def test_config_with_mla():
    result = run("--config", str(CONFIGS / "deepseek-v3.json"), "--seq", "4096")
    assert result.exit_code == 0, result.output
    assert "= 61 · (512 + 64) · 4096 · 2\n" in result.output
    assert "no separate K and V, so no factor 2" in result.output
    assert "287,834,112 bytes" in result.output


def test_list_presets_table():
    result = run("--list-presets")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == [
        "name", "model", "layers", "q/kv", "heads", "head_dim", "dtype", "KV/token", "params",
        "attention",
    ]  # fmt: skip
    assert len(lines) == 12
    opt = next(line for line in lines if line.startswith("opt-13b"))
    assert "40/40" in opt and "800 KiB" in opt and "fp16" in opt
    gemma = next(line for line in lines if line.startswith("gemma-2-9b"))
    assert "window 4096 on 21/42" in gemma


def test_list_presets_json():
    data = run_json("--list-presets")
    assert isinstance(data, list) and len(data) == 11
    by_name = {row["name"]: row for row in data}
    assert by_name["opt-13b"]["bytes_per_token"] == 819_200
    assert by_name["deepseek-v3"]["bytes_per_token"] == 70_272
    assert by_name["gemma-2-9b"]["head_dim"] == 256


# --- errors: one line, non-zero exit, no traceback -------------------------------------


def _assert_one_line_error(result, expected: str, code: int) -> None:
    assert result.exit_code == code, result.output
    assert result.output == f"Error: {expected}\n"
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--seq", "0"], "--seq must be at least 1, got 0"),
        (["--seq=-4096"], "--seq must be at least 1, got -4096"),
        (["--seq", "4096.5"], "--seq must be a whole number, got '4096.5'"),
        (["--seq", "4k"], "--seq must be a whole number, got '4k'"),
        (["--seq", "9999999999"], "--seq = 9,999,999,999 is absurdly large (the limit is 2,147,483,648)"),
        (["--seq", "16", "--requests", "0"], "--requests must be at least 1, got 0"),
        (["--seq", "16", "--reserve", "8"], "reserve (8 tokens) is less than seq_len (16 tokens); a request cannot hold more than it reserved"),
        (["--seq", "16", "--dtype", "fp12"], "unknown dtype 'fp12'; valid names: bf16, bfloat16, float16, float32, float8, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, fp16, fp32, fp8, half, int4, int8 (any float8_* too)"),
        (["--seq", str(2**31), "--requests", str(2**31)], "the total comes to 2.38e+24 bytes, absurdly large (over 2**80)"),  # 516,096 · 2**62
    ],
)  # fmt: skip
def test_bad_sizes_with_a_preset(args, expected):
    _assert_one_line_error(run("--preset", "llama-3.1-405b", *args), expected, 1)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--layers", "0", "--kv-heads", "8", "--head-dim", "128"], "--layers must be at least 1, got 0"),
        (["--layers", "32", "--kv-heads", "-8", "--head-dim", "128"], "--kv-heads must be at least 1, got -8"),
        (["--layers", "32", "--kv-heads", "8", "--head-dim", "12.8"], "--head-dim must be a whole number, got '12.8'"),
        (["--layers", "1e40", "--kv-heads", "8", "--head-dim", "128"], "--layers must be a whole number, got '1e40'"),
    ],
)  # fmt: skip
def test_bad_sizes_by_hand(args, expected):
    _assert_one_line_error(run(*args, "--seq", "4096"), expected, 1)


def test_unknown_preset_suggests_names():
    _assert_one_line_error(
        run("--preset", "mistral-7b", "--seq", "16"),
        "unknown preset 'mistral-7b'; did you mean mistral-7b-v0.1, mixtral-8x7b?",
        1,
    )


def test_missing_config(tmp_path):
    path = tmp_path / "missing.json"
    _assert_one_line_error(
        run("--config", str(path), "--seq", "16"), f"config file not found: {path}", 1
    )


def test_unreadable_config(tmp_path):
    path = tmp_path / "config.json"
    path.write_bytes(b"\x80\x81 not text")
    result = run("--config", str(path), "--seq", "16")
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: cannot read config file {path}: ")
    assert result.output.count("\n") == 1


def test_config_that_is_not_json(tmp_path):
    path = tmp_path / "config.json"
    path.write_text("num_hidden_layers: 32\n")
    _assert_one_line_error(
        run("--config", str(path), "--seq", "16"),
        f"{path} is not valid JSON (line 1, column 1: Expecting value)",
        1,
    )


def test_config_with_contradictory_fields(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"num_hidden_layers": 2, "num_attention_heads": 6,
                                "num_key_value_heads": 4, "hidden_size": 384}))  # fmt: skip
    _assert_one_line_error(
        run("--config", str(path), "--seq", "16"),
        f"{path}: num_attention_heads (6) is not a multiple of num_key_value_heads (4)",
        1,
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--preset", "opt-13b", "--config", "x.json", "--seq", "4"], "choose one of --preset, --config or --layers/--kv-heads/--head-dim"),
        (["--preset", "opt-13b", "--layers", "4", "--seq", "4"], "choose one of --preset, --config or --layers/--kv-heads/--head-dim"),
        (["--preset", "opt-13b"], "missing --seq N, the live tokens per request"),
        (["--layers", "32", "--seq", "4"], "a shape given by hand needs --kv-heads, --head-dim too"),
        (["--seq", "4"], "give a model: --preset NAME, --config PATH or --layers/--kv-heads/--head-dim"),
        (["--list-presets", "--seq", "4"], "--list-presets takes no other option except --json"),
    ],
)  # fmt: skip
def test_conflicting_options_are_one_line_usage_errors(args, expected):
    _assert_one_line_error(run(*args), expected, 2)


def test_kv_does_not_import_torch_or_sqlite_utils():
    code = (
        "import sys\n"
        "from drill.cli import main\n"
        "sys.argv = ['kvdrill', 'kv', '--preset', 'llama-3-8b', '--seq', '4096', '--json']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exc:\n"
        "    assert exc.code in (0, None), exc.code\n"
        "heavy = sorted(m for m in ('torch', 'sqlite_utils') if m in sys.modules)\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert '"total_bytes": 536870912' in out.stdout
    assert out.stdout.strip().endswith("HEAVY []")
