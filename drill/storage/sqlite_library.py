"""sqlite-utils, loaded without pandas or numpy: every module takes Database and Migrations
from here.

sqlite-utils imports pandas and numpy whenever they are installed (kvdrill does not need
them, but many environments hold them), about 0.2 s and 0.1 s on every command that opens
the database, only to know their types when it makes a column from a value; kvdrill never
hands it a DataFrame or a numpy number (its tables come from its migrations), so it loads
with both hidden, unless a command has loaded them already.
"""

from __future__ import annotations

import sys

_HIDDEN = [name for name in ("pandas", "numpy") if name not in sys.modules]
for _name in _HIDDEN:
    sys.modules[_name] = None  # type: ignore[assignment]  # import pandas: ImportError
try:
    from sqlite_utils import Database
    from sqlite_utils.migrations import Migrations
finally:
    for _name in _HIDDEN:
        del sys.modules[_name]

__all__ = ["Database", "Migrations"]
