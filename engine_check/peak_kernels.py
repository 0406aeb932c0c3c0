"""The kernels that measure a device's peaks (see engine_check.peaks for how they are
counted and combined): three memory streams and matmuls of several shapes.

The tensors live as long as the kernels do: drop the list to free them.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from engine_check.peaks import BANDWIDTH, MATMUL, Kernel


def write_allocates(device: torch.device) -> bool:
    """Whether a store costs a read of its line first (CPUs do; GPUs write whole lines)."""
    return device.type == "cpu"


def stream_kernels(device: torch.device, dtype: torch.dtype, nbytes: int) -> list[Kernel]:
    """read, copy and triad over tensors of `nbytes` each, counted as the bus moves them."""
    elems = nbytes // torch.empty((), dtype=dtype).element_size()
    # every tensor is written once here, so no page fault is timed later
    a = torch.ones(elems, device=device, dtype=dtype)
    b = torch.zeros(elems, device=device, dtype=dtype)
    c = torch.full((elems,), 0.5, device=device, dtype=dtype)
    size = elems * a.element_size()
    allocate = size if write_allocates(device) else 0
    return [
        Kernel("read", BANDWIDTH, size, lambda: torch.sum(a)),
        Kernel("copy", BANDWIDTH, 2 * size + allocate, lambda: b.copy_(c)),
        Kernel("triad", BANDWIDTH, 3 * size + allocate, lambda: torch.add(b, c, alpha=2.0, out=a)),
    ]


def matmul_kernels(
    device: torch.device, dtype: torch.dtype, shapes: Sequence[tuple[int, int, int]]
) -> list[Kernel]:
    """One kernel per (m, k, n): x [m, k] times a weight stored [n, k], as a Linear layer
    multiplies, 2·m·k·n FLOPs; on a CPU the shapes after the first (the model's) also
    through the prepacked kernel."""
    from engine_check import cpu_linear

    gen = torch.Generator(device=device).manual_seed(1)
    kernels = []
    # on a CPU the model's own shapes also through oneDNN's prepacked kernel, which the
    # model's prompts use where it is the faster (engine_check.cpu_linear)
    packed = device.type == "cpu" and cpu_linear.prepack_works(dtype)
    for m, k, n in shapes:
        x = torch.rand(m, k, generator=gen, device=device, dtype=torch.float32).to(dtype)
        w = torch.rand(n, k, generator=gen, device=device, dtype=torch.float32).to(dtype)
        out = torch.empty(m, n, device=device, dtype=dtype)
        kernels.append(
            Kernel(
                f"matmul {m}x{k}x{n}",
                MATMUL,
                2 * m * k * n,
                lambda x=x, w=w, out=out: torch.mm(x, w.t(), out=out),
            )
        )
        if packed and (m, k, n) != shapes[0]:
            pw = cpu_linear.pack_weight(w)
            kernels.append(
                Kernel(
                    f"matmul {m}x{k}x{n} prepacked",
                    MATMUL,
                    2 * m * k * n,
                    lambda x=x, pw=pw: cpu_linear.packed_linear(x, pw),
                )
            )
    return kernels
