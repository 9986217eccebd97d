"""The repository stands on its own: no file points outside it, and the reference it cites is inside it.

A clone placed anywhere must pass, so nothing may read or link a folder beside the checkout (the team's
shared folder with its specification, seeds and corpus sources) or a path of the machine it was
written on. What the project reproduces is described in ``docs/reference.md``; code and pages cite it
as ``SPEC §N``, so every such citation must name a section that page has, and every module the page
names must exist.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.paths import ROOT

SKIP_DIRS = {
    ".git",
    ".venv",
    ".wheels",
    "runs",
    "models",
    "build",
    ".cache",
    "__pycache__",
    ".pytest_cache",
    ".ruff_cache",
    ".hypothesis",
    ".ipynb_checkpoints",
}
SHARED = "shared"
SPEC_FILE = "SPEC" + ".md"  # spelled apart, so that grepping the repository for it finds nothing
OUTSIDE = re.compile(
    rf"(?:\.\./)+{SHARED}\b|/work/{SHARED}\b|\b{SHARED}/(?:SPEC|seeds|corpus-sources|hooks)|\bSPEC\.md\b"
)
REFERENCE = ROOT / "docs" / "reference.md"
CITATION = re.compile(r"SPEC ?§ ?(\d+(?:\.\d+)?)")
SECTION = re.compile(r"^## §(\d+) |\*\*§(\d+\.\d+) ", re.M)
RINGS = "core|data|gate|backends|store|retrieval|services|eval|serve|studies|runners|cli"
MODULE = re.compile(rf"`((?:{RINGS})/\w+\.py)`")


def repository_files() -> list[Path]:
    """Every file of the checkout but what .gitignore keeps out (installs, caches, the store, models)."""
    files = []
    for path in ROOT.rglob("*"):
        parts = path.relative_to(ROOT).parts
        if path.is_file() and not set(parts) & SKIP_DIRS and not any(p.endswith(".egg-info") for p in parts):
            files.append(path)
    return files


def text_of(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return None  # a binary file (a PNG, a wheel) links nothing


def test_no_file_references_a_path_outside_the_repository() -> None:
    found = []
    for path in repository_files():
        text = text_of(path)
        if text is None or (SHARED not in text and SPEC_FILE not in text):
            continue  # the cheap test first: the pattern over every text takes seconds
        for match in OUTSIDE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append(f"{path.relative_to(ROOT)}:{line}: {match.group(0)}")
    assert not found, "\n".join(found)


def test_the_outside_pattern_catches_each_spelling() -> None:
    # spelled from pieces, so that grepping the repository for them finds nothing, this file included
    bad = [
        f"../{SHARED}/{SPEC_FILE}",
        f"../../../{SHARED}/seeds/x",
        f"/work/{SHARED}/corpus-sources",
        f"see {SPEC_FILE}",
    ]
    for text in bad:
        assert OUTSIDE.search(text), text
    for text in ["shared grid", "nomad_lab/core/reference.py", "SPEC §8.5", f"a {SHARED}/out-of-scope bank"]:
        assert not OUTSIDE.search(text), text


def test_every_spec_citation_names_a_section_of_the_reference_page() -> None:
    page = REFERENCE.read_text(encoding="utf-8")
    sections = {a or b for a, b in SECTION.findall(page)}
    assert {str(n) for n in range(1, 10)} <= sections
    missing = []
    for path in repository_files():
        text = text_of(path)
        if text is None or path.suffix not in {".py", ".md", ".jsonl", ".mjs", ".ipynb"}:
            continue
        for number in CITATION.findall(text):
            if number not in sections:
                missing.append(f"{path.relative_to(ROOT)}: SPEC §{number}")
    assert not missing, "\n".join(missing)


def test_every_module_the_reference_page_names_exists() -> None:
    named = set(MODULE.findall(REFERENCE.read_text(encoding="utf-8")))
    assert len(named) >= 30, named  # the page maps the reference onto the package
    assert not [m for m in sorted(named) if not (ROOT / "nomad_lab" / m).is_file()]
