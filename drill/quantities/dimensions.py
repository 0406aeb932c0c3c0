"""The dimensions an answer can have: one table for the schema, the units and the grader.

A numeric question's answer expression yields a value in the base unit of its
dimension. Each dimension has the words messages use for it and its display
ladder: the symbols `drill.quantities.units.best_fit_unit` chooses from, smallest first.
Adding a dimension means adding a row here (and its symbols to drill.quantities.units'
reader, if it has new ones).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Dimension:
    name: str
    words: str  # how a message names it: "the answer is a time"
    ladder: tuple[str, ...]  # display symbols, smallest first ("" for a plain number)
    # whether a bare number is a natural way to give it (0.75, 12 requests) rather than a
    # number whose unit was left out (512 for 512 MiB)
    bare: bool = False


_TABLE = (
    Dimension("bytes", "a size in bytes", ("B", "KiB", "MiB", "GiB", "TiB", "PiB")),
    Dimension("seconds", "a time", ("ns", "µs", "ms", "s")),
    Dimension("bytes_per_s", "a bandwidth (bytes per second)",
              ("B/s", "kB/s", "MB/s", "GB/s", "TB/s", "PB/s")),
    Dimension("flop", "a FLOP count", ("FLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP", "EFLOP")),
    Dimension("flop_per_s", "a compute rate (FLOP/s)",
              ("FLOP/s", "MFLOP/s", "GFLOP/s", "TFLOP/s", "PFLOP/s", "EFLOP/s")),
    Dimension("tokens", "a token count", ("tokens",), bare=True),
    Dimension("tokens_per_s", "a token rate", ("tokens/s",)),
    Dimension("requests", "a request count", ("requests",), bare=True),
    Dimension("requests_per_s", "a request rate", ("requests/s",)),
    # 0..1, answered 0.75, 3/4 or 75%
    Dimension("fraction", "a fraction or percentage", ("%",), bare=True),
    Dimension("flop_per_byte", "an arithmetic intensity (FLOP/byte)", ("FLOP/B",), bare=True),
    Dimension("count", "a plain number", ("",), bare=True),
)  # fmt: skip

DIMENSIONS: dict[str, Dimension] = {d.name: d for d in _TABLE}
NAMES: tuple[str, ...] = tuple(DIMENSIONS)
# bytes shown in decimal units (537 MB) beside the binary ones (512 MiB)
DECIMAL_BYTES_LADDER = ("B", "kB", "MB", "GB", "TB", "PB")


def words(name: str | None) -> str:
    """How a message names a dimension; an unknown name as itself."""
    dimension = DIMENSIONS.get(name or "")
    return dimension.words if dimension else str(name)
