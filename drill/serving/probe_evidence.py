"""Quote the user's latest probe of a serving engine beside a concept answer, as
drill.serving.evidence quotes an engine run (no network, no httpx here).

A probe speaks to one claim: `batch_amortizes_decode`, from its concurrency sweep. At the
prompt length with the widest sweep, output tokens/s and median TPOT at the lowest and
the highest concurrency are quoted as measured, whichever way they went.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from drill.text import printable

CLAIMS = ("batch_amortizes_decode",)


def quote_probe(claim_names: Sequence[str], run: Mapping[str, Any] | None) -> list[str]:
    """One line from `run` when it speaks to one of `claim_names`; else none."""
    if run is None or not any(name in CLAIMS for name in claim_names):
        return []
    by_prompt: dict[int, list[Mapping[str, Any]]] = {}
    for point in run.get("points") or []:
        if point.get("output_tokens_per_s") and point.get("tpot_ms"):
            by_prompt.setdefault(point["prompt_tokens"], []).append(point)
    sweeps = [sorted(ps, key=lambda p: p["concurrency"]) for ps in by_prompt.values()]
    sweeps = [s for s in sweeps if len(s) > 1]
    if not sweeps:
        return []
    sweep = max(sweeps, key=lambda s: (s[-1]["concurrency"] / s[0]["concurrency"], -len(s)))
    low, high = sweep[0], sweep[-1]
    model = " ".join(printable(str(run.get("model") or "your server")).split())[:60]
    when = str(run.get("created_at") or "")[:10]
    return [
        f"Your probe of {model}{' on ' + when if when else ''}: from concurrency "
        f"{low['concurrency']} to {high['concurrency']} at ~{low['prompt_tokens']:,}-token "
        f"prompts, output went from {low['output_tokens_per_s']:.1f} to "
        f"{high['output_tokens_per_s']:.1f} tokens/s while median TPOT went from "
        f"{low['tpot_ms']['p50']:.1f} to {high['tpot_ms']['p50']:.1f} ms."
    ]


def latest_probe(db) -> Mapping[str, Any] | None:
    """The latest stored probe run, or None (none stored, or a database from before
    probes were kept, opened read-only)."""
    import sqlite3

    from drill.storage.probe_runs import probe_runs

    try:
        runs = probe_runs(db, 1)
    except sqlite3.OperationalError:
        return None
    return runs[0] if runs else None
