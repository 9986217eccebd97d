"""results/index.html (written by ``nomad-lab reproduce``) opens from disk and every figure on it loads.

The page is meant to open without a server, so it is loaded as a ``file://`` URL in headless Chromium;
an image that fails to load has ``naturalWidth`` 0. The gallery is committed, so a missing one fails
(``nomad-lab reproduce --gallery-only`` rewrites it from the stored results).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import sync_playwright

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
            page = browser.new_page(viewport={"width": 1280, "height": 1600})
            page.goto(GALLERY.as_uri(), wait_until="load")
            images = page.evaluate(
                "() => [...document.images].map(i => ({src: i.getAttribute('src'), "
                "ok: i.complete && i.naturalWidth > 0}))"
            )
            page.screenshot(path=tmp_path / "gallery.png", full_page=True)
        finally:
            browser.close()
    assert images, f"{GALLERY} shows no figure"
    assert [i["src"] for i in images if not i["ok"]] == []
