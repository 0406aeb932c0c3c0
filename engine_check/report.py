"""The result object of an engine check, and its plain-text rendering (no torch here).

The result is one JSON-ready dict; `kvdrill engine run --json` prints it and the
database stores it. Top-level keys (schema 3):

    schema, mode, device, device_name, dtype, torch_version, threads, wall_s,
    cpu_count, other_cpu_share (share of all CPUs' time other programs used during
    the run, or null where the OS does not tell), retry_s (seconds of timed work
    spent timing disturbed points again),
    config   {mode, model{...}, prompt_lens, ..., params, weight_bytes, decode_runner}
    peaks    {matmul_flops_per_s, matmul_from, bandwidth_bytes_per_s, bandwidth_from,
              kernels: [{name, kind, round, work, rate, median_rate, best_ms, median_ms,
              calls}], warnings: [str], spec: {name, bf16_dense_flops_per_s,
              hbm_bytes_per_s, memory_bytes} | null}
    prefill  [{prompt_len, ms, p90_ms, flops_per_s, mfu, bandwidth_util, predicted_ms, ...}]
    decode   [{context_len, ms, p90_ms, bytes_per_s, mbu, flops_util, predicted_ms, ...}]
    depth    [{layers, context_len, ms, ...}]: batch-1 decode through the first k blocks
    batch    [{batch, ms, p90_ms, tokens_per_s, predicted_ms, mbu, flops_util, ...}]
    batch_ridge  int | null: smallest batch the roofline calls compute-bound
    stream_pair {context_len, step_ms: [..], read_ms: [..], step_bytes, read_bytes,
              fraction, other_share, tries}: batch-1 decode steps and reads of the same
              weights timed in turns; fraction = the step's bytes/s over the read's,
              each at its fastest call (absent from runs stored before it existed)
    dtype_probe [{dtype, bytes, best_ms, kernel, bytes_per_s}]: one-row matmuls over
              the first blocks' largest weights in the run's dtype and the other width
              (absent from older runs)
    recompute [{position, cached_ms, recompute_ms, ...}]
    kv       {measured_bytes, formula_bytes, allocator_delta_bytes, shape, ...}
    claims   {name: {holds, verdict ("holds" | "does not hold" | "unsure"), text}}
    calculator  {mfu, mbu, decode_mfu, batch_mbu, run_mfu, run_mbu,
              efficiency_source, flops_ratio, bytes_ratio, points: [{kind ("ttft" |
              "tpot"), label, prompt_len | context_len + batch, predicted_ms,
              compute_ms, memory_ms, bound, measured_ms, error_pct, calibration}],
              ttft_mean_abs_error_pct, tpot_mean_abs_error_pct,
              ttft_held_out_error_pct, tpot_held_out_error_pct (over the points
              not marked calibration), ttft_target_pct, tpot_target_pct,
              notes: [str]}: the calculator's
              TTFT and TPOT (`kv --latency`) at every point
              (engine_check.calculator_check); a run stored without it gets it when shown

Every timed row (prefill, decode, depth, batch) also has best_ms (its fastest call),
other_share (other programs' share of the CPU while it was timed, or null) and tries
(how many times it was timed); recompute rows have cached_other_share and
recompute_other_share. Schema 2 runs lack these, `depth`, `retry_s` and claims'
"verdict"; they still load and render.

Schema 1 (before the peaks were settled) had `copy_bytes_per_s` where schema 2 has
`bandwidth_bytes_per_s`; `current_peaks` reads both.

`kvdrill engine run` adds `created_at` (UTC, ISO-8601) before storing and printing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drill.quantities.units import format_bytes, format_number, format_quantity
from drill.serving.estimates import decode_efficiencies_named
from engine_check.calculator_check import calculator_check
from engine_check.claims import UNSURE, compute_claims, verdict_of
from engine_check.config import ModelConfig
from engine_check.contention import BUSY_SHARE_WARN
from engine_check.roofline import ridge_batch, roofline_seconds

SCHEMA_VERSION = 3


def current_peaks(result: Mapping[str, Any]) -> dict[str, Any]:
    """The run's peaks with schema 2's keys, also for a run stored by schema 1."""
    peaks = dict(result["peaks"])
    if "bandwidth_bytes_per_s" not in peaks:
        peaks["bandwidth_bytes_per_s"] = peaks["copy_bytes_per_s"]
        peaks["bandwidth_from"] = "copy (counted as 2 x its size)"
        peaks["matmul_from"] = f"matmul {peaks['matmul_size']}^3"
    return peaks


def derive_rows(sections: Mapping[str, list[dict]], peaks: Mapping[str, Any]) -> dict:
    """Each point's rates, utilisations and roofline time from its FLOPs, bytes and median
    time and the settled peaks: {prefill, decode, batch, recompute} as new row lists."""
    flops_peak, bytes_peak = peaks["matmul_flops_per_s"], peaks["bandwidth_bytes_per_s"]

    def predicted_ms(flops: float, nbytes: float) -> float:
        return 1e3 * roofline_seconds(flops, nbytes, flops_peak, bytes_peak)

    def point(row: dict) -> dict:
        seconds = row["ms"] / 1e3
        flops_per_s, bytes_per_s = row["flops"] / seconds, row["bytes"] / seconds
        return {
            **row,
            "flops_per_s": flops_per_s,
            "bytes_per_s": bytes_per_s,
            "predicted_ms": predicted_ms(row["flops"], row["bytes"]),
        }

    prefill = [
        {**(p := point(r)), "mfu": p["flops_per_s"] / flops_peak,
         "bandwidth_util": p["bytes_per_s"] / bytes_peak}
        for r in sections["prefill"]
    ]  # fmt: skip
    decode, depth = (
        [{**(p := point(r)), "mbu": p["bytes_per_s"] / bytes_peak,
          "flops_util": p["flops_per_s"] / flops_peak}
         for r in sections.get(name) or []]
        for name in ("decode", "depth")
    )  # fmt: skip
    batch = [
        {**(p := point(r)), "mbu": p["bytes_per_s"] / bytes_peak,
         "flops_util": p["flops_per_s"] / flops_peak,
         "tokens_per_s": r["batch"] / (r["ms"] / 1e3)}
        for r in sections["batch"]
    ]  # fmt: skip
    recompute = [
        {**r,
         "cached_predicted_ms": predicted_ms(r["cached_flops"], r["cached_bytes"]),
         "recompute_predicted_ms": predicted_ms(r["recompute_flops"], r["recompute_bytes"])}
        for r in sections["recompute"]
    ]  # fmt: skip
    return {
        "prefill": prefill,
        "decode": decode,
        "depth": depth,
        "batch": batch,
        "recompute": recompute,
    }


def assemble_result(
    *,
    meta: dict,
    config: dict,
    peaks: dict,
    prefill: list[dict],
    decode: list[dict],
    batch: list[dict],
    recompute: list[dict],
    kv: dict,
    depth: list[dict] | None = None,
    stream_pair: dict | None = None,
    dtype_probe: list[dict] | None = None,
) -> dict:
    """The result dict: each point's derived figures, the ridge batch and the claims.

    `meta` carries mode, device, device_name, dtype, torch_version, threads, wall_s,
    cpu_count and other_cpu_share; the sections are the experiments' rows, `peaks` the
    settled peaks.
    """
    model = ModelConfig(**config["model"])
    sections = {"prefill": prefill, "decode": decode, "batch": batch, "recompute": recompute}
    rows = derive_rows({**sections, "depth": depth or []}, peaks)
    ridge = ridge_batch(
        model,
        config["batch_context_len"],
        kv["dtype_bytes"],
        peaks["matmul_flops_per_s"],
        peaks["bandwidth_bytes_per_s"],
    )
    result = {
        "schema": SCHEMA_VERSION,
        **meta,
        "config": config,
        "peaks": peaks,
        "prefill": rows["prefill"],
        "decode": rows["decode"],
        "depth": rows["depth"],
        "batch": rows["batch"],
        "batch_ridge": ridge,
        "recompute": rows["recompute"],
        "kv": kv,
    }
    if stream_pair is not None:
        result["stream_pair"] = stream_pair
    if dtype_probe is not None:
        result["dtype_probe"] = dtype_probe
    result["claims"] = compute_claims(result)
    result["calculator"] = calculator_check(result, peaks)
    return result


def calculator_of(result: Mapping[str, Any]) -> dict[str, Any] | None:
    """The run's calculator check, worked out now for a run stored without one (None
    where the run lacks what it needs)."""
    if result.get("calculator"):
        return dict(result["calculator"])
    try:
        return calculator_check(result, current_peaks(result))
    except (KeyError, TypeError, ValueError, IndexError, ZeroDivisionError):
        return None


def _error(value: float | None) -> str:
    """"+3%"; an error that rounds to zero is "+0%", never "-0%"."""
    return "-" if value is None else f"{round(value):+d}%"


def calculator_lines(check: Mapping[str, Any]) -> list[str]:
    """The calculator's predictions beside every measured point, its mean errors and
    where it is wrong."""
    decode = decode_efficiencies_named(check.get("decode_mfu"), check.get("batch_mbu"))
    lines = [
        f"(f) the calculator (kv --latency) against this run: the peaks above, MFU "
        f"{_pct(check['mfu'])} and MBU {_pct(check['mbu'])}{decode} "
        f"({check['efficiency_source']}; by the engine's counts {_pct(check['run_mfu'])} and "
        f"{_pct(check['run_mbu'])})"
    ]
    lines += _table(
        ["point", "calculator", "bound", "measured", "error"],
        [
            [p["label"] + (" *" if p["calibration"] else ""), _ms(p["predicted_ms"]),
             p["bound"], _ms(p["measured_ms"]), _error(p["error_pct"])]
            for p in check["points"]
        ],
    )  # fmt: skip
    for kind, key, target in (
        ("TTFT", "ttft_mean_abs_error_pct", "ttft_target_pct"),
        ("TPOT", "tpot_mean_abs_error_pct", "tpot_target_pct"),
    ):
        mape = check[key]
        if mape is not None:
            within = "within" if mape <= check[target] else "over"
            lines.append(
                f"  {kind} mean absolute error {mape:.1f}% ({within} the "
                f"{check[target]:.0f}% target){held_out(check, kind.lower())}"
            )
    lines.append("  * the points the efficiencies come from")
    lines += [f"  where it is wrong: {note}" for note in check.get("notes") or []]
    return lines


def held_out(check: Mapping[str, Any], kind: str) -> str:
    """"; 6.2% over the 6 points the efficiencies do not come from" (nothing for a check
    stored before those were counted apart)."""
    error = check.get(f"{kind}_held_out_error_pct")
    if error is None:
        return ""
    count = sum(1 for p in check["points"] if p["kind"] == kind and not p["calibration"])
    points = "the point" if count == 1 else f"the {count} points"
    return f"; {error:.1f}% over {points} the efficiencies do not come from"


def busy_warning(result: dict) -> str | None:
    """A warning line when other programs took a noticeable share of the CPU."""
    share = result.get("other_cpu_share")
    if share is None or share <= BUSY_SHARE_WARN:
        return None
    line = (
        f"warning: other programs used {share:.0%} of the CPU time during the run; "
        "they slowed it, so the numbers may be low"
    )
    if result.get("retry_s"):
        line += f" ({result['retry_s']:.1f} s spent timing disturbed points again)"
    unsure = [n for n, c in (result.get("claims") or {}).items() if verdict_of(c) == UNSURE]
    if unsure:
        line += f"; unsure verdicts: {', '.join(unsure)}"
    return line


def _share(row: Mapping[str, Any]) -> str:
    share = row.get("other_share")
    return "-" if share is None else f"{share:.0%}"


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    # first column left-aligned (labels), numbers right-aligned
    def line(cells: list[str]) -> str:
        parts = [cells[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)
        ]
        return "  " + "  ".join(parts).rstrip()

    return [line(headers), *(line(r) for r in rows)]


def _ms(value: float) -> str:
    return format_quantity(value / 1e3, "seconds")


def _pct(value: float) -> str:
    return format_quantity(value, "fraction")


def peak_lines(peaks: Mapping[str, Any]) -> list[str]:
    """The peaks, the kernel each came from, and any warning about them."""
    lines = [
        "peaks measured in this run (the best of every kernel, before and after the experiments)",
        f"  matmul {format_quantity(peaks['matmul_flops_per_s'], 'flop_per_s')} "
        f"({peaks['matmul_from']})    memory "
        f"{format_quantity(peaks['bandwidth_bytes_per_s'], 'bytes_per_s')} "
        f"({peaks['bandwidth_from']})",
    ]
    kernels = peaks.get("kernels") or []
    if kernels:
        best: dict[str, float] = {}
        for k in kernels:
            best[k["name"]] = max(best.get(k["name"], 0.0), k["rate"])
        dims = {
            k["name"]: "flop_per_s" if k["kind"] == "matmul" else "bytes_per_s" for k in kernels
        }
        shown = [f"{name} {format_quantity(rate, dims[name])}" for name, rate in best.items()]
        lines.append("  kernels: " + ", ".join(shown))
    lines += [f"  warning: {w}" for w in peaks.get("warnings") or []]
    return lines


def render_text(result: dict) -> str:
    """A human report: setup, peaks, one table per experiment, then the verdicts."""
    cfg, peaks = result["config"], current_peaks(result)
    model = cfg["model"]
    lines = [
        f"engine check ({result['mode']}) on {result['device_name']} [{result['device']}], "
        f"{result['dtype']}, torch {result['torch_version']}, {result['threads']} CPU threads",
    ]
    if result.get("created_at"):
        lines.append(f"run at {result['created_at']}, took {result['wall_s']:.0f} s")
    busy = busy_warning(result)
    if busy:
        lines.append(busy)
    lines.append(
        f"model: {model['layers']} layers, d_model {model['d_model']}, {model['heads']} heads / "
        f"{model['kv_heads']} KV heads x {model['head_dim']}, ffn {model['ffn']}, vocab "
        f"{model['vocab']}: {format_number(cfg['params'] / 1e6)} M params, "
        f"{format_bytes(cfg['weight_bytes'])} of weights; decode runs {cfg['decode_runner']}"
    )
    lines.append("")
    lines += peak_lines(peaks)
    spec = peaks.get("spec")
    if spec:
        lines.append(
            f"  spec sheet ({spec['name']}): "
            f"{format_quantity(spec['bf16_dense_flops_per_s'], 'flop_per_s')} dense bf16, "
            f"{format_quantity(spec['hbm_bytes_per_s'], 'bytes_per_s')} HBM"
        )

    lines += ["", "(a) prefill: time to first token, batch 1"]
    lines += _table(
        ["prompt", "median", "p90", "roofline", "FLOP/s", "MFU"],
        [
            [str(r["prompt_len"]), _ms(r["ms"]), _ms(r["p90_ms"]), _ms(r["predicted_ms"]),
             format_quantity(r["flops_per_s"], "flop_per_s"), _pct(r["mfu"])]
            for r in result["prefill"]
        ],
    )  # fmt: skip
    lines += ["", "(b) decode: time per output token, batch 1"]
    lines += _table(
        ["context", "median", "p90", "roofline", "bytes/step", "bandwidth", "MBU", "FLOP util"],
        [
            [str(r["context_len"]), _ms(r["ms"]), _ms(r["p90_ms"]), _ms(r["predicted_ms"]),
             format_bytes(r["bytes"]), format_quantity(r["bytes_per_s"], "bytes_per_s"),
             _pct(r["mbu"]), _pct(r["flops_util"])]
            for r in result["decode"]
        ],
    )  # fmt: skip
    if result.get("depth"):
        lines += ["", "(b') decode at batch 1 through the first blocks: the bytes grow, batch 1"]
        lines += _table(
            ["blocks", "median", "fastest", "bytes/step", "bandwidth", "MBU", "busy"],
            [
                [str(r["layers"]), _ms(r["ms"]), _ms(r["best_ms"]), format_bytes(r["bytes"]),
                 format_quantity(r["bytes_per_s"], "bytes_per_s"), _pct(r["mbu"]), _share(r)]
                for r in result["depth"]
            ],
        )  # fmt: skip
    pair = result.get("stream_pair")
    if pair:
        step_s, read_s = min(pair["step_ms"]) / 1e3, min(pair["read_ms"]) / 1e3
        lines += [
            "",
            f"(b'') a batch-1 step beside a read of the same weights, in turns: the step "
            f"streamed {format_quantity(pair['step_bytes'] / step_s, 'bytes_per_s')}, the "
            f"read {format_quantity(pair['read_bytes'] / read_s, 'bytes_per_s')}: "
            f"{_pct(pair['fraction'])} of the read stream (other programs "
            f"{'-' if pair.get('other_share') is None else _pct(pair['other_share'])} "
            f"of the CPU)",
        ]
    probe = result.get("dtype_probe")
    if probe:
        rates = ", ".join(
            f"{r['dtype']} {format_quantity(r['bytes_per_s'], 'bytes_per_s')} ({r['kernel']})"
            for r in probe
        )
        lines += [
            "",
            f"one-row matmuls over the first blocks' gate and up weights, by dtype: {rates}",
        ]
    ridge = result.get("batch_ridge")
    ridge_note = f"roofline ridge near batch {ridge}" if ridge else "no ridge in reach"
    lines += ["", f"(c) decode step vs batch, context {cfg['batch_context_len']} ({ridge_note})"]
    lines += _table(
        ["batch", "median", "roofline", "tokens/s", "MBU", "FLOP util", "busy"],
        [
            [str(r["batch"]), _ms(r["ms"]), _ms(r["predicted_ms"]),
             format_quantity(r["tokens_per_s"], "tokens_per_s"), _pct(r["mbu"]),
             _pct(r["flops_util"]), _share(r)]
            for r in result["batch"]
        ],
    )  # fmt: skip
    lines += ["", "(d) one token: cached decode step vs recomputing the prefix"]
    lines += _table(
        ["position", "cached", "recompute", "ratio"],
        [
            [str(r["position"]), _ms(r["cached_ms"]), _ms(r["recompute_ms"]),
             f"{r['recompute_ms'] / r['cached_ms']:.1f}x"]
            for r in result["recompute"]
        ],
    )  # fmt: skip
    kv = result["kv"]
    lines += ["", "(e) KV cache bytes"]
    lines.append(
        f"  allocated {kv['measured_bytes']:,} bytes ({format_bytes(kv['measured_bytes'])}), "
        f"formula {kv['formula_bytes']:,}"
        + (
            f", allocator grew {kv['allocator_delta_bytes']:,}"
            if kv.get("allocator_delta_bytes") is not None
            else ""
        )
    )
    check = calculator_of(result)
    if check:
        lines += ["", *calculator_lines(check)]
    lines += ["", "verdicts"]
    for name, claim in result["claims"].items():
        lines.append(f"  {name}: {verdict_of(claim)}")
        lines.append(f"    {claim['text']}")
    return "\n".join(lines) + "\n"
