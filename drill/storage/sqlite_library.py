"""sqlite-utils, loaded without pandas: every module takes Database and Migrations from here.

sqlite-utils imports pandas whenever it is installed (kvdrill does not need it, but many
environments hold it), about 0.2 s on every command that opens the database; kvdrill never
hands it a DataFrame, so it loads with pandas hidden.
"""

from __future__ import annotations

import sys

_HIDE_PANDAS = "pandas" not in sys.modules
if _HIDE_PANDAS:
    sys.modules["pandas"] = None  # type: ignore[assignment]  # import pandas: ImportError
try:
    from sqlite_utils import Database
    from sqlite_utils.migrations import Migrations
finally:
    if _HIDE_PANDAS:
        del sys.modules["pandas"]

__all__ = ["Database", "Migrations"]
