"""Imports inside functions, and whether the reason written beside each is true.

Why a checker and not a convention: a deferred import hides a module's real dependencies, so it must say
why, and a reason nobody checks drifts (three ``# heavy`` imports of the standard-library core, issue 42).
A reason is the comment after the import's last line (or on one of its lines); its leading words
(``# heavy``, ``# optional, heavy: the llm extra``) are each one of :data:`REASONS`, and each is checked
against the import graph read from the source (module-level imports only, ``if TYPE_CHECKING:`` aside),
never by importing anything:

- ``heavy``: importing the target loads a third-party package the importing module does not already load
  at its top (deferring it saves that load);
- ``optional``: the target loads a package outside the core dependencies (an extra), so the importing
  module works without it;
- ``cycle``: the target imports the importing module back at its top (a top-level import would be a cycle).
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

REASONS = ("heavy", "optional", "cycle")
LEADING_WORDS = re.compile(r"#\s*([A-Za-z]+(?:\s*,\s*[A-Za-z]+)*)")
STDLIB = frozenset(sys.stdlib_module_names) | {"__future__"}


@dataclass(frozen=True)
class FunctionImport:
    """One import statement inside a function: where it is, what it imports and the reason beside it."""

    module: str  # the importing module
    where: str  # path:line
    targets: tuple[str, ...]  # absolute module names it loads (``from x import y``: x, and x.y if a module)
    reason: str  # the whole comment text after ``#``, "" when none
    words: tuple[str, ...]  # the reason's leading words, lower-cased

    def top(self) -> str:
        return self.targets[0].split(".")[0] if self.targets else ""


class ImportGraph:
    """The module-level imports of one package read from its source tree (``root/<package>/...``)."""

    def __init__(self, root: Path, package: str) -> None:
        self.root, self.package = root, package
        self.files: dict[str, Path] = {}
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            self.files[".".join(parts)] = path
        self._trees: dict[str, ast.Module] = {}
        self._closures: dict[str, frozenset[str]] = {}

    def tree(self, module: str) -> ast.Module:
        if module not in self._trees:
            self._trees[module] = ast.parse(self.files[module].read_text(encoding="utf-8"))
        return self._trees[module]

    def is_ours(self, name: str) -> bool:
        return name == self.package or name.startswith(self.package + ".")

    def targets(self, module: str, node: ast.Import | ast.ImportFrom) -> tuple[str, ...]:
        """The absolute modules one import statement of ``module`` loads (parents aside)."""
        if isinstance(node, ast.Import):
            return tuple(alias.name for alias in node.names)
        base = node.module or ""
        if node.level:
            here = module.split(".")
            is_package = self.files.get(module, Path()).name == "__init__.py"
            anchor = here[: len(here) - node.level + (1 if is_package else 0)]
            base = ".".join([*anchor, *([base] if base else [])])
        found = [base]
        found += [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in self.files]
        return tuple(found)

    def top_level_imports(self, module: str) -> list[str]:
        """What ``module`` imports when it is imported: statements outside functions and outside
        ``if TYPE_CHECKING:``, class bodies and ``try`` blocks included."""
        found: list[str] = []

        def visit(statements: Iterable[ast.stmt]) -> None:
            for node in statements:
                if isinstance(node, ast.Import | ast.ImportFrom):
                    found.extend(self.targets(module, node))
                elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                    visit(node.orelse)
                else:
                    for name in ("body", "orelse", "finalbody"):
                        visit(getattr(node, name, []) or [])
                    for handler in getattr(node, "handlers", []) or []:
                        visit(handler.body)

        visit(self.tree(module).body)
        return found

    def loads(self, names: Iterable[str]) -> frozenset[str]:
        """Every module importing ``names`` loads, parent packages included (``matplotlib`` and
        ``matplotlib.pyplot``); another package's own imports are not followed."""
        seen: set[str] = set()
        stack = list(names)
        while stack:
            parts = stack.pop().split(".")
            for i in range(1, len(parts) + 1):
                part = ".".join(parts[:i])
                if not self.is_ours(part):
                    seen.add(part)
                elif part in self.files and part not in seen:
                    seen.add(part)
                    stack.extend(self.top_level_imports(part))
        return frozenset(seen)

    def closure(self, module: str) -> frozenset[str]:
        if module not in self._closures:
            self._closures[module] = self.loads([module])
        return self._closures[module]

    def function_imports(self, module: str) -> Iterator[FunctionImport]:
        """Each import statement inside a function of ``module`` (a nested function's once)."""
        path = self.files[module]
        lines = path.read_text(encoding="utf-8").splitlines()
        seen: set[int] = set()
        for function in ast.walk(self.tree(module)):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if not isinstance(node, ast.Import | ast.ImportFrom) or id(node) in seen:
                    continue
                seen.add(id(node))
                comment = reason_comment(lines, node)
                words = LEADING_WORDS.match(comment)
                yield FunctionImport(
                    module=module,
                    where=f"{path.relative_to(self.root)}:{node.lineno}",
                    targets=self.targets(module, node),
                    reason=comment.lstrip("#").strip(),
                    words=tuple(w.strip().lower() for w in words.group(1).split(",")) if words else (),
                )


def reason_comment(lines: list[str], node: ast.Import | ast.ImportFrom) -> str:
    """The comment after an import's last line, else the first on one of its lines (a formatter wraps a
    long ``from x import (name,  # reason`` and leaves the comment inside the parentheses)."""
    tail = lines[node.end_lineno - 1][node.end_col_offset :]
    if "#" in tail:
        return tail[tail.index("#") :]
    for line in lines[node.lineno - 1 : node.end_lineno - 1]:
        if "#" in line:
            return line[line.index("#") :]
    return ""


def third_party(names: Iterable[str], package: str) -> set[str]:
    """The names of modules outside the standard library and ``package`` (dotted names kept: importing
    ``matplotlib.pyplot`` is not done by having imported ``matplotlib``)."""
    return {n for n in names if n.split(".")[0] not in STDLIB and n.split(".")[0] != package}


def reason_problems(
    graph: ImportGraph,
    is_core_dependency: Callable[[str], bool],
    free_to_defer: tuple[str, ...] = (),
) -> list[str]:
    """Every function-level import of the package whose reason is missing or untrue, one line each.

    A reason is required on an import of the package itself (outside the ``free_to_defer`` subpackages,
    whose deferral is stated once for all) and on a third-party import; a standard-library import needs
    none. Any reason given is checked, wherever it is."""
    problems = []
    for module in graph.files:
        own = third_party(graph.closure(module), graph.package)
        free = any(module.startswith(f"{graph.package}.{sub}") for sub in free_to_defer)
        for imp in graph.function_imports(module):
            ours = graph.is_ours(imp.top())
            stdlib = not ours and imp.top() in STDLIB
            say = f"{imp.where}: import of {imp.targets[0]}"
            if not imp.reason:
                if not stdlib and not (ours and free):
                    problems.append(f"{say} gives no reason (# heavy, # optional, # cycle)")
                continue
            if not imp.words or any(w not in REASONS for w in imp.words):
                problems.append(f"{say}: reason {imp.reason!r} starts with none of {', '.join(REASONS)}")
                continue
            loaded = graph.loads(imp.targets)
            brought = third_party(loaded, graph.package)
            if "heavy" in imp.words and not brought - own:
                problems.append(
                    f"{say} says heavy, but loads no third-party package the module does not already load"
                )
            if "optional" in imp.words and all(is_core_dependency(n.split(".")[0]) for n in brought - own):
                problems.append(f"{say} says optional, but loads only core dependencies")
            if "cycle" in imp.words and module not in loaded:
                problems.append(f"{say} says cycle, but does not import {module} back")
    return problems
