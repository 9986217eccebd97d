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


def folders() -> list[Path]:
    """Each top-level results folder, or its subfolders when it groups several commands' results
    (retrieval reports, generation reports, notebook cells)."""
    found: list[Path] = []
    for top in sorted(p for p in RESULTS.iterdir() if p.is_dir()):
        files = [p for p in top.iterdir() if p.is_file()]
        found += [top] if files else sorted(p for p in top.iterdir() if p.is_dir())
    return found


@pytest.mark.parametrize("folder", folders(), ids=lambda p: str(p.relative_to(RESULTS)))
def test_every_results_folder_names_its_own_command(folder: Path) -> None:
    path = folder / "provenance.json"
    assert path.is_file(), f"{path.relative_to(ROOT)}: missing"
    record = json.loads(path.read_text(encoding="utf-8"))
    argv = record["argv"]
    assert argv and "reproduce" not in argv[:2] and not any("ipykernel" in a for a in argv), argv
    assert record.get("commit") and "dirty" in record, f"{path.relative_to(ROOT)}: no commit or dirty state"
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
