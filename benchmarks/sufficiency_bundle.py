"""Benchmark: the sufficiency check's decision per question in Node (the exported bundle) and in Python (the
runtime), on both corpora's stored questions, with their decisions held to ``gate apply``'s.

Each corpus's published check (``results/sufficiency/[pydocs/]sufficiency-gate.json``: the fine-tuned
head, answer-type weight and threshold ``nomad-lab study sufficiency`` wrote) is exported as a bundle
(``gate export sufficiency:FILE --to ts --bundle``, run under the project's Node with the pinned npm
packages from ``.cache/gate-node``) and as the runtime's JSON (``--to json``). The questions are each
corpus's gating suites retrieved at floor 0 into a store of their own under ``runs/sufficiency-bench/``
(made on the first run, reused after); ``--questions`` questions with a pool are spread evenly over each
run (0: all of them). ``gate apply``'s side is the gatherer's scorer over each question's top-5 set (the
body's readings cached beside the store). Each timed side loads its model once, decides one warm-up
question, then decides each question in turn from its text and top-5 set: cut and choose the units, the
body over each (one pair per onnxruntime run, two threads), the head, the threshold. Node runs after
Python, in one process each; the load line says what else ran.

Reported per side and corpus (``python-default``, ``node-pydocs``, ...): decisions equal to ``gate
apply``'s, median and mean milliseconds per question; then the ratio Node / Python of the medians over all
questions, the median per-question ratio with a 95% bootstrap interval, the largest score differences and
the bundle's size.

    python benchmarks/sufficiency_bundle.py --questions 0
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import tempfile
from pathlib import Path

from _measure import ROOT, published
from gate_bundle import figure_table, node_side, python_side, ratio_figures, size_mb

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.workspace import DATASETS_DIR, DEFAULT_CORPUS_DIR, DEFAULT_GOLDENS_DIR, RESULTS_DIR
from nomad_lab.data.golden_suites import GATING_SUITES
from nomad_lab.eval.gating import load_run
from nomad_lab.eval.gating.context import GatherContext
from nomad_lab.eval.gating.export import export_bundle, export_text
from nomad_lab.eval.gating.runs import resolve_run
from nomad_lab.eval.retrieval_service import RetrievalRequest, retrieve
from nomad_lab.retrieval.answer_cache import cache_root
from nomad_lab.retrieval.sufficiency_model import sufficiency_scores
from nomad_lab.runners.node_packages import link_node_modules

NODE_SIDE = ROOT / "benchmarks" / "sufficiency_bundle.mjs"
CORPORA = {
    "default": (
        DEFAULT_CORPUS_DIR,
        DEFAULT_GOLDENS_DIR,
        RESULTS_DIR / "sufficiency" / "sufficiency-gate.json",
    ),
    "pydocs": (
        DATASETS_DIR / "corpora" / "pydocs" / "corpus",
        DATASETS_DIR / "corpora" / "pydocs" / "goldens",
        RESULTS_DIR / "sufficiency" / "pydocs" / "sufficiency-gate.json",
    ),
}


def stored_run(store: Path, corpus: Path, goldens: Path) -> str:
    """The store's latest run, retrieved first (floor 0, the gating suites) when it holds none."""
    if store.is_file():
        try:
            return resolve_run(store, "latest")
        except NomadLabError:
            pass  # a store without a run yet
    store.parent.mkdir(parents=True, exist_ok=True)
    request = RetrievalRequest(
        corpus_dir=corpus, goldens_dir=goldens, suite=GATING_SUITES, floor=0.0, store_path=store
    )
    return retrieve(request).run_id


def top_sets(store: Path, run_id: str, questions: int) -> list[dict]:
    """The run's questions with a pool, ``questions`` of them spread evenly (0: all), each with its
    top-5 set as ``gate apply`` reads it."""
    data = load_run(store, run_id, embed=False)
    ctx = GatherContext(store, data)
    cases = [
        {"id": gid, "question": q, "passages": [{"text": t} for t in ctx.passages(i)]}
        for i, (gid, q) in enumerate(zip(data.pools.ids, data.queries, strict=True))
    ]
    cases = [c for c in cases if c["passages"]]
    step = 1 if questions <= 0 else max(1, len(cases) // questions)
    return cases[::step][: questions or None]


def gap(a: dict[str, dict], b: dict[str, float], ids: list[str]) -> float:
    values = [abs(a[i]["score"] - b[i]) for i in ids if not math.isnan(b[i])]
    return max(values, default=0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stores", type=Path, default=ROOT / "runs" / "sufficiency-bench")
    parser.add_argument("--questions", type=int, default=0, help="questions per corpus (0: all)")
    args = parser.parse_args()

    rows, everything, sizes, gaps = [], {"python": {}, "node": {}}, {}, {"node": 0.0, "apply": 0.0}
    for name, (corpus, goldens, check) in CORPORA.items():
        store = args.stores / f"{name}.duckdb"
        run_id = stored_run(store, corpus, goldens)
        cases = top_sets(store, run_id, args.questions)
        questions = [(c["question"], [p["text"] for p in c["passages"]]) for c in cases]
        scores = sufficiency_scores(str(check), questions, cache_root(store), f"sufficiency:{check}")
        applied = {c["id"]: float(s) for c, s in zip(cases, scores, strict=True)}
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            spec = f"sufficiency:{check}"
            command = f"gate export {spec} --to ts --action note --bundle"
            export_bundle(store, spec, folder / "bundle", command)
            sizes[name] = size_mb(folder / "bundle")
            link_node_modules(folder / "bundle")
            portable = folder / "check.json"
            portable.write_text(export_text(store, spec, "json", command), encoding="utf-8")
            python = python_side(portable, cases)
            node = node_side(folder / "bundle", cases, folder, NODE_SIDE)
        threshold = json.loads(check.read_text())["threshold"]
        expected = {i: not math.isnan(s) and s >= threshold for i, s in applied.items()}
        ids = [c["id"] for c in cases]
        node = {i: {**v, "score": math.nan if v["score"] is None else v["score"]} for i, v in node.items()}
        gaps["node"] = max(gaps["node"], gap(node, {i: python[i]["score"] for i in ids}, ids))
        gaps["apply"] = max(gaps["apply"], gap(python, applied, ids))
        kept = sum(expected.values())
        print(f"{name}: run {run_id}, {len(cases)} questions with a pool; check {check.relative_to(ROOT)}")
        print(f"  gate apply: {kept} stated, {len(cases) - kept} not (threshold {threshold:.4f})")
        for side_name, side in (("python", python), ("node", node)):
            ms = [side[i]["ms"] for i in ids]
            equal = sum(side[i]["keep"] == expected[i] for i in ids)
            rows.append((side_name, name, len(ids), equal, statistics.median(ms), statistics.mean(ms)))
            everything[side_name].update({f"{name}/{i}": side[i] for i in ids})
    print(
        "\n| side-corpus | questions | decisions equal to gate apply | median ms per question "
        "| mean ms per question |"
    )
    print("|---|---:|---:|---:|---:|")
    for side_name, name, n, equal, median, mean in rows:
        print(f"| {side_name}-{name} | {n} | {equal} | {median:.0f} | {mean:.0f} |")
    medians, interval = ratio_figures(everything["node"], everything["python"], list(everything["node"]))
    figure_table(
        [
            ("node / python, ratio of medians", f"{medians:.2f}"),
            ("node / python, median per-question ratio [95% CI]", interval),
            ("largest score difference, node vs python", f"{gaps['node']:.1e}"),
            ("largest score difference, python vs gate apply", f"{gaps['apply']:.1e}"),
            ("bundle size, MB (without node_modules)", f"{sizes['default']:.1f}"),
        ]
    )


if __name__ == "__main__":
    with published(__file__):
        main()
