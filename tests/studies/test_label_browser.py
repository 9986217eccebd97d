"""notebooks/label.py as a person meets it: JupyterLab in headless Chromium, the whole passage in its
frame, labels given by clicks and keys, a gold searched among every document (a retrieval miss), undo
and back, the sitting closed and reopened (resumed, its figure history replayed from the log), and the
labels file valid goldens. Each kernel's sitting reads the drafts run the test's own sitting stored: the
store ends with that one retrieval run.

Drafts come from ``goldens draft`` over the fixture corpus, its model drafts from a scripted chat
(``tests/support/drafting.py``), with real MiniLM retrieval and a real DuckDB;
screenshots are kept in the test's tmp folder (or ``$NOMAD_LAB_ARTIFACTS/label``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page

from nomad_lab.data.drafts import read_corpus, write_drafts
from nomad_lab.data.golden_suites import load_suite_file
from nomad_lab.eval.gating.label_sitting import LabelSession
from nomad_lab.store import Store
from nomad_lab.studies.gating.passage_view import strip_markup, whole_words
from tests.support.browser import (
    WAIT_MS,
    Lab,
    artifacts_dir,
    close_notebook,
    notebook_browser,
    run_all,
)
from tests.support.drafting import fixture_drafts
from tests.support.paths import CORPUS, ROOT

pytestmark = pytest.mark.slow

NOTEBOOK = ROOT / "notebooks" / "label.py"
SHOWN = """() => {
    const q = document.querySelector('.nomad-label-question');
    const c = document.querySelector('.nomad-label-count');
    const f = document.querySelector('.nomad-labeller img');
    const m = document.querySelector('.nomad-label-message');
    const cards = [...document.querySelectorAll('.nomad-label-passage')].map(p => p.textContent);
    const frame = document.querySelector('.nomad-label-frame');
    const keys = document.querySelector('.nomad-label-keys input');
    let inView = false;
    if (keys) {
        const r = keys.getBoundingClientRect();
        inView = r.top >= 0 && r.bottom <= window.innerHeight;
    }
    return q && c ? {id: q.dataset.id, count: c.textContent, figure: f ? f.getAttribute('src') : null,
        message: m ? m.textContent : '', cards,
        guess: document.querySelector('.nomad-label-guess').textContent,
        figures: document.querySelector('.nomad-label-figures').textContent,
        captionLines: document.querySelector('.nomad-label-figures').innerHTML.split('<br>').length,
        undoDisabled: document.querySelector('button.nomad-label-undo').disabled,
        backDisabled: document.querySelector('button.nomad-label-back').disabled,
        hint: document.querySelector('.nomad-label-hint').textContent,
        who: document.querySelector('.nomad-label-who').textContent,
        frameHeight: frame ? frame.clientHeight : 0, keysInView: inView} : null;
}"""


FIGURE = """async () => {
    const img = document.querySelector('.nomad-labeller img');
    const bytes = new Uint8Array(await (await fetch(img.src)).arrayBuffer());
    let hash = 0;
    for (const x of bytes) hash = (hash * 31 + x) >>> 0;
    return [bytes.length, hash];
}"""
"""The figure's PNG, as its length and a hash (the widget shows it through a blob URL of its own)."""


def settled_figure(page: Page) -> list[int]:
    """:data:`FIGURE` once two reads a second apart agree: the image arrives in a message of its own after
    the count, so a loaded kernel can show the count of the last decision beside the previous figure."""
    last = page.evaluate(FIGURE)
    for _ in range(30):
        page.wait_for_timeout(1000)
        now = page.evaluate(FIGURE)
        if now == last:
            return now
        last = now
    return last


def wait_for_count(page: Page, decided: int, total: int, also: str = "true") -> dict:
    """The view once it shows ``decided`` decisions and the state ``also`` names (a JS expression on the
    shown state ``s``): the widget's fields arrive in separate messages, so the count alone can be read
    before the buttons it enables."""
    page.wait_for_function(
        f"() => {{ const s = ({SHOWN})(); "
        f"return s && s.count === '{decided} / {total} decided' && ({also}); }}",
        timeout=WAIT_MS,
    )
    return page.evaluate(SHOWN)


def key(page: Page, letter: str) -> None:
    page.locator(".nomad-label-keys input").click()
    page.keyboard.type(letter)


def tail_words(text: str, n: int = 6) -> list[str]:
    return re.findall(r"[A-Za-z0-9]+", text)[-n:]


def test_label_whole_passages_search_gold_undo_back_resume_with_figure_history(
    tmp_path: Path, embedder, worker_lab: Lab
) -> None:
    artifacts = artifacts_dir(tmp_path, "label")
    corpus = read_corpus(CORPUS)
    goldens = tmp_path / "goldens"
    write_drafts(goldens, fixture_drafts(corpus, per_doc=3, bank_per_category=1), corpus)
    total = len(load_suite_file(goldens / "drafts.jsonl", drafts=True))
    store = tmp_path / "ws.duckdb"
    sitting = LabelSession.open(CORPUS, goldens, store)  # what the page must show first, from the library
    first = sitting.queue()[0]
    passages = sitting.passages(first)
    documents = sitting.documents()
    missed = next(d for d in sorted(documents) if d not in {p.doc_id for p in passages})
    env = {
        "NOMAD_LAB_STORE": str(store),
        "NOMAD_LAB_CORPUS": str(CORPUS),
        "NOMAD_LAB_LABEL_DIR": str(goldens),
        "NOMAD_LAB_LABELLER": "browser-test",
    }
    tracked = git_status()
    with notebook_browser(worker_lab, NOTEBOOK, env) as page:
        run_all(page, NOTEBOOK)
        shown = wait_for_count(page, 0, total)
        page.screenshot(path=artifacts / "1-first-draft.png", full_page=True)
        assert shown["id"] == first and shown["keysInView"] and shown["frameHeight"] > 100
        assert "needs at least 5 answerable and 5 refusals" in shown["figures"] and shown["captionLines"] == 2
        assert shown["undoDisabled"] and shown["backDisabled"]  # nothing to act on: off, and said why
        assert "enabled once a decision is saved" in shown["hint"] and "browser-test" in shown["who"]
        for card, passage in zip(shown["cards"], passages, strict=True):  # every passage whole, to its end
            assert tail_words(card) == tail_words(
                strip_markup(whole_words(passage.text, documents[passage.doc_id]))
            )

        gold = page.locator(".nomad-label-gold input")  # a gold retrieval did not return, searched by name
        gold.fill(missed)
        page.locator(".nomad-label-save").click()
        after_gold = wait_for_count(page, 1, total, also="!s.undoDisabled && !s.backDisabled")
        assert "retrieval miss" in after_gold["message"] and missed in after_gold["message"]
        assert not after_gold["undoDisabled"] and not after_gold["backDisabled"]

        page.locator(".nomad-label-choice button", has_text="near-domain").click()
        page.locator(".nomad-label-save").click()
        second = wait_for_count(page, 2, total)
        key(page, "z")  # undo: the near-domain label taken back, its draft shown again
        undone = wait_for_count(page, 1, total)
        assert undone["id"] == after_gold["id"] and undone["message"].startswith("undone")
        key(page, "u")  # unanswerable, by key
        assert wait_for_count(page, 2, total)["id"] == second["id"]
        key(page, "b")  # back: the draft just labelled, its label shown
        page.wait_for_function(f"() => ({SHOWN})().guess.startsWith('labelled before')", timeout=WAIT_MS)
        back = wait_for_count(page, 2, total)
        assert back["id"] == undone["id"] and "labelled before: refusal, unanswerable" in back["guess"]
        key(page, "a")  # keep it: the queue's next draft is shown
        page.wait_for_function(f"() => ({SHOWN})().guess.startsWith('the draft')", timeout=WAIT_MS)
        decided, state = 2, back
        while "needs at least" in state["figures"] and decided < 25:  # the drafts' guesses, accepted
            key(page, "a")
            decided += 1
            state = wait_for_count(page, decided, total)
        page.screenshot(path=artifacts / "2-figure-drawn.png", full_page=True)
        assert decided <= 20 and state["figure"] and state["captionLines"] == 2  # refusals dealt early
        assert "At recall@5 >= 0.90" in state["figures"]
        figure = settled_figure(page)
        close_notebook(page)  # the sitting closed, its kernel shut down; opened again and run: it resumes
        run_all(page, NOTEBOOK)  # from disk
        resumed = wait_for_count(page, decided, total)
        replayed = settled_figure(page)
        page.screenshot(path=artifacts / "3-resumed.png", full_page=True)
    assert resumed["id"] == state["id"] and replayed == figure  # the figure's history replayed from the log
    labelled = {g.id: g for g in load_suite_file(goldens / "labelled.jsonl", corpus.all_doc_ids)}
    assert labelled[f"label-{first}"].relevant_doc_ids == (missed,)
    assert labelled[f"label-{undone['id']}"].refusal_kind == "unanswerable"
    lines = [
        json.loads(x) for x in (goldens / "labelled.jsonl").read_text().splitlines() if x.startswith("{")
    ]
    assert {line["labelled"]["by"] for line in lines} == {"browser-test"} and len(lines) <= decided
    with Store(store, read_only=True) as opened:  # each kernel read the sitting's run, retrieving nothing
        assert [opened.get_run(r).suite for r in opened.run_ids("retrieval")] == ["drafts"]
    assert git_status() == tracked  # Run All, labels, save, rerun: no tracked file changed


def git_status() -> str:
    """What git says has changed under notebooks/ and datasets/ (tracked or not ignored)."""
    import subprocess

    return subprocess.run(
        ["git", "status", "--porcelain", "--", "notebooks", "datasets"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
