"""Spec-sheet peaks of recognised NVIDIA GPUs, matched by `torch.cuda.get_device_name()`.

Shown beside the peaks measured in the run, never used in place of them: the
roofline and the utilisation figures always divide by what this machine did.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class GpuSpec:
    pattern: str  # regex searched in torch.cuda.get_device_name(), case-insensitive
    name: str
    bf16_dense_tflops: float
    hbm_tb_per_s: float


# Vendor figures: dense (no sparsity) bf16 tensor-core TFLOP/s and memory TB/s.
# First match wins, so more specific names come first.
GPU_SPECS: tuple[GpuSpec, ...] = (
    GpuSpec(r"\bH200\b.*\bNVL\b", "H200 NVL", 835.0, 4.8),
    GpuSpec(r"\bH200\b", "H200", 989.0, 4.8),
    GpuSpec(r"\bGH200\b", "GH200", 989.0, 4.0),
    GpuSpec(r"\bH100\b.*\bNVL\b", "H100 NVL", 835.0, 3.9),
    GpuSpec(r"\bH100\b.*\bPCIe\b", "H100 PCIe", 756.0, 2.0),
    GpuSpec(r"\bH100\b", "H100 SXM", 989.0, 3.35),
    GpuSpec(r"\bA100\b.*80\s*GB.*PCIe|\bA100\b.*PCIe.*80\s*GB", "A100 80GB PCIe", 312.0, 1.935),
    GpuSpec(r"\bA100\b.*80\s*GB", "A100 80GB SXM", 312.0, 2.039),
    GpuSpec(r"\bA100\b", "A100 40GB", 312.0, 1.555),
    GpuSpec(r"\bL40S\b", "L40S", 362.0, 0.864),
    GpuSpec(r"\bL4\b", "L4", 121.0, 0.3),
    GpuSpec(r"\bA10G\b", "A10G", 70.0, 0.6),
    GpuSpec(r"\bA10\b", "A10", 125.0, 0.6),
    GpuSpec(r"RTX\s*4090\b", "RTX 4090", 165.2, 1.008),
    GpuSpec(r"RTX\s*3090\b", "RTX 3090", 71.0, 0.936),
)


def spec_for(device_name: str) -> dict | None:
    """Spec-sheet peaks for a recognised GPU name, or None."""
    for spec in GPU_SPECS:
        if re.search(spec.pattern, device_name, flags=re.IGNORECASE):
            return {
                "name": spec.name,
                "bf16_dense_flops_per_s": spec.bf16_dense_tflops * 1e12,
                "hbm_bytes_per_s": spec.hbm_tb_per_s * 1e12,
            }
    return None
