"""label.ipynb as a person meets it: JupyterLab in headless Chromium, labels given by clicks and keys,
the sitting closed and reopened (resumed), and the labels file valid goldens.

Drafts come from ``goldens draft`` over the fixture corpus (real MiniLM retrieval, real DuckDB);
screenshots are kept in the test's tmp folder (or ``$NOMAD_LAB_ARTIFACTS/label``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Page

from nomad_lab.data.drafts import DraftOptions, draft_goldens, read_corpus, write_drafts
from nomad_lab.data.golden_suites import load_suite_file
from tests.support.browser import WAIT_MS, artifacts_dir, notebook_browser, run_all
from tests.support.paths import CORPUS, ROOT

pytestmark = pytest.mark.slow

NOTEBOOK = ROOT / "notebooks" / "label.ipynb"
SHOWN = """() => {
    const q = document.querySelector('.nomad-label-question');
    const c = document.querySelector('.nomad-label-count');
    return q && c ? {id: q.dataset.id, count: c.textContent} : null;
}"""


def wait_for_count(page: Page, decided: int, total: int) -> dict:
    page.wait_for_function(
        f"() => {{ const s = ({SHOWN})(); return s && s.count === '{decided} / {total} decided'; }}",
        timeout=WAIT_MS,
    )
    return page.evaluate(SHOWN)


def test_label_by_clicks_and_keys_resume_and_write_valid_goldens(tmp_path: Path, embedder) -> None:
    artifacts = artifacts_dir(tmp_path, "label")
    corpus = read_corpus(CORPUS)
    goldens = tmp_path / "goldens"
    write_drafts(goldens, draft_goldens(corpus, options=DraftOptions(per_doc=3, bank_per_category=1)), corpus)
    total = len(load_suite_file(goldens / "drafts.jsonl", drafts=True))
    env = {
        "NOMAD_LAB_STORE": str(tmp_path / "ws.duckdb"),
        "NOMAD_LAB_CORPUS": str(CORPUS),
        "NOMAD_LAB_LABEL_DIR": str(goldens),
        "NOMAD_LAB_LABELLER": "browser-test",
    }
    seen = []
    with notebook_browser(NOTEBOOK, env, tmp_path) as (lab, browser):
        page = run_all(browser, lab, NOTEBOOK)
        seen.append(wait_for_count(page, 0, total)["id"])
        page.screenshot(path=artifacts / "1-first-draft.png", full_page=True)
        page.locator(".nomad-label-answerable").first.click()  # answerable, top passage's document
        seen.append(wait_for_count(page, 1, total)["id"])
        page.locator(".nomad-label-refusal", has_text="near-domain").click()
        seen.append(wait_for_count(page, 2, total)["id"])
        keys = page.locator(".nomad-label-keys input")
        keys.click()
        page.keyboard.type("f")  # fictional attribute, by key
        seen.append(wait_for_count(page, 3, total)["id"])
        keys.click()
        page.keyboard.type("s")  # skip, by key
        state = wait_for_count(page, 4, total)
        page.screenshot(path=artifacts / "2-after-four.png", full_page=True)
        page.close()  # the sitting closed, the notebook opened again and run: it resumes from disk
        page = run_all(browser, lab, NOTEBOOK)
        resumed = wait_for_count(page, 4, total)
        page.screenshot(path=artifacts / "3-resumed.png", full_page=True)
    assert len(set(seen)) == 4 and resumed["id"] == state["id"] and resumed["id"] not in seen
    labelled = load_suite_file(goldens / "labelled.jsonl", corpus.all_doc_ids)
    assert [g.id for g in labelled] == [f"label-{i}" for i in seen[:3]]
    assert not labelled[0].expect_refusal and labelled[0].relevant_doc_ids
    assert [g.tags[-1] for g in labelled[1:]] == ["near-domain", "adversarial/fictional"]
    lines = [
        json.loads(x) for x in (goldens / "labelled.jsonl").read_text().splitlines() if x.startswith("{")
    ]
    assert {line["labelled"]["by"] for line in lines} == {"browser-test"}
    decisions = (goldens / "labelled.decisions.jsonl").read_text().splitlines()
    assert [json.loads(d)["action"] for d in decisions] == ["answerable", "refusal", "refusal", "skip"]
