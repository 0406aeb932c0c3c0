"""One entry of a benchmark's "targets" list, the form `make bench` (run_all.py) reads.

Each entry: {target, measured, floor, floor_name, unit, ratio, limit, kind, met,
cpu_ratio}. `kind` says what `limit` bounds: "max_ratio" the ratio measured / floor,
"max" the measured value itself from above, "min" from below. `met` and the ratios are
worked out here from the figures, so no benchmark states them by hand.
"""

from __future__ import annotations

KINDS = ("max_ratio", "max", "min")


def target(
    text: str,
    measured: float,
    *,
    limit: float,
    kind: str,
    unit: str,
    floor: float | None = None,
    floor_name: str | None = None,
    cpu: float | None = None,
    cpu_floor: float | None = None,
    digits: int | None = 3,
) -> dict[str, object]:
    """An entry for `measured` against `limit`; the ratio to `floor` (and of `cpu` to
    `cpu_floor`) where given, rounded to `digits` (None: as computed). Whether it is met
    is judged on the unrounded figures."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    ratio = None if floor is None else measured / floor
    cpu_ratio = None if cpu is None or cpu_floor is None else cpu / cpu_floor
    if kind == "max_ratio":
        if ratio is None:
            raise ValueError(f"{text}: a max_ratio target needs a floor")
        met = ratio <= limit
    else:
        met = measured <= limit if kind == "max" else measured >= limit

    def shown(value: float | None) -> float | None:
        return value if value is None or digits is None else round(value, digits)

    return {
        "target": text,
        "measured": measured,
        "floor": floor,
        "floor_name": floor_name,
        "unit": unit,
        "ratio": shown(ratio),
        "limit": limit,
        "kind": kind,
        "met": met,
        "cpu_ratio": shown(cpu_ratio),
    }


def ratio_lines(targets: list[dict[str, object]]) -> list[str]:
    """One line per ratio target: "stats: 1.42x wall, 1.38x CPU (aim <= 2.0; met)"."""
    return [
        f"{entry['target']}: {entry['ratio']:.2f}x wall, {entry['cpu_ratio']:.2f}x CPU "
        f"(aim <= {entry['limit']}; {'met' if entry['met'] else 'NOT met'})"
        for entry in targets
    ]
