"""The whole command line under generated input: nothing crashes, nothing is lost.

Every command is driven with generated flags and values, answers, bank files,
config files, history lines and database states (none, a kvdrill database with
history, an empty file, another application's database, a damaged one, one from
before the application id, one whose last answer is in its write-ahead log alone,
a copy made by `kvdrill backup`), and outputs aimed at other databases beside it.
Each run must satisfy one property:

- it exits 0, or exits 1 or 2 with exactly one line on stderr, `Error: ...`
  (no traceback, no "internal error");
- the database is byte-identical, or passes `integrity_check` with every review it
  held before still there;
- the other databases in the folder (another kvdrill database, another application's,
  one from before the mark) are byte-identical, and no companion file appears beside
  them.

Examples are derandomised so CI sees the same cases every run; set
KVDRILL_FUZZ_EXAMPLES=500 KVDRILL_FUZZ_RANDOM=1 for a deeper, random search.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drill.cli import cli

HERE = Path(__file__).parent
EXAMPLES = int(os.environ.get("KVDRILL_FUZZ_EXAMPLES", "20"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not os.environ.get("KVDRILL_FUZZ_RANDOM"),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                           HealthCheck.data_too_large],
    database=None,
)  # fmt: skip

# ------------------------------------------------------------------ values

NASTY = [
    "", " ", "0", "-1", "1", "2", "3", "4", "7", "-0", "nan", "NaN", "inf", "-inf", "1e308",
    "1e309", "-1e308", "1e-320", "1e19", "1e303", "9" * 5000, "0x10", "1_000", "½", "٣",
    "\x1b[31mred\x1b[0m", "\x00", "\udcff", "--", "-h", "/dev/null", "/dev/zero", "DIR", "DB", "DB-wal",
    "MISSING", "OTHER", "OTHER-wal", "APP", "OLD", "0001-01-01", "9999-12-31T23:59:59", "2026-11-20T09:00:00+00:00",
    "2026-11-20T09:00:00+25:00", "kv-cache", "quiz-fixture", "qf-kv-bytes", "qf-choice",
    "kv-bytes-per-request", "llama-3-8b", "deepseek-v3", "fp8", "int4", "bf16",
]  # fmt: skip
ANSWERS = [
    "0.5 GiB", "2 MiB", "2,097,152", "2*2*4*64*2*1024", "1e308", "1e303", "1e-320", "-1e308",
    "inf", "nan", "2**1000", "1e308*10", "9" * 400, "(" * 300, "75%", "3/4", "1 2", "2 1", "1",
    "weights intensity per byte", "", "h", "s", "?", "q", "x" * 3000, "\udcff\udcfe x",
    "0.5 GB/s", "12 ms", "1/0", "0/0", "\x1b]0;title\x07",
]  # fmt: skip


def nasty_text() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(NASTY), st.text(max_size=12), st.integers().map(str),
                     st.floats().map(repr))  # fmt: skip


def answer_text() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(ANSWERS), st.text(max_size=20),
                     st.floats(allow_nan=True).map(lambda f: f"{f!r} GiB"))  # fmt: skip


# ------------------------------------------------------------------ database states


def _make_states(root: Path) -> dict[str, Path]:
    """One file per database state, made once per test module."""
    from dbstates import damage, foreign, kvdrill_db, settled_db, unmarked_v1

    states = {}
    states["kvdrill"] = kvdrill_db(root / "kvdrill.db")
    run = CliRunner().invoke
    args = ["quiz", "--db", str(states["kvdrill"]), "--bank", str(HERE / "banks_quiz"),
            "--now", "2026-11-21T09:00:00+00:00", "--no-fuzz", "--seed", "5"]  # fmt: skip
    assert run(cli, args, input="1 MiB\n\ns\nweights\n\nq\n").exit_code == 0
    states["empty"] = root / "empty.db"
    states["empty"].write_bytes(b"")
    states["foreign"] = foreign(root / "foreign.db", ["create table cards (x)"])
    states["damaged"] = damage_copy = settled_db(root / "damaged.db")
    damage(damage_copy, "middle")
    states["unmarked"] = unmarked_v1(root / "unmarked.db", 1)
    states["copy"] = root / "copy.db"
    assert run(cli, ["backup", "--db", str(states["kvdrill"]), "-o", str(states["copy"])]
               ).exit_code == 0  # fmt: skip
    states["walonly"] = walonly = root / "walonly.db"
    shutil.copyfile(states["kvdrill"], walonly)
    _answer_then_killed(walonly)
    return states


def _answer_then_killed(path: Path) -> None:
    """One more answer committed into the log by a process killed before it closed."""
    import subprocess
    import sys

    code = (
        "import os, sqlite3, sys\n"
        "conn = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "conn.execute('pragma journal_mode = wal')\n"
        "conn.execute('pragma wal_autocheckpoint = 0')\n"
        "conn.execute(\"insert into reviews (id, question_id, reviewed_at, rating, cram)"
        " values ('in-the-log', 'qf-kv-bytes', '2026-11-21T10:00:00.000000+00:00', 3, 0)\")\n"
        "os.kill(os.getpid(), 9)\n"
    )
    subprocess.run([sys.executable, "-c", code, str(path)], check=False)
    assert path.with_name(path.name + "-wal").stat().st_size > 0


@pytest.fixture(scope="module")
def states(tmp_path_factory):
    return _make_states(tmp_path_factory.mktemp("states"))


def _reviews(path: Path) -> set[str]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return {row[0] for row in conn.execute("select id from reviews")}
    finally:
        conn.close()


def _integrity(path: Path) -> str:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute("pragma integrity_check").fetchone()[0]
    finally:
        conn.close()


def _sha(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


class Workspace:
    """A temporary folder with the database in one state and the files a run may name."""

    def __init__(self, states: dict[str, Path], state: str):
        self._dir = tempfile.TemporaryDirectory()
        self.root = Path(self._dir.name)
        self.db = self.root / "k.db"
        self.state = state
        if state != "none":
            shutil.copyfile(states[state], self.db)
        if state == "walonly":
            wal = states[state].with_name(states[state].name + "-wal")
            shutil.copyfile(wal, self.root / "k.db-wal")
        (self.root / "folder").mkdir()
        self.before_reviews = (
            _reviews(self.db) if state in ("kvdrill", "unmarked", "walonly", "copy") else set()
        )
        self.before_sha = _sha(self.db)
        # other databases beside it, which no command aimed at them may change
        self.others = {
            "OTHER": self.root / "other.db", "APP": self.root / "app.sqlite",
            "OLD": self.root / "old.db",
        }  # fmt: skip
        shutil.copyfile(states["kvdrill"], self.others["OTHER"])
        shutil.copyfile(states["foreign"], self.others["APP"])
        shutil.copyfile(states["unmarked"], self.others["OLD"])
        self.others_before = {name: _sha(path) for name, path in self.others.items()}

    def resolve(self, value: str) -> str:
        return {
            "DB": str(self.db),
            "DB-wal": str(self.db) + "-wal",
            "DIR": str(self.root / "folder"),
            "MISSING": str(self.root / "missing" / "file"),
            "OTHER": str(self.root / "other.db"),
            "OTHER-wal": str(self.root / "other.db-wal"),
            "APP": str(self.root / "app.sqlite"),
            "OLD": str(self.root / "old.db"),
        }.get(value, value)

    def others_untouched(self) -> bool:
        """The other databases byte-identical, with nothing new beside them."""
        same = all(_sha(p) == self.others_before[n] for n, p in self.others.items())
        companions = [
            path.with_name(path.name + suffix)
            for path in self.others.values()
            for suffix in ("-wal", "-shm", "-journal", "-unsaved.jsonl")
        ]
        return same and not any(c.exists() for c in companions)

    def file(self, name: str, data: str | bytes) -> str:
        path = self.root / name
        path.write_bytes(data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data)
        return str(path)

    def close(self) -> None:
        self._dir.cleanup()


def check_run(ws: Workspace, args: list[str], input: str | bytes | None = None):
    """Run kvdrill with `args`; assert the property of the module docstring."""
    env = {"KVDRILL_HOME": str(ws.root / "home"), "NO_COLOR": "1"}
    result = CliRunner().invoke(cli, args, input=input, env=env)
    shown = f"kvdrill {args!r} -> {result.exit_code}\nstdout: {result.stdout[-800:]!r}\n" \
            f"stderr: {result.stderr!r}"  # fmt: skip
    assert result.exit_code in (0, 1, 2), shown
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(shown) from result.exception
    stderr_lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout, shown
    assert not any("internal error" in line for line in stderr_lines), shown
    if result.exit_code != 0:
        errors = [line for line in stderr_lines if not line.startswith("Warning: ")]
        assert len(errors) == 1 and errors[0].startswith("Error: "), shown
    after = _sha(ws.db)
    if after != ws.before_sha and after is not None and ws.db.stat().st_size:
        # another application's file never changes; a damaged one only by a restore
        assert ws.state != "foreign", shown
        assert ws.state != "damaged" or args[0] == "restore", shown
        assert _integrity(ws.db) == "ok", shown
        kept = _reviews(ws.db)
        for copy in (ws.root / "backups").glob("*.db"):  # a restore keeps what it replaced
            kept |= _reviews(copy)
        assert ws.before_reviews <= kept, shown
    assert ws.others_untouched(), shown
    return result


def options(spec: dict[str, st.SearchStrategy | None]) -> st.SearchStrategy[list[str]]:
    """A random subset of `spec`'s options in random order; None marks a flag."""

    @st.composite
    def build(draw):
        names = draw(st.lists(st.sampled_from(sorted(spec)), unique=True, max_size=len(spec)))
        argv: list[str] = []
        for name in names:
            argv.append(name)
            if spec[name] is not None:
                argv.append(draw(spec[name]))
        if draw(st.integers(0, 9)) == 0:
            argv.append(draw(nasty_text()))  # a stray argument
        return argv

    return build()


STATE = st.sampled_from(
    ["none", "kvdrill", "empty", "foreign", "damaged", "unmarked", "walonly", "copy"]
)
BANK = st.sampled_from([str(HERE / "banks_quiz"), "MISSING", "DIR", "DB", "/dev/null", "/dev/zero"])
TIME = st.one_of(st.sampled_from(["2026-11-20T09:00:00+00:00", "2026-11-22T23:59:00-11:00"]),
                 nasty_text())  # fmt: skip
OUT = st.sampled_from(["OUT", "DB", "DB-wal", "DIR", "MISSING", "/dev/null", "/dev/full",
                       "/dev/zero", "OTHER", "OTHER-wal", "APP", "OLD"])  # fmt: skip


def _fill(ws: Workspace, argv: list[str]) -> list[str]:
    return [str(ws.root / "out.txt") if a == "OUT" else ws.resolve(a) for a in argv]


# ------------------------------------------------------------------ commands


@FUZZ
@given(state=STATE, argv=options({
    "--topic": st.sampled_from(["quiz-fixture", "kv-cache", "nope"]), "--new": nasty_text(),
    "--max": st.sampled_from(["1", "2", "3", "0", "99999999999999999999"]),
    "--seed": nasty_text(), "--cram": None, "--bank": BANK, "--retention": nasty_text(),
    "--now": TIME, "--tick": nasty_text(), "--no-fuzz": None,
}), lines=st.lists(answer_text(), max_size=8), raw=st.binary(max_size=20))  # fmt: skip
def test_quiz(states, state, argv, lines, raw):
    ws = Workspace(states, state)
    try:
        text = "".join(line + "\n" for line in lines).encode("utf-8", "surrogateescape") + raw
        check_run(ws, ["quiz", "--db", str(ws.db), *_fill(ws, argv)], input=text)
    finally:
        ws.close()


QUESTION_IDS = st.sampled_from(["qf-kv-bytes", "qf-choice", "qf-decode-bound",
                                "kv-bytes-per-request", "e2e-latency-from-ttft-tpot",
                                "nope", "", "\x1b[2J"])  # fmt: skip


@FUZZ
@given(qid=QUESTION_IDS, argv=options({"--seed": nasty_text(), "--json": None, "--bank": BANK}))
def test_ask(states, qid, argv):
    ws = Workspace(states, "none")
    try:
        check_run(ws, ["ask", qid, *_fill(ws, argv)])
    finally:
        ws.close()


@FUZZ
@given(qid=QUESTION_IDS, seed=st.one_of(st.integers(0, 2**31).map(str), nasty_text()),
       answer=answer_text(), argv=options({"--json": None, "--bank": BANK}))  # fmt: skip
def test_check(states, qid, seed, answer, argv):
    ws = Workspace(states, "none")
    try:
        args = ["check", qid, "--seed", seed, "--answer", answer, *_fill(ws, argv)]
        check_run(ws, args + ["--bank", str(HERE / "banks_quiz")])
    finally:
        ws.close()


# a small valid bank, mutated at one place per example
BASE_BANK = yaml.safe_load((HERE / "banks_quiz" / "quiz.yaml").read_text(encoding="utf-8"))
BANK_VALUES = st.one_of(
    nasty_text(),
    st.sampled_from([1e19, 1e308, float("inf"), float("nan"), 1e-300, -5, 0, "BIGINT", True,
                     None, [], {}, [[[[1]]]], "{layers:>100000000}", "{kv:,.500f}",
                     "{kv:MiB}", "{nope}", "layers ** layers ** layers", "1/0",
                     {"min": 1, "max": 1e19, "step": 1e-300}, {"choices": []},
                     {"min": 1, "max": 10**20}, {"choices": [1e308, float("nan")]}]),
    st.integers(), st.floats(),
)  # fmt: skip


@st.composite
def bank_text(draw) -> str:
    if draw(st.integers(0, 5)) == 0:
        return draw(st.sampled_from([
            "", ":", "- [", "questions: 5", "questions:\n  - !!python/object/apply:os.system [x]",
            "a: &a [*a]", "questions: [" * 200, "\t\x00\x1b", "questions:\n" + "  - x\n" * 3,
        ]))  # fmt: skip
    data = json.loads(json.dumps(BASE_BANK))
    question = data["questions"][draw(st.integers(0, len(data["questions"]) - 1))]
    node, key = question, draw(st.sampled_from(sorted(question)))
    while isinstance(node[key], dict | list) and node[key] and draw(st.booleans()):
        node = node[key]
        key = draw(st.sampled_from(sorted(node) if isinstance(node, dict) else range(len(node))))
    node[key] = draw(BANK_VALUES)
    if draw(st.booleans()):
        question["id"] = "fz-" + str(draw(st.integers(0, 9)))
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False).replace("BIGINT", "9" * 5000)


@FUZZ
@given(text=bank_text(), command=st.sampled_from(["lint", "list", "ask", "quiz", "sheet"]),
       draws=st.sampled_from(["1", "3", "0", "nan"]))  # fmt: skip
def test_bank_files(states, text, command, draws):
    ws = Workspace(states, "kvdrill")
    try:
        path = ws.file("fuzz.yaml", text)
        if command == "lint":
            args = ["bank", "lint", path, "--draws", draws]
        elif command == "list":
            args = ["bank", "list", "--bank", path, "--json"]
        elif command == "ask":
            args = ["ask", "qf-kv-bytes", "--bank", path, "--seed", "3"]
        elif command == "quiz":
            args = ["quiz", "--db", str(ws.db), "--bank", path, "--topic", "quiz-fixture",
                    "--now", "2026-11-22T09:00:00+00:00"]  # fmt: skip
        else:
            args = ["sheet", "--bank", path, "--topic", "quiz-fixture", "--seed", "1"]
        check_run(ws, args, input="2 MiB\n\nweights\n\n1\n\nq\n")
    finally:
        ws.close()


BASE_CONFIG = json.loads((HERE / "configs" / "llama-3-8b.json").read_text(encoding="utf-8"))
CONFIG_VALUES = st.one_of(
    nasty_text(), st.integers(), st.floats(),
    st.sampled_from([None, True, [], {}, "BIGINT", -8, 0, 1e308, "\x1b[2J", {"a": [1]}]),
)  # fmt: skip


@st.composite
def config_bytes(draw) -> bytes:
    choice = draw(st.integers(0, 6))
    if choice == 0:
        return draw(st.sampled_from([
            b"", b"{", b"[]", b"null", b"[" * 100_000, b'{"num_hidden_layers": 1' + b"0" * 5000 + b"}",
            b"\xff\xfe", b'{"text_config": ' * 2000 + b"{}" + b"}" * 2000,
        ]))  # fmt: skip
    config = dict(BASE_CONFIG)
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.one_of(st.sampled_from(sorted(config)), st.sampled_from(
            ["head_dim", "sliding_window", "kv_lora_rank", "text_config", "torch_dtype"])))
        config[key] = draw(CONFIG_VALUES)  # fmt: skip
    if draw(st.booleans()):
        config.pop(draw(st.sampled_from(sorted(config))), None)
    return json.dumps(config, allow_nan=True).replace('"BIGINT"', "9" * 5000).encode()


@FUZZ
@given(config=config_bytes(), argv=options({
    "--seq": nasty_text(), "--dtype": nasty_text(), "--requests": nasty_text(),
    "--reserve": nasty_text(), "--ignore-window": None, "--json": None,
}))  # fmt: skip
def test_kv_config(states, config, argv):
    ws = Workspace(states, "none")
    try:
        check_run(ws, ["kv", "--config", ws.file("config.json", config), *_fill(ws, argv)])
    finally:
        ws.close()


@FUZZ
@given(argv=options({
    "--preset": st.sampled_from(["llama-3-8b", "deepseek-v3", "gemma-2-9b", "nope", ""]),
    "--layers": nasty_text(), "--kv-heads": nasty_text(), "--head-dim": nasty_text(),
    "--seq": nasty_text(), "--dtype": nasty_text(), "--requests": nasty_text(),
    "--reserve": nasty_text(), "--ignore-window": None, "--list-presets": None,
    "--json": None, "--config": OUT,
}))  # fmt: skip
def test_kv_flags(states, argv):
    ws = Workspace(states, "kvdrill")
    try:
        check_run(ws, ["kv", *_fill(ws, argv)])
    finally:
        ws.close()


GOOD_RECORD = {
    "id": "00000000-0000-4000-8000-000000000001", "question_id": "qf-kv-bytes",
    "reviewed_at": "2026-11-19T09:00:00.000000+00:00", "rating": 3, "correct": True,
    "answer": "2 MiB", "duration_ms": 2000, "seed": 1, "params": {"layers": 2},
    "expected": 2097152.0, "unit": "bytes", "misconception": None, "session_id": None,
    "cram": False,
}  # fmt: skip
RECORD_VALUES = st.one_of(
    nasty_text(), st.integers(), st.floats(),
    st.sampled_from([None, True, [], {}, "BIGINT", "9999-12-31T23:59:59+00:00", "\ud800",
                     "0001-01-01T00:00:00", {"a": [[[[[]]]]]}, "x" * 20000, -1, 5, 2**63]),
)  # fmt: skip


@st.composite
def history_bytes(draw) -> bytes:
    lines = []
    for number in range(draw(st.integers(1, 4))):
        record = dict(GOOD_RECORD, id=f"00000000-0000-4000-8000-{number:012d}")
        if draw(st.booleans()):
            record[draw(st.sampled_from(sorted(record)))] = draw(RECORD_VALUES)
        if draw(st.integers(0, 4)) == 0:
            record["id"] = GOOD_RECORD["id"]  # a duplicate id inside the file
        line = json.dumps(record, allow_nan=True, ensure_ascii=draw(st.booleans()))
        lines.append(line.replace('"BIGINT"', "1" + "0" * 5000))
    if draw(st.integers(0, 5)) == 0:
        lines.append(draw(st.sampled_from(["{", "[" * 50_000, "null", '"\\ud800"', "\x00",
                                           "{}" * 3, "x" * 2_000_000])))  # fmt: skip
    return "\n".join(lines).encode("utf-8", "surrogatepass")


@FUZZ
@given(state=STATE, data=history_bytes(), fmt=st.sampled_from([None, "jsonl", "csv"]))
def test_import(states, state, data, fmt):
    ws = Workspace(states, state)
    try:
        args = ["import", ws.file("history.jsonl", data), "--db", str(ws.db)]
        check_run(ws, args + (["--format", fmt] if fmt else []))
    finally:
        ws.close()


@FUZZ
@given(state=STATE, command=st.sampled_from(
    ["stats", "export", "sheet", "backup", "doctor", "engine-show", "restore"]),
    argv=options({"--json": None, "--now": TIME, "-o": OUT, "--format": nasty_text(),
                  "--focus": st.sampled_from(["weak", "strong"]), "--repair": None,
                  "--quick": None, "--seed": nasty_text(), "-n": nasty_text(),
                  "--key": OUT, "--topic": nasty_text(), "--bank": BANK, "--html": OUT,
                  "--salvage": None}),
    source=st.sampled_from(["BACKUP", "DB", "MISSING", "DIR", "/dev/null", "/dev/zero",
                            "GARBAGE"]),
)  # fmt: skip
def test_database_commands(states, state, command, argv, source):
    ws = Workspace(states, state)
    try:
        allowed = {
            "stats": {"--json", "--now", "--bank", "--html"},
            "export": {"-o", "--format", "--salvage"},
            "sheet": {"--now", "-o", "--format", "--focus", "--seed", "-n", "--key", "--topic",
                      "--bank"},
            "backup": {"-o", "--now"},
            "doctor": {"--json", "--now", "--repair", "--quick"},
            "engine-show": {"--json"},
            "restore": {"--now"},
        }[command]  # fmt: skip
        kept, skip = [], False
        for i, token in enumerate(argv):  # keep the options this command has, with their values
            if skip:
                skip = False
                continue
            if token.startswith("-") and token in allowed:
                kept.append(token)
                takes_value = token not in ("--json", "--repair", "--quick", "--salvage")
                if takes_value and i + 1 < len(argv):
                    kept.append(argv[i + 1])
                    skip = True
        head = ["engine", "show"] if command == "engine-show" else [command]
        if command == "restore":
            copy = {"BACKUP": states["kvdrill"], "GARBAGE": ws.file("g.db", b"junk" * 100)}
            head.append(str(copy.get(source, ws.resolve(source))))
        check_run(ws, [*head, "--db", str(ws.db), *_fill(ws, kept)])
    finally:
        ws.close()


@FUZZ
@given(argv=st.lists(nasty_text(), max_size=4),
       head=st.sampled_from([[], ["bank"], ["engine"], ["engine", "run", "--device"],
                             ["bank", "schema"], ["nope"]]))  # fmt: skip
def test_stray_arguments(states, argv, head):
    ws = Workspace(states, "none")
    try:
        args = head + [ws.resolve(a) for a in argv]
        if head[:2] == ["engine", "run"]:
            args = head + ["no-such-device"]  # never a real (minute-long) measurement
        check_run(ws, args)
    finally:
        ws.close()
