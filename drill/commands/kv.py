"""`kvdrill kv`: the KV-cache byte calculator, from flags, a model preset or a config.json."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

import click

from drill.commands.options import db_option
from drill.quantities.units import format_bytes, format_number, format_quantity
from drill.serving import hfconfig, kvmath


class _UsageError(click.ClickException):
    """Options that do not fit together: one `Error: ...` line and exit status 2."""

    exit_code = 2


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--preset", metavar="NAME", help="A real model's shape (see --list-presets).")
@click.option("--config", "config_path", metavar="PATH", help="A Hugging Face config.json.")
@click.option("--layers", metavar="N", help="Layers, for a shape given by hand.")
@click.option("--kv-heads", metavar="N", help="KV heads (not query heads), by hand.")
@click.option("--head-dim", metavar="N", help="Width of one head, by hand.")
@click.option("--seq", metavar="N", help="Live tokens per request.")
@click.option("--dtype", metavar="D", help="Cache dtype: bf16, fp16, fp8, int8, int4, fp32...")
@click.option(
    "--requests", metavar="N", default="1", show_default=True, help="Concurrent requests."
)
@click.option("--reserve", metavar="N", help="Tokens reserved per request, to show the waste.")
@click.option("--ignore-window", is_flag=True, help="Count every layer at full length.")
@click.option("--list-presets", is_flag=True, help="List the model presets.")
@click.option("--list-gpus", is_flag=True, help="List the GPUs --gpu takes, with their figures.")
@click.option("--gpu", metavar="NAME", help="Per-GPU figures on this GPU (h100, a100-80gb, ...).")
@click.option("--tp", metavar="N", help="Tensor-parallel GPUs (with --gpu; default 1).")
@click.option("--params", metavar="N", help="Parameters in all (8.03B), instead of the model's.")
@click.option(
    "--active-params", metavar="N", help="Parameters one token passes through (mixture of experts)."
)
@click.option("--weights-dtype", metavar="D", help="Dtype of the weights (default: the model's).")
@click.option("--latency", is_flag=True, help="Also TTFT, TPOT and the SLO batch (with --gpu).")
@click.option("--prompt", metavar="N", help="Prompt tokens for TTFT (default: --seq).")
@click.option(
    "--slo-tpot", metavar="TIME", help="TPOT target, e.g. 50ms: the largest batch that meets it."
)
@click.option("--mfu", metavar="F", help="Matmul efficiency to use instead of your engine run's.")
@click.option("--mbu", metavar="F", help="Memory-bandwidth efficiency instead of your run's.")
@click.option(
    "--efficiencies",
    metavar="FROM",
    help="auto (your latest engine run on this GPU, else defaults), defaults, or run:ID.",
)
@db_option("Database whose latest engine run gives the efficiencies.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (or list).")
def kv(
    preset: str | None,
    config_path: str | None,
    layers: str | None,
    kv_heads: str | None,
    head_dim: str | None,
    seq: str | None,
    dtype: str | None,
    requests: str,
    reserve: str | None,
    ignore_window: bool,
    list_presets: bool,
    list_gpus: bool,
    gpu: str | None,
    tp: str | None,
    params: str | None,
    active_params: str | None,
    weights_dtype: str | None,
    latency: bool,
    prompt: str | None,
    slo_tpot: str | None,
    mfu: str | None,
    mbu: str | None,
    efficiencies: str | None,
    db_path: Path | None,
    as_json: bool,
) -> None:
    """Estimate KV-cache bytes: 2 · layers · kv_heads · head_dim · seq · dtype_bytes × requests.

    Give the model as --preset NAME, --config PATH, or --layers/--kv-heads/--head-dim
    (dtype fp16 unless --dtype says otherwise). Sliding windows and multi-head latent
    attention (DeepSeek) are taken into account and explained. Allocator overhead and
    kernel workspace are not counted.

    \b
    --json prints one object; byte counts are integers:
      bytes_per_token, bytes_per_request, total_bytes, cached_tokens (tokens held by a
      windowed layer, seq_len when no window applies), seq_len, requests, dtype,
      dtype_bytes, formula, notes (list of strings), shape (the model fields used:
      name, display_name, layers, q_heads, kv_heads, head_dim, hidden, dtype, params,
      sliding_window, window_layers, kv_lora_rank, qk_rope_head_dim, source,
      active_params, params_source), and with
      --reserve: reserve_tokens, reserved_bytes, waste_fraction (0..1).
    With --list-presets, --json prints a list of shape objects, each with
    bytes_per_token at the model's own dtype. Presets of mixture-of-experts models add
    active_params to their shape. With --list-gpus, --json prints a list of {key, name,
    bf16_dense_flops_per_s, hbm_bytes_per_s, memory_bytes}.

    A config.json's parameter count (total, and active for a mixture of experts) is
    worked out from its shapes (attention, MLP or experts, embeddings; norms and biases
    left out); --params N (8.03B) and --active-params N override any model's.

    --gpu NAME [--tp N] sizes a tensor-parallel deployment, per GPU, from the GPU's
    spec sheet: weights (params x weight bytes / tp), the KV cache (kv_heads / tp heads
    per GPU while tp <= kv_heads, one head replicated beyond; an MLA latent on every
    GPU) and how many sequences of --seq tokens fit in 90% of its memory. --latency
    adds roofline times: TTFT for a --prompt, TPOT for --requests sequences at --seq,
    and with --slo-tpot the largest batch that meets it; compute runs at the spec
    sheet's FLOP/s x MFU, memory at its bandwidth x MBU. The efficiencies come from
    your latest `kvdrill engine run` on that same GPU (prefill's MFU, batch-1 decode's
    MBU; a run on another device is never used), else from stated defaults, and the
    output says which; --efficiencies defaults or run:ID chooses, --mfu and --mbu
    override them. Communication between GPUs is left out.

    \b
    With --gpu, --json adds serving: gpu {key, name, bf16_dense_flops_per_s,
      hbm_bytes_per_s, memory_bytes}, params, active_params, params_source (how the
      count was found), tp, seq_len, weights_dtype_bytes,
      weight_bytes_per_gpu, kv_heads_per_gpu (null for MLA), kv_replicas,
      kv_bytes_per_token_per_gpu, kv_bytes_per_sequence_per_gpu,
      usable_bytes_per_gpu, kv_budget_bytes_per_gpu, max_sequences, and with
      --latency latency {mfu, mbu, decode_mfu, batch_mbu (null when no run
      measured them), efficiency_source, prompt_len, ttft_s,
      ttft_bound, batch, tpot_s, tpot_bound, tokens_per_s, slo_tpot_s, slo_batch,
      slo_limited_by}; times in seconds, a bound is "compute" or "memory".
    """
    serving_options = [tp, weights_dtype, prompt, slo_tpot, mfu, mbu, efficiencies, db_path]
    serving_options += [params, active_params]
    if list_presets or list_gpus:
        listing = "--list-presets" if list_presets else "--list-gpus"
        others: list[object] = [preset, config_path, layers, kv_heads, head_dim, seq, dtype]
        others += [reserve, gpu, *serving_options]
        if (
            any(v is not None for v in others)
            or requests != "1"
            or ignore_window
            or latency
            or (list_presets and list_gpus)
        ):
            raise _UsageError(f"{listing} takes no other option except --json")
        if list_presets:
            _print_presets(kvmath.load_presets(), as_json)
        else:
            _print_gpus(as_json)
        return

    shape, dtype = _shape_from_options(preset, config_path, layers, kv_heads, head_dim, dtype)
    if gpu is not None and (params is not None or active_params is not None):
        from drill.commands.kv_serving import with_params

        shape = with_params(shape, params, active_params)
    if seq is None:
        raise _UsageError("missing --seq N, the live tokens per request")
    estimate = kvmath.kv_estimate(
        shape,
        kvmath.parse_count(seq, "--seq"),
        dtype_bytes=dtype,
        requests=kvmath.parse_count(requests, "--requests"),
        reserve=None if reserve is None else kvmath.parse_count(reserve, "--reserve"),
        ignore_window=ignore_window,
    )
    latency = latency or any(
        v is not None for v in (prompt, slo_tpot, mfu, mbu, efficiencies, db_path)
    )
    sizing = (tp, weights_dtype, params, active_params)
    if gpu is None and (latency or any(v is not None for v in sizing)):
        raise _UsageError(
            "--tp, --weights-dtype, --params and --latency size a deployment: add --gpu NAME"
        )
    serving = None
    if gpu is not None:
        from drill.commands.kv_serving import serving_estimate

        serving = serving_estimate(
            shape, estimate, gpu, tp, weights_dtype, latency, prompt, slo_tpot, mfu, mbu, db_path,
            efficiencies,
        )  # fmt: skip
    if as_json:
        out = estimate_json(estimate)
        if serving is not None:
            out["serving"] = serving.to_json()
        click.echo(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        click.echo(render_estimate(estimate))
        if serving is not None:
            click.echo(serving.render())


def _shape_from_options(preset, config_path, layers, kv_heads, head_dim, dtype):
    """(shape, dtype) from the one model source given; usage errors otherwise."""
    manual = {"--layers": layers, "--kv-heads": kv_heads, "--head-dim": head_dim}
    given = [
        preset is not None,
        config_path is not None,
        any(v is not None for v in manual.values()),
    ]
    if sum(given) > 1:
        raise _UsageError("choose one of --preset, --config or --layers/--kv-heads/--head-dim")
    if preset is not None:
        return kvmath.get_preset(preset), dtype
    if config_path is not None:
        return hfconfig.shape_from_config(config_path), dtype
    if not given[2]:
        raise _UsageError(
            "give a model: --preset NAME, --config PATH or --layers/--kv-heads/--head-dim"
        )
    missing = [flag for flag, value in manual.items() if value is None]
    if missing:
        raise _UsageError(f"a shape given by hand needs {', '.join(missing)} too")
    shape = kvmath.ModelShape(
        name="custom",
        display_name="shape given by hand",
        layers=kvmath.parse_count(layers, "--layers"),
        q_heads=None,
        kv_heads=kvmath.parse_count(kv_heads, "--kv-heads"),
        head_dim=kvmath.parse_count(head_dim, "--head-dim"),
        dtype="fp16",
        source="command-line flags",
    )
    return shape, dtype


def estimate_json(e: kvmath.KvEstimate) -> dict:
    out = {
        "shape": dataclasses.asdict(e.shape),
        "dtype": e.dtype,
        "dtype_bytes": e.dtype_bytes,
        "seq_len": e.seq_len,
        "requests": e.requests,
        "cached_tokens": e.cached_tokens,
        "bytes_per_token": e.bytes_per_token,
        "bytes_per_request": e.bytes_per_request,
        "total_bytes": e.total_bytes,
        "formula": e.formula,
        "notes": list(e.notes),
    }
    if e.reserved_bytes is not None:
        out |= {
            "reserve_tokens": e.reserve_tokens,
            "reserved_bytes": e.reserved_bytes,
            "waste_fraction": e.waste_fraction,
        }
    return out


def _bytes(n: int) -> str:
    """'536,870,912 bytes (512 MiB = 537 MB)': exact, then binary and decimal units."""
    return f"{n:,} bytes ({format_bytes(n)} = {format_bytes(n, binary=False)})"


def _element_bytes(width: float) -> str:
    return f"{format_number(width)} byte" + ("" if width == 1 else "s")


def render_estimate(e: kvmath.KvEstimate) -> str:
    s = e.shape
    heads = f"{s.kv_heads} KV head{'' if s.kv_heads == 1 else 's'}" + (
        f" ({s.q_heads} query heads)" if s.q_heads else ""
    )
    if s.is_mla:
        heads += f", MLA latent {s.kv_lora_rank} + rotary {s.qk_rope_head_dim}"
    symbols, numbers, result = e.formula.split(" = ")
    plural = "s" if e.requests > 1 else ""
    rows = [
        ("model", f"{s.display_name} ({s.source})" if s.source else s.display_name),
        ("shape", f"{s.layers} layers · {heads} · head_dim {s.head_dim}"),
        ("dtype", f"{e.dtype or 'width given'}, {_element_bytes(e.dtype_bytes)} per element"),
        ("formula", symbols),
        ("", f"= {numbers}"),
        ("", f"= {result}"),
        ("per token", _bytes(e.bytes_per_token)),
        ("per request", f"{_bytes(e.bytes_per_request)} for {e.seq_len:,} tokens"),
        ("total", f"{_bytes(e.total_bytes)} for {e.requests:,} request{plural}"),
    ]
    if e.reserved_bytes is not None:
        rows.append(
            ("reserved", f"{_bytes(e.reserved_bytes)} for {e.reserve_tokens:,} tokens per request")
        )
        rows.append(
            (
                "waste",
                f"{format_quantity(e.waste_fraction or 0.0, 'fraction')} of the reservation "
                "is empty",
            )
        )
    width = max(len(label) for label, _ in rows) + 2
    lines = [f"{label:<{width}}{value}" for label, value in rows]
    if e.notes:
        lines.append("notes")
        lines += [f"  - {note}" for note in e.notes]
    return "\n".join(lines)


def _print_gpus(as_json: bool) -> None:
    from drill.serving.gpus import GPU_SPECS, gpu_figure

    if as_json:
        rows = [
            {
                "key": g.key,
                "name": g.name,
                "bf16_dense_flops_per_s": g.flops_per_s,
                "hbm_bytes_per_s": g.bytes_per_s,
                "memory_bytes": g.memory_bytes,
            }
            for g in GPU_SPECS
        ]
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    table: list[tuple[str, ...]] = [("name", "GPU", "memory", "bandwidth", "bf16 dense")]
    table += [
        (g.key, g.name, *(gpu_figure(g, f) for f in ("memory", "bandwidth", "flops")))
        for g in GPU_SPECS
    ]
    _print_table(table, right=(2, 3, 4))
    click.echo(
        "(spec-sheet figures: memory in GiB, bandwidth in 10^12 bytes/s, FLOP/s without sparsity)"
    )


def _print_table(table: Sequence[Sequence[str]], right: tuple[int, ...] = ()) -> None:
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    for row in table:
        cells = [
            cell.rjust(w) if i in right else cell.ljust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ]
        click.echo("  ".join(cells).rstrip())


def _print_presets(presets: dict[str, kvmath.ModelShape], as_json: bool) -> None:
    per_token = {
        name: kvmath.kv_estimate(shape, 1).bytes_per_token for name, shape in presets.items()
    }
    if as_json:
        rows = [
            dataclasses.asdict(shape) | {"bytes_per_token": per_token[name]}
            for name, shape in presets.items()
        ]
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    header = ("name", "model", "layers", "q/kv heads", "head_dim", "dtype", "KV/token", "params",
              "attention")  # fmt: skip
    table = [header]
    for name, s in presets.items():
        if s.is_mla:
            attention = f"MLA {s.kv_lora_rank}+{s.qk_rope_head_dim}"
        elif s.sliding_window is not None:
            attention = f"window {s.sliding_window} on {s.window_layers}/{s.layers}"
        else:
            attention = "full"
        table.append((
            name, s.display_name, str(s.layers), f"{s.q_heads}/{s.kv_heads}", str(s.head_dim),
            s.dtype or "", format_bytes(per_token[name]),
            f"{s.params / 1e9:.3g}B" if s.params else "", attention,
        ))  # fmt: skip
    _print_table(table)
