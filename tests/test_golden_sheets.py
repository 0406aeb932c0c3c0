"""Golden sheets: `kvdrill sheet --seed S -n 8` writes exactly the files in tests/golden/.

A sheet and its key are promised byte-identical for the same seed and bank, so any
change to what they print (drawing, wording, number formatting, layout, HTML) fails
here. The files were written once from the command and read through by hand. When a
change is deliberate, rewrite them with

    KVDRILL_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_golden_sheets.py

then read `git diff tests/golden` and commit the files with the change. Nothing is
ever rewritten without that variable.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from drill.cli import cli

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("KVDRILL_UPDATE_GOLDEN") == "1"
REGENERATE = (
    "If the change is deliberate, rewrite the golden files with "
    "KVDRILL_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_golden_sheets.py, "
    "read `git diff tests/golden` and commit them with the change."
)


def first_differences(want: bytes, got: bytes, name: str, limit: int = 40) -> str:
    diff = difflib.unified_diff(
        want.decode("utf-8", "replace").splitlines(),
        got.decode("utf-8", "replace").splitlines(),
        f"tests/golden/{name}",
        "now",
        lineterm="",
    )
    lines = list(diff)
    more = f"\n... and {len(lines) - limit} more diff lines" if len(lines) > limit else ""
    return "\n".join(lines[:limit]) + more


@pytest.mark.parametrize("fmt", ["md", "html"])
@pytest.mark.parametrize("seed", [1, 2024])
def test_a_sheet_and_its_key_match_the_golden_files(tmp_path, seed, fmt):
    output = tmp_path / f"sheet-{seed}.{fmt}"
    result = CliRunner().invoke(cli, ["sheet", "--seed", str(seed), "-n", "8", "-o", str(output)])
    assert result.exit_code == 0, result.output
    for name in (f"sheet-{seed}.{fmt}", f"sheet-{seed}.key.{fmt}"):
        got = (tmp_path / name).read_bytes()
        golden = GOLDEN / name
        if UPDATE:
            golden.write_bytes(got)
            continue
        assert golden.exists(), f"tests/golden/{name} is missing. {REGENERATE}"
        want = golden.read_bytes()
        assert got == want, (
            f"`kvdrill sheet --seed {seed} -n 8 --format {fmt}` no longer writes "
            f"tests/golden/{name} byte for byte.\n{first_differences(want, got, name)}\n"
            f"{REGENERATE}"
        )
