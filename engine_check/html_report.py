"""An engine run as one self-contained web page (`kvdrill engine run --html FILE`, `engine
show --html FILE`): the setup, the peaks and the kernels they came from, the roofline
with every prefill, decode and batch point, TTFT against prompt length and TPOT against
batch size with the roofline's predictions, and the verdicts. No torch here.

The page loads nothing and runs nothing (the head of `drill.reports.html_page`); every string
from the result passes through `drill.text.printable` and `html.escape`. It is a pure
function of the result: the same stored run gives the same file.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from drill.quantities.units import format_bytes, format_quantity
from drill.reports.html_page import REPORT_CSS, page_head
from drill.serving.estimates import decode_efficiencies_named
from drill.text import printable
from engine_check.claims import FAILS, HOLDS, verdict_of
from engine_check.report import (
    busy_warning,
    calculator_of,
    current_peaks,
    held_out,
)

TITLE = "kvdrill engine check"
ROUNDS = ("before", "after", "again")

_CSS = REPORT_CSS + """
.warn { color: #9a3c00; }
tr.best td { font-weight: bold; }
ul.verdicts { padding-left: 1.2em; }
ul.verdicts li { margin: .4em 0; }
.holds { color: #00704f; font-weight: bold; }
.fails { color: #b34700; font-weight: bold; }
.unsure { color: #6b6b6b; font-weight: bold; }
@media print { body { max-width: none; margin: 0; padding: 0; font-size: 9.5pt; } }
"""


def _esc(text: Any) -> str:
    return html.escape(printable(str(text)))


def _section(title: str, body: str, note: str = "") -> str:
    parts = ["<section>", f"<h2>{title}</h2>", body]
    if note:
        parts.append(f'<p class="note">{note}</p>')
    return "\n".join([*parts, "</section>"])


def _rate(kind: str, value: float) -> str:
    return format_quantity(value, "flop_per_s" if kind == "matmul" else "bytes_per_s")


def kernel_table(peaks: Mapping[str, Any]) -> str:
    """One row per kernel: its best rate in each round, the peak's kernels in bold."""
    kernels: Sequence[Mapping[str, Any]] = peaks.get("kernels") or []
    rounds = [r for r in ROUNDS if any(k["round"] == r for k in kernels)]
    names = list(dict.fromkeys(k["name"] for k in kernels))
    sources = {peaks["matmul_from"], peaks["bandwidth_from"]}
    head = '<th class="text">kernel</th><th class="text">counts</th>' + "".join(
        f"<th>{r}</th>" for r in rounds
    )
    body = []
    for name in names:
        mine = [k for k in kernels if k["name"] == name]
        kind = mine[0]["kind"]
        work = (
            f"{format_quantity(mine[0]['work'], 'flop')}"
            if kind == "matmul"
            else f"{format_bytes(mine[0]['work'])} moved"
        )
        cells = []
        for r in rounds:
            rates = [k["rate"] for k in mine if k["round"] == r]
            cells.append(f"<td>{_rate(kind, max(rates)) if rates else '-'}</td>")
        best = ' class="best"' if name in sources else ""
        body.append(
            f'<tr{best}><td class="text">{_esc(name)}</td><td class="text">{work}</td>'
            + "".join(cells)
            + "</tr>"
        )
    return "\n".join(
        ["<table>", f"<thead><tr>{head}</tr></thead>", "<tbody>", *body, "</tbody>", "</table>"]
    )


def peaks_section(result: Mapping[str, Any]) -> str:
    peaks = current_peaks(result)
    lines = [
        f"<p>Matmul peak <b>{format_quantity(peaks['matmul_flops_per_s'], 'flop_per_s')}</b>"
        f" ({_esc(peaks['matmul_from'])}); memory bandwidth peak "
        f"<b>{format_quantity(peaks['bandwidth_bytes_per_s'], 'bytes_per_s')}</b>"
        f" ({_esc(peaks['bandwidth_from'])}).</p>"
    ]
    spec = peaks.get("spec")
    if spec:
        lines.append(
            f'<p class="note">Spec sheet ({_esc(spec["name"])}): '
            f"{format_quantity(spec['bf16_dense_flops_per_s'], 'flop_per_s')} dense bf16, "
            f"{format_quantity(spec['hbm_bytes_per_s'], 'bytes_per_s')}.</p>"
        )
    if peaks.get("kernels"):
        lines.append(kernel_table(peaks))
    lines += [f'<p class="note warn">{_esc(w)}</p>' for w in peaks.get("warnings") or []]
    note = (
        "Each kernel is timed for a while and its fastest call counts; each peak is the best"
        " kernel of every round, before and after the experiments (again: measured once more"
        " because a point beat it). A copy of n bytes moves 3n on a CPU (each store first"
        " reads its line), 2n on a GPU; a triad 4n or 3n."
    )
    return _section("Peaks measured in this run", "\n".join(lines), note)


def calculator_section(result: Mapping[str, Any]) -> str:
    """The calculator's TTFT and TPOT beside every measured point, with its errors."""
    check = calculator_of(result)
    if not check:
        return ""
    rows = [
        f'<tr><td class="text">{_esc(p["label"])}{" *" if p["calibration"] else ""}</td>'
        f"<td>{format_quantity(p['predicted_ms'] / 1e3, 'seconds')}</td>"
        f'<td class="text">{_esc(p["bound"])}</td>'
        f"<td>{format_quantity(p['measured_ms'] / 1e3, 'seconds')}</td>"
        f"<td>{'-' if p['error_pct'] is None else format(round(p['error_pct']), '+d') + '%'}"
        "</td></tr>"
        for p in check["points"]
    ]
    head = (
        '<th class="text">point</th><th>calculator</th><th class="text">bound</th>'
        "<th>measured</th><th>error</th>"
    )
    summary = []
    for kind, key, target in (
        ("TTFT", "ttft_mean_abs_error_pct", "ttft_target_pct"),
        ("TPOT", "tpot_mean_abs_error_pct", "tpot_target_pct"),
    ):
        if check[key] is not None:
            within = "within" if check[key] <= check[target] else "over"
            summary.append(
                f"{kind} mean absolute error <b>{check[key]:.1f}%</b> ({within} the "
                f"{check[target]:.0f}% target){_esc(held_out(check, kind.lower()))}"
            )
    decode = decode_efficiencies_named(check.get("decode_mfu"), check.get("batch_mbu"))
    body = "\n".join(
        [
            f"<p>MFU {format_quantity(check['mfu'], 'fraction')}, MBU "
            f"{format_quantity(check['mbu'], 'fraction')}{_esc(decode)}: "
            f"{_esc(check['efficiency_source'])}"
            f" (by the engine's counts {format_quantity(check['run_mfu'], 'fraction')} and "
            f"{format_quantity(check['run_mbu'], 'fraction')}).</p>",
            "<table>", f"<thead><tr>{head}</tr></thead>", "<tbody>", *rows, "</tbody>",
            "</table>",
            f"<p>{'; '.join(summary)}.</p>",
            '<ul class="verdicts">',
            *(f"<li>{_esc(note)}</li>" for note in check.get("notes") or []),
            "</ul>",
        ]
    )  # fmt: skip
    note = (
        "The formulas of <code>kvdrill kv --latency</code> with this run's peaks in place of a"
        " spec sheet and this run's efficiencies (* marks the points they come from): TTFT"
        " and TPOT are the slower of FLOPs / (peak · MFU) and bytes / (peak · MBU), a decode"
        " step at its own MFU (from the largest batch, where that batch is compute-bound) and"
        " a batch of several sequences at its own MBU (from the smallest batch above 1)."
    )
    return _section("The calculator against this run", body, note)


def verdicts_section(result: Mapping[str, Any]) -> str:
    items = []
    for name, claim in (result.get("claims") or {}).items():
        verdict = verdict_of(claim)
        css = {HOLDS: "holds", FAILS: "fails"}.get(verdict, "unsure")
        mark = f'<span class="{css}">{_esc(verdict)}</span>'
        items.append(f"<li><b>{_esc(name)}</b>: {mark}<br>{_esc(claim['text'])}</li>")
    note = (
        "Which limit a step hits is an experiment: the bytes a step reads and the FLOPs it"
        " does are varied apart and the time is fitted to each as a power law over all the"
        " points. MBU and MFU say how close the kernels come to the peaks, not which limit"
        " binds. A verdict the points do not bear out while other programs kept the CPU"
        " busy is unsure."
    )
    return _section("Verdicts", '<ul class="verdicts">' + "\n".join(items) + "</ul>", note)


def chart_sections(result: Mapping[str, Any]) -> list[str]:
    from drill.reports.charts import to_svg
    from engine_check.charts import draw_roofline, draw_tpot, draw_ttft

    cfg = result["config"]
    return [
        _section(
            "Roofline",
            to_svg(draw_roofline, "roofline", "the roofline with every measured point", result),
            "Each point is one measurement: its FLOPs per byte moved across, the FLOP/s it"
            " reached up. The roof is the lower of the matmul peak and bandwidth x intensity;"
            " left of the ridge work is memory-bound, right of it compute-bound. Labels are"
            " prompt tokens, decode context and batch size.",
        ),
        _section(
            "Time to first token",
            to_svg(draw_ttft, "ttft", "time to first token against prompt length", result),
            "Prefill of one prompt: the dashed line is the roofline's time, max(FLOPs / matmul"
            " peak, bytes / bandwidth peak).",
        ),
        _section(
            "Time per decode step by batch",
            to_svg(draw_tpot, "tpot", "time per decode step against batch size", result),
            f"Every sequence at context {cfg['batch_context_len']:,}. Below the ridge a step"
            " costs about the weights' read time whatever the batch, so tokens/s grows"
            " with it.",
        ),
    ]


def render_page(result: Mapping[str, Any]) -> str:
    """The page for a result object (as `engine run --json` prints it)."""
    model, cfg = result["config"]["model"], result["config"]
    meta = (
        f"{_esc(result['device_name'])} [{_esc(result['device'])}], {_esc(result['dtype'])},"
        f" torch {_esc(result['torch_version'])}, {result['threads']} CPU threads;"
        f" {_esc(result['mode'])} run"
    )
    if result.get("created_at"):
        when = str(result["created_at"])[:16].replace("T", " ")
        meta += f" at {_esc(when)} UTC, {result['wall_s']:.0f} s"
    model_line = (
        f"Model: {model['layers']} layers, d_model {model['d_model']}, {model['heads']} heads /"
        f" {model['kv_heads']} KV heads x {model['head_dim']}, ffn {model['ffn']}, vocab"
        f" {model['vocab']}; {format_bytes(cfg['weight_bytes'])} of weights; decode runs"
        f" {_esc(cfg['decode_runner'])}."
    )
    busy = busy_warning(result)
    out = [
        *page_head(TITLE, _CSS),
        f"<header><h1>{TITLE}</h1>",
        f'<p class="meta">{meta}</p>',
        f'<p class="meta">{model_line}</p>',
        *([f'<p class="warn">{_esc(busy)}</p>'] if busy else []),
        "</header>",
        peaks_section(result),
        *chart_sections(result),
        *([section] if (section := calculator_section(result)) else []),
        verdicts_section(result),
        "</body>",
        "</html>",
    ]
    return "\n".join(out) + "\n"
