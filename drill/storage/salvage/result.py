"""What a salvage saved, lost and left out."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class LostRange:
    """Reviews the file lists that could not be saved: `count` of the rowids from `low`
    to `high` (the others there do not exist, or were saved), answered on the days from
    `first_day` to `last_day` as the index says (None where no index gives a time)."""

    low: int
    high: int
    count: int
    first_day: str | None = None
    last_day: str | None = None


@dataclass
class Salvage:
    saved: int = 0
    lost: list[LostRange] = field(default_factory=list)
    # rowid ranges whose reviews neither the table nor an index can name: at most
    # that many reviews were there
    unreadable: list[tuple[int, int]] = field(default_factory=list)
    failed_checks: int = 0  # reviews read that an import would refuse
    log_left_out: bool = False  # the write-ahead log could not be read with the file

    @property
    def lost_count(self) -> int:
        return sum(r.count for r in self.lost)

    @property
    def unreadable_rowids(self) -> int:
        """How many rowids lie in the unreadable ranges (at most that many reviews)."""
        return sum(high - low + 1 for low, high in self.unreadable)

    @property
    def complete(self) -> bool:
        """Every review the file references was saved (and nothing was left out)."""
        return not (self.lost or self.unreadable or self.failed_checks or self.log_left_out)
