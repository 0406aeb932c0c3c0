"""A probe as one self-contained web page (`kvdrill engine probe --html FILE`): what was
probed, the conventions, a table of every point, TTFT against prompt length and TPOT
against concurrency with the calculator's predictions, and the calculator's error.

The page loads nothing and runs nothing (drill.reports.html_page's head); every string
from the result (the server's model name, the URL, an error) passes through
`drill.text.printable` and `html.escape`. The same result gives the same file.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from drill.reports.charts import to_svg
from drill.reports.html_page import REPORT_CSS, page_head
from drill.reports.probe_charts import draw_tpot, draw_ttft
from drill.text import printable

TITLE = "kvdrill engine probe"


def _esc(text: Any) -> str:
    return html.escape(printable(str(text)))


def _ms(spread: Mapping[str, float] | None, key: str) -> str:
    return "-" if not spread else f"{spread[key]:.1f}"


def _num(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _table(head: list[str], rows: list[list[str]]) -> str:
    cells = "".join(f"<th>{h}</th>" for h in head)
    body = ["<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows]
    return "\n".join(["<table>", f"<thead><tr>{cells}</tr></thead>", "<tbody>", *body,
                      "</tbody>", "</table>"])  # fmt: skip


def render_page(result: Mapping[str, Any]) -> str:
    points = result.get("points") or []
    rows = []
    for p in points:
        served = p.get("prompt_tokens_served")
        t, o, i = p.get("ttft_ms"), p.get("tpot_ms"), p.get("itl_ms")
        rows.append([
            f"{round(served):,}" if served else f"~{p['prompt_tokens']:,}",
            str(p["concurrency"]), f"{p['completed']}/{p['sent']}",
            _ms(t, "p50"), _ms(t, "p90"), _ms(t, "p99"),
            _ms(o, "p50"), _ms(o, "p90"), _ms(o, "p99"),
            _ms(i, "p50"), _ms(i, "p90"), _ms(i, "p99"),
            _num(p.get("output_tokens_per_s")), _num(p.get("requests_per_s")),
            _num(p.get("goodput_requests_per_s")),
        ])  # fmt: skip
    head = ["prompt", "conc.", "done", "TTFT p50", "p90", "p99", "TPOT p50", "p90", "p99",
            "ITL p50", "p90", "p99", "tokens/s", "req/s", "goodput/s"]  # fmt: skip
    parts = [
        *page_head(TITLE, REPORT_CSS),
        f"<h1>{TITLE}</h1>",
        f'<p class="meta">{_esc(result.get("url"))} ({_esc(result.get("api"))}), model '
        f"{_esc(result.get('model'))}, {_esc(result.get('created_at') or '')}</p>",
        f'<p class="note">Times in ms. {_esc(result.get("convention"))}. '
        f"{_esc(result.get('token_counts'))}.</p>",
    ]
    for key, label in (("error", "Ended by an error"), ("stopped", "Stopped")):
        if result.get(key):
            parts.append(f'<p class="note">{label}: {_esc(result[key])}.</p>')
    parts += ["<section>", "<h2>Points</h2>", _table(head, rows), "</section>"]
    parts += [
        "<section>", "<h2>Time to first token against prompt length</h2>",
        to_svg(draw_ttft, "ttft", "median TTFT against prompt length", result), "</section>",
        "<section>", "<h2>Time per output token against concurrency</h2>",
        to_svg(draw_tpot, "tpot", "median TPOT against concurrency", result), "</section>",
    ]  # fmt: skip
    calc = result.get("calculator")
    if calc:
        calc_rows = [
            [f"{r['prompt_tokens']:,}", str(r["concurrency"]),
             _num(r.get("ttft_predicted_ms"), 1), _num(r.get("ttft_ms"), 1),
             _pct(r.get("ttft_error_pct")), _num(r.get("tpot_predicted_ms"), 1),
             _num(r.get("tpot_ms"), 1), _pct(r.get("tpot_error_pct"))]
            for r in calc["points"]
        ]  # fmt: skip
        parts += [
            "<section>", "<h2>The calculator against this server</h2>",
            f'<p class="note">{_esc(calc["preset"])} on {calc["tp"]} x {_esc(calc["gpu"])}, '
            f"MFU {calc['mfu']:.0%}, MBU {calc['mbu']:.0%} ({_esc(calc['efficiency_source'])}). "
            "Error = (predicted - measured median) / measured; TTFT compared at the lowest "
            "concurrency only. Mean absolute error: TTFT "
            f"{_abs(calc['ttft_mean_abs_error_pct'])}, TPOT "
            f"{_abs(calc['tpot_mean_abs_error_pct'])}.</p>",
            _table(["prompt", "conc.", "TTFT predicted", "measured", "error",
                    "TPOT predicted", "measured", "error"], calc_rows),
            "</section>",
        ]  # fmt: skip
    return "\n".join([*parts, "</body>", "</html>"]) + "\n"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:+.0f}%"


def _abs(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}%"
