"""Every command that prints JSON names each of its keys in its --help.

Each command with a --json option is run for real (a database holding one quiz
answer, a fixed --now, fixed seeds) and every top-level key of what it prints
(for a list, every key of its objects) must appear in the description part of
that command's --help: a key added to the output without a word in the help
fails here. `engine run` is left out (it measures for minutes); `engine show`
prints a stored run with the same top-level keys.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone

import click
import pytest
from click.testing import CliRunner
from synthetic_history import TRUE_PARAMETERS, simulate, write_history

from drill.cli import cli
from drill.storage.database import open_db
from drill.storage.engine_runs import save_engine_run

NOW = "2026-11-02T08:00:00+00:00"
LATER = "2026-11-02T09:00:00+00:00"

# a stored run with the top-level keys of a real one: engine_check.run's meta, the
# sections engine_check.report.assemble_result adds, and created_at from `engine run`
FAKE_ENGINE_RUN = {
    "schema": 2,
    "mode": "quick",
    "device": "cpu",
    "device_name": "Example CPU",
    "dtype": "float32",
    "torch_version": "2.13.0+cpu",
    "threads": 2,
    "wall_s": 41.5,
    "cpu_count": 2,
    "other_cpu_share": 0.01,
    "config": {"mode": "quick", "model": {"layers": 6}},
    "peaks": {
        "matmul_flops_per_s": 1.0e11,
        "matmul_from": "matmul 3072x3072x3072",
        "bandwidth_bytes_per_s": 2.0e10,
        "bandwidth_from": "read",
        "kernels": [],
        "warnings": [],
        "spec": None,
    },
    "prefill": [{"prompt_len": 128, "ms": 500.0}],
    "decode": [{"context_len": 128, "ms": 55.0}],
    "batch": [{"batch": 1, "ms": 50.0, "tokens_per_s": 20.0}],
    "batch_ridge": 17,
    "recompute": [{"position": 32, "cached_ms": 50.0, "recompute_ms": 120.0}],
    "kv": {"measured_bytes": 12288, "formula_bytes": 12288, "allocator_delta_bytes": None},
    "claims": {"kv_formula_exact": {"holds": True, "text": "the cache holds 12,288 bytes"}},
    "created_at": "2026-11-02T07:00:00.000000+00:00",
}


def walk(group: click.Group, ctx: click.Context, path: tuple[str, ...] = ()):
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            if any("--json" in option.opts for option in command.params):
                yield (*path, name), command  # a group that is a command itself (interview)
            yield from walk(
                command, click.Context(command, parent=ctx, info_name=name), (*path, name)
            )
        else:
            yield (*path, name), command


def json_commands() -> list[tuple[str, ...]]:
    """Every command (as its words after `kvdrill`) that has a --json option."""
    found = []
    for path, command in walk(cli, click.Context(cli, info_name="kvdrill")):
        if any("--json" in option.opts for option in command.params):
            found.append(path)
    return found


def one_answer_db(tmp_path):
    """A database holding one quiz answer (a wrong one, so a mistake is counted)."""
    db = tmp_path / "k.db"
    args = ["quiz", "--db", str(db), "--max", "1", "--seed", "1", "--now", NOW]
    result = CliRunner().invoke(cli, [*args, "--tick", "20", "--no-fuzz"], input="4 GiB\n\n")
    assert result.exit_code == 0, result.output
    return db


def with_a_suspended_leech(tmp_path):
    """A database whose one card is suspended, after a lapse that named a mistake."""
    db = one_answer_db(tmp_path)
    conn = open_db(db).conn
    conn.execute(
        "update cards set suspended_at = ?, leech_at = ?, lapses = 1",
        ["2026-11-02T08:30:00.000000+00:00", "2026-11-02T08:30:00.000000+00:00"],
    )
    conn.close()
    return db


def with_enough_reviews_to_fit(tmp_path):
    """A simulated user's 300 days of reviews: enough for `kvdrill optimize`."""
    reviews = simulate(TRUE_PARAMETERS, questions=45, days=300, new_per_day=2, seed=1)
    return write_history(tmp_path / "fit.db", reviews)


def with_engine_run(tmp_path):
    db = one_answer_db(tmp_path)
    save_engine_run(open_db(db), FAKE_ENGINE_RUN, datetime(2026, 11, 2, 7, tzinfo=timezone.utc))
    return db


def with_an_interview(tmp_path):
    """A database holding one mock interview of two questions (one answered)."""
    db = tmp_path / "iv.db"
    if not db.exists():
        args = ["interview", "--db", str(db), "--seed", "1", "--n", "2", "--now", NOW]
        result = CliRunner().invoke(cli, args, input="4 GiB\n")
        assert result.exit_code == 0, result.output
    return db


def interview_id(db) -> str:
    return open_db(db).conn.execute("select id from sessions").fetchone()[0][:8]


# each command's real situations: the arguments, given a tmp folder
SITUATIONS = {
    ("ask",): lambda tmp: [
        ["kv-bytes-per-request", "--seed", "2230"],
        ["paging-analogy", "--seed", "1"],
        ["autoregressive-loop-order", "--seed", "1"],
    ],
    ("check",): lambda tmp: [
        ["kv-bytes-per-request", "--seed", "2230", "--answer", "4 GiB"],
        ["paging-analogy", "--seed", "1", "--answer", "3"],
        ["kv-formula-units", "--seed", "1", "--answer", "2 for K and V, times layers"],
    ],
    ("bank", "list"): lambda tmp: [[]],
    ("bank", "coverage"): lambda tmp: [["--topic", "mla"]],
    ("kv",): lambda tmp: [
        ["--preset", "llama-3-70b", "--seq", "32768", "--dtype", "fp8", "--reserve", "65536"],
        ["--layers", "32", "--kv-heads", "8", "--head-dim", "128", "--seq", "4096"],
        ["--preset", "llama-3-70b", "--gpu", "h100", "--tp", "4", "--seq", "8192", "--latency"],
        ["--list-presets"],
    ],
    ("stats",): lambda tmp: [["--db", str(one_answer_db(tmp)), "--now", LATER]],
    ("plan",): lambda tmp: [["--db", str(one_answer_db(tmp)), "--now", LATER, "--days", "3"]],
    ("doctor",): lambda tmp: [["--db", str(one_answer_db(tmp))]],
    ("config",): lambda tmp: [["--db", str(one_answer_db(tmp))]],
    ("optimize",): lambda tmp: [["--db", str(with_enough_reviews_to_fit(tmp)), "--dry-run"]],
    ("unsuspend",): lambda tmp: [["--list", "--db", str(with_a_suspended_leech(tmp))]],
    ("mistakes",): lambda tmp: [["--db", str(one_answer_db(tmp)), "--now", LATER]],
    ("engine", "show"): lambda tmp: [["--db", str(with_engine_run(tmp))]],
    ("interview",): lambda tmp: [
        ["--db", str(tmp / "iv.db"), "--seed", "1", "--n", "2", "--now", NOW],
    ],
    ("interview", "list"): lambda tmp: [["--db", str(with_an_interview(tmp))]],
    ("interview", "report"): lambda tmp: [
        [interview_id(with_an_interview(tmp)), "--db", str(tmp / "iv.db")]
    ],
}
NOT_RUN = {
    ("engine", "run"): "measures for minutes; `engine show` prints what it stores",
    # both need a serving endpoint: tests/test_probe_cli.py checks their help against a
    # probe of a streaming server it starts on the loopback
    ("engine", "probe"): "needs a serving endpoint (tests/test_probe_cli.py)",
    ("engine", "probes"): "needs a stored probe (tests/test_probe_cli.py)",
}


def test_every_json_command_has_a_situation_here():
    assert sorted(json_commands()) == sorted([*SITUATIONS, *NOT_RUN])


def description(path: tuple[str, ...]) -> str:
    """The help between the usage line and the options: what documents the output."""
    result = CliRunner().invoke(cli, [*path, "--help"])
    assert result.exit_code == 0, result.output
    text = result.output.split("\nOptions:\n")[0]
    return text.split("\n", 1)[1]


def printed_keys(path: tuple[str, ...], args: list[str]) -> set[str]:
    result = CliRunner().invoke(cli, [*path, *args, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    if isinstance(data, list):
        assert data, f"kvdrill {' '.join(path)} printed an empty list"
        return {key for item in data for key in item}
    return set(data)


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, id=" ".join(p)) for p in SITUATIONS],
)
def test_help_names_every_json_key(tmp_path, path):
    keys: set[str] = set()
    for args in SITUATIONS[path](tmp_path):
        keys |= printed_keys(path, args)
    helped = description(path)
    missing = sorted(
        k for k in keys if not re.search(rf"(?<![\w-]){re.escape(k)}(?![\w-])", helped)
    )
    assert missing == [], f"`kvdrill {' '.join(path)} --help` does not name {missing}"
