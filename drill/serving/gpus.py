"""Spec-sheet figures of recognised NVIDIA GPUs: dense bf16 FLOP/s, memory bandwidth and
memory size, the one table every figure of a GPU comes from. No torch here: the serving
calculator (`kvdrill kv --gpu`) reads them, the deck's questions quote them (a gpu param,
or `{gpu.<key>.<field>}` in any text, rendered by `gpu_figure`), and an engine run shows
them beside the peaks it measured (matched by `torch.cuda.get_device_name()`), never in
place of them.

What the numbers mean:
- `bf16_dense_tflops`: the datasheet's BF16 tensor-core figure without structured
  sparsity (the "with sparsity" figure halved), in 10^12 FLOP/s.
- `hbm_tb_per_s`: the datasheet's memory bandwidth in 10^12 bytes/s (A100 80GB SXM:
  "2,039 GB/s", so 2.039).
- `memory_gib`: the datasheet's memory size. Vendors label it "GB", but the memory is
  built from binary-sized DRAM and the device reports about that many GiB, not 10^9-byte
  GB (an A100 80GB reports 81,920 MiB = 80 GiB; an H200, 143,771 MiB ≈ 140.4 GiB against
  its "141 GB"). The table therefore reads it as GiB, and every text shows it in GiB.

Every text shows a figure the same way (`gpu_figure`): memory in GiB, bandwidth in TB/s,
FLOP/s in TFLOP/s, each with the digits the datasheet gives.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from drill.errors import BankError, unknown_name_error

GiB = 2**30


@dataclass(frozen=True)
class GpuSpec:
    key: str  # the name `kvdrill kv --gpu` takes
    pattern: str  # regex searched in torch.cuda.get_device_name(), case-insensitive
    name: str
    bf16_dense_tflops: float
    hbm_tb_per_s: float
    memory_gib: float  # the datasheet's "GB", which for these parts is GiB (module docstring)

    @property
    def flops_per_s(self) -> float:
        return self.bf16_dense_tflops * 1e12

    @property
    def bytes_per_s(self) -> float:
        return self.hbm_tb_per_s * 1e12

    @property
    def memory_bytes(self) -> int:
        return round(self.memory_gib * GiB)


# Vendor figures: dense (no sparsity) bf16 tensor-core TFLOP/s, memory TB/s, memory GB.
# First match wins, so more specific names come first.
GPU_SPECS: tuple[GpuSpec, ...] = (
    GpuSpec("h200-nvl", r"\bH200\b.*\bNVL\b", "H200 NVL", 835.0, 4.8, 141),
    GpuSpec("h200", r"\bH200\b", "H200", 989.0, 4.8, 141),
    GpuSpec("gh200", r"\bGH200\b", "GH200", 989.0, 4.0, 96),
    GpuSpec("h100-nvl", r"\bH100\b.*\bNVL\b", "H100 NVL", 835.0, 3.9, 94),
    GpuSpec("h100-pcie", r"\bH100\b.*\bPCIe\b", "H100 PCIe", 756.0, 2.0, 80),
    GpuSpec("h100", r"\bH100\b", "H100 SXM", 989.0, 3.35, 80),
    GpuSpec(
        "a100-80gb-pcie",
        r"\bA100\b.*80\s*GB.*PCIe|\bA100\b.*PCIe.*80\s*GB",
        "A100 80GB PCIe",
        312.0,
        1.935,
        80,
    ),
    GpuSpec("a100-80gb", r"\bA100\b.*80\s*GB", "A100 80GB SXM", 312.0, 2.039, 80),
    GpuSpec("a100-40gb", r"\bA100\b", "A100 40GB", 312.0, 1.555, 40),
    GpuSpec("l40s", r"\bL40S\b", "L40S", 362.0, 0.864, 48),
    GpuSpec("l4", r"\bL4\b", "L4", 121.0, 0.3, 24),
    GpuSpec("a10g", r"\bA10G\b", "A10G", 70.0, 0.6, 24),
    GpuSpec("a10", r"\bA10\b", "A10", 125.0, 0.6, 24),
    GpuSpec("rtx-4090", r"RTX\s*4090\b", "RTX 4090", 165.2, 1.008, 24),
    GpuSpec("rtx-3090", r"RTX\s*3090\b", "RTX 3090", 71.0, 0.936, 24),
)


def gpu_for_device(device_name: str) -> GpuSpec | None:
    """The table's GPU that a device name (torch.cuda.get_device_name()) is, or None."""
    for spec in GPU_SPECS:
        if re.search(spec.pattern, device_name, flags=re.IGNORECASE):
            return spec
    return None


def spec_for(device_name: str) -> dict | None:
    """Spec-sheet figures for a recognised GPU name, or None."""
    spec = gpu_for_device(device_name)
    if spec is None:
        return None
    return {
        "name": spec.name,
        "bf16_dense_flops_per_s": spec.flops_per_s,
        "hbm_bytes_per_s": spec.bytes_per_s,
        "memory_bytes": spec.memory_bytes,
    }


def gpu_named(name: str) -> GpuSpec:
    """A GPU by its `--gpu` key ("h100", "a100-80gb", ...), ignoring case; an unknown
    name is a ConfigError that suggests the closest keys."""
    key = name.strip().lower().replace(" ", "-").replace("_", "-")
    by_key = {spec.key: spec for spec in GPU_SPECS}
    if key in by_key:
        return by_key[key]
    raise unknown_name_error("GPU", name, key, list(by_key))


# how every text shows a figure of the table: the unit, and the field's value in it
FIGURE_UNITS = {"memory": "GiB", "bandwidth": "TB/s", "flops": "TFLOP/s"}
FIGURE_FIELDS = ("name", *FIGURE_UNITS)
# enough significant digits to write every datasheet figure as given (2.039, 165.2)
FIGURE_DIGITS = 4


def gpu_figure(spec: GpuSpec, field: str) -> str:
    """One figure of `spec` as every text shows it: "H100 SXM", "80 GiB", "3.35 TB/s",
    "989 TFLOP/s"."""
    from drill.quantities.units import format_number

    if field == "name":
        return spec.name
    value = {
        "memory": spec.memory_gib,
        "bandwidth": spec.hbm_tb_per_s,
        "flops": spec.bf16_dense_tflops,
    }[field]
    return f"{format_number(value, FIGURE_DIGITS)} {FIGURE_UNITS[field]}"


@functools.cache
def figure_texts() -> dict[str, str]:
    """Every figure of the table as text, by placeholder name: "gpu.h100.bandwidth" ->
    "3.35 TB/s"."""
    return {
        f"gpu.{spec.key}.{field}": gpu_figure(spec, field)
        for spec in GPU_SPECS
        for field in FIGURE_FIELDS
    }


# `{gpu.<key>.<field>}` in a text that is shown as written (a concept, choice or order
# question): the GPU by its `--gpu` key, and one of FIGURE_FIELDS
GPU_PLACEHOLDER = re.compile(r"\{(gpu\.[^{}\s]*)\}")


def fill_gpu_figures(text: str) -> str:
    """`text` with each `{gpu.<key>.<field>}` replaced by `gpu_figure`; BankError naming
    a placeholder whose GPU or field is unknown."""

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in figure_texts():
            raise BankError(gpu_placeholder_problem(name))
        return figure_texts()[name]

    return GPU_PLACEHOLDER.sub(replace, text)


def gpu_placeholder_problem(name: str) -> str:
    """Why `{name}` is not a figure of the table (name as "gpu.<key>.<field>")."""
    parts = name.split(".")
    keys = [spec.key for spec in GPU_SPECS]
    if len(parts) != 3 or parts[1] not in keys:
        return (
            f"unknown GPU placeholder {{{name}}}: write {{gpu.KEY.FIELD}} with KEY one of "
            f"{', '.join(keys)}"
        )
    return f"unknown GPU placeholder {{{name}}}: FIELD is one of {', '.join(FIGURE_FIELDS)}"
