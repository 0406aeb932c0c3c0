"""Stored engine runs and the quiz's quotes of them (no torch needed)."""

import subprocess
import sys
from datetime import datetime, timedelta, timezone

import pytest

from drill.errors import StoreError
from drill.serving.evidence import HOW_TO_MEASURE, quote_evidence
from drill.storage.database import open_db
from drill.storage.engine_runs import latest_engine_run, save_engine_run

NOW = datetime(2026, 11, 29, 21, 30, tzinfo=timezone.utc)


def run_result(device_name="Example CPU", decode_holds=True) -> dict:
    return {
        "schema": 1,
        "device": "cpu",
        "device_name": device_name,
        "dtype": "float32",
        "torch_version": "2.13.0+cpu",
        "created_at": "2026-11-29T21:30:00.000000+00:00",
        "config": {"model": {"layers": 6}},
        "claims": {
            "decode_memory_bound": {
                "holds": decode_holds,
                "text": "decode used 6% of the matmul peak and 90% of copy bandwidth: memory-bound",
            },
            "kv_formula_exact": {"holds": True, "text": "the cache holds 1,024 bytes: exact"},
            "prefill_compute_bound": {"holds": True, "text": "prefill ran at 80%: compute-bound"},
        },
    }


def test_save_and_read_back_the_same_object(tmp_path):
    db = open_db(tmp_path / "k.db")
    assert latest_engine_run(db) is None
    result = run_result()
    run_id = save_engine_run(db, result, NOW)
    assert run_id == 1
    assert latest_engine_run(db) == result
    row = db.conn.execute("SELECT created_at, device, torch_version FROM engine_runs").fetchone()
    assert row == ("2026-11-29T21:30:00.000000+00:00", "Example CPU", "2.13.0+cpu")


def test_latest_is_the_most_recently_created(tmp_path):
    db = open_db(tmp_path / "k.db")
    save_engine_run(db, run_result("newer"), NOW)
    save_engine_run(db, run_result("older"), NOW - timedelta(days=1))
    assert latest_engine_run(db)["device_name"] == "newer"
    save_engine_run(db, run_result("newest"), NOW + timedelta(seconds=1))
    assert latest_engine_run(db)["device_name"] == "newest"


def test_naive_time_and_unstorable_values_are_refused(tmp_path):
    db = open_db(tmp_path / "k.db")
    with pytest.raises(ValueError, match="naive"):
        save_engine_run(db, run_result(), datetime(2026, 11, 29))
    bad = run_result()
    bad["peak"] = float("nan")
    with pytest.raises(StoreError, match="JSON"):
        save_engine_run(db, bad, NOW)
    assert latest_engine_run(db) is None


def test_corrupt_stored_result_is_a_store_error(tmp_path):
    db = open_db(tmp_path / "k.db")
    db.conn.execute(
        "INSERT INTO engine_runs (created_at, result) VALUES ('2026-11-29T00:00:00+00:00', '{oops')"
    )
    with pytest.raises(StoreError, match="engine run 1 is not valid JSON"):
        latest_engine_run(db)


def test_no_run_gives_one_line_on_how_to_measure():
    assert quote_evidence(["decode_memory_bound"], None) == [HOW_TO_MEASURE]
    assert "kvdrill engine run --quick" in HOW_TO_MEASURE


def test_quotes_device_date_and_numbers_of_the_named_claim():
    lines = quote_evidence(["decode_memory_bound"], run_result())
    assert lines == [
        "Your last engine run, on Example CPU (float32, 2026-11-29): decode used 6% of the "
        "matmul peak and 90% of copy bandwidth: memory-bound."
    ]


def test_two_claims_give_two_lines_in_the_order_asked():
    lines = quote_evidence(
        ["kv_formula_exact", "decode_memory_bound", "prefill_compute_bound"], run_result()
    )
    assert len(lines) == 2
    assert lines[0].endswith("the cache holds 1,024 bytes: exact.")
    assert lines[1].startswith("Same run: decode used 6%")


def test_a_claim_not_borne_out_is_quoted_as_measured():
    lines = quote_evidence(["decode_memory_bound"], run_result(decode_holds=False))
    assert len(lines) == 1 and "90% of copy bandwidth" in lines[0]


def test_unknown_or_no_names_give_no_lines():
    assert quote_evidence([], run_result()) == []
    assert quote_evidence([], None) == []
    assert quote_evidence(["no_such_claim"], run_result()) == []
    assert quote_evidence(["no_such_claim", "kv_formula_exact"], run_result())[0].endswith("exact.")
    assert quote_evidence(["kv_formula_exact"], {"device": "cpu"}) == []


def test_quiz_side_modules_do_not_import_torch():
    code = (
        "import sys\n"
        "import drill.serving.evidence, drill.storage.engine_runs, drill.commands.engine, engine_check\n"
        "import engine_check.report, engine_check.claims, engine_check.config\n"
        "import engine_check.roofline, engine_check.peaks, engine_check.timing, drill.serving.gpus\n"
        "from drill.cli import cli\n"
        "from click.testing import CliRunner\n"
        "CliRunner().invoke(cli, ['--help'])\n"
        "CliRunner().invoke(cli, ['engine', '--help'])\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
