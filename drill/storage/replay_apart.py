"""The FSRS replay of a big import in a second process, beside the reading and writing.

An import into an empty database replays every review through FSRS while it reads the
file (drill.storage.history_in). The replay is Python (fsrs), the insert is SQLite: in one process
they take turns, and the replay is a third of a million-review import. Here a child
process replays the reviews the import feeds it, a batch at a time, while the import
checks and inserts the next batch.

The child is this Python in isolated mode (no PYTHON* variables, no user site, not
the current folder), given this process's module path, so it imports the very modules
the import runs and nothing a folder happens to hold. It reads one non-cram review per
line on its standard input, in time order: QUESTION_ID, a tab, REVIEWED_AT (ISO text),
a tab, RATING. When the input ends it writes the card rows (drill.srs.Replay.card_rows)
as one JSON array on its standard output; JSON keeps every float exactly (the shortest
text that reads back as the same float).

Whatever goes wrong on the child's side (it cannot start, stops early, exits with an
error, writes something other than one card row of the right types for each question
fed, with one repetition per review) makes `cards()` None: the import then replays the
database, as it does for a file out of time order. That is slower, and gives the same
cards.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import orjson

from drill.storage.reviews import CARD_COLUMNS

_NONE = type(None)
# the columns of a card row (drill.storage.reviews.CARD_COLUMNS), and the types each may hold
_CARD_TYPES: dict[str, tuple[type, ...]] = dict(
    zip(
        CARD_COLUMNS,
        [(str,), (int,), (int, _NONE), (float, _NONE), (float, _NONE), (str,), (str, _NONE),
         (int,), (int,)],
        strict=True,
    )
)  # fmt: skip
_CHILD_CODE = (
    "import json, sys; sys.path[:] = json.loads(sys.argv[1]); "
    "from drill.storage.replay_apart import main; main(sys.argv[2])"
)


# a container's CPU quota: cgroup v2, then v1 ("max" or -1: none)
CGROUP_V2_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")
CGROUP_V1_CPU = Path("/sys/fs/cgroup/cpu")


def cpus_free() -> int:
    """The CPUs this process may run on: its affinity, capped by a container's quota
    (a container given one CPU still shows all of the host's in its affinity)."""
    count = getattr(os, "process_cpu_count", None)  # Python 3.13
    if count is not None:
        cpus = count() or 1
    else:
        try:
            cpus = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):  # not on Linux, or not allowed to ask
            cpus = os.cpu_count() or 1
    quota = cgroup_cpu_quota()
    return cpus if quota is None else max(1, min(cpus, int(quota)))


def cgroup_cpu_quota() -> float | None:
    """The CPUs' worth of time a container's cgroup allows per period; None if no quota."""
    try:
        quota, period = CGROUP_V2_CPU_MAX.read_text().split()[:2]
    except (OSError, ValueError):
        try:
            quota = (CGROUP_V1_CPU / "cpu.cfs_quota_us").read_text().strip()
            period = (CGROUP_V1_CPU / "cpu.cfs_period_us").read_text().strip()
        except OSError:
            return None
    try:
        allowed, length = int(quota), int(period)
    except ValueError:  # "max": no quota
        return None
    return allowed / length if allowed > 0 and length > 0 else None


def child_command(scheduler_json: str) -> list[str]:
    """The child's command line: main() below, run by this Python on this module path."""
    path = [entry for entry in sys.path if entry]  # "" would be the current folder
    package_root = str(Path(__file__).resolve().parents[2])  # holds drill/
    if package_root not in path:
        path.append(package_root)
    return [sys.executable, "-I", "-c", _CHILD_CODE, json.dumps(path), scheduler_json]


class ReplayApart:
    """The parent's side: `add` each review, `flush` after each batch, then `cards()`;
    `close()` stops the child when the import ends any other way."""

    def __init__(self, scheduler) -> None:
        self._lines: list[str] = []
        self._fed = 0
        self._questions: set[str] = set()
        self._queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._feeder: threading.Thread | None = None
        try:
            self._child: subprocess.Popen | None = subprocess.Popen(
                child_command(json.dumps(scheduler.to_dict())),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except (OSError, ValueError):
            self._child = None

    def add(self, question_id: str, reviewed_at: str, rating: int) -> None:
        if "\t" in question_id or "\n" in question_id:  # not one line; checked names never are
            self.close()
        self._lines.append(f"{question_id}\t{reviewed_at}\t{rating}\n")
        self._fed += 1
        self._questions.add(question_id)

    def flush(self) -> None:
        """Hand the reviews added since the last flush to the child. A thread writes them:
        a pipe holds only some kilobytes, and waiting for the child to read a whole batch
        would make the two processes take turns again."""
        lines, self._lines = self._lines, []
        if self._child is None or not lines:
            return
        if self._feeder is None:
            self._feeder = threading.Thread(target=self._feed, args=(self._child,), daemon=True)
            self._feeder.start()
        self._queue.put("".join(lines).encode("utf-8", "surrogatepass"))

    def _feed(self, child: subprocess.Popen) -> None:
        """The feeding thread: write each batch in turn; None ends the input."""
        stdin = child.stdin
        assert stdin is not None
        broken = False
        while (chunk := self._queue.get()) is not None:
            if broken:
                continue  # drain: the child has gone, and cards() will say so
            try:
                stdin.write(chunk)
            except (OSError, ValueError):
                broken = True
        try:
            stdin.close()
        except OSError:
            pass

    def cards(self) -> dict[str, dict[str, Any]] | None:
        """The card rows by question id; None when the child failed."""
        self.flush()
        child = self._child
        if child is None:
            return None
        try:
            self._end_feeding()
            out = child.stdout.read()  # type: ignore[union-attr]
            child.wait()
        except (OSError, ValueError):  # a pipe that failed: the database replays
            self.close()
            return None
        except BaseException:  # an interrupt: the child must not outlive the import
            self.close()
            raise
        self._child = None
        if child.returncode != 0:
            return None
        try:
            rows = orjson.loads(out)
        except orjson.JSONDecodeError:
            return None
        return self._by_question(rows)

    def _by_question(self, rows: Any) -> dict[str, dict[str, Any]] | None:
        """`rows` by question id when they are one well-typed card row per question fed,
        with one repetition per review fed; else None."""
        if not isinstance(rows, list) or not all(_card_row(row) for row in rows):
            return None
        cards = {row["question_id"]: row for row in rows}
        if cards.keys() != self._questions or sum(row["reps"] for row in rows) != self._fed:
            return None
        return cards

    def close(self) -> None:
        """Stop the child (an import that failed, or a review that cannot be fed)."""
        child, self._child = self._child, None
        if child is not None:
            try:
                child.kill()  # the feeding thread's write fails at once
            finally:
                self._end_feeding()
                _reap(child)

    def _end_feeding(self) -> None:
        if self._feeder is not None:
            self._queue.put(None)
            self._feeder.join()
            self._feeder = None


def _card_row(row: Any) -> bool:
    return (
        isinstance(row, dict)
        and row.keys() == _CARD_TYPES.keys()
        and all(type(row[key]) in types for key, types in _CARD_TYPES.items())
    )


def _reap(child: subprocess.Popen) -> None:
    """Wait for a killed child and close its pipes."""
    child.wait()
    for pipe in (child.stdin, child.stdout):
        try:
            if pipe is not None:
                pipe.close()
        except OSError:  # what was left to write cannot be
            pass


def main(scheduler_json: str) -> None:
    """The child: replay the reviews on standard input, write the card rows."""
    from fsrs import Scheduler

    from drill.srs import Replay

    replay = Replay(Scheduler.from_dict(json.loads(scheduler_json)))
    add = replay.add
    for line in sys.stdin.buffer:
        question_id, reviewed_at, rating = line[:-1].decode("utf-8", "surrogatepass").split("\t")
        add(question_id, reviewed_at, int(rating))
    sys.stdout.buffer.write(orjson.dumps(list(replay.card_rows().values())))
