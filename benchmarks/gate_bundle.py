"""Benchmark: a cross-encoder gate's decision per question in Node (the exported bundle) and in Python (the
runtime), on one stored run's questions, with their decisions held to ``gate apply``'s.

The gate is a learned gate file (default the published ``learned: pool + ce + bank``); it is exported as
a bundle (``gate export --to ts --bundle``, run under the project's Node with the pinned npm packages from
``.cache/gate-node``) and as the runtime's JSON (``--to json``). ``--questions`` questions with a pool are
spread evenly over the run (0: all of them). Each side loads its model once, decides one warm-up
question, then decides each question in turn from its text and whole pool: the cross-encoder over every
window of its top-5 set (one pair per onnxruntime run, two threads), then the gate. Node runs after
Python, in one process each; the load line says what else ran. ``--run`` repeats (one run per corpus):
the first table pools every run's questions, a second gives each run's rows. After its timed pass the
Python side runs every question through the LangChain compressor and the LlamaIndex postprocessor too,
their cross-encoder pairs read from that pass (:class:`PairRecord`): their decisions, untimed.

Reported: per side, how many decisions equal ``gate apply``'s (its scores read from the store's
pair-score cache, filled first when the run lacks them), median and mean milliseconds per question; the
ratio Node / Python of the medians and the median per-question ratio with a 95% bootstrap interval; the
largest score difference between the two; the bundle's size.

    python benchmarks/gate_bundle.py --run RUN --questions 60
    python benchmarks/gate_bundle.py --run DEFAULT_RUN --run PYDOCS_RUN --questions 0
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
from _measure import ROOT, published

from nomad_lab.core.workspace import DEFAULT_STORE_PATH, RESULTS_DIR
from nomad_lab.eval.gating import load_run
from nomad_lab.eval.gating.export import export_bundle, export_text, pipeline_questions
from nomad_lab.eval.gating.fit import apply_gate, with_features
from nomad_lab.frameworks.langchain import documents, gate_compressor
from nomad_lab.frameworks.llamaindex import gate_postprocessor, nodes
from nomad_lab.gate.logistic_gate import LearnedGate
from nomad_lab.gate.pair_model import OnnxRunner
from nomad_lab.gate.runtime import load
from nomad_lab.runners.node_packages import link_node_modules
from nomad_lab.runners.programs import TYPESCRIPT_NEED, typescript_node

SEED = 1341
NODE_SIDE = ROOT / "benchmarks" / "gate_bundle.mjs"


class PairRecord:
    """Every cross-encoder pair the runtime scores while installed, with its logit; once ``reading``, a
    recorded pair is read back instead of run again. The runtime runs one pair per model run, so a pair's
    logit does not depend on what else is scored: the adapters' pass reads what the timed pass computed
    (the same function of the same pair) and checks only what they add, the conversion and the decision."""

    def __init__(self) -> None:
        self.scores: dict[tuple[str, str], float] = {}
        self.reading = False
        self.original = OnnxRunner.run

    def __enter__(self) -> PairRecord:
        record = self

        def run(runner: OnnxRunner, pairs: list[tuple[str, str]]) -> np.ndarray:
            pairs = [tuple(p) for p in pairs]
            todo = [p for p in dict.fromkeys(pairs) if not (record.reading and p in record.scores)]
            if todo:
                record.scores.update(zip(todo, record.original(runner, todo), strict=True))
            return np.array([record.scores[p] for p in pairs])

        OnnxRunner.run = run  # type: ignore[method-assign]
        return self

    def __exit__(self, *_: object) -> None:
        OnnxRunner.run = self.original  # type: ignore[method-assign]


def adapters_side(portable: Path, cases: list[dict], record: PairRecord) -> dict[str, tuple[bool, bool]]:
    """Each question's pool as LangChain documents through the compressor and as LlamaIndex nodes
    through the postprocessor: (kept by LangChain, kept by LlamaIndex), the pairs read from ``record``."""
    compressor, postprocessor = gate_compressor(portable), gate_postprocessor(portable)
    record.reading = True
    return {
        c["id"]: (
            bool(compressor.compress_documents(documents(c["passages"]), c["question"])),
            bool(postprocessor.postprocess_nodes(nodes(c["passages"]), query_str=c["question"])),
        )
        for c in cases
    }


def python_side(portable: Path, cases: list[dict]) -> dict[str, dict]:
    gate = load(portable)
    gate.score(cases[0]["question"], cases[0]["passages"])  # loads the model, warms the session
    out = {}
    for c in cases:
        started = time.perf_counter()
        score = gate.score(c["question"], c["passages"])
        out[c["id"]] = {
            "score": score,
            "keep": score >= gate.threshold,
            "ms": 1000 * (time.perf_counter() - started),
        }
    return out


def node_side(bundle: Path, cases: list[dict], folder: Path, script: Path = NODE_SIDE) -> dict[str, dict]:
    """``script`` (a Node half) run over ``cases`` against ``bundle``: its JSON output."""
    node = typescript_node()
    if node is None:
        raise SystemExit(TYPESCRIPT_NEED)
    path = folder / "cases.json"
    path.write_text(json.dumps(cases), encoding="utf-8")
    flags = ["--experimental-strip-types", "--no-warnings"]
    done = subprocess.run(
        [str(node), *flags, str(script), str(bundle), str(path)], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"node: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout)


def ratio_figures(node: dict[str, dict], python: dict[str, dict], ids: list[str]) -> tuple[float, str]:
    """Node / Python: the ratio of the median milliseconds per question, and the median per-question
    ratio with its 95% bootstrap interval (as text)."""
    ratios = np.array([node[i]["ms"] / python[i]["ms"] for i in ids])
    rng = np.random.default_rng(SEED)
    boot = [np.median(rng.choice(ratios, len(ratios))) for _ in range(2000)]
    low, high = np.percentile(boot, [2.5, 97.5])
    medians = statistics.median(node[i]["ms"] for i in ids) / statistics.median(python[i]["ms"] for i in ids)
    return medians, f"{np.median(ratios):.2f} [{low:.2f}, {high:.2f}]"


def figure_table(rows: list[tuple[str, str]]) -> None:
    """Print the ``| figure | value |`` table the docs quote by figure name."""
    print("\n| figure | value |")
    print("|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")


def size_mb(folder: Path) -> float:
    return (
        sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and "node_modules" not in p.parts)
        / 1e6
    )


def decide_run(args: argparse.Namespace, run: str | None) -> tuple[str, dict, dict, dict, dict, float]:
    """One stored run's questions decided on both sides: its id, Python's and Node's decisions, both
    adapters', ``gate apply``'s, and the bundle's size in MB."""
    gate = LearnedGate.load(args.gate)
    data = with_features(args.store, load_run(args.store, run), gate.kinds, progress=True)
    applied = apply_gate(gate, data)
    questions = [q for q in pipeline_questions(args.store, data.run_id, vectors=False) if q["passages"]]
    step = 1 if args.questions <= 0 else max(1, len(questions) // args.questions)
    cases = questions[::step][: args.questions or None]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        command = f"gate export {args.gate} --to ts --bundle"
        export_bundle(args.store, str(args.gate), folder / "bundle", command)
        bundle_mb = size_mb(folder / "bundle")
        link_node_modules(folder / "bundle")
        portable = folder / "gate.json"
        portable.write_text(export_text(args.store, str(args.gate), "json", command), encoding="utf-8")
        with PairRecord() as record:
            python = python_side(portable, cases)
            adapters = adapters_side(portable, cases, record)
        node = node_side(folder / "bundle", cases, folder)
    expected = {c["id"]: applied["scores"][c["id"]] >= applied["threshold"] for c in cases}
    kept = sum(expected.values())
    print(f"run {data.run_id}: {len(cases)} of {len(questions)} questions with a pool; gate {args.gate.name}")
    print(f"  gate apply keeps {kept} and drops {len(cases) - kept} of them")
    return data.run_id, python, node, adapters, expected, bundle_mb


def side_row(label: str, side: dict[str, dict], expected: dict[str, bool]) -> str:
    """One ``| side | questions | equal | median | mean |`` row over the questions in ``expected``."""
    ms = [side[i]["ms"] for i in expected]
    equal = sum(side[i]["keep"] == keep for i, keep in expected.items())
    return f"| {label} | {len(ms)} | {equal} | {statistics.median(ms):.0f} | {statistics.mean(ms):.0f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=DEFAULT_STORE_PATH)
    parser.add_argument(
        "--run",
        action="append",
        default=None,
        help="stored retrieval run (repeat for several, e.g. one per corpus; default: the latest)",
    )
    parser.add_argument("--gate", type=Path, default=RESULTS_DIR / "gates" / "learned_gate.json")
    parser.add_argument(
        "--questions", type=int, default=60, help="questions timed per run, spread over it (0: all)"
    )
    args = parser.parse_args()

    per_run, adapted, sides, expected, bundle_mb = [], [], {"python": {}, "node": {}}, {}, 0.0
    for run in args.run or [None]:
        run_id, python, node, adapters, decided, bundle_mb = decide_run(args, run)
        per_run.append((run_id, python, node, decided))
        adapted.append((run_id, adapters, decided))
        for name, side in (("python", python), ("node", node)):
            sides[name].update({f"{run_id}/{i}": v for i, v in side.items()})
        expected.update({f"{run_id}/{i}": keep for i, keep in decided.items()})

    header = (
        "| side | questions | decisions equal to gate apply | median ms per question | mean ms per question |"
    )
    print(f"\n{header}")
    print("|---|---:|---:|---:|---:|")
    for name, side in sides.items():
        print(side_row(name, side, expected))
    if len(per_run) > 1:
        print(f"\n{header.replace('| side |', '| side-run |')}")
        print("|---|---:|---:|---:|---:|")
        for run, python, node, decided in per_run:
            for name, side in (("python", python), ("node", node)):
                print(side_row(f"{name}-{run}", side, decided))
    print("\n| adapter-run | questions | decisions equal to gate apply |")
    print("|---|---:|---:|")
    for run_id, adapters, decided in adapted:
        for column, name in enumerate(("langchain", "llamaindex")):
            equal = sum(adapters[i][column] == keep for i, keep in decided.items())
            print(f"| {name}-{run_id} | {len(decided)} | {equal} |")
    ids = list(expected)
    medians, interval = ratio_figures(sides["node"], sides["python"], ids)
    gap = max(abs(sides["node"][i]["score"] - sides["python"][i]["score"]) for i in ids)
    figure_table(
        [
            ("node / python, ratio of medians", f"{medians:.2f}"),
            ("node / python, median per-question ratio [95% CI]", interval),
            ("largest gate score difference, node vs python", f"{gap:.1e}"),
            ("bundle size, MB (without node_modules)", f"{bundle_mb:.1f}"),
        ]
    )


if __name__ == "__main__":
    with published(__file__):
        main()
