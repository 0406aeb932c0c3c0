"""Placeholders in question text: `{name}`, `{name:spec}`, and `{{` / `}}` for braces.

A spec is a unit symbol or dimension that `drill.units.format_quantity`
understands (`GiB`, `ms`, `TB/s`, `%`, `bytes`) or else a Python number format
(`,`, `.2f`). Without a spec an int is written with thousands separators
(536,870,912) and a float to 4 significant figures (0.5, 3.142, 12,346).
Only names are looked up, never attributes or indexes, and nothing is evaluated.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from drill.errors import BankError

_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
DEFAULT_FLOAT_DIGITS = 4

Value = int | float | str


@dataclass(frozen=True)
class Placeholder:
    name: str
    spec: str | None


def placeholders(template: str) -> list[Placeholder]:
    """The placeholders of `template`, in order; BankError if a brace is malformed."""
    found: list[Placeholder] = []
    for match in _TOKEN.finditer(template):
        token = match.group(0)
        if token in ("{{", "}}"):
            continue
        if token in ("{", "}"):
            raise BankError(f"lone '{token}' in {template!r}; write '{token * 2}' for a brace")
        found.append(_parse(match.group(1), template))
    return found


def _parse(inner: str, template: str) -> Placeholder:
    name, sep, spec = inner.partition(":")
    name = name.strip()
    if not _NAME.fullmatch(name):
        raise BankError(f"placeholder {{{inner}}} in {template!r} must be a name like {{layers}}")
    return Placeholder(name, spec.strip() if sep else None)


def format_value(value: Value, spec: str | None = None) -> str:
    """One value as text, by the rules in this module's docstring."""
    if isinstance(value, bool):
        raise BankError(f"cannot show {value!r}: not a number or text")
    if spec is None or spec == "":
        if isinstance(value, str):
            return value
        if isinstance(value, int):
            return f"{value:,}"
        from drill.units import format_number

        return format_number(value, DEFAULT_FLOAT_DIGITS)
    if not isinstance(value, str) and _is_unit(spec):
        from drill.units import format_quantity

        return format_quantity(value, spec)
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        # a whole number computed by division shows as 12,345, not 12,345.0
        try:
            return format(int(value), spec)
        except ValueError:
            pass
    try:
        return format(value, spec)
    except (ValueError, TypeError):
        raise BankError(f"'{spec}' is neither a unit nor a number format for {value!r}") from None


def _is_unit(spec: str) -> bool:
    from drill.units import DIMENSIONS, parse_unit

    return spec in DIMENSIONS or parse_unit(spec) is not None


def check_spec(spec: str | None) -> str | None:
    """Why `spec` could never format a number, or None when it can."""
    if spec is None or spec == "" or _is_unit(spec):
        return None
    try:
        format(1.5, spec)
    except ValueError:
        return f"'{spec}' is neither a unit symbol nor a number format"
    return None


def render(template: str, values: Mapping[str, Value]) -> str:
    """`template` with each placeholder replaced; BankError naming any unknown name."""

    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "{{":
            return "{"
        if token == "}}":
            return "}"
        if token in ("{", "}"):
            raise BankError(f"lone '{token}' in {template!r}; write '{token * 2}' for a brace")
        placeholder = _parse(match.group(1), template)
        if placeholder.name not in values:
            raise BankError(f"unknown placeholder {{{placeholder.name}}}")
        return format_value(values[placeholder.name], placeholder.spec)

    return _TOKEN.sub(replace, template)
