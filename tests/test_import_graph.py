"""The code's layers, read from the source: no import cycle, and no import against the layers.

The graph counts every import the source holds, those inside functions and under
TYPE_CHECKING included: an import that runs late still ties two modules together.
An edge runs from a module to each project module it names (`from drill.a import b`
names drill.a.b when that is a module, else drill.a).

The layers, bottom up:
- foundation: drill's own top modules (errors, text, paths, moments, json_input, srs)
  and drill.quantities;
- storage: drill.storage;
- domain: drill.bank, kinds, study, reports, interview, serving, exports, and
  engine_check (the measurements, which drill reaches only through the engine command);
- cli: drill.cli and drill.commands.
A module imports only from its own layer or the ones below.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("drill", "engine_check")
LAYERS = ("foundation", "storage", "domain", "cli")
DOMAIN = ("bank", "kinds", "study", "reports", "interview", "serving", "exports")


def module_files() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def imports_of(name: str, path: Path, modules: set[str]) -> set[str]:
    """The project modules `name` imports, anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    named: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, *([base] if base else [])])
            named.update(f"{base}.{alias.name}" for alias in node.names)
            named.add(base)
    found = set()
    for target in named:
        while target and target not in modules:
            target = target.rpartition(".")[0]
        if target and target != name:
            found.add(target)
    return found


def graph() -> dict[str, set[str]]:
    files = module_files()
    return {name: imports_of(name, path, set(files)) for name, path in files.items()}


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components of more than one module (each a cycle), iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def layer(name: str) -> str:
    parts = name.split(".")
    if parts[0] == "engine_check":
        return "domain"
    if name == "drill.cli" or (len(parts) > 1 and parts[1] in ("commands", "__main__")):
        return "cli"
    if len(parts) > 1 and parts[1] == "storage":
        return "storage"
    if len(parts) > 1 and parts[1] in DOMAIN:
        return "domain"
    return "foundation"


def test_the_graph_sees_imports_inside_functions():
    edges = graph()
    # drill.commands.engine imports engine_check only inside its functions
    assert "engine_check.run" in edges["drill.commands.engine"]
    assert "drill.errors" in edges["drill.storage.database"]


def test_no_import_cycle_between_the_projects_modules():
    assert strongly_connected(graph()) == []


def test_the_cycle_finder_finds_a_cycle():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert strongly_connected(edges) == [["a", "b", "c"]]


def test_no_module_imports_against_the_layers():
    against = sorted(
        f"{name} ({layer(name)}) imports {target} ({layer(target)})"
        for name, targets in graph().items()
        for target in targets
        if LAYERS.index(layer(target)) > LAYERS.index(layer(name))
    )
    assert against == []


@pytest.mark.parametrize(
    ("name", "expected"),
    [("drill.errors", "foundation"), ("drill.quantities.units", "foundation"),
     ("drill.storage.database", "storage"), ("drill.study.session", "domain"),
     ("engine_check.run", "domain"), ("drill.commands.quiz", "cli"), ("drill.cli", "cli"),
     ("drill.srs", "foundation")],
)  # fmt: skip
def test_each_module_has_its_layer(name, expected):
    assert layer(name) == expected


def third_party_imports(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_only_the_cli_imports_click():
    users = sorted(
        name
        for name, path in module_files().items()
        if "click" in third_party_imports(path) and layer(name) != "cli"
    )
    assert users == []


def test_drill_reaches_engine_check_only_through_the_engine_command():
    users = sorted(
        name
        for name, targets in graph().items()
        if name.startswith("drill") and any(t.startswith("engine_check") for t in targets)
    )
    assert users == ["drill.commands.engine"]


def test_torch_lives_only_where_the_architecture_says():
    users = sorted(
        name for name, path in module_files().items() if "torch" in third_party_imports(path)
    )
    assert users == [
        "engine_check.cpu_linear",
        "engine_check.experiments",
        "engine_check.model",
        "engine_check.peak_kernels",
        "engine_check.run",
        "engine_check.timing",  # DeviceTimer alone
        "engine_check.torch_loader",
    ]


def test_fsrs_rs_python_is_loaded_only_by_the_optimize_command():
    """fsrs-rs (the fit, its evaluation, the simulator) lives in drill.study.fsrs_fit, which
    only `kvdrill optimize` imports; scheduling, on the quiz path, stays on fsrs."""
    users = sorted(
        name
        for name, path in module_files().items()
        if "fsrs_rs_python" in third_party_imports(path)
    )
    assert users == ["drill.study.fsrs_fit"]
    importers = sorted(name for name, targets in graph().items() if "drill.study.fsrs_fit" in targets)
    assert importers == ["drill.commands.optimize"]


def test_httpx_is_loaded_only_by_the_probe():
    """The streaming client (httpx) lives in drill.serving.probe_client, which only
    `kvdrill engine probe` imports, inside the command: never on the quiz path."""
    users = sorted(
        name for name, path in module_files().items() if "httpx" in third_party_imports(path)
    )
    assert users == ["drill.serving.probe_client"]
    importers = sorted(
        name for name, targets in graph().items() if "drill.serving.probe_client" in targets
    )
    assert importers == ["drill.commands.engine_probe"]
    source = (ROOT / "drill" / "commands" / "engine_probe.py").read_text(encoding="utf-8")
    top_level = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert not any("probe_client" in line or "httpx" in line for line in top_level)


def test_at_most_fifteen_modules_stay_directly_in_drill():
    flat = sorted(p.name for p in (ROOT / "drill").glob("*.py"))
    assert len(flat) <= 15, flat


def test_writing_a_sheet_to_a_file_loads_neither_sqlite_utils_nor_torch(tmp_path):
    """An output file is checked against databases from their headers alone
    (drill.storage.files), so a command that only writes one never loads sqlite-utils."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from drill.cli import main\n"
        f"sys.argv = ['kvdrill', 'sheet', '--seed', '1', '-o', {str(tmp_path / 's.md')!r}]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exc:\n"
        "    assert exc.code in (0, None), exc.code\n"
        "print('HEAVY', sorted(m for m in ('torch', 'sqlite_utils', 'httpx') if m in sys.modules))\n"
    )
    env = {"KVDRILL_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env,
        cwd=ROOT,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("HEAVY []")
    assert (tmp_path / "s.md").read_text(encoding="utf-8").startswith("# kvdrill mock interview\n")
