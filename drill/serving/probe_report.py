"""A probe's result as text, and the calculator's predictions set against it.

No network and no httpx here: `engine probe` and any later reader of a stored probe
run use this. The calculator (drill.serving.estimates) predicts, for a --preset on a
--gpu with tensor parallelism --tp and its stated default efficiencies:

    TTFT at prompt length P   = estimates.ttft of one P-token prompt; compared with the
                                measured median TTFT at the lowest concurrency probed
                                (at higher ones a prompt also waits for the others)
    TPOT at concurrency C     = estimates.tpot of one decode step at batch C, each
                                sequence holding P + half the mean output tokens;
                                compared with the measured median TPOT at every point
    error                     = (predicted - measured) / measured, in percent
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drill.serving import estimates
from drill.serving.gpus import gpu_named
from drill.serving.kvmath import get_preset
from drill.serving.probe_stats import error_percent, mean_abs_error


def calculator_check(
    result: Mapping[str, Any], preset: str, gpu: str, tp: int = 1
) -> dict[str, Any]:
    """The calculator's TTFT and TPOT beside each measured point, with its error."""
    shape, spec = get_preset(preset), gpu_named(gpu)
    # a probe measures a server from outside: no engine run of this machine applies to it
    eff = estimates.default_efficiencies("a probe is compared with the calculator's defaults")
    points = [p for p in result.get("points") or [] if p.get("completed")]
    lowest = min((p["concurrency"] for p in points), default=None)
    rows = []
    for point in points:
        prompt = round(point.get("prompt_tokens_served") or point["prompt_tokens"])
        mean_out = point["output_tokens"] / point["completed"]
        row: dict[str, Any] = {"prompt_tokens": prompt, "concurrency": point["concurrency"]}
        ttft = point.get("ttft_ms")
        if point["concurrency"] == lowest and ttft:
            memory = estimates.memory_per_gpu(shape, spec, tp, max(1, prompt))
            predicted = estimates.ttft(shape, spec, memory, max(1, prompt), eff).seconds * 1000
            row |= {
                "ttft_predicted_ms": predicted,
                "ttft_ms": ttft["p50"],
                "ttft_error_pct": error_percent(predicted, ttft["p50"]),
            }
        tpot = point.get("tpot_ms")
        if tpot:
            context = max(1, prompt + round(mean_out / 2))
            memory = estimates.memory_per_gpu(shape, spec, tp, context)
            step = estimates.tpot(shape, spec, memory, point["concurrency"], eff)
            row |= {
                "tpot_predicted_ms": step.seconds * 1000,
                "tpot_ms": tpot["p50"],
                "tpot_error_pct": error_percent(step.seconds * 1000, tpot["p50"]),
            }
        rows.append(row)
    return {
        "preset": preset,
        "gpu": spec.key,
        "tp": tp,
        "mfu": eff.mfu,
        "mbu": eff.mbu,
        "efficiency_source": eff.source,
        "points": rows,
        "ttft_mean_abs_error_pct": mean_abs_error([r.get("ttft_error_pct") for r in rows]),
        "tpot_mean_abs_error_pct": mean_abs_error([r.get("tpot_error_pct") for r in rows]),
    }


def _ms(spread: Mapping[str, float] | None, key: str) -> str:
    return "-" if not spread else f"{spread[key]:.1f}"


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:+.0f}%"


def render_text(result: Mapping[str, Any]) -> str:
    """The probe as the terminal shows it: one row per point, then the calculator."""
    from drill.text import printable

    settings = result.get("settings") or {}
    slo = [
        f"TTFT <= {settings['slo_ttft_ms']:g} ms" if settings.get("slo_ttft_ms") else "",
        f"TPOT <= {settings['slo_tpot_ms']:g} ms" if settings.get("slo_tpot_ms") else "",
    ]
    slo_text = " and ".join(s for s in slo if s) or "none given: every completed request"
    lines = [
        f"Probe of {printable(str(result.get('url')))} ({result.get('api')}), "
        f"model {printable(str(result.get('model')))}",
        f"Times in ms: {result.get('convention')}.",
        f"Goodput: requests/s meeting {slo_text}.",
        "",
    ]
    head = (
        f"{'prompt':>7} {'conc':>4} {'done':>6} {'TTFT p50':>8} {'p90':>7} {'p99':>7} "
        f"{'TPOT p50':>8} {'p90':>6} {'p99':>6} {'ITL p50':>7} {'p90':>6} {'p99':>6} "
        f"{'tok/s':>8} {'req/s':>6} {'good/s':>6}"
    )
    lines.append(head)
    for p in result.get("points") or []:
        served = p.get("prompt_tokens_served")
        prompt = f"{round(served):,}" if served else f"~{p['prompt_tokens']:,}"
        t, o, i = p.get("ttft_ms"), p.get("tpot_ms"), p.get("itl_ms")
        lines.append(
            f"{prompt:>7} {p['concurrency']:>4} {p['completed']:>2}/{p['sent']:<3} "
            f"{_ms(t, 'p50'):>8} {_ms(t, 'p90'):>7} {_ms(t, 'p99'):>7} "
            f"{_ms(o, 'p50'):>8} {_ms(o, 'p90'):>6} {_ms(o, 'p99'):>6} "
            f"{_ms(i, 'p50'):>7} {_ms(i, 'p90'):>6} {_ms(i, 'p99'):>6} "
            f"{_rate(p.get('output_tokens_per_s')):>8} {_rate(p.get('requests_per_s')):>6} "
            f"{_rate(p.get('goodput_requests_per_s')):>6}"
        )
    if not result.get("points"):
        lines.append("  (no request completed)")
    lines.append(f"{str(result.get('token_counts') or '').capitalize()}.")
    calc = result.get("calculator")
    if calc:
        lines += [
            "",
            f"Calculator: {calc['preset']} on {calc['tp']} x {calc['gpu']}, MFU "
            f"{calc['mfu']:.0%}, MBU {calc['mbu']:.0%} ({calc['efficiency_source']}); "
            "error = (predicted - measured median) / measured",
            f"{'prompt':>7} {'conc':>4} {'TTFT pred':>10} {'meas':>8} {'error':>6} "
            f"{'TPOT pred':>10} {'meas':>8} {'error':>6}",
        ]
        for r in calc["points"]:
            def cell(key: str, width: int, row: Mapping[str, Any] = r) -> str:
                value = row.get(key)
                return f"{'-' if value is None else f'{value:.1f}':>{width}}"

            lines.append(
                f"{r['prompt_tokens']:>7,} {r['concurrency']:>4} {cell('ttft_predicted_ms', 10)} "
                f"{cell('ttft_ms', 8)} {_pct(r.get('ttft_error_pct')):>6} "
                f"{cell('tpot_predicted_ms', 10)} {cell('tpot_ms', 8)} "
                f"{_pct(r.get('tpot_error_pct')):>6}"
            )
        lines.append(
            f"Calculator's mean absolute error: TTFT {_abs(calc['ttft_mean_abs_error_pct'])}, "
            f"TPOT {_abs(calc['tpot_mean_abs_error_pct'])}."
        )
    if result.get("stopped"):
        lines.append(f"Note: {result['stopped']}; what was measured is kept.")
    return "\n".join(lines) + "\n"


def _abs(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}%"
