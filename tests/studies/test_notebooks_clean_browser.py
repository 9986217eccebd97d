"""Opening, running and saving a notebook changes nothing git tracks: JupyterLab in headless Chromium,
autosave on, each notebook opened as a person opens it, Run All, saved; ``git status`` is what it was.

Why: a notebook run by hand once rewrote six published files under ``results/`` (its ``out_dir`` default)
and saved its outputs and the kernel's metadata into the tracked notebook. Now a notebook's source is
its jupytext script (the ``.ipynb`` twin that holds outputs is git-ignored, ``notebooks/jupytext.toml``
keeps no jupytext version in the script's header, the kernelspec is the one JupyterLab writes), and
interactive runs write under ``runs/``. The notebooks here run with their defaults over the workspace
store the environment names (``judge_models`` and ``embedders`` run models over whole suites with
their defaults; their save is checked without a browser in ``tests/runners/test_notebooks.py``).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.browser import (
    KERNEL_READY,
    Lab,
    artifacts_dir,
    close_notebook,
    notebook_browser,
    run_all,
)
from tests.support.paths import ROOT

pytestmark = pytest.mark.slow

NOTEBOOKS = [
    ROOT / "notebooks" / f"{name}.py"
    for name in ("explore", "floor_sweep", "label", "placement", "estimator")
]
SETTLED = """() => {
    const panel = window.jupyterapp.shell.currentWidget;
    const prompts = [...panel.node.querySelectorAll('.jp-InputPrompt')].map(p => p.textContent);
    return prompts.length > 0 && !prompts.some(p => p.includes('*'));
}"""


def git_status() -> list[str]:
    """Every change git sees in the repository (ignored files are not changes)."""
    out = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT, capture_output=True, text=True
    )
    return sorted(out.stdout.splitlines())


def test_run_all_and_save_of_every_notebook_leaves_git_status_as_it_was(
    tmp_path: Path, worker_lab: Lab
) -> None:
    artifacts = artifacts_dir(tmp_path, "clean")
    before = git_status()
    scripts = {path: path.read_bytes() for path in NOTEBOOKS}
    env = {"NOMAD_LAB_STORE": os.environ.get("NOMAD_LAB_STORE", str(ROOT / "runs" / "nomad-lab.duckdb"))}
    saved = []
    with notebook_browser(
        worker_lab, NOTEBOOKS, env, autosave=True
    ) as page:  # one tab opens each notebook in turn
        for notebook in NOTEBOOKS:
            run_all(page, notebook)
            page.wait_for_function(SETTLED)
            page.wait_for_function(KERNEL_READY)
            page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
            page.screenshot(path=artifacts / f"{notebook.stem}.png", full_page=True)
            saved.append(notebook.with_suffix(".ipynb").is_file())
            assert notebook.read_bytes() == scripts[notebook], f"{notebook.name} was rewritten by its save"
            assert git_status() == before, f"{notebook.name}: {sorted(set(git_status()) - set(before))}"
            close_notebook(page)
    assert all(saved)  # each save really wrote: the outputs went to the ignored twin
