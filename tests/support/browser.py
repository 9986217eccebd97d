"""A real JupyterLab on 127.0.0.1 and an installed headless Chromium or Chrome driven by Playwright.

Why this shape: the notebooks are meant to be opened by a person in JupyterLab, where the kernel runs
in the notebook's own folder and widgets render in a browser; papermill sees neither. Playwright drives
the browser already on the machine, found by ``nomad_lab.runners.programs`` (the same lookup
``scripts/setup.sh`` uses), through its executable path: ``playwright install`` downloads a browser build
and is never run. A missing browser is a failure carrying setup's own warning line, never a skip, as is a
missing ``playwright`` package (it is in the ``test`` extra).

One JupyterLab and one browser serve every browser test of a worker (:func:`worker_lab`: starting them
and loading Lab's frontend takes seconds), and tests share its Lab tab; each test gives its kernels its
own variables and leaves no notebook open and no kernel running (:func:`notebook_browser`). A test
connects to the browser (DevTools) and disconnects at its end: Playwright's sync API holds an event loop
while connected, which other tests' asyncio would trip over.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from nomad_lab.runners.programs import BROWSER, find
from nomad_lab.serve.process import free_port, stop_process
from tests.support.paths import ROOT

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]  # root in CI needs no-sandbox
QUIET_ARGS = [  # as Playwright launches it: no first-run pages, a tab's timers never slowed
    "--no-first-run",
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
    "--disable-renderer-backgrounding",
    "--hide-scrollbars",
]
WAIT_MS = 600_000  # a hang guard for a loaded machine, not a speed claim
CLOSE_ALL = """() => {
    for (const widget of [...window.jupyterapp.shell.widgets('main')]) widget.dispose();
    return document.querySelector('.jp-Dialog') !== null;
}"""
"""Close every document in the tab without a question; true when a dialog is left open."""
KERNEL_READY = """() => {
    const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const kernel = panel && panel.sessionContext && panel.sessionContext.session?.kernel;
    return Boolean(kernel && kernel.status === 'idle' && panel.context.isReady);
}"""


def chromium_or_fail() -> Path:
    """The browser binary; its absence fails the test with the line setup printed about it."""
    path = find(BROWSER)
    if path is None:
        pytest.fail(BROWSER.need)
    return path


@dataclass(frozen=True)
class Lab:
    url: str
    token: str
    settings_dir: Path
    """Lab's user settings (read by a page when it loads)."""
    kernel_env: Path
    """The variables each kernel started next gets besides the server's (``tests.support.lab_kernel_env``)."""
    browser: str = ""
    """The DevTools endpoint of the worker's browser (:func:`worker_lab`), whose Lab tab tests share."""

    def api(self, method: str, path: str) -> Any:
        """One call of the server's REST API; its JSON answer (None when empty)."""
        request = urllib.request.Request(f"{self.url}{path}?token={self.token}", method=method)
        with urllib.request.urlopen(request, timeout=60) as reply:
            body = reply.read()
        return json.loads(body) if body else None


@contextmanager
def jupyterlab(root: Path, settings_dir: Path) -> Iterator[Lab]:
    """JupyterLab serving ``root`` on a free loopback port with a random token; stopped on exit.

    The app is exposed as ``window.jupyterapp`` so a test can run Lab commands (Run All, save) by their
    ids rather than by menu positions; each kernel gets the variables of ``Lab.kernel_env`` (see
    :func:`lab_for`). Autosave is off (every 5 s when a test turns it on: :func:`lab_page`).
    """
    token, port = secrets.token_hex(16), free_port()
    plugin = settings_dir / "@jupyterlab" / "docmanager-extension"
    plugin.mkdir(parents=True, exist_ok=True)
    settings = {"autosave": False, "autosaveInterval": 5}  # a test turns it on when it means to
    (plugin / "plugin.jupyterlab-settings").write_text(json.dumps(settings))
    kernel_env = settings_dir / "kernel-env.json"
    kernel_env.write_text("{}")
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--allow-root",
        "--ip=127.0.0.1",
        f"--port={port}",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.session_manager_class=tests.support.lab_kernel_env.KernelEnvSessionManager",
        f"--KernelEnvSessionManager.env_file={kernel_env}",
        f"--LabApp.user_settings_dir={settings_dir}",
        f"--LabApp.workspaces_dir={settings_dir / 'workspaces'}",
        "--LabApp.expose_app_in_browser=True",
    ]
    log = settings_dir / "jupyterlab.log"
    with log.open("w") as sink:  # run from the repository, where tests.support is imported from
        proc = subprocess.Popen(command, cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT)
    lab = Lab(f"http://127.0.0.1:{port}", token, settings_dir, kernel_env)
    try:
        _wait_until_answering(lab, proc, log)
        yield lab
    finally:
        stop_process(proc, 30)


@pytest.fixture(scope="session")
def worker_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """One JupyterLab and one headless browser per worker, for every browser test the worker runs:
    starting them and loading Lab's frontend into a tab takes seconds. Each test sets its kernels'
    variables and autosave and leaves no notebook open and no kernel running (:func:`notebook_browser`)."""
    chromium = chromium_or_fail()
    with (
        jupyterlab(ROOT, tmp_path_factory.mktemp("lab")) as lab,
        devtools_browser(chromium, tmp_path_factory.mktemp("chromium")) as endpoint,
    ):
        yield replace(lab, browser=endpoint)


@contextmanager
def devtools_browser(chromium: Path, profile: Path) -> Iterator[str]:
    """``chromium`` headless, answering the DevTools protocol on a free loopback port (its endpoint
    yielded); stopped on exit. Tests connect to it (Playwright's ``connect_over_cdp``) rather than launch
    it: a connection is closed at the end of each test, the browser and its Lab tab stay."""
    port_file = profile / "DevToolsActivePort"
    command = [str(chromium), "--headless", *CHROMIUM_ARGS, *QUIET_ARGS, f"--user-data-dir={profile}"]
    proc = subprocess.Popen([*command, "--remote-debugging-port=0", "about:blank"], stderr=subprocess.DEVNULL)
    try:
        while not (port_file.is_file() and port_file.read_text().strip()):
            if proc.poll() is not None:
                raise RuntimeError(f"{chromium} exited with {proc.returncode} before it answered")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port_file.read_text().split()[0]}"
    finally:
        stop_process(proc, 30)


@contextmanager
def lab_for(lab: Lab, env: dict[str, str]) -> Iterator[Lab]:
    """``lab`` with ``env`` added to each kernel it starts and no layout to restore (a new tab does not
    reopen the last test's notebooks); on exit every kernel is shut down, so the next test starts its own."""
    shutil.rmtree(lab.settings_dir / "workspaces", ignore_errors=True)
    lab.kernel_env.write_text(json.dumps(env))
    try:
        yield lab
    finally:
        for session in lab.api("GET", "/api/sessions"):
            lab.api("DELETE", f"/api/sessions/{session['id']}")
        lab.kernel_env.write_text("{}")


def _wait_until_answering(lab: Lab, proc: subprocess.Popen, log: Path) -> None:
    """Poll the server's status API until it answers; a server that exits fails with its log."""
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{lab.url}/api/status?token={lab.token}", timeout=5) as reply:
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(0.1)


@contextmanager
def restored(paths: list[Path]) -> Iterator[None]:
    """Put back the bytes of ``paths``, and drop the ``.ipynb`` twins and ``.ipynb_checkpoints`` the run
    leaves beside them (those that were not there before)."""
    saved = {path: path.read_bytes() for path in paths}
    made = {path.parent / ".ipynb_checkpoints" for path in paths} | {
        path.with_suffix(".ipynb") for path in paths
    }
    existed = {path for path in made if path.exists()}
    try:
        yield
    finally:
        for path, data in saved.items():
            if path.read_bytes() != data:
                path.write_bytes(data)
        for path in made - existed:
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


def artifacts_dir(tmp_path: Path, name: str) -> Path:
    """Where a test keeps its screenshots: ``$NOMAD_LAB_ARTIFACTS/name``, else ``name`` in its tmp folder."""
    artifacts = Path(os.environ.get("NOMAD_LAB_ARTIFACTS", tmp_path)) / name
    artifacts.mkdir(parents=True, exist_ok=True)
    return artifacts


@contextmanager
def notebook_browser(
    lab: Lab, notebook: Path | list[Path], env: dict[str, str], autosave: bool = False
) -> Iterator[Page]:
    """The worker's Lab tab (:func:`lab_page`), autosave on or off as asked (off unless asked, so a test
    saves when it means to), its kernels given ``env`` (:func:`lab_for`); on exit every notebook is closed
    in it, every kernel shut down and ``notebook`` (or each of a list) put back as it was. A tab left in a
    state not known (a dialog open, the page broken) is closed: the next test loads Lab in a new one."""
    from playwright.sync_api import sync_playwright  # here: finding the browser alone needs no playwright

    with (
        restored(notebook if isinstance(notebook, list) else [notebook]),
        lab_for(lab, env),
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.connect_over_cdp(lab.browser)
        try:
            page = lab_page(browser, lab, autosave)
            try:
                yield page
            finally:
                try:
                    if page.evaluate(CLOSE_ALL):
                        page.close()
                except Exception:
                    page.close()
        finally:
            browser.close()  # the connection only: the browser and its Lab tab stay for the next test


def lab_page(browser: Browser, lab: Lab, autosave: bool) -> Page:
    """The tab showing Lab with its layout restored and autosave on or off: the one an earlier test left,
    else a new one (which loads Lab's whole frontend, as a person's new tab does). One tab opens notebook
    after notebook."""
    context = browser.contexts[0]
    page = next((p for p in context.pages if p.url.startswith(f"{lab.url}/lab")), None)
    if page is None:
        page = context.new_page()
        page.goto(f"{lab.url}/lab?token={lab.token}")
    page.set_viewport_size({"width": 1280, "height": 1600})
    page.set_default_timeout(WAIT_MS)
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.commands.hasCommand('docmanager:open')"
    )
    page.evaluate("() => window.jupyterapp.restored.then(() => true)")
    assert page.evaluate(
        "async (want) => { const c = window.jupyterapp.commands, id = 'docmanager:toggle-autosave';"
        " if (c.isToggled(id) !== want) await c.execute(id); return c.isToggled(id) === want; }",
        autosave,
    ), f"autosave could not be turned {'on' if autosave else 'off'}"
    return page


def open_notebook(page: Page, notebook: Path) -> None:
    """``notebook`` opened in the Lab of ``page`` and its kernel ready. A project notebook is its script
    (``notebooks/NAME.py``), opened as a notebook the way a person does (Open With > Jupytext Notebook)."""
    factory = "Jupytext Notebook" if notebook.suffix == ".py" else "Notebook"
    path = notebook.relative_to(ROOT).as_posix()
    page.evaluate(
        "([path, factory]) => window.jupyterapp.commands.execute('docmanager:open', {path, factory})"
        ".then(() => true)",
        [path, factory],
    )
    page.wait_for_function(KERNEL_READY)


def run_all(page: Page, notebook: Path) -> None:
    """``notebook`` opened (:func:`open_notebook`) and Run All started (not finished)."""
    open_notebook(page, notebook)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")


def close_notebook(page: Page) -> None:
    """Close the notebook in front and shut its kernel down (File > Close and Shut Down Notebook)."""
    page.evaluate(
        "async () => { const panel = window.jupyterapp.shell.currentWidget;"
        " await panel.sessionContext.shutdown(); panel.dispose(); }"
    )
