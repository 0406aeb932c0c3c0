"""The user's own measurements as numbers a template can draw (`run: FIELD` params).

RUN_FIELDS is the one list of what a template may take from the latest stored engine run
(`engine.*`) or probe run (`probe.*`); the bank refuses any other name when it loads.
`measured_values` reads them from the stored results, `latest_measured` from a database
(two reads of one row each: no torch, nothing heavy). A field the run lacks (an older run,
a run that failed part-way) is simply absent, and the templates that need it wait.

Measured numbers are rounded to three significant figures, so that the figure the prompt
shows is the figure the answer is worked from.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

Value = int | float | str

ENGINE_HOW = "`kvdrill engine run --quick`"
PROBE_HOW = "`kvdrill engine probe URL`"
SOURCES = {"engine": ("engine run", ENGINE_HOW), "probe": ("probe run", PROBE_HOW)}

# name -> what it is; times in ms, rates per second, sizes in bytes
RUN_FIELDS: dict[str, str] = {
    "engine.device": "the device the engine run measured (its name)",
    "engine.run": "the engine run's number (as text)",
    "engine.date": "the engine run's date (YYYY-MM-DD, UTC)",
    "engine.params": "the parameters of the model the engine run timed",
    "engine.decode_ms": "median ms of one decode step at batch 1, at the shortest context",
    "engine.decode_context": "that decode step's context length (tokens)",
    "engine.decode_bytes_per_s": "the bytes that decode step moved per second",
    "engine.prefill_ms": "median ms of prefill at the longest prompt measured",
    "engine.prefill_tokens": "that prompt's length (tokens)",
    "engine.prefill_flops_per_s": "the FLOPs that prefill did per second",
    "engine.peak_bandwidth": "the memory bandwidth the run measured (bytes/s)",
    "engine.peak_flops": "the matmul FLOP/s the run measured",
    "probe.model": "the model the probe asked for",
    "probe.run": "the probe run's number (as text)",
    "probe.date": "the probe run's date (YYYY-MM-DD, UTC)",
    "probe.concurrency": "requests in flight at the probe's busiest point",
    "probe.prompt_tokens": "that point's prompt length (tokens)",
    "probe.ttft_ms": "that point's median TTFT (ms)",
    "probe.tpot_ms": "that point's median TPOT (ms)",
    "probe.e2e_ms": "that point's mean end-to-end latency (ms)",
    "probe.output_tokens_per_s": "that point's output tokens per second, all requests together",
    "probe.requests_per_s": "that point's completed requests per second",
}

# a run as lint and `bank coverage` check templates with: every field, plausible numbers
EXAMPLE_MEASURED: dict[str, Value] = {
    "engine.device": "Example GPU",
    "engine.run": "7",
    "engine.date": "2026-01-15",
    "engine.params": 151_000_000,
    "engine.decode_ms": 4.2,
    "engine.decode_context": 128,
    "engine.decode_bytes_per_s": 7.4e10,
    "engine.prefill_ms": 38.5,
    "engine.prefill_tokens": 2048,
    "engine.prefill_flops_per_s": 1.6e13,
    "engine.peak_bandwidth": 9.1e10,
    "engine.peak_flops": 2.2e13,
    "probe.model": "example-8b",
    "probe.run": "3",
    "probe.date": "2026-01-16",
    "probe.concurrency": 16,
    "probe.prompt_tokens": 512,
    "probe.ttft_ms": 180.0,
    "probe.tpot_ms": 31.5,
    "probe.e2e_ms": 4200.0,
    "probe.output_tokens_per_s": 462.0,
    "probe.requests_per_s": 3.7,
}


def source_of(field_name: str) -> str:
    """'engine' or 'probe': the stored run a field comes from."""
    return field_name.split(".", 1)[0]


def three_figures(value: float) -> int | float:
    """`value` to three significant figures, a whole number as an int."""
    if value == 0:
        return 0
    rounded = round(value, 2 - math.floor(math.log10(abs(value))))
    return int(rounded) if float(rounded).is_integer() else rounded


def _positive(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value > 0 else None


def _put(found: dict[str, Value], name: str, value: Any, *, whole: bool = False) -> None:
    number = _positive(value)
    if number is not None:
        found[name] = int(round(number)) if whole else three_figures(number)


def _text(found: dict[str, Value], name: str, value: Any, limit: int = 60) -> None:
    from drill.text import printable

    if isinstance(value, str) and value.strip():
        found[name] = " ".join(printable(value).split())[:limit]


def _date(found: dict[str, Value], name: str, created: Any) -> None:
    if isinstance(created, str) and len(created) >= 10:
        found[name] = created[:10]


def _rows(run: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    rows = run.get(key)
    return [r for r in rows if isinstance(r, Mapping)] if isinstance(rows, list) else []


def engine_values(run: Mapping[str, Any], run_id: int) -> dict[str, Value]:
    """The engine.* fields a stored engine run's result holds."""
    found: dict[str, Value] = {"engine.run": str(run_id)}
    _text(found, "engine.device", run.get("device_name") or run.get("device"))
    _date(found, "engine.date", run.get("created_at"))
    config = run.get("config")
    if isinstance(config, Mapping):
        _put(found, "engine.params", config.get("params"), whole=True)
    decode = [
        r for r in _rows(run, "decode")
        if r.get("batch", 1) == 1 and _positive(r.get("context_len")) and _positive(r.get("ms"))
    ]  # fmt: skip
    if decode:
        step = min(decode, key=lambda r: r["context_len"])
        _put(found, "engine.decode_ms", step["ms"])
        _put(found, "engine.decode_context", step["context_len"], whole=True)
        _put(found, "engine.decode_bytes_per_s", step.get("bytes_per_s"))
    prefill = [
        r for r in _rows(run, "prefill")
        if _positive(r.get("prompt_len")) and _positive(r.get("ms"))
    ]  # fmt: skip
    if prefill:
        longest = max(prefill, key=lambda r: r["prompt_len"])
        _put(found, "engine.prefill_ms", longest["ms"])
        _put(found, "engine.prefill_tokens", longest["prompt_len"], whole=True)
        _put(found, "engine.prefill_flops_per_s", longest.get("flops_per_s"))
    peaks = run.get("peaks")
    if isinstance(peaks, Mapping):
        _put(found, "engine.peak_bandwidth", peaks.get("bandwidth_bytes_per_s"))
        _put(found, "engine.peak_flops", peaks.get("matmul_flops_per_s"))
    return found


def _spread(point: Mapping[str, Any], key: str, stat: str) -> float | None:
    spread = point.get(key)
    return _positive(spread.get(stat)) if isinstance(spread, Mapping) else None


def probe_values(run: Mapping[str, Any], run_id: int) -> dict[str, Value]:
    """The probe.* fields a stored probe run's result holds: its busiest point that
    completed requests (the highest concurrency; of two, the shorter prompt)."""
    found: dict[str, Value] = {"probe.run": str(run_id)}
    _text(found, "probe.model", run.get("model"))
    _date(found, "probe.date", run.get("created_at"))
    points = [
        p for p in _rows(run, "points")
        if _positive(p.get("concurrency")) and _positive(p.get("completed"))
        and _spread(p, "tpot_ms", "p50") is not None
    ]  # fmt: skip
    if not points:
        return found
    busiest = max(points, key=lambda p: (p["concurrency"], -(p.get("prompt_tokens") or 0)))
    _put(found, "probe.concurrency", busiest["concurrency"], whole=True)
    _put(found, "probe.prompt_tokens", busiest.get("prompt_tokens"), whole=True)
    _put(found, "probe.ttft_ms", _spread(busiest, "ttft_ms", "p50"))
    _put(found, "probe.tpot_ms", _spread(busiest, "tpot_ms", "p50"))
    _put(found, "probe.e2e_ms", _spread(busiest, "e2e_ms", "mean"))
    _put(found, "probe.output_tokens_per_s", busiest.get("output_tokens_per_s"))
    _put(found, "probe.requests_per_s", busiest.get("requests_per_s"))
    return found


def measured_values(
    engine: tuple[int, Mapping[str, Any]] | None, probe: tuple[int, Mapping[str, Any]] | None
) -> dict[str, Value]:
    """Every field the latest engine run and probe run (each (id, result), or None) hold."""
    found: dict[str, Value] = {}
    if engine is not None:
        found.update(engine_values(engine[1], engine[0]))
    if probe is not None:
        found.update(probe_values(probe[1], probe[0]))
    return found


def latest_measured(db) -> dict[str, Value]:
    """The fields of the database's latest engine run and latest probe run ({} when
    neither is stored)."""
    import sqlite3

    from drill.errors import StoreError
    from drill.serving.probe_evidence import latest_probe
    from drill.storage.engine_runs import latest_engine_run_with_id

    # a run that cannot be read (a database from before runs were kept, a damaged row)
    # leaves its questions waiting; it never stops the command
    try:
        engine = latest_engine_run_with_id(db)
    except (sqlite3.OperationalError, StoreError):
        engine = None
    try:
        probe = latest_probe(db)
    except StoreError:
        probe = None
    return measured_values(engine, None if probe is None else (int(probe["id"]), probe))
