"""Quote the user's own engine measurements beside a concept answer (no torch here).

A concept question may name claims (`evidence: [decode_memory_bound]`) that an
engine run can back. `quote_evidence` turns the latest stored run into one or two
lines with the device and the numbers, or, with no run yet, one line saying how
to get one.

CLAIM_NAMES is the one list of those claims: the bank's lint checks evidence names
against it, and engine_check judges exactly these (engine_check imports drill,
never the other way round).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

HOW_TO_MEASURE = (
    "Measure this on your own machine: `kvdrill engine run --quick` (needs torch; "
    "about a minute on a laptop CPU)."
)
MAX_LINES = 2
CLAIM_NAMES = (
    "decode_memory_bound",
    "prefill_compute_bound",
    "kv_formula_exact",
    "cache_beats_recompute",
    "batch_amortizes_decode",
)


def _where(run: dict[str, Any]) -> str:
    device = run.get("device_name") or run.get("device") or "your device"
    details = [str(run[key]) for key in ("dtype",) if run.get(key)]
    created = run.get("created_at")
    if isinstance(created, str) and len(created) >= 10:
        details.append(created[:10])
    return f"{device} ({', '.join(details)})" if details else device


def quote_evidence(claim_names: Sequence[str], run: dict[str, Any] | None) -> list[str]:
    """Up to two lines quoting `run`'s verdicts on `claim_names`, in the order given.

    No names: no lines. No run: one line on how to make one. A run that measured none
    of the named claims (an older run, an unknown name): no lines.
    """
    if not claim_names:
        return []
    if run is None:
        return [HOW_TO_MEASURE]
    claims = run.get("claims")
    if not isinstance(claims, dict):
        return []
    found = []
    for name in dict.fromkeys(claim_names):  # unique, in order
        claim = claims.get(name)
        if isinstance(claim, dict) and isinstance(claim.get("text"), str):
            found.append(claim)
    if not found:
        return []
    # each claim's text ends with its own verdict ("...: memory-bound"), so it is quoted
    # as it stands, whether or not the measurement bore the claim out
    first, *rest = found[:MAX_LINES]
    lines = [f"Your last engine run, on {_where(run)}: {first['text']}."]
    lines += [f"Same run: {claim['text']}." for claim in rest]
    return lines


def evidence_from_latest_run(db) -> Callable[[Sequence[str]], list[str]]:
    """The quiz's quoter: claim names -> lines quoting the database's latest engine run,
    and its latest probe (drill.serving.probe_evidence) where there is room."""

    def evidence_lines(claims: Sequence[str]) -> list[str]:
        from drill.serving.probe_evidence import latest_probe, quote_probe
        from drill.storage.engine_runs import latest_engine_run

        lines = list(quote_evidence(list(claims), latest_engine_run(db)))
        if len(lines) < MAX_LINES:  # the user's probe of their own server, where it speaks
            lines += quote_probe(list(claims), latest_probe(db))[: MAX_LINES - len(lines)]
        return lines

    return evidence_lines
