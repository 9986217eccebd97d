"""Leak against library size: does a score floor, or a judge after it, hold up as the library grows?

The seed's remark is that off-topic leaks "get worse as the library grows": every book added is more
prose for a coherent off-topic question to land on. This study grows the library step by step (the
domain corpus alone, then its distractors, then the library-growth books a few at a time), and at each
size retrieves the core and off-topic suites once (pools stored), then reads from those pools the
off-topic leak rate (refusals of kind off-topic; the other refusal kinds' pass rates apart,
:mod:`~nomad_lab.studies.gating.growth_kinds`) and core recall@5 at each floor, with 95% bootstrap
intervals, and runs the relevance judge after the default floor (verdicts cached in the store, so a
rerun asks nothing twice).

Each size is a corpus folder under ``runs/library_growth/`` holding copies of its documents; the index
is cached by corpus fingerprint and every chunk embedding by text hash, so a size re-embeds only the
books it adds, and a rerun of the study re-embeds nothing.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.reference import RAG_MIN_FINAL_SCORE
from nomad_lab.core.workspace import DATASETS_DIR, PROJECT_ROOT
from nomad_lab.data.corpus import DISTRACTOR_PREFIX, DOC_SUFFIX
from nomad_lab.eval.gating.run_data import stored_pools
from nomad_lab.eval.gating.runs import retrieve_now
from nomad_lab.gate.apply import spec_curve
from nomad_lab.gate.operating_curves import restrict_refusals
from nomad_lab.retrieval.embedding import load_embedder
from nomad_lab.store import Store
from nomad_lab.studies.gating.growth_kinds import LEAK_KIND, interval, kind_passes
from nomad_lab.studies.gating.growth_report import PLOT, GrowthRow, pages, plot, rows_json
from nomad_lab.studies.gating.judges import compare_with_floor, judge_run
from nomad_lab.studies.params import (
    EMBEDDER,
    INDEX,
    WORKSPACE,
    alpha_param,
    each_in_unit_interval,
    each_positive,
    floor_param,
    judge_param,
)
from nomad_lab.studies.result import Figure, Result
from nomad_lab.studies.shape import Output, Param, Params, Study, argv

GROWTH_DIR = DATASETS_DIR / "library_growth"
WORK_DIR = PROJECT_ROOT / "runs" / "library_growth"
DEFAULT_ALPHA = 0.05  # leak target of the calibrated floor reported at each size
FLOORS = (0.0, 0.55, RAG_MIN_FINAL_SCORE)  # the floors reported at each size
BOOKS = (3, 6, 9, 15)  # library-growth books added, per size


@dataclass(frozen=True)
class LibrarySize:
    """One step of growth: which extra documents the domain corpus carries."""

    label: str
    distractors: bool  # the corpus's own distractor-*.md documents
    growth_books: tuple[str, ...]  # file names from datasets/library_growth


def library_sizes(books: int | Sequence[int], growth_dir: Path = GROWTH_DIR) -> list[LibrarySize]:
    """Domain only, + distractors, then + the first n growth books (by name) for each n in ``books``."""
    available = sorted(p.name for p in growth_dir.glob(f"*{DOC_SUFFIX}"))
    if not available:
        raise NomadLabError(
            f"--library {growth_dir}: no {DOC_SUFFIX} documents there (build a library with "
            "`nomad-lab library build`, or name a folder of documents)"
        )
    counts = [books] if isinstance(books, int) else list(books)
    for n in counts:
        if not 0 < n <= len(available):
            raise NomadLabError(
                f"--books {n}: must be between 1 and {len(available)} (books in {growth_dir})"
            )
    unit = "books" if Path(growth_dir) == GROWTH_DIR else "documents"
    sizes = [LibrarySize("domain only", False, ()), LibrarySize("+ distractors", True, ())]
    sizes += [
        LibrarySize(f"+ distractors + {n} {unit}", True, tuple(available[:n])) for n in sorted(set(counts))
    ]
    return sizes


def materialize(size: LibrarySize, corpus_dir: Path, growth_dir: Path, work_dir: Path) -> Path:
    """A corpus folder holding this size's documents (copies; the fingerprint is content-based).

    The corpus's distractors are always in the folder, since golden suites may name them; a size
    without them leaves them out when loading (``include_distractors=False``), as ``--no-distractors`` does.
    """
    folder = work_dir / f"{len(size.growth_books):02d}-books"
    wanted = {p.name: p for p in sorted(corpus_dir.glob(f"*{DOC_SUFFIX}"))}
    wanted |= {name: growth_dir / name for name in size.growth_books}
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob(f"*{DOC_SUFFIX}"):
        if stale.name not in wanted:
            stale.unlink()
    for name, source in wanted.items():
        target = folder / name
        if not target.exists() or target.read_bytes() != source.read_bytes():
            shutil.copyfile(source, target)
    return folder


def measure_size(
    corpus_dir: Path,
    *,
    label: str,
    include_distractors: bool,
    floors: Sequence[float],
    judge_model: str | None,
    judge_floor: float,
    store_path: Path,
    goldens_dir: Path,
    embedder: Any | None = None,
    alpha: float = DEFAULT_ALPHA,
    progress: bool = True,
    index: str | None = None,
) -> GrowthRow:
    """Retrieve core + off-topic once at this size, then every floor from the pools (and the floor
    calibrated for leak target ``alpha``), then the judge on the off-topic questions of the same run."""
    embedder = embedder or load_embedder()
    both = retrieve_now(
        store_path,
        corpus=corpus_dir,
        goldens=goldens_dir,
        suite="core,off_topic",
        include_distractors=include_distractors,
        embedder_model=embedder,
        progress=progress,
        **({"index": index} if index else {}),
    )
    with Store(store_path) as store:
        stored = stored_pools(store, both.run_id)
        suite_of = {case.golden_id: case.suite for case in store.get_cases(both.run_id)}
    # leak over the off-topic refusals; recall over the core suite alone (the off-topic suite's
    # distractor controls are answerable only when the distractors are in the library)
    pools = restrict_refusals(stored, LEAK_KIND)
    calibrated = spec_curve(pools, "floor").calibrated(alpha).floor
    points = sorted(set(floors) | {judge_floor} | ({calibrated} if calibrated is not None else set()))
    curve = spec_curve(pools, "floor", points=points)
    core = stored.subset(np.array([suite_of[i] == "core" for i in stored.ids], dtype=bool))
    core_curve = spec_curve(core, "floor", points=points)
    leak_judge, calls, failures = None, 0, 0
    if judge_model:
        off_topic = {golden for golden, suite in suite_of.items() if suite == "off_topic"}
        with Store(store_path) as store:
            judged = judge_run(
                store, both.run_id, judge_model, floor=judge_floor, progress=progress, only=off_topic
            )
        leak_judge = compare_with_floor(judged).leak_judge
        calls, failures = judged.calls, judged.failures
    docs = sorted(corpus_dir.glob(f"*{DOC_SUFFIX}"))
    if not include_distractors:
        docs = [p for p in docs if not p.name.startswith(DISTRACTOR_PREFIX)]
    return GrowthRow(
        label=label,
        docs=len(docs),
        megabytes=round(sum(p.stat().st_size for p in docs) / 1e6, 3),
        chunks=both.build.chunks,
        leak_by_floor={f"{f:g}": interval(curve, f, "leak") for f in floors},
        recall_by_floor={f"{f:g}": interval(core_curve, f, "recall") for f in floors},
        judge_floor=judge_floor,
        leak_judge=leak_judge,
        judge_calls=calls,
        judge_failures=failures,
        refusals=int(pools.expect_refusal.sum()),
        embedded=both.build.embedded,
        build_seconds=round(both.build.seconds, 2),
        index_mb=round(both.build.chunks * embedder.dimension * 4 / 1e6, 2),
        calibrated_floor=calibrated,
        leak_calibrated=None if calibrated is None else interval(curve, calibrated, "leak"),
        recall_calibrated=None if calibrated is None else interval(core_curve, calibrated, "recall"),
        by_kind=kind_passes(stored, floors),
    )


def result(raw: dict[str, Any]) -> Result:
    """``growth.json`` (its pages are rendered from it alone: :func:`growth_report.pages`) and
    ``leak_vs_library_size.png`` (and ``.svg``); the publish ring writes them."""
    rows, judge_model = raw["rows"], raw["judge_model"]
    document = {"judge_model": judge_model, "embedder": raw.get("embedder"), "rows": rows_json(rows)}
    return STUDY.documented(raw, document, figures=(Figure(PLOT, partial(plot, rows, judge_model)),))


PARAMS = (
    Param("books", int, BOOKS, "library-growth books added, per size", check=each_positive, many=True),
    Param("floor", float, FLOORS, "floors to report", check=each_in_unit_interval, many=True),
    judge_param("embedded:gemma3-270m"),
    floor_param(RAG_MIN_FINAL_SCORE, name="judge_floor"),
    Param("no_judge", bool, False, "floors only", flag=True),
    Param(
        "library",
        Path,
        GROWTH_DIR,
        "folder the added documents come from (a large one: `nomad-lab library build`); --books counts "
        "its documents, sorted by name",
    ),
    alpha_param(DEFAULT_ALPHA, "leak target of the floor calibrated at each size"),
    EMBEDDER,
    INDEX,
    *WORKSPACE,
)


def compute(params: Params) -> dict[str, Any]:
    """Every size from :func:`library_sizes`, smallest first, measured by :func:`measure_size`.

    ``library`` is the folder the added documents come from (the library-growth books, or a library
    built by ``nomad-lab library build``); each such folder gets its own work folder under
    ``WORK_DIR``. ``no_judge``: floors only.
    """
    judge = None if params.no_judge else params.judge_model
    model = load_embedder(params.embedder)
    library = Path(params.library)
    work = WORK_DIR if library == GROWTH_DIR else WORK_DIR / library.name
    rows = [
        measure_size(
            materialize(size, Path(params.corpus), library, work),
            label=size.label,
            include_distractors=size.distractors,
            floors=params.floor,
            judge_model=judge,
            judge_floor=params.judge_floor,
            store_path=Path(params.store),
            goldens_dir=Path(params.goldens),
            embedder=model,
            alpha=params.alpha,
            progress=not params.no_progress,
            index=params.index,
        )
        for size in library_sizes(params.books, library)
    ]
    return {"rows": rows, "judge_model": judge, "embedder": params.embedder}


STUDY = Study(
    name="growth",
    title="Off-topic leak against library size",
    run=compute,
    rows=lambda result: [asdict(r) for r in result["rows"]],
    pages=pages,
    out_dir="results/library_growth",
    figures=(PLOT,),
    stage=50,
    also=(
        Output(
            "Library scale: leak and the calibrated floor as Debian documentation grows (WordLlama)",
            argv(
                "study growth --library runs/library --books 250 1000 2500 5144 --embedder wordllama:256 "
                "--no-judge --floor 0 0.32 0.51 --alpha 0.1 --store runs/library.duckdb "
                "--out results/library_scale"
            ),
            "results/library_scale",
            ("leak_vs_library_size.png",),
            ("growth.md",),
            prefix="nomad-lab library build &&",
        ),
    ),
)
