"""A printable document: sections of numbered items, each a list of blocks.

A mock interview sheet and its answer key are Documents (`drill.reports.sheet` builds and
renders them); each kind of question says which blocks its items hold
(`drill.kinds`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Block:
    """One piece of an item. kind: text | label | note | answer | command | steps |
    bullets | options | space; `text` for text/label/note/answer/command, `items` for lists, `lines`
    for space (lines to write on)."""

    kind: str
    text: str = ""
    items: tuple[str, ...] = ()
    lines: int = 0


@dataclass(frozen=True)
class Item:
    number: int
    title: str  # shown after the number
    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class Section:
    title: str
    items: tuple[Item, ...]


@dataclass(frozen=True)
class Document:
    title: str
    intro: str
    sections: tuple[Section, ...]


def letter(index: int) -> str:
    """The letter a printed option or item goes by: A, B, ... (past Z, its number)."""
    return chr(ord("A") + index) if index < 26 else f"{index + 1}"
