"""Every committed page of a study on the result value is what its committed JSON renders to: a page
cannot drift from the figures it shows (each folder the study publishes, its second-corpus runs too).

The renders are the study's own ``pages(document)``; a planted edit of a committed cell fails here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nomad_lab.core.workspace import PROJECT_ROOT
from nomad_lab.studies.registry import studies

FOLDERS = [
    (study, folder)
    for study in studies().values()
    if study.pages is not None
    for folder in (study.out_dir, *(o.out_dir for o in study.also))
    if (PROJECT_ROOT / folder / str(study.document)).is_file()
]


def mismatches(study, folder: Path) -> list[str]:
    document = json.loads((folder / str(study.document)).read_text(encoding="utf-8"))
    found = []
    for page in study.pages(document):
        committed = (folder / page.name).read_text(encoding="utf-8")
        if committed != page.markdown():
            found.append(page.name)
    return found


def test_some_studies_publish_pages_from_their_document() -> None:
    assert {s.name for s, _ in FOLDERS} >= {"answerability", "sufficiency"}


@pytest.mark.parametrize(("study", "folder"), FOLDERS, ids=[f for _, f in FOLDERS])
def test_a_committed_page_is_its_document_rendered(study, folder: str) -> None:
    assert mismatches(study, PROJECT_ROOT / folder) == []


def test_an_edited_cell_is_found(tmp_path: Path) -> None:
    study, folder = FOLDERS[0]
    for file in (PROJECT_ROOT / folder).glob("*"):
        if file.is_file() and file.suffix in (".json", ".md"):
            (tmp_path / file.name).write_text(file.read_text(encoding="utf-8"), encoding="utf-8")
    page = study.pages(json.loads((tmp_path / str(study.document)).read_text()))[0]
    text = (tmp_path / page.name).read_text()
    (tmp_path / page.name).write_text(text.replace("|", "| 1 |", 1))
    assert mismatches(study, tmp_path) == [page.name]
