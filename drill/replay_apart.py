"""The FSRS replay of a big import in a second process, beside the reading and writing.

An import into an empty database replays every review through FSRS while it reads the
file (drill.history). The replay is Python (fsrs), the insert is SQLite: in one process
they take turns, and the replay is a third of a million-review import. Here a child
process, `python -m drill.replay_apart SCHEDULER_JSON`, replays the reviews the import
feeds it, a batch at a time, while the import checks and inserts the next batch.

The child reads one non-cram review per line on its standard input, in time order:
QUESTION_ID, a tab, REVIEWED_AT (ISO text), a tab, RATING. When the input ends it writes
the card rows (drill.srs.Replay.card_rows) as one JSON array on its standard output.
JSON keeps every float exactly (the shortest text that reads back as the same float).

Whatever goes wrong on the child's side (it cannot start, stops early, exits with an
error, writes something that is not a list of card rows) makes `cards()` None: the
import then replays the database, as it does for a file out of time order. That is
slower, and gives the same cards.
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

# the columns of a card row, as drill.srs writes them
_CARD_KEYS = frozenset(
    ("question_id", "state", "step", "stability", "difficulty", "due", "last_review", "reps", "lapses")
)


def cpus_free() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def child_command(scheduler_json: str) -> list[str]:
    """The child's command line: this module, run by this Python."""
    return [sys.executable, "-m", "drill.replay_apart", scheduler_json]


class ReplayApart:
    """The parent's side: `add` each review, `flush` after each batch, then `cards()`;
    `close()` stops the child when the import ends any other way."""

    def __init__(self, scheduler) -> None:
        self._lines: list[str] = []
        self._queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._feeder: threading.Thread | None = None
        package_root = str(Path(__file__).resolve().parent.parent)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
        try:
            self._child: subprocess.Popen | None = subprocess.Popen(
                child_command(json.dumps(scheduler.to_dict())),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=env,
            )
        except (OSError, ValueError):
            self._child = None

    def add(self, question_id: str, reviewed_at: str, rating: int) -> None:
        if "\t" in question_id or "\n" in question_id:  # not one line; checked names never are
            self.close()
        self._lines.append(f"{question_id}\t{reviewed_at}\t{rating}\n")

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
        child, self._child = self._child, None
        if child is None:
            return None
        self._end_feeding()
        try:
            out = child.stdout.read()  # type: ignore[union-attr]
            child.wait()
        except (OSError, ValueError):
            _stop(child)
            return None
        if child.returncode != 0:
            return None
        try:
            rows = orjson.loads(out)
        except orjson.JSONDecodeError:
            return None
        if not isinstance(rows, list) or not all(
            isinstance(row, dict) and row.keys() == _CARD_KEYS for row in rows
        ):
            return None
        return {row["question_id"]: row for row in rows}

    def close(self) -> None:
        """Stop the child (an import that failed, or a review that cannot be fed)."""
        child, self._child = self._child, None
        if child is not None:
            child.kill()  # the feeding thread's write fails at once
            self._end_feeding()
            _stop(child)

    def _end_feeding(self) -> None:
        if self._feeder is not None:
            self._queue.put(None)
            self._feeder.join()
            self._feeder = None


def _stop(child: subprocess.Popen) -> None:
    child.kill()
    child.wait()
    for pipe in (child.stdin, child.stdout):
        try:
            if pipe is not None:
                pipe.close()
        except OSError:  # what was left to write cannot be
            pass


def main() -> None:
    from fsrs import Scheduler

    from drill.srs import Replay

    replay = Replay(Scheduler.from_dict(json.loads(sys.argv[1])))
    add = replay.add
    for line in sys.stdin.buffer:
        question_id, reviewed_at, rating = line[:-1].decode("utf-8", "surrogatepass").split("\t")
        add(question_id, reviewed_at, int(rating))
    sys.stdout.buffer.write(orjson.dumps(list(replay.card_rows().values())))


if __name__ == "__main__":
    main()
