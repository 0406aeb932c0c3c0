"""A big import replays FSRS in a second process (drill.storage.replay_apart) while it inserts.

Each case names the failure it guards against: cards that differ from a replay of the
database (a scheduler not passed on, a float rounded on its way back), a child that
fails taking the import down or leaving wrong cards, a child left running after an
import that failed.
"""

import json
import signal
import subprocess
import sys

import pytest
from test_history_import import cards_of, exported, write

from drill.errors import HistoryError
from drill.srs import make_scheduler
from drill.storage import history_in as history
from drill.storage import replay_apart
from drill.storage.database import open_db
from drill.storage.history_in import import_history, rebuild_cards

# not fsrs's defaults: the child must replay with the user's own curve
OWN = make_scheduler(
    0.85,
    fuzz=False,
    parameters=[0.3, 1.1, 2.5, 7.9, 6.2, 0.7, 2.9, 0.01, 1.7, 0.15, 0.8, 1.5, 0.07, 0.25,
                1.6, 0.55, 1.9, 0.5, 0.1, 0.07, 0.15],
)  # fmt: skip


@pytest.fixture(autouse=True)
def two_cpus(monkeypatch):
    """A second CPU, whatever the machine running the tests has."""
    monkeypatch.setattr(history, "cpus_free", lambda: 2)


@pytest.fixture
def children(monkeypatch):
    """Every child process the import starts."""
    started = []
    real = subprocess.Popen

    def recording(*args, **kwargs):
        child = real(*args, **kwargs)
        started.append(child)
        return child

    monkeypatch.setattr(replay_apart.subprocess, "Popen", recording)
    return started


def test_the_second_process_replays_to_the_cards_of_the_database(tmp_path, children):
    records = [exported(n) for n in range(60)]
    write(tmp_path / "h.jsonl", records)
    db = open_db(tmp_path / "k.db")
    result = import_history(db, tmp_path / "h.jsonl", OWN, batch_size=7, apart_bytes=0)
    assert (result.read, result.added, result.cards) == (60, 60, 3)
    assert len(children) == 1 and children[0].returncode == 0
    after_import = cards_of(db)
    # pinned: the user's curve (fsrs's defaults give stability 0.41268201263530596), and
    # every float as the child made it
    card = after_import["q-1"]
    assert (card["state"], card["step"], card["reps"], card["lapses"]) == (2, None, 16, 3)
    assert card["stability"] == 0.4402047929981766
    assert card["difficulty"] == 9.477815526292227
    assert card["due"] == "2026-10-02T15:46:00.000000+00:00"
    assert card["last_review"] == "2026-10-01T15:46:00.000000+00:00"
    db.execute("delete from cards")
    rebuild_cards(db, OWN)
    assert cards_of(db) == after_import


def test_a_small_file_is_replayed_in_this_process(tmp_path, children):
    write(tmp_path / "h.jsonl", [exported(n) for n in range(60)])
    db = open_db(tmp_path / "k.db")
    assert import_history(db, tmp_path / "h.jsonl", OWN).cards == 3
    assert children == []


def rows_then(exit_code: int, **change) -> list[str]:
    """A child that reads its input, then writes card rows of the right shape for the
    three questions, changed by `change`, and exits with `exit_code`."""
    row = {
        "state": 2, "step": None, "stability": 1.5, "difficulty": 5.0,
        "due": "2026-10-09T09:00:00.000000+00:00",
        "last_review": "2026-10-01T09:00:00.000000+00:00", "reps": 16, "lapses": 0,
    }  # fmt: skip
    # 16 non-cram reviews of each question are fed: rows that keep reps add up
    rows = [{"question_id": f"q-{n}", **row, **change} for n in range(3)]
    code = f"import sys; sys.stdin.read(); print({json.dumps(json.dumps(rows))}); sys.exit({exit_code})"
    return [sys.executable, "-c", code]


FAILING = {
    "writes rows, then fails": rows_then(1),
    "writes a repetition too many": rows_then(0, reps=17),
    "writes a float as an integer": rows_then(0, stability=2),
    "writes a question never fed": rows_then(0, question_id="q-9"),
    "cannot start": ["/nonexistent/python3"],
    "exits with an error": [sys.executable, "-c", "import sys; sys.exit(3)"],
    "stops reading": [sys.executable, "-c", "import sys; sys.stdin.close(); sys.exit(0)"],
    "writes no list": [sys.executable, "-c", "import sys; sys.stdin.read(); print('{}')"],
    "writes other rows": [
        sys.executable,
        "-c",
        "import sys; sys.stdin.read(); print('[{\"question_id\": \"q-1\"}]')",
    ],
}


@pytest.mark.parametrize("failure", sorted(FAILING))
def test_a_failing_second_process_leaves_the_cards_to_the_database(
    tmp_path, monkeypatch, failure
):
    monkeypatch.setattr(replay_apart, "child_command", lambda _scheduler: FAILING[failure])
    write(tmp_path / "h.jsonl", [exported(n) for n in range(60)])
    db = open_db(tmp_path / "k.db")
    result = import_history(db, tmp_path / "h.jsonl", OWN, batch_size=7, apart_bytes=0)
    assert (result.read, result.added, result.cards) == (60, 60, 3)
    after_import = cards_of(db)
    assert after_import["q-1"]["reps"] == 16
    db.execute("delete from cards")
    rebuild_cards(db, OWN)
    assert cards_of(db) == after_import


def test_rows_of_the_right_shape_that_add_up_are_taken_as_the_child_wrote_them(
    tmp_path, monkeypatch
):
    """The control for the failures above: each differs from these rows in one way."""
    monkeypatch.setattr(replay_apart, "child_command", lambda _scheduler: rows_then(0))
    write(tmp_path / "h.jsonl", [exported(n) for n in range(60)])
    db = open_db(tmp_path / "k.db")
    import_history(db, tmp_path / "h.jsonl", OWN, batch_size=7, apart_bytes=0)
    assert {card["stability"] for card in cards_of(db).values()} == {1.5}


def test_a_file_out_of_order_stops_the_second_process(tmp_path, children):
    records = [exported(n) for n in range(60)]
    records[20], records[40] = records[40], records[20]
    write(tmp_path / "h.jsonl", records)
    db = open_db(tmp_path / "k.db")
    assert import_history(db, tmp_path / "h.jsonl", OWN, batch_size=7, apart_bytes=0).cards == 3
    assert len(children) == 1 and children[0].returncode == -signal.SIGKILL
    after_import = cards_of(db)
    db.execute("delete from cards")
    rebuild_cards(db, OWN)
    assert cards_of(db) == after_import


def test_a_failed_import_stops_the_second_process(tmp_path, children):
    records = [exported(n) for n in range(60)]
    records[45]["rating"] = 9
    write(tmp_path / "h.jsonl", records)
    db = open_db(tmp_path / "k.db")
    with pytest.raises(HistoryError, match=r"h\.jsonl:46: "):
        import_history(db, tmp_path / "h.jsonl", OWN, batch_size=7, apart_bytes=0)
    assert len(children) == 1 and children[0].returncode == -signal.SIGKILL
    assert db.execute("select count(*) from reviews").fetchone()[0] == 0


def test_the_child_reads_lines_and_writes_card_rows():
    lines = "q-a\t2026-10-01T09:00:00.000000+00:00\t3\nq-a\t2026-10-03T09:00:00.000000+00:00\t1\n"
    done = subprocess.run(
        replay_apart.child_command(json.dumps(make_scheduler(fuzz=False).to_dict())),
        input=lines.encode(),
        capture_output=True,
        check=True,
    )
    assert done.stdout == (
        b'[{"question_id":"q-a","state":1,"step":0,"stability":0.6075801062519337,'
        b'"difficulty":7.394502741279718,"due":"2026-10-03T09:01:00.000000+00:00",'
        b'"last_review":"2026-10-03T09:00:00.000000+00:00","reps":2,"lapses":0}]'
    )


def test_the_child_runs_nothing_the_current_folder_holds(tmp_path, monkeypatch, children):
    folder = tmp_path / "downloads"
    (folder / "drill").mkdir(parents=True)
    marker = tmp_path / "ran"
    planted = f"open({str(marker)!r}, 'w').close()\n"
    for name in ("orjson.py", "json.py", "random.py", "drill/__init__.py"):
        (folder / name).write_text(planted)
    write(tmp_path / "h.jsonl", [exported(n) for n in range(60)])
    db = open_db(tmp_path / "k.db")
    monkeypatch.chdir(folder)
    import_history(db, tmp_path / "h.jsonl", OWN, apart_bytes=0)
    assert children[0].returncode == 0
    assert not marker.exists()
    assert cards_of(db)["q-1"]["stability"] == 0.4402047929981766


def test_an_interrupt_while_the_cards_come_back_stops_the_child(tmp_path, monkeypatch, children):
    real = replay_apart.ReplayApart._end_feeding
    interrupted = []

    def interrupt_once(self):
        if not interrupted:
            interrupted.append(1)
            raise KeyboardInterrupt
        real(self)

    monkeypatch.setattr(replay_apart.ReplayApart, "_end_feeding", interrupt_once)
    write(tmp_path / "h.jsonl", [exported(n) for n in range(60)])
    db = open_db(tmp_path / "k.db")
    with pytest.raises(KeyboardInterrupt):
        import_history(db, tmp_path / "h.jsonl", OWN, apart_bytes=0)
    assert children[0].returncode == -signal.SIGKILL
    assert db.execute("select count(*) from reviews").fetchone()[0] == 0


@pytest.mark.parametrize(
    "v2, v1, cpus",
    [
        ("max 100000\n", None, 8),  # no quota: the affinity's 8
        ("100000 100000\n", None, 1),  # --cpus=1 in a container
        ("250000 100000\n", None, 2),  # 2.5 CPUs' worth: two whole ones
        ("50000 100000\n", None, 1),  # half a CPU: still one
        (None, ("-1", "100000"), 8),  # cgroup v1, no quota
        (None, ("200000", "100000"), 2),
        (None, None, 8),  # no cgroup files at all
        ("garbage", None, 8),
    ],
)
def test_a_containers_cpu_quota_caps_the_cpus_free(tmp_path, monkeypatch, v2, v1, cpus):
    v2_file, v1_dir = tmp_path / "cpu.max", tmp_path / "cpu"
    if v2 is not None:
        v2_file.write_text(v2)
    if v1 is not None:
        v1_dir.mkdir()
        (v1_dir / "cpu.cfs_quota_us").write_text(v1[0] + "\n")
        (v1_dir / "cpu.cfs_period_us").write_text(v1[1] + "\n")
    monkeypatch.setattr(replay_apart, "CGROUP_V2_CPU_MAX", v2_file)
    monkeypatch.setattr(replay_apart, "CGROUP_V1_CPU", v1_dir)
    monkeypatch.setattr(replay_apart.os, "process_cpu_count", lambda: 8, raising=False)
    assert replay_apart.cpus_free() == cpus
