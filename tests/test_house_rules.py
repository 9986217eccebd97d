"""House rules that hold themselves: each rule is a checker run on the package, and each checker is
itself tested on a small planted tree, so a rule that stops seeing its violation fails too.

Why tests and not a review habit: these rules drifted while only prose stated them (twin module names
0 -> 6, modules over 400 lines 2 -> 5, issue 42).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

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
