"""results/index.html (written by ``nomad-lab reproduce``) opens from disk, starts with a headline figure,
and every figure on it loads.

The page is meant to open without a server, so it is loaded as a ``file://`` URL in headless Chromium;
an image that fails to load has ``naturalWidth`` 0. The first thing under the page's title must be a
headline figure, drawn within the first screen (a reader sees a plot before any list or table). The
gallery is committed, so a missing one fails (``nomad-lab reproduce --gallery-only`` rewrites it).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import sync_playwright

from nomad_lab.publish.gallery import headline_figures
from tests.support.browser import CHROMIUM_ARGS, chromium_or_fail
from tests.support.paths import ROOT

GALLERY = ROOT / "results" / "index.html"


def test_every_image_of_the_results_gallery_loads(tmp_path) -> None:
    if not GALLERY.is_file():
        pytest.fail(f"no {GALLERY.relative_to(ROOT)}: `nomad-lab reproduce --gallery-only` writes it")
    chromium = chromium_or_fail()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(GALLERY.as_uri(), wait_until="load")
            images = page.evaluate(
                "() => [...document.images].map(i => ({src: i.getAttribute('src'), "
                "ok: i.complete && i.naturalWidth > 0}))"
            )
            first = page.evaluate(
                "() => { const h = document.querySelector('h1'); const next = h.nextElementSibling; "
                "const img = next && next.querySelector('img'); "
                "return {id: next && next.id, img: img && img.getAttribute('src'), "
                "top: img ? img.getBoundingClientRect().top : null, screen: window.innerHeight}; }"
            )
            page.screenshot(path=tmp_path / "gallery.png", full_page=True)
        finally:
            browser.close()
    assert images, f"{GALLERY} shows no figure"
    assert [i["src"] for i in images if not i["ok"]] == []
    headlines = [src for _, src in headline_figures(GALLERY.parent)]
    assert first["id"] == "headlines" and first["img"] == headlines[0], first
    assert first["top"] < first["screen"], f"the first headline figure starts below the first screen: {first}"
