"""What a numeric question counts, and whether an answer's count noun names the same thing.

A question that asks "How many blocks does the pool hold?" counts blocks: "16,021 blocks"
answers it, and so does a bare 16,021; "16,021 requests" names another thing, and the
grader says so rather than credit it (drill.kinds.numeric_grade). The thing counted is read
from the question's text: the first count noun within three words after "how many" ("how
many distinct experts") or "the fewest" ("the fewest splits"), "at which position",
"what batch size" (a count of sequences) or "in dollars" (a price); failing those, a
question whose answer is tokens or requests counts those. A question whose text names no
thing ("how many times as large") takes any count noun.

A sequence is a request (one per request while serving), so either answers for the other.
Money ("$0.83", "0.83 USD") answers a question in dollars and no other: "$8" is no answer
to "how many times as large", and "0.11 GPUs" none to a price.
"""

from __future__ import annotations

import functools
import re

from drill.kinds.instance import Instance
from drill.quantities.units import parse_unit, singular

_HOW_MANY = re.compile(
    r"\b(?:how many|the fewest|the (?:smallest|least|minimum) number of)\s+((?:[\w-]+\s*){1,3})",
    re.IGNORECASE,
)
# asks that name what they count without "how many"
_ASKS = (
    (re.compile(r"\b(?:at )?which position\b", re.IGNORECASE), "position"),
    (re.compile(r"\bwhat batch size\b", re.IGNORECASE), "sequence"),
    (re.compile(r"\bin (?:US )?dollars\b", re.IGNORECASE), "dollar"),
)
# a size counted in bits or bytes, as a plain number ("how many bits does one element take")
_SIZE_NOUNS = {"bit": "bit", "bits": "bit", "byte": "byte", "bytes": "byte"}
_DIMENSION_NOUN = {"tokens": "token", "requests": "request"}
# one thing under two names
_SAME = {"sequence": "request"}


def counted_noun(instance: Instance) -> str | None:
    """The thing `instance` counts, in the singular ("block", "bit"), or None where its
    text names none (module docstring)."""
    return _counted_noun(instance.text or "", instance.unit)


# read once per question text: every answer to a draw asks the same
@functools.lru_cache(maxsize=4096)
def _counted_noun(text: str, unit: str | None) -> str | None:
    match = _HOW_MANY.search(text)
    if match is not None:
        for word in match[1].split():
            if word.lower() in _SIZE_NOUNS:
                return _SIZE_NOUNS[word.lower()]
            noun = singular(word)
            if noun is not None:
                return noun
            if parse_unit(word) is not None:
                break  # "how many prefill FLOPs": a unit, not a thing counted
    for pattern, noun in _ASKS:
        if pattern.search(text):
            return noun
    return _DIMENSION_NOUN.get(unit or "")


def same_thing(asked: str, given: str) -> bool:
    """Whether a count of `given` answers a question that counts `asked` (singulars)."""
    return _SAME.get(asked, asked) == _SAME.get(given, given)


def other_thing(instance: Instance, asked: str | None, given: str | None, given_dim: str) -> bool:
    """Whether an answer counting `given` (its dimension `given_dim`) names something other
    than the `asked` thing of `instance`. An answer in the question's own dimension of
    tokens or requests counts what the question counts (40,513 tokens for "how many
    positions"), whatever noun it used."""
    if given is None:
        return False
    if "dollar" in (asked, given):
        return asked != given  # money answers a question in dollars, and only that
    if asked is None or asked in ("bit", "byte"):
        return False
    if given_dim == instance.unit and given_dim in _DIMENSION_NOUN:
        return False
    return not same_thing(asked, given)
