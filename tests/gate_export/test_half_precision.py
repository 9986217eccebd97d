"""The sufficiency bundle's binary16 rounding by hand (``half_precision.ts``), which a Node without
``Math.f16round`` (Node 22, the first that runs TypeScript) uses, rounds as numpy's float16 cast does on
every class of value: normals, subnormals, ties (to even), overflow, signs, zero, infinities and NaN."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np

from nomad_lab.runners.programs import TYPESCRIPT_NEED, typescript_node
from tests.support.paths import ROOT

MODULE = ROOT / "nomad_lab" / "gate" / "half_precision.ts"
RUNNER = """
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const { f16round } = await import(pathToFileURL(process.argv[2]).href);
const values = JSON.parse(readFileSync(process.argv[3], "utf8")).map(Number);
process.stdout.write(JSON.stringify(values.map((x) => String(f16round(x)))));
"""


def float32_values() -> np.ndarray:
    """Edge values of binary16 (its largest, the overflow midpoint, its smallest subnormal and the ties
    around them) and 20,000 seeded float32 values spread over every magnitude binary16 holds and beyond."""
    tie = 2.0**-11  # half a binary16 step at 1.0
    edges = [0.0, 1.0, 65504.0, 65519.0, 65520.0, 65536.0, 1e9, 2.0**-14, 2.0**-24, 2.0**-25, 3 * 2.0**-25]
    edges += [1 + tie, 1 + 3 * tie, 1024 + 0.5, 1025 + 0.5, 2.0**-24 * 1.5, 1e-12, np.inf, np.nan]
    rng = np.random.default_rng(7)
    spread = 10.0 ** rng.uniform(-9, 5.5, 20_000)
    values = np.concatenate([edges, spread]).astype(np.float32)
    return np.concatenate([values, -values])


def test_the_hand_rounding_matches_numpys_float16(tmp_path: Path) -> None:
    node = typescript_node()
    assert node is not None, TYPESCRIPT_NEED
    values = float32_values()
    texts = [
        {"inf": "Infinity", "-inf": "-Infinity", "nan": "NaN"}.get(repr(float(v)), repr(float(v)))
        for v in values
    ]
    (tmp_path / "values.json").write_text(json.dumps(texts))  # as JavaScript's Number() reads them
    (tmp_path / "run.mjs").write_text(RUNNER)
    argv = [str(node), "--experimental-strip-types", "--no-warnings", str(tmp_path / "run.mjs")]
    done = subprocess.run([*argv, str(MODULE), str(tmp_path / "values.json")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    got = np.array([float(s) for s in json.loads(done.stdout)])
    with np.errstate(over="ignore"):  # past 65504 is infinity, as in the bundle
        expected = values.astype(np.float16).astype(np.float64)
    assert np.array_equal(got, expected, equal_nan=True)
