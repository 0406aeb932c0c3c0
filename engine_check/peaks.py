"""The device's peaks, measured in the same run (spec sheets are in engine_check.specs).

* Matmul throughput: an n x n by n x n matmul at the run's dtype, 2·n³ FLOPs.
* Copy bandwidth: `dst.copy_(src)` of a tensor far larger than any cache; each
  element is read once and written once, so bytes moved = 2 × the tensor's size.
  (A CPU also reads each destination line before writing it, which this count
  leaves out; a read-only stream such as a decode step's weight reads can
  therefore beat 100 % of it on a CPU.)

A peak is the most the device did, so each rate uses the fastest timed repeat;
utilisations measured against it err low, never high. (On a shared machine the
median copy can swing by a third from run to run; the fastest one moves far less.)
The timing, with its median, is returned too.
"""

from __future__ import annotations

import torch

from engine_check.timing import DeviceTimer, Timing, measure


def measure_matmul_peak(
    timer: DeviceTimer, dtype: torch.dtype, n: int, warmups: int, repeats: int
) -> tuple[float, Timing]:
    """(FLOP/s of the fastest repeat, timing) of an n x n x n matmul on `timer`'s device."""
    gen = torch.Generator(device=timer.device).manual_seed(1)
    a = torch.rand(n, n, generator=gen, device=timer.device, dtype=torch.float32).to(dtype)
    b = torch.rand(n, n, generator=gen, device=timer.device, dtype=torch.float32).to(dtype)
    out = torch.empty(n, n, device=timer.device, dtype=dtype)
    timing = measure(lambda: torch.mm(a, b, out=out), timer, warmups, repeats)
    return 2 * n**3 / (timing.best_ms / 1e3), timing


def measure_copy_peak(
    timer: DeviceTimer, dtype: torch.dtype, nbytes: int, warmups: int, repeats: int
) -> tuple[float, Timing]:
    """(bytes/s of the fastest repeat, timing) of copying an `nbytes` tensor, counting
    2 × nbytes moved."""
    elems = nbytes // torch.empty((), dtype=dtype).element_size()
    src = torch.ones(elems, device=timer.device, dtype=dtype)
    dst = torch.zeros(elems, device=timer.device, dtype=dtype)  # touched: no page faults timed
    timing = measure(lambda: dst.copy_(src), timer, warmups, repeats)
    moved = 2 * elems * src.element_size()
    return moved / (timing.best_ms / 1e3), timing
