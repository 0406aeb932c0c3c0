"""Placeholders in question text: `{name}`, `{name:spec}`, and `{{` / `}}` for braces.

A spec is a unit symbol or dimension that `drill.quantities.units.format_quantity`
understands (`GiB`, `ms`, `TB/s`, `%`, `bytes`) or else a Python number format
(`,`, `.2f`) whose width is at most MAX_FORMAT_WIDTH (40) and precision at most
MAX_FORMAT_PRECISION (20), so one placeholder cannot fill a screen (or memory).
Without a spec an int is written with thousands separators (536,870,912) and a
float to 4 significant figures (0.5, 3.142, 12,346). Only names are looked up,
never attributes or indexes, and nothing is evaluated: a dotted name such as
`gpu.h100.bandwidth` is one name, looked up whole.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from drill.errors import BankError

_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_][A-Za-z0-9_-]*)*")
DEFAULT_FLOAT_DIGITS = 4
MAX_FORMAT_WIDTH = 40
MAX_FORMAT_PRECISION = 20
# Python's format spec: [[fill]align][sign][z][#][0][width][grouping][.precision][type]
_FORMAT_SPEC = re.compile(
    r"(?:.?[<>=^])?[-+ ]?z?#?0?(?P<width>\d*)[,_]?(?:\.(?P<precision>\d*))?[a-zA-Z%]?",
    re.DOTALL,
)

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


def spec_size_problem(spec: str) -> str | None:
    """Why a number format's width or precision is too large to use, or None."""
    match = _FORMAT_SPEC.fullmatch(spec)
    if match is None:
        # not a format this reader knows; still, no number in it may be large
        if any(len(n) > 2 or int(n) > MAX_FORMAT_WIDTH for n in re.findall(r"\d+", spec)):
            return f"'{spec}' holds a number larger than {MAX_FORMAT_WIDTH}"
        return None
    width, precision = match["width"], match["precision"]
    if width and (len(width) > 6 or int(width) > MAX_FORMAT_WIDTH):
        return f"'{spec}' is wider than {MAX_FORMAT_WIDTH} characters"
    if precision and (len(precision) > 6 or int(precision) > MAX_FORMAT_PRECISION):
        return f"'{spec}' asks for more than {MAX_FORMAT_PRECISION} digits"
    return None


def format_value(value: Value, spec: str | None = None) -> str:
    """One value as text, by the rules in this module's docstring."""
    if isinstance(value, bool):
        raise BankError(f"cannot show {value!r}: not a number or text")
    if spec is None or spec == "":
        if isinstance(value, str):
            return value
        if isinstance(value, int):
            return f"{value:,}"
        from drill.quantities.units import format_number

        return format_number(value, DEFAULT_FLOAT_DIGITS)
    if not isinstance(value, str) and _is_unit(spec):
        from drill.quantities.units import format_quantity

        return format_quantity(value, spec)
    too_large = spec_size_problem(spec)
    if too_large:
        raise BankError(too_large)
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        # a whole number computed by division shows as 12,345, not 12,345.0
        try:
            return format(int(value), spec)
        except (ValueError, OverflowError):  # OverflowError: "c" of a number past U+10FFFF
            pass
    try:
        return format(value, spec)
    except (ValueError, TypeError, OverflowError):
        raise BankError(f"'{spec}' is neither a unit nor a number format for {value!r}") from None


def _is_unit(spec: str) -> bool:
    from drill.quantities.units import DIMENSIONS, parse_unit

    return spec in DIMENSIONS or parse_unit(spec) is not None


def check_spec(spec: str | None) -> str | None:
    """Why `spec` could never format a number, or None when it can."""
    if spec is None or spec == "" or _is_unit(spec):
        return None
    too_large = spec_size_problem(spec)
    if too_large:
        return too_large
    try:
        format(1.5, spec)
    except ValueError:
        return f"'{spec}' is neither a unit symbol nor a number format"
    return None


def template_problem(template: str) -> str | None:
    """Why a template's number formats are too large to render, or None (schema check).

    Malformed braces and unknown names are left to `kvdrill bank lint` and `render`,
    which know the values a template may use.
    """
    try:
        found = placeholders(template)
    except BankError:
        return None
    for placeholder in found:
        if placeholder.spec and not _is_unit(placeholder.spec):
            problem = spec_size_problem(placeholder.spec)
            if problem:
                return f"{{{placeholder.name}:{placeholder.spec}}}: {problem}"
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
