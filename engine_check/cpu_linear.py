"""Prepacked CPU matmuls for decode steps of a few sequences.

PyTorch's default CPU matmul (MKL) re-lays-out the weight on every call when the
activation has only a handful of rows, so a decode step for 8 sequences can take
three times as long as one for a single sequence, though it reads the same weights:
the batching the batch experiment measures would be hidden by a library quirk.
Inference engines on CPUs avoid this by laying the weights out once, ahead of
time (torch.compile's CPU freezing does it too). Here each weight gets a second,
oneDNN-prepacked copy, used for 2..64 rows; long prompts keep the default kernels,
which are the fastest there.

A single row (a GEMV, a decode step of one sequence) is a different kernel: oneDNN
lays the weight out for the row count it is told to expect, and a layout for one row
streams the weights faster than the layout for eight (on a 2-core EPYC, 27 GB/s
against 22-24 GB/s, with the read stream at 28-29 GB/s), while the one-row layout
slows batches of 8 and more by a third. So single rows get a copy of their own in the
one-row layout, where it wins. Neither library wins a GEMV everywhere: MKL's was the
faster on one of our machines, oneDNN's packed one 2.7 times as fast on another.
`faster_for_one_row` times both on the model's largest weight before the experiments,
and the faster serves single rows for the whole run (the run's config records which).

Long prompts are timed too: where the packed kernel beats the default one on the
model's largest weight at the longest prompt (`faster_for_one_row` serves any pair of
calls), prefill goes through the packed copies as well (on a 2-core EPYC, 203-223
GFLOP/s against MKL's 116-183 from 64 to 1024 rows).

The oneDNN ops are PyTorch internals, so everything is checked before use and a
build without them simply keeps the default kernels.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F

PACKED_MIN_ROWS = 2
PACKED_MAX_ROWS = 64
# oneDNN picks the weight layout for an expected row count: decode batches are small,
# and a single row gets a layout of its own
BATCH_LAYOUT_ROWS = 8
ONE_ROW_LAYOUT_ROWS = 1


def _ops_present() -> bool:
    mkldnn = getattr(torch.ops, "mkldnn", None)
    try:
        return (
            torch.backends.mkldnn.is_available()
            and hasattr(mkldnn, "_reorder_linear_weight")
            and hasattr(mkldnn, "_linear_pointwise")
        )
    except (AttributeError, RuntimeError):
        return False


def pack_weight(weight: torch.Tensor, rows: int = BATCH_LAYOUT_ROWS) -> torch.Tensor:
    """weight: [out, in] -> the same matrix in oneDNN's blocked layout for activations of
    about `rows` rows (an opaque tensor)."""
    return torch.ops.mkldnn._reorder_linear_weight(weight.detach(), rows)


def packed_linear(x: torch.Tensor, packed: torch.Tensor) -> torch.Tensor:
    """x: [..., in] @ packedᵀ -> [..., out], as F.linear(x, weight) computes."""
    return torch.ops.mkldnn._linear_pointwise(x, packed, None, "none", [], "")


def uses_packed(
    rows: int, min_rows: int = PACKED_MIN_ROWS, max_rows: int | None = PACKED_MAX_ROWS
) -> bool:
    """Whether `rows` rows go through the packed copy (no upper bound when max_rows is
    None)."""
    return min_rows <= rows and (max_rows is None or rows <= max_rows)


def faster_for_one_row(
    default: Callable[[], object],
    packed: Callable[[], object],
    *,
    clock: Callable[[], float] = time.perf_counter,
    repeats: int = 7,
) -> bool:
    """Whether `packed` (the prepacked kernel on one row) beats `default` (F.linear):
    each is warmed up, then timed `repeats` times, alternating, and the fastest call
    of each is compared."""
    best = {"default": math.inf, "packed": math.inf}
    calls = {"default": default, "packed": packed}
    for fn in calls.values():
        fn()  # warm-up: first-call costs are not the kernel's
    for _ in range(repeats):
        for name, fn in calls.items():
            start = clock()
            fn()
            best[name] = min(best[name], clock() - start)
    return best["packed"] < best["default"]


def prepack_works(dtype: torch.dtype) -> bool:
    """Whether packed matmuls run here at `dtype` and agree with F.linear."""
    if not _ops_present():
        return False
    gen = torch.Generator().manual_seed(0)
    weight = torch.rand(48, 32, generator=gen).to(dtype)
    x = torch.rand(4, 32, generator=gen).to(dtype)
    try:
        with torch.inference_mode():
            got = packed_linear(x, pack_weight(weight))
            want = F.linear(x, weight)
    except (RuntimeError, TypeError, NotImplementedError):
        return False
    tol = 1e-4 if dtype == torch.float32 else 2e-2
    return got.shape == want.shape and torch.allclose(got.float(), want.float(), rtol=tol, atol=tol)
