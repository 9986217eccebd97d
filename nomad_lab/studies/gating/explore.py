"""What the ``explore`` notebook's widgets show: one operating point, recomputed on every move.

Moving the floor slider or toggling the judge calls ``snapshot``, which re-gates the stored pools
(no retrieval, no model call: judge verdicts are read from the store) and returns the leak rate,
recall@5 and the leaked questions with their top passage, so a person can read what got through.

``explorer`` is the whole notebook behind one call: it reads the store the workspace means (a relative
path is under the repository root, whatever the kernel's directory), and when that store is missing or
holds no retrieval run it returns one line saying what to run first instead of a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.judge_prompt import build_judge_input
from nomad_lab.core.reference import RAG_MIN_FINAL_SCORE
from nomad_lab.core.workspace import in_workspace, store_path
from nomad_lab.data.corpus import compute_fingerprint, load_corpus
from nomad_lab.eval.gating.run_data import stored_pools
from nomad_lab.gate import masks
from nomad_lab.gate.apply import spec_curve
from nomad_lab.gate.confidence import confidence_gate
from nomad_lab.gate.pools import PoolSet
from nomad_lab.store import Store, judge_input_sha256
from nomad_lab.studies.gating.judges import judged_set

RETRIEVAL_FIRST = "nomad-lab eval retrieval --suite core,off_topic --floor 0"
"""The command that stores the run this notebook re-gates (no floor, so every floor can be read)."""


class NothingToExplore(NomadLabError):
    """The store is missing or holds no retrieval run: the message names the command to run first.

    Only this is shown as one line; any other store error (locked, corrupt, newer schema) stays an
    error, so a notebook run by papermill or a grid still fails on it.
    """


@dataclass(frozen=True)
class LeakedCase:
    golden_id: str
    query: str
    top_doc: str | None
    top_score: float
    passage: str


@dataclass(frozen=True)
class Snapshot:
    floor: float
    use_judge: bool
    leak: float
    recall: float
    leaked: list[LeakedCase]


@dataclass(frozen=True)
class ExploreData:
    """A stored run's pools with the text needed to show a leaked case, and optional verdicts."""

    pools: PoolSet
    queries: list[str]
    top_passages: list[str]
    verdicts: np.ndarray | None = None
    judge_model: str | None = None
    notes: list[str] = field(default_factory=list)
    p_true: np.ndarray | None = None
    """The judge's stored P(on_topic = true) per question (NaN: none), beside ``verdicts``."""
    run_id: str | None = None


def latest_run_over(store: Any, corpus_dir: str | Path) -> str | None:
    """The newest retrieval run whose corpus is the documents of ``corpus_dir``, or None.

    "The latest run" alone is whatever was stored last, which after the library-growth study is a run
    over a grown library. Each stored run keeps its ingest parameters and distractor setting, so its
    fingerprint can be recomputed over this folder's documents and compared: a match is a run over this
    corpus (with its embedder and chunking), whatever was stored after it.
    """
    documents: dict[bool, list[tuple[str, str]]] = {}
    for candidate in reversed(store.run_ids("retrieval")):  # newest first
        run = store.get_run(candidate)
        distractors = bool(run.params.get("includeDistractors", True))
        if distractors not in documents:
            corpus = load_corpus(corpus_dir, include_distractors=distractors)
            documents[distractors] = [(doc.doc_id, doc.text) for doc in corpus.docs]
        if compute_fingerprint(run.params.get("ingestParts", []), documents[distractors]) == run.fingerprint:
            return candidate
    return None


def load_explore_data(
    store_path: str | Path,
    run_id: str | None = None,
    judge_model: str | None = None,
    judge_floor: float = 0.0,
    corpus: str | Path | None = None,
) -> ExploreData:
    """Pools of ``run_id`` (default: the latest retrieval run, or the latest over ``corpus`` when given);
    verdicts only if already in the store.

    Verdicts missing from the store are not computed here (a slider must stay instant): run
    ``nomad-lab study judges`` first. Questions without a stored verdict count as unjudged (kept).
    """
    if not Path(store_path).is_file():
        raise NothingToExplore(f"{store_path}: no store yet: run `{RETRIEVAL_FIRST}` first")
    with Store(store_path, read_only=True) as store:
        if run_id is None and corpus is not None:
            run_id = latest_run_over(store, corpus)
            if run_id is None:
                raise NothingToExplore(
                    f"{store_path}: no retrieval run over {corpus} stored yet: run "
                    f"`nomad-lab eval retrieval --corpus {corpus} --suite core,off_topic --floor 0` first"
                )
        run_id = run_id or store.latest_run_id("retrieval")
        if run_id is None:
            raise NothingToExplore(
                f"{store_path}: no retrieval run stored yet: run `{RETRIEVAL_FIRST}` first"
            )
        run = store.get_run(run_id)
        pools = stored_pools(store, run_id)
        cases = {c.golden_id: c for c in store.get_cases(run_id)}
        stored = store.get_pools(run_id)
        chunks = {c.chunk_id: c for c in store.get_chunks(run.fingerprint)}
        queries = [cases[i].query or "" for i in pools.ids]
        tops = []
        verdicts = np.full(len(queries), np.nan) if judge_model else None
        p_true = np.full(len(queries), np.nan) if judge_model else None
        missing = 0
        for i, golden_id in enumerate(pools.ids):
            entries = sorted(stored.get(golden_id, []), key=lambda e: e.rank)
            tops.append(chunks[entries[0].chunk_id].text if entries and entries[0].chunk_id in chunks else "")
            if verdicts is None:
                continue
            passages = judged_set(entries, chunks, judge_floor)
            if not passages:
                continue
            key = judge_input_sha256(build_judge_input(queries[i], [{"text": c.text} for c in passages]))
            verdict = store.get_verdict(judge_model, key)
            if verdict is None:
                missing += 1
            elif verdict.ok:
                verdicts[i] = 1.0 if verdict.on_topic else 0.0
            if verdict is not None and verdict.p_true is not None and p_true is not None:
                p_true[i] = verdict.p_true
    notes = [f"run {run_id} (corpus {pools.fingerprint}, suite {run.params.get('suite')})"]
    notes += [f"{missing} question(s) have no stored verdict from {judge_model}"] if missing else []
    return ExploreData(pools, queries, tops, verdicts, judge_model, notes, p_true, run_id)


def snapshot(
    data: ExploreData, floor: float, use_judge: bool, k: int = masks.DEFAULT_K, tau: float = 0.0
) -> Snapshot:
    """Leak rate, recall@k and the leaked refusal questions at one floor, with or without the judge.

    ``tau`` > 0 also drops the sets whose stored P(true) is below it (sets without one are kept).
    """
    keep = masks.score_floor(data.pools, [floor])
    judged = use_judge and data.verdicts is not None
    if judged:
        keep = masks.both(keep, masks.judge(data.pools, data.verdicts))
    if tau > 0 and data.p_true is not None:
        keep = masks.both(keep, confidence_gate(data.pools, data.p_true, [tau]))
    recall, nonempty = masks.evaluate(data.pools, keep, k)
    refusal = data.pools.expect_refusal
    answerable = data.pools.n_relevant > 0
    leaked = [
        LeakedCase(
            data.pools.ids[i],
            data.queries[i],
            data.pools.doc_names[data.pools.doc[i, 0]] if data.pools.doc[i, 0] >= 0 else None,
            float(data.pools.score[i, 0]),
            " ".join(data.top_passages[i].split())[:300],
        )
        for i in np.flatnonzero(refusal & nonempty[0])
    ]
    leak = float(nonempty[0, refusal].mean()) if refusal.any() else float("nan")
    mean_recall = float(np.nanmean(recall[0, answerable])) if answerable.any() else float("nan")
    return Snapshot(floor, judged, leak, mean_recall, sorted(leaked, key=lambda c: -c.top_score))


def describe(shot: Snapshot) -> str:
    """The operating point in one line: the plot's title and the caption above the leaked table."""
    return (
        f"floor {shot.floor:.2f}{' + judge' if shot.use_judge else ''}: "
        f"leak {shot.leak:.3f}, recall@5 {shot.recall:.3f}"
    )


def plot_snapshot(curve: Any, shot: Snapshot) -> Any:
    """Floor-only leak and recall@5 over every floor, with the current setting marked (judge included)."""
    import matplotlib.pyplot as plt  # heavy

    fig, ax = plt.subplots(figsize=(6, 3.2))
    ax.plot(curve.points, curve.leak, label="leak (floor only)")
    ax.plot(curve.points, curve.recall, "--", label="recall@5 (floor only)")
    ax.plot([shot.floor], [shot.leak], "o", color="tab:blue")
    ax.plot([shot.floor], [shot.recall], "s", color="tab:orange")
    ax.axvline(shot.floor, color="grey", lw=0.8)
    ax.set_xlabel("floor")
    ax.set_title(describe(shot))
    ax.legend(fontsize=7)
    return fig


def leaked_table(shot: Snapshot, limit: int = 25) -> str:
    """The first ``limit`` leaked questions with their top document, score and passage (markdown)."""
    rows = [
        f"| {c.golden_id} | {c.query} | {c.top_doc} | {c.top_score:.3f} | {c.passage[:120]} |"
        for c in shot.leaked[:limit]
    ]
    return "\n".join(["| id | question | top doc | score | top passage |", "|---|---|---|---:|---|", *rows])


def explorer(
    store: str | Path | None = None,
    run_id: str | None = None,
    judge_model: str | None = None,
    judge_floor: float = 0.0,
    floor: float = RAG_MIN_FINAL_SCORE,
    use_judge: bool = False,
    tau: float = 0.0,
    corpus: str | Path | None = None,
) -> Any:
    """The floor slider, judge checkbox and tau slider over a stored run, redrawing plot and leaked table.

    ``run_id`` None reads the latest retrieval run, or the latest over ``corpus`` (relative to the
    workspace) when given.

    ``tau`` > 0 drops the sets whose stored P(on_topic = true) is below it (sets without a stored
    confidence are kept, as the judge fails open); its slider is disabled when the store holds none.

    ``store`` is read with ``core.workspace.store_path`` (None: ``NOMAD_LAB_STORE`` or the workspace
    store). A missing store or one without a retrieval run gives back one markdown line naming what to
    run first, so the notebook shows that line and nothing else.
    """
    import ipywidgets as widgets
    import matplotlib.pyplot as plt  # heavy
    from IPython.display import Markdown, display

    try:
        data = load_explore_data(store_path(store), run_id, judge_model, judge_floor, in_workspace(corpus))
    except NothingToExplore as exc:
        return Markdown(str(exc))
    curve = spec_curve(data.pools, "floor")
    for note in data.notes:
        print(note)

    def draw(floor: float, use_judge: bool, tau: float) -> None:
        shot = snapshot(data, floor, use_judge, tau=tau)
        plot_snapshot(curve, shot)
        plt.show()
        display(Markdown(f"{describe(shot)}\n\n{leaked_table(shot)}"))

    return widgets.interactive(
        draw,
        floor=widgets.FloatSlider(value=floor, min=0.0, max=1.0, step=0.01, description="floor"),
        use_judge=widgets.Checkbox(value=use_judge, description="judge", disabled=data.verdicts is None),
        tau=widgets.FloatSlider(
            value=tau, min=0.0, max=1.0, step=0.01, description="tau", disabled=data.p_true is None
        ),
    )
