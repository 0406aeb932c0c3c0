"""A page rendered by headless Chromium, for the tests that look at one (they skip where
no Chromium is installed)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

BROWSERS = ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome")
BROWSER = next((found for name in BROWSERS if (found := shutil.which(name))), None)
needs_browser = pytest.mark.skipif(BROWSER is None, reason="no Chromium to render the page with")


def screenshot(page: str, folder: Path, width: int, height: int):
    """The page as Chromium draws it in a window of width x height, as a PIL RGB image."""
    from PIL import Image

    html_file, png = folder / "page.html", folder / "page.png"
    html_file.write_text(page, encoding="utf-8")
    done = subprocess.run(
        [
            str(BROWSER),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--no-first-run",
            f"--user-data-dir={folder / 'profile'}",
            "--hide-scrollbars",
            f"--window-size={width},{height}",
            f"--screenshot={png}",
            html_file.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert png.exists(), done.stderr
    return Image.open(png).convert("RGB")
