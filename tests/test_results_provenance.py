"""Every folder of results says where it came from, in a form that reads the same on any machine.

Why: a number is only worth comparing when its command, commit and models are known (``provenance.json``,
written by :mod:`nomad_lab.eval.provenance` for every writer), and a stored file that names a path on
the machine that made it, or holds a NaN (not JSON), does not travel.
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
TEXT = {".json", ".md", ".csv", ".txt", ".ipynb", ".html", ".jsonl"}


def folders(root: Path = RESULTS) -> list[Path]:
    """Each folder of results: the first folder down each branch of ``results/`` that holds files (a
    folder grouping several commands' results, such as ``retrieval/`` or ``notebooks/estimator/``,
    holds only folders)."""
    found: list[Path] = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        found += [folder] if any(p.is_file() for p in folder.iterdir()) else folders(folder)
    return found


@pytest.mark.parametrize("folder", folders(), ids=lambda p: str(p.relative_to(RESULTS)))
def test_every_results_folder_names_its_own_command(folder: Path) -> None:
    path = folder / "provenance.json"
    assert path.is_file(), f"{path.relative_to(ROOT)}: missing"
    stored = json.loads(path.read_text(encoding="utf-8"))
    records = ([stored] if "argv" in stored else []) + list(stored.get("files", {}).values())
    assert records, f"{path.relative_to(ROOT)}: names no command"
    for record in records:  # the folder's own command, and each command that added one file to it
        argv = record["argv"]
        assert argv and "reproduce" not in argv[:2] and not any("ipykernel" in a for a in argv), argv
        assert record.get("commit") and "dirty" in record, f"{path.relative_to(ROOT)}: no commit or dirty"
        if record.get("rerun") is False:
            assert record.get("why"), f"{path.relative_to(ROOT)}: not rerun here, and does not say why"


def test_no_stored_result_names_a_machine_path_or_holds_a_nan() -> None:
    found: list[str] = []
    for path in sorted(RESULTS.rglob("*")):
        if path.suffix not in TEXT or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [f"{path.relative_to(ROOT)}: {m.group(0)}" for m in MACHINE_PATH.finditer(text)][:2]
        if path.suffix == ".json" and re.search(r"(?<![\w\"])(NaN|-?Infinity)(?![\w\"])", text):
            found.append(f"{path.relative_to(ROOT)}: NaN")
    assert found == [], "\n".join(found[:30])
