"""Writing output files safely: never over the database, never half-written.

Every file a command writes (sheets, keys, exports, reports, backups by hand) goes
through `atomic_output`: the text is written to a temporary file in the target's
folder, flushed to disk, then renamed over the target, so a failure (a full disk,
Ctrl-C) leaves the old file as it was. Paths that name the database or the files
SQLite keeps beside it are refused before anything is opened, and so is any other
file that is a kvdrill database (a second one, a copy, a backup); `kvdrill backup -o`
alone may renew a copy it made before.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from drill.errors import KvdrillError


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b) or a.resolve() == b.resolve()


def refuse_protected(
    path: Path, protected: Iterable[Path], *, other_databases: bool = True
) -> None:
    """KvdrillError when `path` is one of the `protected` files (the database and its
    companions), or, with `other_databases`, any other kvdrill database (a second
    database, a copy, a backup): no text output belongs in its place."""
    for own in protected:
        if _same(path, own):
            raise KvdrillError(f"refusing to write over {own}: it is kvdrill's database")
    if other_databases and _is_kvdrill_database(path):
        raise KvdrillError(f"refusing to write over {path}: it is a kvdrill database")


def _is_kvdrill_database(path: Path) -> bool:
    """Whether `path` is a regular file with a SQLite header carrying kvdrill's mark."""
    from drill.store import APPLICATION_ID

    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return False  # a pipe or a terminal: reading it could block
        with open(path, "rb") as file:
            head = file.read(72)
    except OSError:
        return False
    return (
        head.startswith(b"SQLite format 3\x00")
        and len(head) == 72
        and int.from_bytes(head[68:72], "big") == APPLICATION_ID
    )


def protected_files(db_path: Path | None) -> list[Path]:
    """The database (the default one when `db_path` is None) and its -wal/-shm/-journal files."""
    from drill.paths import default_db_path
    from drill.store import database_files

    files = database_files(default_db_path())
    if db_path is not None:
        files += database_files(db_path)
    return files


@contextmanager
def atomic_output(path: Path, protected: Iterable[Path] = (), *, binary: bool = False) -> Iterator[IO]:
    """Open `path` for writing; the file appears (or is replaced) only if the block succeeds.

    A path that is not a regular file (a terminal, /dev/stdout, a pipe) is written
    directly. KvdrillError names the file when it cannot be written.
    """
    refuse_protected(path, protected)
    mode = "wb" if binary else "w"
    text_args: dict[str, Any] = {} if binary else {"encoding": "utf-8", "newline": ""}
    try:
        existing = path.stat()
    except FileNotFoundError:
        existing = None
    except OSError as exc:
        raise KvdrillError(f"cannot write {path}: {exc.strerror}") from None
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        if stat.S_ISDIR(existing.st_mode):
            raise KvdrillError(f"cannot write {path}: it is a folder")
        try:
            with open(path, mode, **text_args) as out:
                yield out
        except OSError as exc:
            raise KvdrillError(f"cannot write {path}: {exc.strerror}") from None
        return
    folder = path.parent if str(path.parent) else Path(".")
    try:
        fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise KvdrillError(f"cannot write {path}: {exc.strerror}") from None
    temp = Path(temp_name)
    try:
        with os.fdopen(fd, mode, **text_args) as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        mode_bits = stat.S_IMODE(existing.st_mode) if existing else 0o666 & ~_umask()
        os.chmod(temp, mode_bits)
        os.replace(temp, path)
    except OSError as exc:
        temp.unlink(missing_ok=True)
        raise KvdrillError(f"cannot write {path}: {exc.strerror}; it was left as it was") from None
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def write_text(path: Path, text: str, protected: Iterable[Path] = ()) -> None:
    with atomic_output(path, protected) as out:
        out.write(text)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
