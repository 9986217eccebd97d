"""label.ipynb as a person meets it: JupyterLab in headless Chromium, labels given by clicks and keys,
the sitting closed and reopened (resumed), and the labels file valid goldens.

Drafts come from ``goldens draft`` over the fixture corpus (real MiniLM retrieval, real DuckDB);
screenshots are kept in the test's tmp folder (or ``$NOMAD_LAB_ARTIFACTS/label``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from playwright.sync_api import Page, sync_playwright

from nomad_lab.data.drafts import DraftOptions, draft_goldens, read_corpus, write_drafts
from nomad_lab.data.golden_suites import load_suite_file
from tests.support.browser import CHROMIUM_ARGS, chromium_or_fail, jupyterlab, restored
from tests.support.paths import CORPUS, ROOT

pytestmark = pytest.mark.slow

NOTEBOOK = ROOT / "notebooks" / "label.ipynb"
WAIT_MS = 600_000  # a hang guard for a loaded machine, not a speed claim
KERNEL_READY = """() => {
    const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const kernel = panel && panel.sessionContext && panel.sessionContext.session?.kernel;
    return Boolean(kernel && kernel.status === 'idle' && panel.context.isReady);
}"""
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


def open_and_run(page: Page, lab) -> None:
    page.goto(lab.open_url("notebooks/label.ipynb"))
    page.wait_for_function(KERNEL_READY)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")


def test_label_by_clicks_and_keys_resume_and_write_valid_goldens(tmp_path: Path, embedder) -> None:
    chromium = chromium_or_fail()
    artifacts = Path(os.environ.get("NOMAD_LAB_ARTIFACTS", tmp_path)) / "label"
    artifacts.mkdir(parents=True, exist_ok=True)
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
    with (
        restored([NOTEBOOK]),
        jupyterlab(ROOT, env, tmp_path / "lab") as lab,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1600})
            page.set_default_timeout(WAIT_MS)
            open_and_run(page, lab)
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
            page = browser.new_page(viewport={"width": 1280, "height": 1600})
            page.set_default_timeout(WAIT_MS)
            open_and_run(page, lab)
            resumed = wait_for_count(page, 4, total)
            page.screenshot(path=artifacts / "3-resumed.png", full_page=True)
        finally:
            browser.close()
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
