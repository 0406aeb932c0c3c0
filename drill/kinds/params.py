"""A numeric template's params that stand for a record (a model preset, a GPU): the fields
each exposes to expressions and text as <name>_<field>."""

from __future__ import annotations

from typing import Any

from drill.bank.schema import GpuParam, PresetParam

Value = int | float | str

# what a preset param `m` exposes to expressions, as m_<name>; `active` is the parameters
# one token passes through (all of them unless a mixture of experts)
PRESET_FIELDS = (
    "layers", "kv_heads", "q_heads", "head_dim", "hidden", "dtype_bytes", "params", "active",
)  # fmt: skip
# what a gpu param `g` exposes, as g_<name>: memory in bytes, memory bandwidth in bytes/s,
# dense BF16 FLOP/s (drill.serving.gpus.GpuSpec)
GPU_FIELDS = ("memory", "bandwidth", "flops")


def param_fields(param: Any) -> tuple[str, ...]:
    """The fields a preset or gpu param exposes as <name>_<field>; () for other params."""
    if isinstance(param, PresetParam):
        return PRESET_FIELDS
    if isinstance(param, GpuParam):
        return GPU_FIELDS
    return ()


def record_param_kind(param: Any) -> str | None:
    """'a preset param' or 'a gpu param' (params that stand for a record), else None."""
    if isinstance(param, PresetParam):
        return "a preset param"
    if isinstance(param, GpuParam):
        return "a gpu param"
    return None
