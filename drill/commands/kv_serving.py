"""`kvdrill kv --gpu`: the serving calculator's options, its efficiencies and its output.

The maths is drill.serving.estimates's; this reads the options, finds the efficiencies (the latest
stored engine run on the same GPU, or the run --efficiencies names, unless --mfu/--mbu say
otherwise, else drill.serving.estimates's defaults) and prints. The database is opened only with --latency, read-only, and only if it exists.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from drill.errors import ConfigError
from drill.quantities.units import AnswerError, format_bytes, format_quantity, parse_answer
from drill.serving import estimates as serving
from drill.serving import kvmath
from drill.serving.gpus import GpuSpec, gpu_for_device, gpu_named


@dataclass(frozen=True)
class Latency:
    eff: serving.Efficiencies
    prompt_len: int
    ttft: serving.StepTime
    batch: int
    tpot: serving.StepTime
    slo_tpot_s: float | None
    slo_batch: int | None
    slo_limited_by: str | None  # "memory" or "slo"


@dataclass(frozen=True)
class ServingReport:
    shape: kvmath.ModelShape
    gpu: GpuSpec
    memory: serving.Memory
    latency: Latency | None

    def to_json(self) -> dict[str, Any]:
        m = self.memory
        out: dict[str, Any] = {
            "gpu": {
                "key": self.gpu.key,
                "name": self.gpu.name,
                "bf16_dense_flops_per_s": self.gpu.flops_per_s,
                "hbm_bytes_per_s": self.gpu.bytes_per_s,
                "memory_bytes": self.gpu.memory_bytes,
            },
            "params": self.shape.params,
            "active_params": self.shape.active,
            "params_source": self.shape.params_source,
            "tp": m.tp,
            "seq_len": m.seq_len,
            "weights_dtype_bytes": m.weight_width,
            "weight_bytes_per_gpu": m.weight_bytes,
            "kv_heads_per_gpu": m.kv_heads_per_gpu,
            "kv_replicas": m.kv_replicas,
            "kv_bytes_per_token_per_gpu": m.kv_bytes_per_token,
            "kv_bytes_per_sequence_per_gpu": m.kv_bytes_per_sequence,
            "usable_bytes_per_gpu": m.usable_bytes,
            "kv_budget_bytes_per_gpu": m.kv_budget_bytes,
            "max_sequences": m.max_sequences,
        }
        lat = self.latency
        if lat is not None:
            out["latency"] = {
                "mfu": lat.eff.mfu,
                "mbu": lat.eff.mbu,
                "decode_mfu": lat.eff.decode_mfu,
                "batch_mbu": lat.eff.batch_mbu,
                "efficiency_source": lat.eff.source,
                "prompt_len": lat.prompt_len,
                "ttft_s": lat.ttft.seconds,
                "ttft_bound": lat.ttft.bound,
                "batch": lat.batch,
                "tpot_s": lat.tpot.seconds,
                "tpot_bound": lat.tpot.bound,
                "tokens_per_s": lat.batch / lat.tpot.seconds,
                "slo_tpot_s": lat.slo_tpot_s,
                "slo_batch": lat.slo_batch,
                "slo_limited_by": lat.slo_limited_by,
            }
        return out

    def render(self) -> str:
        s, g, m = self.shape, self.gpu, self.memory
        heads = (
            f"the MLA latent on every GPU ({m.kv_replicas} copies)"
            if m.kv_heads_per_gpu is None
            else f"{m.kv_heads_per_gpu} of {s.kv_heads} KV heads per GPU"
            + (f", each held by {m.kv_replicas} GPUs" if m.kv_replicas > 1 else "")
        )
        width = format_quantity(m.weight_width, None)
        rows = [
            ("params", _params_line(s)),
            ("per GPU", f"{g.name} ({_flops(g.flops_per_s)} bf16, {_rate(g.bytes_per_s)}, "
                        f"{format_bytes(g.memory_bytes)}) x {m.tp}, tensor parallel"),
            ("weights", f"{_bytes(m.weight_bytes)}: {s.params:,} params x {width} bytes / {m.tp}"),
            ("KV cache", f"{heads}: {m.kv_bytes_per_token:,} bytes per token, "
                         f"{_bytes(m.kv_bytes_per_sequence)} per {m.seq_len:,}-token sequence"),
            ("memory", f"{serving.MEMORY_PERCENT}% of it usable, {format_bytes(m.usable_bytes)}; "
                       f"{format_bytes(m.kv_budget_bytes)} left for the KV cache"),
            ("fits", _fits(m)),
        ]  # fmt: skip
        lat = self.latency
        if lat is not None:
            decode = serving.decode_efficiencies_named(lat.eff.decode_mfu, lat.eff.batch_mbu)
            rows += [
                ("efficiency", f"MFU {_pct(lat.eff.mfu)}, MBU {_pct(lat.eff.mbu)}{decode} of the "
                               f"spec sheet, from {lat.eff.source}"),
                ("TTFT", f"{_time(lat.ttft.seconds)} for a prompt of {lat.prompt_len:,} tokens "
                         f"({lat.ttft.bound}-bound)"),
                ("TPOT", f"{_time(lat.tpot.seconds)} at batch {lat.batch:,}, "
                         f"{m.seq_len:,} tokens each ({lat.tpot.bound}-bound): "
                         f"{format_quantity(lat.batch / lat.tpot.seconds, 'tokens_per_s')}"),
            ]  # fmt: skip
            if lat.slo_tpot_s is not None:
                rows.append(("SLO", _slo(lat)))
        label = max(len(name) for name, _ in rows) + 2
        lines = ["", *(f"{name:<{label}}{value}" for name, value in rows)]
        lines.append(
            "  (roofline times from the spec sheet's peaks; communication between GPUs, "
            "activations and allocator overhead are left out)"
        )
        return "\n".join(lines)


def _bytes(n: int) -> str:
    return f"{n:,} bytes ({format_bytes(n)})"


def _billions(n: int) -> str:
    return f"{n:,} ({n / 1e9:.3g}B)"


def _params_line(s: kvmath.ModelShape) -> str:
    """The parameter count, the active one for a mixture of experts, and where it came from."""
    line = _billions(s.params or 0)
    if s.active_params is not None:
        line += f" in all, {_billions(s.active_params)} active per token"
    return f"{line}, {s.params_source}" if s.params_source else line


def with_params(
    shape: kvmath.ModelShape, params_text: str | None, active_text: str | None
) -> kvmath.ModelShape:
    """`shape` with --params (the total) and --active-params (a mixture of experts' share
    per token) in place of its own counts. --params alone keeps the shape's active count
    where it is below the new total, and makes the model dense otherwise."""
    if params_text is None and active_text is None:
        return shape
    params = shape.params if params_text is None else parse_param_count(params_text, "--params")
    if params is None:
        raise ConfigError("--active-params needs the total too: add --params N")
    if active_text is not None:
        active: int | None = parse_param_count(active_text, "--active-params")
        if active is not None and active > params:
            raise ConfigError(
                f"--active-params ({active:,}) is more than the {params:,} parameters in all"
            )
    else:
        active = shape.active_params
        if active is not None and active > params:
            active = None
    given = [flag for flag, text in (("--params", params_text), ("--active-params", active_text))
             if text is not None]  # fmt: skip
    return dataclasses.replace(
        shape, params=params, active_params=active, params_source=f"as {' and '.join(given)} said"
    )


_SUFFIXES = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "t": 10**12}


def parse_param_count(text: str, name: str) -> int:
    """A parameter count as people write it: 8030000000, 8,030,000,000, 8.03B, 46.7e9, 70600M."""
    cleaned = text.strip().replace(",", "").replace("_", "").lower()
    suffix = cleaned[-1:] if cleaned[-1:] in _SUFFIXES else ""
    number = cleaned[: len(cleaned) - len(suffix)]
    try:
        value = float(number) * _SUFFIXES[suffix]
    except ValueError:
        value = float("nan")
    if not value >= 1 or value > 10**15:
        shown = text if len(text) <= 40 else text[:37] + "..."
        raise ConfigError(
            f"{name} must be a parameter count such as 8.03B or 7240000000, got {shown!r}"
        )
    return round(value)


def _flops(value: float) -> str:
    return format_quantity(value, "flop_per_s")


def _rate(value: float) -> str:
    return format_quantity(value, "bytes_per_s")


def _pct(value: float) -> str:
    return format_quantity(value, "fraction")


def _time(seconds: float) -> str:
    return format_quantity(seconds, "seconds")


def _fits(m: serving.Memory) -> str:
    if m.kv_budget_bytes == 0:
        return (
            f"nothing: the weights need {format_bytes(m.weight_bytes)} per GPU, more than the "
            f"{format_bytes(m.usable_bytes)} usable; use more GPUs (--tp) or smaller weights"
        )
    plural = "" if m.max_sequences == 1 else "s"
    return f"{m.max_sequences:,} sequence{plural} of {m.seq_len:,} tokens at once"


def _slo(lat: Latency) -> str:
    target = _time(lat.slo_tpot_s or 0.0)
    if not lat.slo_batch:
        if lat.slo_limited_by == "memory":
            return f"{target} per token: no sequence fits in memory"
        return f"{target} per token: no batch meets it, not even a single sequence"
    why = "memory caps it" if lat.slo_limited_by == "memory" else "the target caps it"
    return f"{target} per token: batches of up to {lat.slo_batch:,} meet it ({why})"


def _count(text: str | None, name: str, default: int) -> int:
    return default if text is None else kvmath.parse_count(text, name)


def _fraction(text: str | None, name: str) -> float | None:
    if text is None:
        return None
    try:
        value = parse_answer(text)
    except AnswerError:
        raise ConfigError(f"{name} must be a fraction such as 0.5 or 50%, got {text!r}") from None
    if value.dimension not in (None, "fraction") or not 0 < value.value <= 1:
        raise ConfigError(f"{name} must be above 0 and at most 1 (or 100%), got {text!r}")
    return value.value


def _seconds(text: str) -> float:
    try:
        value = parse_answer(text)
    except AnswerError:
        raise ConfigError(f"--slo-tpot must be a time such as 50ms, got {text!r}") from None
    if value.dimension != "seconds" or value.value <= 0:
        raise ConfigError(f"--slo-tpot must be a time with its unit, such as 50ms, got {text!r}")
    return value.value


def _efficiency_choice(text: str | None) -> int | str:
    """--efficiencies: "auto" (the default), "defaults", or a run as run:ID (or ID)."""
    if text is None or text.strip().lower() == "auto":
        return "auto"
    cleaned = text.strip().lower()
    if cleaned == "defaults":
        return "defaults"
    number = cleaned.removeprefix("run:").strip()
    if not number.isdigit() or int(number) < 1:
        raise ConfigError(
            f"--efficiencies must be auto, defaults or run:ID (a stored engine run), got {text!r}"
        )
    return int(number)


def stored_efficiencies(
    db_path: Path | None, gpu: GpuSpec, choice_text: str | None = None
) -> serving.Efficiencies:
    """The efficiencies for `gpu`: by default those of the latest stored engine run on that
    GPU, else the defaults (a run on another device is never borrowed); --efficiencies
    picks the defaults or one run by id. The database is read only when it exists."""
    from drill.paths import default_db_path

    choice = _efficiency_choice(choice_text)
    if choice == "defaults":
        return serving.default_efficiencies("as --efficiencies asked")
    path = db_path or default_db_path()
    if not path.is_file() or path.stat().st_size == 0:
        if isinstance(choice, int):
            raise ConfigError(f"no engine run {choice} is stored: there is no database at {path}")
        return serving.DEFAULTS
    from drill.commands.options import open_database
    from drill.storage.engine_runs import engine_run_by_id, engine_run_index

    db = open_database(path, write=False)
    try:
        if isinstance(choice, int):
            return _chosen_run(engine_run_by_id(db, choice), choice, gpu, engine_run_index(db))
        index = engine_run_index(db)
        for run_id, device in index:
            if device is None or gpu_for_device(device) != gpu:
                continue
            run = engine_run_by_id(db, run_id)
            if run is not None and serving.run_is_on(run, gpu):
                eff = serving.efficiencies_from_run(run, run_id)
                if eff is not serving.DEFAULTS:
                    return eff
    finally:
        db.conn.close()
    if not index:
        return serving.DEFAULTS
    latest: dict[str, int] = {}
    for run_id, device in index:  # newest first: each device's latest run
        latest.setdefault(str(device), run_id)
    others = ", ".join(f"{device} (run {run_id})" for device, run_id in latest.items())
    return serving.default_efficiencies(
        f"none of your engine runs measured the {gpu.name}; they measured {others}, "
        "and one device's efficiencies say nothing about another"
    )


def _chosen_run(
    run: dict[str, Any] | None, run_id: int, gpu: GpuSpec, index: list[tuple[int, str | None]]
) -> serving.Efficiencies:
    if run is None:
        ids = ", ".join(str(i) for i, _ in sorted(index)) or "none"
        raise ConfigError(f"no engine run {run_id} is stored (stored runs: {ids})")
    eff = serving.efficiencies_from_run(run, run_id)
    if eff is serving.DEFAULTS:
        raise ConfigError(
            f"engine run {run_id} has no prefill and decode measurements to take efficiencies from"
        )
    if serving.run_is_on(run, gpu):
        return eff
    return dataclasses.replace(
        eff, source=f"{eff.source}; not the {gpu.name}, but --efficiencies chose it"
    )


def serving_estimate(
    shape: kvmath.ModelShape,
    estimate: kvmath.KvEstimate,
    gpu_name: str,
    tp_text: str | None,
    weights_dtype: str | None,
    latency: bool,
    prompt_text: str | None,
    slo_text: str | None,
    mfu_text: str | None,
    mbu_text: str | None,
    db_path: Path | None,
    efficiencies_text: str | None = None,
) -> ServingReport:
    """The per-GPU figures for `kvdrill kv --gpu`, from its options."""
    gpu = gpu_named(gpu_name)
    tp = _count(tp_text, "--tp", 1)
    kv_dtype = estimate.dtype if estimate.dtype is not None else estimate.dtype_bytes
    memory = serving.memory_per_gpu(shape, gpu, tp, estimate.seq_len, kv_dtype, weights_dtype)
    if not latency:
        return ServingReport(shape, gpu, memory, None)
    mfu, mbu = _fraction(mfu_text, "--mfu"), _fraction(mbu_text, "--mbu")
    if mfu is not None and mbu is not None:
        if efficiencies_text is not None:
            raise ConfigError("--efficiencies has nothing to choose when --mfu and --mbu are given")
        eff = serving.Efficiencies(mfu, mbu, "--mfu and --mbu")
    else:
        eff = stored_efficiencies(db_path, gpu, efficiencies_text)
        if mfu is not None or mbu is not None:
            # a given efficiency stands for a decode step's too
            eff = serving.Efficiencies(
                eff.mfu if mfu is None else mfu,
                eff.mbu if mbu is None else mbu,
                f"{'--mfu' if mfu is not None else '--mbu'} (for a decode step of any batch "
                f"too), the other from {eff.source}",
                decode_mfu=eff.decode_mfu if mfu is None else None,
                batch_mbu=eff.batch_mbu if mbu is None else None,
            )
    prompt_len = _count(prompt_text, "--prompt", estimate.seq_len)
    batch = estimate.requests
    slo_s = None if slo_text is None else _seconds(slo_text)
    slo_batch = limited_by = None
    if slo_s is not None:
        slo_batch = serving.slo_batch(shape, gpu, memory, slo_s, eff)
        beyond = serving.tpot(shape, gpu, memory, slo_batch + 1, eff).seconds
        limited_by = "memory" if slo_batch == memory.max_sequences and beyond <= slo_s else "slo"
    return ServingReport(
        shape,
        gpu,
        memory,
        Latency(
            eff=eff,
            prompt_len=prompt_len,
            ttft=serving.ttft(shape, gpu, memory, prompt_len, eff),
            batch=batch,
            tpot=serving.tpot(shape, gpu, memory, batch, eff),
            slo_tpot_s=slo_s,
            slo_batch=slo_batch,
            slo_limited_by=limited_by,
        ),
    )
