"""The package's shape, enforced: rings point inward, no cycles, no private names across modules, a pure core.

The contract itself lives in ``.importlinter``; these tests run it and add what it cannot say. The rules
on names, sizes and function-level imports are ``tests/test_house_rules.py``.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

from tests.support.paths import ROOT

PACKAGE = ROOT / "nomad_lab"


def test_import_contract_holds() -> None:
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint, "lint-imports is missing: install the test extra (pip install -e '.[test]')"
    result = subprocess.run([lint, "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components of size > 1 (or a self-import): each is an import cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                cycles.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def module_graph() -> dict[str, set[str]]:
    """Module-to-module imports of nomad_lab, function-level imports included (grimp reads every import)."""
    graph = grimp.build_graph("nomad_lab", cache_dir=None)
    # A package's __init__ importing its own children is not a cycle of design, only of naming: skip parents.
    return {
        m: {i for i in graph.find_modules_directly_imported_by(m) if not m.startswith(i + ".")}
        for m in graph.modules
    }


def test_cycle_finder_finds_a_cycle() -> None:
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles_counting_function_level_imports() -> None:
    assert strongly_connected(module_graph()) == []


def _python_files() -> list[Path]:
    return [
        p
        for folder in ("nomad_lab", "tests", "benchmarks", "notebooks", "scripts")
        for p in sorted((ROOT / folder).rglob("*.py"))
    ]


def private_crossings(path: Path) -> list[str]:
    """``from nomad_lab.x import _y`` or ``x._y`` on an imported nomad_lab module, in one file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules: set[str] = set()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("nomad_lab"):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{path.name}:{node.lineno}: from {node.module} import {alias.name}")
                modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("nomad_lab"):
                    modules.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            found.append(f"{path.name}:{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_private_name_detector_sees_both_forms(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from nomad_lab.core.planner import _x\nfrom nomad_lab.gate import gates\ngates._floor\n"
    )
    assert len(private_crossings(probe)) == 2


def test_no_private_name_crosses_a_module_boundary() -> None:
    crossings = [c for p in _python_files() for c in private_crossings(p)]
    assert crossings == []


def test_package_root_holds_only_the_entry_points() -> None:
    loose = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert loose == ["__init__.py", "__main__.py"]


def core_modules() -> list[str]:
    """Every module under nomad_lab/core, read from the tree (not a hand-written list)."""
    return sorted(
        "nomad_lab.core" + ("." + p.stem if p.stem != "__init__" else "")
        for p in (PACKAGE / "core").glob("*.py")
    )


def test_core_list_is_derived_from_the_tree() -> None:
    names = core_modules()
    assert "nomad_lab.core.judge_prompt" in names and "nomad_lab.core.planner" in names
    assert len(names) == len(list((PACKAGE / "core").glob("*.py")))


PROBE = """
import sys
sys.path.insert(0, {root!r})
stdlib = set(sys.stdlib_module_names)
before = set(sys.modules)
for name in {modules!r}:
    __import__(name)
from nomad_lab.core.planner import plan_prompt
plan_prompt(system_blocks=[], history=[], query="q", rag_chunks=[{{"text": "t"}}], context_window=4096)
foreign = sorted(m for m in set(sys.modules) - before
                 if m.split(".")[0] not in stdlib and m.split(".")[0] != "nomad_lab")
print(",".join(foreign))
"""


def test_every_core_module_imports_with_no_site_packages() -> None:
    probe = PROBE.format(root=str(ROOT), modules=core_modules())
    result = subprocess.run([sys.executable, "-S", "-I", "-c", probe], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "", f"third-party modules imported: {result.stdout}"


@pytest.mark.parametrize("module", core_modules())
def test_core_module_public_names_resolve(module: str) -> None:
    """A core module's ``__all__`` (where it has one) names only what it defines or imports."""
    mod = __import__(module, fromlist=["*"])
    for name in getattr(mod, "__all__", []):
        assert hasattr(mod, name), f"{module}.__all__ names {name}, which it does not define"
