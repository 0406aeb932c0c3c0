"""`kvdrill engine run` and `kvdrill engine show` through the CLI."""

import json
import sys

import pytest
from click.testing import CliRunner

from drill.cli import cli
from drill.storage.database import open_db
from drill.storage.engine_runs import save_engine_run


def invoke(*args):
    return CliRunner().invoke(cli, ["engine", *args])


def test_run_tiny_json_is_stored_and_shown_back(tmp_path):
    pytest.importorskip("torch")
    db = str(tmp_path / "k.db")
    ran = invoke("run", "--tiny", "--json", "--db", db)
    assert ran.exit_code == 0, ran.output
    result = json.loads(ran.stdout)  # progress went to stderr, not into the JSON
    assert "[1/19] matmul peak before the experiments" in ran.stderr
    assert "] decode step beside a read of the same weights" in ran.stderr
    assert "[19/19] memory bandwidth after the experiments" in ran.stderr
    assert result["mode"] == "tiny"
    assert result["created_at"].endswith("+00:00")
    assert result["kv"]["measured_bytes"] == result["kv"]["formula_bytes"] == 12288
    pair = result["stream_pair"]
    assert len(pair["step_ms"]) == len(pair["read_ms"]) == 2  # the tiny plan's repeats
    # the tiny model's four matmuls per block, two blocks, and its output head, in fp32
    assert pair["read_bytes"] == (2 * (64 * 128 + 64 * 64 + 64 * 256 + 128 * 64) + 64 * 256) * 4
    assert [p["kind"] for p in result["calculator"]["points"]] == ["ttft"] * 2 + ["tpot"] * 5
    # two blocks' gate and up weights (64 x 256), in float32 and then bfloat16
    assert [(r["dtype"], r["bytes"]) for r in result["dtype_probe"]] == [
        ("float32", 2 * 64 * 256 * 4), ("bfloat16", 2 * 64 * 256 * 2),
    ]  # fmt: skip

    shown = invoke("show", "--json", "--db", db)
    assert shown.exit_code == 0
    assert shown.stdout == ran.stdout
    assert json.loads(shown.stdout) == result

    text = invoke("show", "--db", db)
    assert text.exit_code == 0
    lines = text.stdout.splitlines()
    assert lines[0].startswith("engine check (tiny) on ")
    # the verdicts close the report, in the order the claims are defined
    assert lines[-11] == "verdicts"
    assert lines[-10].startswith("  decode_memory_bound: ")
    assert lines[-2].startswith("  batch_amortizes_decode: ")


def test_show_without_a_run_is_one_line_error(tmp_path):
    open_db(tmp_path / "empty.db").conn.close()
    out = invoke("show", "--db", str(tmp_path / "empty.db"))
    assert out.exit_code == 1
    assert out.output == (
        "Error: no engine run stored yet; run `kvdrill engine run` (--quick: about a minute)\n"
    )



def test_show_without_a_database_creates_none(tmp_path):
    out = invoke("show", "--db", str(tmp_path / "none.db"))
    assert out.exit_code == 1
    assert out.output == (
        f"Error: no database at {tmp_path / 'none.db'}; "
        "`kvdrill quiz` or `kvdrill import` creates one\n"
    )
    assert list(tmp_path.iterdir()) == []

def test_show_of_an_incomplete_stored_run_is_one_line_error(tmp_path):
    from datetime import datetime, timezone

    db_path = tmp_path / "k.db"
    save_engine_run(open_db(db_path), {"schema": 1, "device": "cpu"}, datetime.now(timezone.utc))
    out = invoke("show", "--db", str(db_path))
    assert out.exit_code == 1
    assert out.output.startswith("Error: the stored engine run is incomplete")
    assert out.output.count("\n") == 1
    as_json = invoke("show", "--json", "--db", str(db_path))
    assert json.loads(as_json.stdout) == {"schema": 1, "device": "cpu"}


@pytest.mark.parametrize(
    "args, message",
    [
        (["--device", "tpu"], "Error: unknown device 'tpu'; choose auto, cuda, mps, cpu\n"),
        (
            ["--dtype", "int8"],
            "Error: unknown dtype 'int8'; choose float32, bfloat16 or float16 (or auto)\n",
        ),
    ],
)
def test_bad_device_or_dtype_is_one_line_error(tmp_path, args, message):
    out = invoke("run", "--tiny", "--db", str(tmp_path / "k.db"), *args)
    assert out.exit_code == 1
    assert out.output == message
    assert not (tmp_path / "k.db").exists()  # refused before anything was touched


def test_device_this_machine_lacks_is_one_line_error(tmp_path):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU")
    out = invoke("run", "--tiny", "--device", "cuda", "--db", str(tmp_path / "k.db"))
    assert out.exit_code == 1
    assert out.output.startswith("Error: --device cuda asked for, but torch sees no CUDA GPU")
    assert out.output.count("\n") == 1


def test_missing_torch_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now raises ImportError
    out = invoke("run", "--quick", "--db", str(tmp_path / "k.db"))
    assert out.exit_code == 1
    assert out.output == (
        "Error: torch is not installed; install it with `pip install 'kvdrill[engine]'`, "
        "or the build for your GPU from pytorch.org\n"
    )


def test_engine_help_lists_run_and_show():
    out = CliRunner().invoke(cli, ["engine", "--help"])
    assert out.exit_code == 0
    assert "run " in out.output and "show " in out.output
    run_help = CliRunner().invoke(cli, ["engine", "run", "--help"])
    assert "--quick" in run_help.output and "--tiny" not in run_help.output
