"""The quiz quotes the user's latest probe beside a claim it speaks to."""

from __future__ import annotations

from datetime import datetime, timezone

from drill.serving.evidence import HOW_TO_MEASURE, evidence_from_latest_run
from drill.serving.probe_evidence import quote_probe
from drill.storage.database import open_db
from drill.storage.probe_runs import save_probe_run


def point(prompt, concurrency, tokens_per_s, tpot_p50):
    return {"prompt_tokens": prompt, "concurrency": concurrency,
            "output_tokens_per_s": tokens_per_s, "tpot_ms": {"p50": tpot_p50}}  # fmt: skip


PROBE = {
    "kind": "probe",
    "url": "http://127.0.0.1:8000/v1",
    "model": "llama-3-8b\n<x>",
    "created_at": "2026-11-30T10:00:00.000000+00:00",
    "points": [point(128, 1, 41.0, 23.5), point(128, 8, 262.4, 29.9), point(1024, 1, 38.0, 25.0)],
}


def test_a_concurrency_sweep_is_quoted_for_batching():
    assert quote_probe(["batch_amortizes_decode"], PROBE) == [
        "Your probe of llama-3-8b <x> on 2026-11-30: from concurrency 1 to 8 at ~128-token "
        "prompts, output went from 41.0 to 262.4 tokens/s while median TPOT went from 23.5 "
        "to 29.9 ms."
    ]


def test_nothing_for_other_claims_no_sweep_or_no_probe():
    assert quote_probe(["kv_formula_exact"], PROBE) == []
    assert quote_probe(["batch_amortizes_decode"], {"points": [point(128, 1, 41.0, 23.5)]}) == []
    assert quote_probe(["batch_amortizes_decode"], None) == []


def test_the_quiz_quoter_adds_the_probe_after_the_engine_line(tmp_path):
    db = open_db(tmp_path / "k.db")
    quoter = evidence_from_latest_run(db)
    assert quoter(["batch_amortizes_decode"]) == [HOW_TO_MEASURE]
    save_probe_run(db, PROBE, datetime(2026, 11, 30, 10, tzinfo=timezone.utc))
    lines = quoter(["batch_amortizes_decode"])
    assert lines[0] == HOW_TO_MEASURE
    assert lines[1].startswith("Your probe of llama-3-8b <x> on 2026-11-30: from concurrency 1")
    assert quoter(["decode_memory_bound"]) == [HOW_TO_MEASURE]
