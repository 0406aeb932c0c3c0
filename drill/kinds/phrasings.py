"""One shared vocabulary of phrasings that say the same thing, for every question's cues.

`question_bank/phrasings.yaml` lists groups of equivalent phrasings ("one forward pass",
"a single forward pass", "one batched forward pass"; "Little's law", "arrival rate
times time in system"). A cue that is one of a group's phrasings (compared as stems,
drill.kinds.cues) is found wherever any phrasing of the group is, so a question lists one
way of saying a thing and every answer that says it another way in the vocabulary is
read. Questions share the file: a phrasing added for one serves all.

The file is read once per process, on the first cue matched, with yaml's safe loader; a
missing or malformed file is a BankError naming it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


def builtin_file() -> Path:
    from question_bank import BANK_DIR

    return BANK_DIR / "phrasings.yaml"


def load_groups(path: Path | None = None) -> list[list[str]]:
    """The groups of phrasings in `path`; BankError naming the file when it is not a
    mapping with `groups:`, a list of lists of at least two non-empty strings."""
    import yaml

    from drill.errors import BankError

    path = path or builtin_file()
    try:
        # the C loader where built: the same safe rules, several times faster; the file is
        # read when the first answer is, so its cost is that answer's
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)  # noqa: S506
    except (OSError, yaml.YAMLError) as exc:
        raise BankError(f"{path.name}: cannot read the phrasings ({exc})") from None
    groups = data.get("groups") if isinstance(data, dict) else None
    if not isinstance(groups, list):
        raise BankError(f"{path.name}: expected a mapping with `groups:`, a list of groups")
    for i, group in enumerate(groups):
        if (
            not isinstance(group, list)
            or len(group) < 2
            or not all(isinstance(p, str) and p.strip() for p in group)
        ):
            raise BankError(
                f"{path.name}: groups[{i}] must list at least two phrasings, each a string"
            )
    return groups


def equivalents_table(
    groups: list[list[str]], stems_of: Callable[[str], tuple[str, ...]]
) -> dict[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """Stems of each phrasing -> the stems of every phrasing of its groups (itself
    included); a phrasing in two groups gets both groups' phrasings."""
    table: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
    for group in groups:
        forms = [stems for stems in map(stems_of, group) if stems]
        for stems in forms:
            known = table.setdefault(stems, [])
            known += [f for f in forms if f not in known]
    return {stems: tuple(forms) for stems, forms in table.items()}
