"""Writing output files safely: never over a database, never half-written.

Every file a command writes (sheets, keys, exports, reports, pages) goes through
`atomic_output`: the text is written to a temporary file in the target's folder,
flushed to disk, then renamed over the target, so a failure (a full disk, Ctrl-C)
leaves the old file as it was. One rule decides what may be replaced, checked for
every output of a command before the first is written (`check_outputs`): never a
file that is, or may be, a database of any kind, nor a database's companion file:

- the command's own database and its companions (drill.storage.files.database_files);
- a file that starts with SQLite's header: a kvdrill database (marked, or from before
  the mark), a copy, a backup, another application's database;
- a file with a write-ahead log, shared memory or journal beside it, whatever it holds
  now (a new database keeps its first writes in the log alone);
- a companion of another file: `X-wal`, `X-shm`, `X-journal` or `X-unsaved.jsonl`
  where X exists.

`kvdrill backup -o` has its own rule (drill.storage.backup.check_backup_target): a new file,
or a copy it made earlier of the same database. A temporary file left by a killed
command (`.NAME.PID.*.tmp`) is removed by the next write to the same target.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from drill.errors import KvdrillError
from drill.storage.files import (
    APPLICATION_ID,
    COMPANION_SUFFIXES,
    SQLITE_MAGIC,
    database_files,
    file_head,
)

# a log, shared memory or journal beside a file means it is (or was just now) a database
_DATABASE_SIGNS = ("-wal", "-shm", "-journal")
STALE_TEMP_S = 60.0  # a dead process's temporary file untouched this long is removed


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b) or a.resolve() == b.resolve()


def refuse_protected(path: Path, protected: Iterable[Path] = ()) -> None:
    """KvdrillError when `path` must not be replaced by an output: one of the `protected`
    files (the database and its companions), a companion of any other file, or a file
    that is or may be a database (see the module's docstring)."""
    refuse_database_files(path, protected)
    reason = database_at(path)
    if reason is not None:
        raise KvdrillError(f"refusing to write over {path}: {reason}")


def refuse_database_files(path: Path, protected: Iterable[Path] = ()) -> None:
    """KvdrillError when `path` is one of the `protected` files or another file's companion."""
    for own in protected:
        if _same(path, own):
            raise KvdrillError(f"refusing to write over {own}: it is kvdrill's database")
    owner = companion_owner(path)
    if owner is not None:
        raise KvdrillError(f"refusing to write over {path}: it belongs to the database {owner}")


def companion_owner(path: Path) -> Path | None:
    """The file whose companion `path` is by its name (`X-wal`, `X-shm`, `X-journal`,
    `X-unsaved.jsonl` where X exists); None otherwise."""
    name = path.name
    for suffix in COMPANION_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            owner = path.with_name(name[: -len(suffix)])
            if owner.exists():
                return owner
    return None


def database_at(path: Path) -> str | None:
    """Why `path` is, or may be, a database ("it is a kvdrill database", ...); None when
    it is neither a SQLite file nor has a log, shared memory or journal beside it."""
    kind = database_sign(path)
    if kind is None:
        return None
    if kind == "kvdrill":
        return "it is a kvdrill database"
    if kind == "sqlite":
        return "it is a SQLite database (another application's, or a kvdrill one from before its mark)"
    return f"{kind} lies beside it, so it is or may be a database"


def database_sign(path: Path) -> str | None:
    """The name of a log, shared memory or journal beside `path` (its first sign of being
    a database), else "kvdrill" or "sqlite" for a file with SQLite's header (kvdrill's
    mark in it or not), else None."""
    for suffix in _DATABASE_SIGNS:
        sign = path.with_name(path.name + suffix)
        if os.path.lexists(sign):
            return sign.name
    head = file_head(path)
    if not head.startswith(SQLITE_MAGIC):
        return None
    if len(head) >= 72 and int.from_bytes(head[68:72], "big") == APPLICATION_ID:
        return "kvdrill"
    return "sqlite"


def check_outputs(paths: Iterable[Path | None], protected: Iterable[Path] = ()) -> None:
    """Every output of one command, checked before the first is written: none may replace
    a database (refuse_protected), each folder must exist, no two may be one file, and
    none may be a folder. KvdrillError names the first that fails."""
    protected = list(protected)
    seen: list[Path] = []
    for path in paths:
        if path is None:
            continue
        refuse_protected(path, protected)
        if path.is_dir():
            raise KvdrillError(f"cannot write {path}: it is a folder")
        folder = path.parent if str(path.parent) else Path(".")
        if not path.exists() and not folder.is_dir():
            raise KvdrillError(f"cannot write {path}: there is no folder {folder}")
        for other in seen:
            if _same(path, other):
                raise KvdrillError(f"two outputs would both be written to {path}")
        seen.append(path)


def protected_files(db_path: Path | None) -> list[Path]:
    """The database (the default one when `db_path` is None) and its companion files."""
    from drill.paths import default_db_path

    files = database_files(default_db_path())
    if db_path is not None:
        files += database_files(db_path)
    return files


def temporary_beside(target: Path) -> Path:
    """A new empty file in `target`'s folder named `.NAME.PID.XXXX.tmp`, after removing
    the ones a killed process left for the same target. OSError when it cannot be made."""
    folder = target.parent if str(target.parent) else Path(".")
    sweep_stale_temporaries(folder, target.name)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}.", suffix=".tmp", dir=folder)
    os.close(fd)
    return Path(name)


def sweep_stale_temporaries(folder: Path, name: str) -> list[Path]:
    """Remove `.NAME.PID.*.tmp` files (and SQLite's companions of them) in `folder` whose
    process is gone and which nothing touched for STALE_TEMP_S; return what was removed."""
    pattern = re.compile(rf"\.{re.escape(name)}\.(\d+)(?:\.\w+)?\.tmp(?:-journal|-wal|-shm)?")
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    for entry in entries:
        match = pattern.fullmatch(entry.name)
        if match is None or _alive(int(match[1])):
            continue
        try:
            if time.time() - entry.stat(follow_symlinks=False).st_mtime < STALE_TEMP_S:
                continue
            os.unlink(entry.path)
            removed.append(Path(entry.path))
        except OSError:
            continue
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # another user's process, or no way to tell: leave its file
    return True


@contextmanager
def atomic_output(path: Path, protected: Iterable[Path] = (), *, binary: bool = False) -> Iterator[IO]:
    """Open `path` for writing; the file appears (or is replaced) only if the block succeeds.

    A path that is not a regular file (a terminal, /dev/stdout, a pipe) is written
    directly. KvdrillError names the file when it cannot be written.
    """
    protected = list(protected)
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
    try:
        temp = temporary_beside(path)
    except OSError as exc:
        raise KvdrillError(f"cannot write {path}: {exc.strerror}") from None
    try:
        with open(temp, mode, **text_args) as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        mode_bits = stat.S_IMODE(existing.st_mode) if existing else 0o666 & ~_umask()
        os.chmod(temp, mode_bits)
        refuse_protected(path, protected)  # a database may have appeared meanwhile
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
