"""Every folder of results says where it came from, in a form that reads the same on any machine.

Why: a number is only worth comparing when its command, commit and models are known (``provenance.json``,
written by :mod:`nomad_lab.eval.provenance` for every writer), and a stored file that names a path on
the machine that made it, or holds a NaN (not JSON), does not travel. Every folder that holds files is
visited (a study's second corpus in a subfolder too), and a result made from an unclean or unknown tree
(``dirty`` true or null) is refused unless a page says so, by quoting that record's ``dirty``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.paths import ROOT

RESULTS = ROOT / "results"
MACHINE_PATH = re.compile(
    r"(?<![\w.~:/-])/(?:home|work|tmp|root|Users|usr|opt|var|mnt|private|srv)/[^\s\"']*"
)
PERSONAL_PATH = re.compile(r"(?<![\w.~:/-])/(?:home|work|tmp|root|Users|mnt|private|srv)/[^\s\"'`)]*")
"""What a page may not name: a user's or a session's folder (a system location such as /usr/bin/chromium
is where a package installs, the same on every Debian machine)."""
TEXT = {".json", ".md", ".csv", ".txt", ".ipynb", ".html", ".jsonl"}


def folders(root: Path = RESULTS) -> list[Path]:
    """Each folder of results that holds files, at any depth (a folder grouping several commands'
    results, such as ``retrieval/``, holds only folders; ``gates/pydocs`` beside ``gates/`` is one)."""
    return sorted(p for p in root.rglob("*") if p.is_dir() and any(f.is_file() for f in p.iterdir()))


def pages_text() -> str:
    """The README's and every docs page's text: where a page says what a record holds."""
    return "\n".join(
        p.read_text(encoding="utf-8") for p in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
    )


@pytest.mark.parametrize("folder", folders(), ids=lambda p: str(p.relative_to(RESULTS)))
def test_every_results_folder_names_its_own_command(folder: Path) -> None:
    quotes = pages_text()
    path = folder / "provenance.json"
    assert path.is_file(), f"{path.relative_to(ROOT)}: missing"
    stored = json.loads(path.read_text(encoding="utf-8"))
    records = ([stored] if "argv" in stored else []) + list(stored.get("files", {}).values())
    assert records, f"{path.relative_to(ROOT)}: names no command"
    for record in records:  # the folder's own command, and each command that added one file to it
        argv = record["argv"]
        assert argv and "reproduce" not in argv[:2] and not any("ipykernel" in a for a in argv), argv
        assert record.get("commit") and "dirty" in record, f"{path.relative_to(ROOT)}: no commit or dirty"
        if record["dirty"] is not False:  # an unclean tree (True) or one nobody recorded (None)
            quoted = (
                f"{path.relative_to(ROOT)}#dirty" in quotes or f"{path.relative_to(ROOT)}#files" in quotes
            )
            assert quoted, f"{path.relative_to(ROOT)}: dirty {record['dirty']}, and no page says so"
        if record.get("rerun") is False:
            assert record.get("why"), f"{path.relative_to(ROOT)}: not rerun here, and does not say why"


def test_no_stored_result_or_page_names_a_machine_path_or_holds_a_nan() -> None:
    found: list[str] = []
    for path in sorted([*RESULTS.rglob("*"), ROOT / "README.md", *(ROOT / "docs").rglob("*")]):
        if path.suffix not in TEXT or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.name == "answers.jsonl":  # a chat model's answers, quoted verbatim: its paths are its words
            text = re.sub(r'"answer": "(?:[^"\\]|\\.)*"', '"answer": ""', text)
        pattern = MACHINE_PATH if path.is_relative_to(RESULTS) else PERSONAL_PATH
        found += [f"{path.relative_to(ROOT)}: {m.group(0)}" for m in pattern.finditer(text)][:2]
        if path.suffix == ".json" and re.search(r"(?<![\w\"])(NaN|-?Infinity)(?![\w\"])", text):
            found.append(f"{path.relative_to(ROOT)}: NaN")
    assert found == [], "\n".join(found[:30])
