"""Spec-sheet figures of recognised NVIDIA GPUs: dense bf16 FLOP/s, memory bandwidth and
memory size. No torch here: the serving calculator (`kvdrill kv --gpu`) reads them, and
an engine run shows them beside the peaks it measured (matched by
`torch.cuda.get_device_name()`), never in place of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from drill.errors import unknown_name_error

GiB = 2**30


@dataclass(frozen=True)
class GpuSpec:
    key: str  # the name `kvdrill kv --gpu` takes
    pattern: str  # regex searched in torch.cuda.get_device_name(), case-insensitive
    name: str
    bf16_dense_tflops: float
    hbm_tb_per_s: float
    memory_gib: float  # the vendor's "GB", which for these parts is GiB of memory

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


def spec_for(device_name: str) -> dict | None:
    """Spec-sheet figures for a recognised GPU name, or None."""
    for spec in GPU_SPECS:
        if re.search(spec.pattern, device_name, flags=re.IGNORECASE):
            return {
                "name": spec.name,
                "bf16_dense_flops_per_s": spec.flops_per_s,
                "hbm_bytes_per_s": spec.bytes_per_s,
                "memory_bytes": spec.memory_bytes,
            }
    return None


def gpu_named(name: str) -> GpuSpec:
    """A GPU by its `--gpu` key ("h100", "a100-80gb", ...), ignoring case; an unknown
    name is a ConfigError that suggests the closest keys."""
    key = name.strip().lower().replace(" ", "-").replace("_", "-")
    by_key = {spec.key: spec for spec in GPU_SPECS}
    if key in by_key:
        return by_key[key]
    raise unknown_name_error("GPU", name, key, list(by_key))
