"""House rules that hold themselves: each rule is a checker run on the package, and each checker is
itself tested on a small planted tree, so a rule that stops seeing its violation fails too.

Why tests and not a review habit: these rules drifted while only prose stated them (twin module names
0 -> 6, modules over 400 lines 2 -> 5, issue 42).
"""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from tests.support.function_imports import ImportGraph, reason_problems
from tests.support.paths import ROOT

PACKAGE = ROOT / "nomad_lab"
ENTRY_NAMES = {"__init__.py", "__main__.py"}
"""Basenames every package may hold: a package's own entry points, never read as a module's name."""


def twin_basenames(package: Path) -> dict[str, list[str]]:
    """Module basenames held by two or more files under ``package`` (entry points aside), each with its
    files. A twin name makes a traceback, a search hit or an import line ambiguous to a reader."""
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted(package.rglob("*.py")):
        if path.name not in ENTRY_NAMES:
            where[path.name].append(str(path.relative_to(package)))
    return {name: files for name, files in where.items() if len(files) > 1}


def plant(root: Path, files: dict[str, str]) -> Path:
    """A small tree under ``root``: each relative path written with its text (parents created)."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_twin_finder_sees_a_planted_twin(tmp_path: Path) -> None:
    tree = plant(
        tmp_path / "pkg",
        {"__init__.py": "", "a/__init__.py": "", "a/runs.py": "", "b/__init__.py": "", "b/runs.py": ""},
    )
    assert twin_basenames(tree) == {"runs.py": ["a/runs.py", "b/runs.py"]}


def test_no_two_modules_share_a_basename() -> None:
    assert twin_basenames(PACKAGE) == {}, "name each module by what it holds"


MAX_LINES = 400


def long_modules(package: Path, limit: int = MAX_LINES) -> dict[str, int]:
    """Modules under ``package`` longer than ``limit`` lines, with their line counts."""
    counts = {
        str(p.relative_to(package)): len(p.read_text(encoding="utf-8").splitlines())
        for p in package.rglob("*.py")
    }
    return {name: n for name, n in sorted(counts.items()) if n > limit}


def test_long_module_finder_sees_a_planted_long_module(tmp_path: Path) -> None:
    tree = plant(
        tmp_path / "pkg", {"__init__.py": "", "short.py": "x = 1\n" * 400, "a/long.py": "x = 1\n" * 401}
    )
    assert long_modules(tree) == {"a/long.py": 401}


def test_no_module_is_over_the_line_limit() -> None:
    assert long_modules(PACKAGE) == {}, f"split each by what it holds (limit {MAX_LINES} lines)"


def core_dependency_names(root: Path = ROOT) -> Callable[[str], bool]:
    """Whether an import name is provided by a core dependency of ``pyproject.toml`` (not an extra),
    read through the installed distributions (``sklearn`` is ``scikit-learn``)."""
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = {_dist_key(re.split(r"[\s<>=!~;\[]", spec, maxsplit=1)[0]) for spec in project["dependencies"]}
    providers = importlib.metadata.packages_distributions()
    return lambda name: any(_dist_key(d) in core for d in providers.get(name, ()))


def _dist_key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


FREE_TO_DEFER = ("cli",)  # the CLI defers its own imports so that ``--help`` stays fast (cli/__init__.py)

PLANTED = {
    "pkg/__init__.py": "",
    "pkg/core.py": "import json\n",
    "pkg/big.py": "import numpy\n",
    "pkg/loop.py": "import pkg.user\n",
    "pkg/user.py": (
        "import numpy\n"
        "def a():\n    from pkg import core  # heavy\n"  # the stdlib core called heavy: untrue
        "def b():\n    from pkg import big  # heavy\n"  # numpy is loaded at the top already: untrue
        "def c():\n    from pkg import loop  # cycle\n"  # true
        "def d():\n    from pkg import core  # cycle\n"  # untrue
        "def e():\n    from pkg import core\n"  # no reason
        "def f():\n    import scipy\n"  # a third-party import with no reason
        "def g():\n    import scipy  # heavy\n"  # true
        "def h():\n    import scipy  # optional\n"  # a core dependency: untrue
        "def i():\n    import llama_cpp  # optional, heavy\n"  # true
        "def j():\n    import json\n"  # the standard library needs no reason
        "def k():\n    import scipy  # lazy\n"  # not a reason word
        "def m():\n    from pkg.cli import x  # heavy\n"  # the CLI loads nothing third-party: untrue
        "def n():\n    from pkg import (\n        big,  # cycle\n    )\n"  # wrapped, read, untrue
        "def o():\n    from pkg import (\n        loop,  # cycle\n    )\n"  # wrapped, read, true
    ),
    "pkg/cli/__init__.py": "x = 1\n",
    "pkg/cli/main.py": "def main():\n    from pkg import core\n",  # free to defer
}


def test_reason_checker_finds_each_planted_violation(tmp_path: Path) -> None:
    plant(tmp_path, PLANTED)
    graph = ImportGraph(tmp_path, "pkg")
    found = reason_problems(graph, lambda name: name in {"numpy", "scipy"}, FREE_TO_DEFER)
    lines = sorted(int(p.split(":")[1]) for p in found)
    # pkg/user.py: a (3), b (5), d (9), e (11), f (13), h (17), k (23), m (25), n (27)
    assert lines == [3, 5, 9, 11, 13, 17, 23, 25, 27], found
    assert all(p.startswith("pkg/user.py:") for p in found)


def _package_reason_problems() -> list[str]:
    return reason_problems(ImportGraph(ROOT, "nomad_lab"), core_dependency_names(), FREE_TO_DEFER)


def test_every_function_level_package_import_gives_a_true_reason() -> None:
    problems = [p for p in _package_reason_problems() if ": import of nomad_lab" in p]
    assert problems == [], "\n".join(problems)


def test_every_function_level_third_party_import_gives_a_true_reason() -> None:
    problems = [p for p in _package_reason_problems() if ": import of nomad_lab" not in p]
    assert problems == [], "\n".join(problems)
