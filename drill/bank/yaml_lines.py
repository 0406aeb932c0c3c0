"""YAML with lines: a safe loader whose mappings and lists remember where they are.

Bank problems are reported as ``file:line``; these containers carry the line
of every mapping, key and list item (1-based) for that.
"""

from __future__ import annotations

from typing import Any

import yaml


class LocatedMap(dict):
    """A YAML mapping that knows its own line and the line of each key (1-based)."""

    line: int = 0
    key_lines: dict[Any, int]


class LocatedList(list):
    """A YAML sequence that knows its own line and the line of each item (1-based)."""

    line: int = 0
    item_lines: list[int]


_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class LineLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """yaml's safe loader (no Python tags), recording where things are."""


_MERGE_TAG = "tag:yaml.org,2002:merge"


def _check_duplicate_keys(node: yaml.MappingNode) -> None:
    seen: dict[str, int] = {}
    for key_node, _ in node.value:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE_TAG:
            continue
        line = key_node.start_mark.line + 1
        if key_node.value in seen:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"duplicate key '{key_node.value}' (first at line {seen[key_node.value]})",
                key_node.start_mark,
            )
        seen[key_node.value] = line


def _construct_map(loader: LineLoader, node: yaml.MappingNode):
    data = LocatedMap()
    data.line = node.start_mark.line + 1
    data.key_lines = {}
    yield data
    _check_duplicate_keys(node)
    loader.flatten_mapping(node)
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=False)
        try:
            hash(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                None, None, "a mapping key must be a plain value", key_node.start_mark
            ) from None
        data[key] = loader.construct_object(value_node, deep=False)
        data.key_lines[key] = key_node.start_mark.line + 1


def _construct_seq(loader: LineLoader, node: yaml.SequenceNode):
    data = LocatedList()
    data.line = node.start_mark.line + 1
    data.item_lines = [child.start_mark.line + 1 for child in node.value]
    yield data
    data.extend(loader.construct_object(child, deep=False) for child in node.value)


# Bank numbers are small; a longer integer is refused before Python converts it
# (which it would refuse past 4,300 digits, with an error that names no line).
MAX_INT_DIGITS = 100


def _construct_int(loader: LineLoader, node: yaml.ScalarNode) -> int:
    digits = sum(ch.isdigit() for ch in str(node.value))
    if digits > MAX_INT_DIGITS:
        raise yaml.constructor.ConstructorError(
            None,
            None,
            f"an integer of {digits:,} digits is too long (at most {MAX_INT_DIGITS})",
            node.start_mark,
        )
    return loader.construct_yaml_int(node)


LineLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
LineLoader.add_constructor("tag:yaml.org,2002:map", _construct_map)
LineLoader.add_constructor("tag:yaml.org,2002:seq", _construct_seq)
