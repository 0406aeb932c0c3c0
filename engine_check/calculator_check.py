"""The calculator checked against this machine: `kvdrill kv --latency`'s formulas
(drill.serving.estimates) predict every prefill and decode point the run measured, and
the error says how far they are (no torch here).

The calculator is given what it would be given for a deployment of the run's model on
this device: the model's shape and parameter count, the device's peaks as this run
measured them (in place of a spec sheet), and this run's efficiencies, taken where
`kv --latency` takes them from a stored run (prefill at the longest prompt, decode at
batch 1 and the shortest context). An efficiency means something only against the
count it divides, so they are taken in the calculator's own counts:

    MFU = its FLOPs of that prefill / (measured TTFT · matmul peak)
    MBU = its bytes of that decode step / (measured TPOT · bandwidth peak)

The run's own MFU and MBU (by the engine's counts, engine_check.roofline) are kept
beside them. The calculator counts 2 · params FLOPs per prompt token and reads every
parameter once per step; the engine counts the matmuls a forward runs (no FLOPs for
the embedding lookup, the output head for the last prompt token only) and reads only
the embedding rows it looks up. The check reports both ratios.

Each point: predicted = estimates.ttft or estimates.tpot, measured = the point's
median, error = (predicted - measured) / measured. TTFT over the prefill points; TPOT
over batch-1 decode at each context and the batch sweep. The mean absolute error is
set against the targets a serving simulator is held to (TTFT_TARGET_PCT, TPOT_TARGET_PCT).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drill.serving import estimates
from drill.serving.gpus import GpuSpec
from drill.serving.kvmath import ModelShape, canonical_dtype
from drill.serving.probe_stats import error_percent, mean_abs_error

TTFT_TARGET_PCT = 15.0
TPOT_TARGET_PCT = 10.0


def model_shape(result: Mapping[str, Any]) -> ModelShape:
    """The run's model as the calculator sees a preset."""
    model = result["config"]["model"]
    return ModelShape(
        name="engine-check",
        display_name="the engine check's model",
        layers=model["layers"],
        q_heads=model["heads"],
        kv_heads=model["kv_heads"],
        head_dim=model["head_dim"],
        hidden=model["d_model"],
        dtype=canonical_dtype(result["dtype"]),
        params=result["config"]["params"],
    )


def device_of(result: Mapping[str, Any], peaks: Mapping[str, Any]) -> GpuSpec:
    """This run's device with its measured peaks where a spec sheet's figures would go
    (its memory is left at zero: the check sizes no deployment)."""
    return GpuSpec(
        key="this-run",
        pattern="",
        name=str(result.get("device_name") or "this device"),
        bf16_dense_tflops=peaks["matmul_flops_per_s"] / 1e12,
        hbm_tb_per_s=peaks["bandwidth_bytes_per_s"] / 1e12,
        memory_gib=0.0,
    )



def calculator_check(result: Mapping[str, Any], peaks: Mapping[str, Any]) -> dict[str, Any]:
    """{mfu, mbu, decode_mfu, batch_mbu, run_mfu, run_mbu, efficiency_source,
    flops_ratio, bytes_ratio, points: [{kind, label, prompt_len | context_len + batch,
    predicted_ms, compute_ms, memory_ms, bound, measured_ms, error_pct, calibration}],
    ttft_mean_abs_error_pct, tpot_mean_abs_error_pct, ttft_held_out_error_pct,
    tpot_held_out_error_pct, ttft_target_pct, tpot_target_pct, notes: [str]}"""
    shape, device = model_shape(result), device_of(result, peaks)
    prefill = sorted(result["prefill"], key=lambda r: r["prompt_len"])
    decode = sorted(result["decode"], key=lambda r: r["context_len"])
    batch_context = result["config"]["batch_context_len"]
    batches = sorted(result.get("batch") or [], key=lambda r: r["batch"])

    def memory(seq_len: int) -> estimates.Memory:
        return estimates.memory_per_gpu(shape, device, 1, seq_len)

    # efficiencies in the calculator's counts, where `kv --latency` takes them from a run
    unit = estimates.Efficiencies(1.0, 1.0, "the peaks themselves")
    longest, shortest = prefill[-1], decode[0]
    at_peak_ttft = estimates.ttft(shape, device, memory(longest["prompt_len"]),
                                  longest["prompt_len"], unit)  # fmt: skip
    at_peak_tpot = estimates.tpot(shape, device, memory(shortest["context_len"]), 1, unit)

    def at_peak_batch(row: Mapping) -> estimates.StepTime:
        return estimates.tpot(shape, device, memory(batch_context), row["batch"], unit)

    small, large = estimates.decode_points(batches, result.get("batch_ridge"))
    eff = estimates.Efficiencies(
        min(1.0, at_peak_ttft.compute_s / (longest["ms"] / 1e3)),
        min(1.0, at_peak_tpot.memory_s / (shortest["ms"] / 1e3)),
        f"this run: prefill of {longest['prompt_len']:,} tokens and decode at context "
        f"{shortest['context_len']:,}, batch 1"
        f"{estimates.decode_points_named(small, large)}, in the calculator's counts",
        decode_mfu=None if large is None
        else min(1.0, at_peak_batch(large).compute_s / (large["ms"] / 1e3)),
        batch_mbu=None if small is None
        else min(1.0, at_peak_batch(small).memory_s / (small["ms"] / 1e3)),
    )  # fmt: skip

    points: list[dict[str, Any]] = []

    def add(kind: str, label: str, step: estimates.StepTime, row: Mapping, calibration: bool,
            **where: int) -> None:  # fmt: skip
        predicted = step.seconds * 1e3
        points.append(
            {
                "kind": kind,
                "label": label,
                **where,
                "predicted_ms": predicted,
                "compute_ms": step.compute_s * 1e3,
                "memory_ms": step.memory_s * 1e3,
                "bound": step.bound,
                "measured_ms": row["ms"],
                "error_pct": error_percent(predicted, row["ms"]),
                "calibration": calibration,
            }
        )

    for row in prefill:
        p = row["prompt_len"]
        step = estimates.ttft(shape, device, memory(p), p, eff)
        add("ttft", f"prefill {p:,}", step, row, row is longest, prompt_len=p)
    for row in decode:
        c = row["context_len"]
        step = estimates.tpot(shape, device, memory(c), 1, eff)
        add("tpot", f"decode context {c:,}", step, row, row is shortest, context_len=c, batch=1)
    for row in batches:
        b = row["batch"]
        step = estimates.tpot(shape, device, memory(batch_context), b, eff)
        add("tpot", f"batch {b} at {batch_context:,}", step, row, row is small or row is large,
            context_len=batch_context, batch=b)  # fmt: skip

    ttft_mape = mean_abs_error([p["error_pct"] for p in points if p["kind"] == "ttft"])
    tpot_mape = mean_abs_error([p["error_pct"] for p in points if p["kind"] == "tpot"])
    held_out = {
        kind: mean_abs_error(
            [p["error_pct"] for p in points if p["kind"] == kind and not p["calibration"]]
        )
        for kind in ("ttft", "tpot")
    }
    flops_ratio = at_peak_ttft.flops / longest["flops"]
    bytes_ratio = at_peak_tpot.bytes / shortest["bytes"]
    check = {
        "mfu": eff.mfu,
        "mbu": eff.mbu,
        "decode_mfu": eff.decode_mfu,
        "batch_mbu": eff.batch_mbu,
        "run_mfu": longest.get("mfu"),
        "run_mbu": shortest.get("mbu"),
        "efficiency_source": eff.source,
        "flops_ratio": flops_ratio,
        "bytes_ratio": bytes_ratio,
        "points": points,
        "ttft_mean_abs_error_pct": ttft_mape,
        "tpot_mean_abs_error_pct": tpot_mape,
        "ttft_held_out_error_pct": held_out["ttft"],
        "tpot_held_out_error_pct": held_out["tpot"],
        "ttft_target_pct": TTFT_TARGET_PCT,
        "tpot_target_pct": TPOT_TARGET_PCT,
    }
    check["notes"] = where_wrong(check)
    return check


def _signed(value: float) -> str:
    return f"{value:+.0f}%"


def _timed_twice(points: list[dict[str, Any]]) -> tuple[dict, dict] | None:
    """The batch-1 decode point and the batch sweep's batch 1, where both measured the
    same step (one context)."""
    by_context = {
        p["context_len"]: p for p in points
        if p["kind"] == "tpot" and p["label"].startswith("decode")
    }  # fmt: skip
    for p in points:
        if p["kind"] == "tpot" and p["label"].startswith("batch") and p["batch"] == 1:
            if p["context_len"] in by_context:
                return by_context[p["context_len"]], p
    return None


def _near_ridge(point: Mapping[str, Any]) -> bool:
    """Whether a point's compute and memory times are within a factor of 1.5 of each other."""
    low, high = sorted((point["compute_ms"], point["memory_ms"]))
    return high <= 1.5 * low


def where_wrong(check: Mapping[str, Any]) -> list[str]:
    """Plain sentences on where the calculator's model departs from the measurements."""
    notes = [
        f"counting: the calculator's 2·params FLOPs per prompt token are "
        f"{_signed((check['flops_ratio'] - 1) * 100)} against the matmuls the model runs "
        f"(the embedding is a lookup, and prefill needs the output head for the last token "
        f"only); reading every parameter per step is {_signed((check['bytes_ratio'] - 1) * 100)}"
        f" against the bytes a step reads (only the looked-up embedding rows). Taking the "
        f"efficiencies in its own counts absorbs both at the calibration points"
    ]
    for kind, target_key, mape_key in (
        ("ttft", "ttft_target_pct", "ttft_mean_abs_error_pct"),
        ("tpot", "tpot_target_pct", "tpot_mean_abs_error_pct"),
    ):
        mape, target = check[mape_key], check[target_key]
        if mape is None or mape <= target:
            continue
        off = [
            p for p in check["points"]
            if p["kind"] == kind and p["error_pct"] is not None and abs(p["error_pct"]) > target
        ]  # fmt: skip
        shown = "; ".join(
            f"{p['label']}: {p['predicted_ms']:.0f} ms ({p['bound']}-bound) against "
            f"{p['measured_ms']:.0f} ms, {_signed(p['error_pct'])}"
            for p in off
        )
        notes.append(f"{kind.upper()} misses its {target:.0f}% target at {shown}")
        if kind == "tpot":
            one = mean_abs_error([p["error_pct"] for p in check["points"]
                             if p["kind"] == "tpot" and p.get("batch") == 1])  # fmt: skip
            more = mean_abs_error([p["error_pct"] for p in check["points"]
                              if p["kind"] == "tpot" and p.get("batch", 1) > 1])  # fmt: skip
            if one is not None and more is not None:
                notes.append(
                    f"TPOT at batch 1 is off by {one:.1f}% on average, over the batch "
                    f"sweep by {more:.1f}%"
                )
    twice = _timed_twice(check["points"])
    if twice:
        first, second = twice
        spread = abs(first["measured_ms"] - second["measured_ms"]) / min(
            first["measured_ms"], second["measured_ms"]
        )
        notes.append(
            f"the run's own spread: the same step ({first['label']}, {second['label']}) "
            f"measured {first['measured_ms']:.1f} and {second['measured_ms']:.1f} ms at two "
            f"moments, {spread:.0%} apart: errors of that size are the measurements' own noise"
        )
    tpot_off = [
        p for p in check["points"]
        if p["kind"] == "tpot" and p.get("batch", 1) > 1 and p["error_pct"] is not None
        and abs(p["error_pct"]) > TPOT_TARGET_PCT
    ]  # fmt: skip
    near = [p for p in tpot_off if "compute_ms" in p and _near_ridge(p)]
    if near:
        notes.append(
            "near the ridge, where a decode step's compute and its reads take about as long "
            "(" + "; ".join(f"batch {p['batch']}: {p['compute_ms']:.0f} and "
                            f"{p['memory_ms']:.0f} ms" for p in near)
            + "), the roofline takes the slower of the two, as if the other were hidden under "
            "it; measured, they overlap only in part, so the calculator is "
            + ("low" if all(p["error_pct"] < 0 for p in near) else "off")
            + " for batches " + ", ".join(str(p["batch"]) for p in near)
        )  # fmt: skip
    under = [
        p for p in tpot_off
        if p not in near and p["bound"] == "memory" and p["error_pct"] < 0
    ]  # fmt: skip
    if under:
        rate = (
            "the batch MBU" if check.get("batch_mbu") is not None
            else "batch 1's MBU"
        )  # fmt: skip
        notes.append(
            f"below the ridge the calculator takes a decode step as the weights' read time at "
            f"{rate} whatever the batch (the roofline's max of compute and memory, compute "
            "hidden under the reads); measured, each added sequence costs time of its own, so "
            "the calculator is low for batches " + ", ".join(str(p["batch"]) for p in under)
        )
    above = [p for p in tpot_off if p not in near and p["bound"] == "compute"]
    mfu = (
        "the decode MFU of its largest batch" if check.get("decode_mfu") is not None
        else "prefill's MFU"
    )  # fmt: skip
    for sign, how in ((-1, "do not reach here, so it is low"), (1, "beat here, so it is high")):
        mine = [str(p["batch"]) for p in above if p["error_pct"] * sign > 0]
        if mine:
            notes.append(
                f"above the ridge it charges a decode step at {mfu}, which the few-row "
                f"matmuls of a decode step {how} for batches {', '.join(mine)}"
            )
    return notes
