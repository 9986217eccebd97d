"""What the ``explore`` notebook's widgets show: one operating point, recomputed on every move.

Moving the floor slider or toggling the judge calls ``snapshot``, which re-gates the stored pools
(no retrieval, no model call: judge verdicts are read from the store) and returns the leak rate over
one set of refusals (a refusal kind, :mod:`nomad_lab.data.refusal_kinds`; off-topic by default, the
README's headline), recall@5 and the leaked questions with their top passage, so a person can read
what got through. Every leak is shown with the set it is over and its size ("off-topic refusals,
n=140"): a rate over every refusal answers no single question.

``explorer`` is the whole notebook behind one call: it reads the run the notebook names (a RUN value,
resolved by the gating service's :func:`nomad_lab.eval.gating.runs.resolve_run` as every study's
``--run`` is: a run id, ``main``, the main job's run of the corpus, or ``latest``) from the store the
workspace means, and when that store or run is missing it returns one line saying what to run first
instead of a traceback. Explore never retrieves, so a value asking to retrieve now is refused.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.reference import RAG_MIN_FINAL_SCORE
from nomad_lab.core.workspace import corpus_path, store_path
from nomad_lab.data.refusal_kinds import KIND_DEFINITIONS, OFF_TOPIC, REFUSAL_KINDS
from nomad_lab.eval.gating.inputs.verdicts import run_verdicts
from nomad_lab.eval.gating.run_data import stored_pools
from nomad_lab.eval.gating.runs import MAIN, NoSuchRun, RunChoice, resolve_run
from nomad_lab.eval.stored_runs import embedder_spec
from nomad_lab.gate import masks
from nomad_lab.gate.apply import spec_curve
from nomad_lab.gate.confidence import confidence_gate
from nomad_lab.gate.pools import PoolSet
from nomad_lab.store import Store

ALL_REFUSALS = ""
"""The ``refusals`` value counting every refusal, whatever its kind."""


class NothingToExplore(NomadLabError):
    """The store is missing or holds no run the RUN value names: the message names the command to run first.

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
    refusals: str = OFF_TOPIC
    """The refusal kind the leak is over (:data:`ALL_REFUSALS`: every refusal)."""
    n_refusals: int = 0
    n_answerable: int = 0


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


def load_explore_data(
    store_path: str | Path,
    run: str | RunChoice = MAIN,
    judge_model: str | None = None,
    judge_floor: float = 0.0,
    corpus: str | Path | None = None,
) -> ExploreData:
    """Pools of ``run``, a stored-run RUN value (a run id, ``latest``, or ``main``: the main job's run over
    ``corpus``, by default the default corpus); verdicts only if already in the store.

    Verdicts missing from the store are not computed here (a slider must stay instant): run
    ``nomad-lab study judges`` first. Questions without a stored verdict count as unjudged (kept).
    """
    try:  # explore never retrieves: a value asking to is refused for want of goldens and suites
        run_id = resolve_run(store_path, run, corpus=corpus_path(corpus))
    except NoSuchRun as exc:
        raise NothingToExplore(str(exc)) from None
    with Store(store_path, read_only=True) as store:
        record = store.get_run(run_id)
        pools = stored_pools(store, run_id)
        cases = {c.golden_id: c for c in store.get_cases(run_id)}
        stored = store.get_pools(run_id)
        chunks = {c.chunk_id: c for c in store.get_chunks(record.fingerprint)}
        queries = [cases[i].query or "" for i in pools.ids]
        tops = []
        for golden_id in pools.ids:
            entries = sorted(stored.get(golden_id, []), key=lambda e: e.rank)
            tops.append(chunks[entries[0].chunk_id].text if entries and entries[0].chunk_id in chunks else "")
        read = None  # the judge's verdicts, from the cache only: a slider must stay instant
        if judge_model:
            found = run_verdicts(
                store, run_id, [judge_model], floor=judge_floor, ids=pools.ids, compute=False
            )
            read = found[judge_model]
    notes = [
        f"run {run_id} (stored {record.created_at:%Y-%m-%d %H:%M} UTC, corpus {pools.fingerprint}, "
        f"suites {record.params.get('suite')}, embedder {embedder_spec(record.params)}; "
        "`nomad-lab store runs` lists the others)"
    ]
    if read is not None and read.missing:
        notes.append(f"{read.missing} question(s) have no stored verdict from {judge_model}")
    verdicts, p_true = (read.verdicts, read.p_true) if read is not None else (None, None)
    if verdicts is not None and np.isnan(verdicts).all():  # none stored: a judge box would change nothing
        verdicts = None
    if p_true is not None and np.isnan(p_true).all():
        p_true = None
    return ExploreData(pools, queries, tops, verdicts, judge_model, notes, p_true, run_id)


def disabled_lines(data: ExploreData) -> list[str]:
    """One line per control left disabled for want of something to act on, saying how to enable it."""
    judge = data.judge_model
    enable = f"`nomad-lab study judges --judge-model {judge} --run {data.run_id}` stores them"
    if judge is None:
        return ["judge and tau: disabled, no judge named; set `judge_model` to a judge with stored verdicts"]
    if data.verdicts is None:
        return [f"judge and tau: disabled, no verdicts of {judge} stored for this run; {enable}"]
    if data.p_true is None:
        return [f"tau: disabled, the stored verdicts of {judge} carry no P(on topic); {enable}"]
    return []


def refusal_set(pools: PoolSet, refusals: str = OFF_TOPIC) -> np.ndarray:
    """Mask of the refusals a leak is counted over: those of kind ``refusals`` (or every refusal)."""
    if refusals != ALL_REFUSALS and refusals not in REFUSAL_KINDS:
        raise NomadLabError(
            f'refusals {refusals!r}: one of {", ".join(REFUSAL_KINDS)}, or "" for every refusal'
        )
    return pools.expect_refusal & (pools.of_kind(refusals) if refusals else True)


def set_name(refusals: str, n: int) -> str:
    """The refusal set as every leak names it: ``off-topic refusals, n=140``."""
    return f"{refusals or 'all'} refusals, n={n}"


def snapshot(
    data: ExploreData,
    floor: float,
    use_judge: bool,
    k: int = masks.DEFAULT_K,
    tau: float = 0.0,
    refusals: str = OFF_TOPIC,
) -> Snapshot:
    """Leak rate over the ``refusals`` set, recall@k and that set's leaked questions at one floor, with
    or without the judge.

    ``tau`` > 0 also drops the sets whose stored P(true) is below it (sets without one are kept).
    """
    keep = masks.score_floor(data.pools, [floor])
    judged = use_judge and data.verdicts is not None
    if judged:
        keep = masks.both(keep, masks.judge(data.pools, data.verdicts))
    if tau > 0 and data.p_true is not None:
        keep = masks.both(keep, confidence_gate(data.pools, data.p_true, [tau]))
    recall, nonempty = masks.evaluate(data.pools, keep, k)
    refusal = refusal_set(data.pools, refusals)
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
    return Snapshot(
        floor,
        judged,
        leak,
        mean_recall,
        sorted(leaked, key=lambda c: -c.top_score),
        refusals,
        int(refusal.sum()),
        int(answerable.sum()),
    )


def describe(shot: Snapshot) -> str:
    """The operating point in one line, naming each rate's set and size: the plot's title and the
    caption above the leaked table."""
    return (
        f"floor {shot.floor:.2f}{' + judge' if shot.use_judge else ''}: "
        f"leak {shot.leak:.3f} ({set_name(shot.refusals, shot.n_refusals)}), "
        f"recall@5 {shot.recall:.3f} (answerable, n={shot.n_answerable})"
    )


def plot_snapshot(curve: Any, shot: Snapshot) -> Any:
    """Floor-only leak (over the snapshot's refusal set) and recall@5 over every floor, with the current
    setting marked (judge included)."""
    import matplotlib.pyplot as plt  # heavy

    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    ax.plot(curve.points, curve.leak, label=f"leak, floor only ({set_name(shot.refusals, shot.n_refusals)})")
    ax.plot(
        curve.points, curve.recall, "--", label=f"recall@5, floor only (answerable, n={shot.n_answerable})"
    )
    ax.plot([shot.floor], [shot.leak], "o", color="tab:blue")
    ax.plot([shot.floor], [shot.recall], "s", color="tab:orange")
    ax.axvline(shot.floor, color="grey", lw=0.8)
    ax.set_xlabel("floor (the top passage's final score must reach it)")
    ax.set_title(describe(shot), fontsize=8)
    ax.legend(fontsize=7)
    return fig


def leaked_table(shot: Snapshot, limit: int = 25) -> str:
    """The first ``limit`` leaked questions with their top document, score and passage (markdown)."""
    rows = [
        f"| {c.golden_id} | {c.query} | {c.top_doc} | {c.top_score:.3f} | {c.passage[:120]} |"
        for c in shot.leaked[:limit]
    ]
    return "\n".join(["| id | question | top doc | score | top passage |", "|---|---|---|---:|---|", *rows])


def curve_for(data: ExploreData, refusals: str) -> Any:
    """The floor-only operating curve with leak over the ``refusals`` set (answerable questions kept)."""
    pools = data.pools
    keep = ~pools.expect_refusal | refusal_set(pools, refusals)
    return spec_curve(pools.subset(keep), "floor")


CONTROLS = (
    "<b>floor</b>: a question keeps its retrieved context only if its top passage's final score reaches "
    "the floor (0.62 is the seed's default). <b>judge</b>: also drop the context the relevance judge "
    "(stored verdicts of {judge}) called off topic. <b>tau</b>: also drop a context whose stored "
    "P(on topic) is below tau (0: off). <b>refusals</b>: the questions the library should refuse that the "
    "leak is counted over; {kinds}. <b>leak</b>: the share of those refusals that still get context; "
    "<b>recall@5</b>: the share of answerable questions whose right document is among the 5 passages kept."
)


def explorer(
    store: str | Path | None = None,
    run: str | RunChoice = MAIN,
    judge_model: str | None = None,
    judge_floor: float = 0.0,
    floor: float = RAG_MIN_FINAL_SCORE,
    use_judge: bool = False,
    tau: float = 0.0,
    corpus: str | Path | None = None,
    refusals: str = OFF_TOPIC,
) -> Any:
    """The floor slider, judge checkbox, tau slider and refusal-set menu over a stored run, redrawing
    the plot and the leaked table; the controls are explained above them.

    ``run``: a RUN value naming a stored run: a run id (``nomad-lab store runs`` lists them), ``latest``,
    or ``main``, the main job's run over ``corpus`` (None: ``$NOMAD_LAB_CORPUS`` or the default corpus).

    ``tau`` > 0 drops the sets whose stored P(on_topic = true) is below it (sets without a stored
    confidence are kept, as the judge fails open); its slider is disabled when the store holds none.

    ``store`` is read with ``core.workspace.store_path`` (None: ``NOMAD_LAB_STORE`` or the workspace
    store). A missing store or run gives back one markdown line naming what to run first, so the
    notebook shows that line and nothing else.
    """
    import ipywidgets as widgets  # heavy
    import matplotlib.pyplot as plt  # heavy
    from IPython.display import Markdown, display  # heavy

    try:
        data = load_explore_data(store_path(store), run, judge_model, judge_floor, corpus)
    except NothingToExplore as exc:
        return Markdown(str(exc))
    refusal_set(data.pools, refusals)  # a bad value is one error line before any widget
    curves: dict[str, Any] = {}
    for note in data.notes:
        print(note)
    sets = [
        (set_name(kind, int(refusal_set(data.pools, kind).sum())), kind)
        for kind in (*REFUSAL_KINDS, ALL_REFUSALS)
    ]
    kinds = "; ".join(f"<i>{kind}</i>: {KIND_DEFINITIONS[kind]}" for kind in REFUSAL_KINDS)

    def draw(floor: float, use_judge: bool, tau: float, refusals: str) -> None:
        shot = snapshot(data, floor, use_judge, tau=tau, refusals=refusals)
        if refusals not in curves:
            curves[refusals] = curve_for(data, refusals)
        plot_snapshot(curves[refusals], shot)
        plt.show()
        display(Markdown(f"{describe(shot)}\n\n{leaked_table(shot)}"))

    interactive = widgets.interactive(
        draw,
        floor=widgets.FloatSlider(value=floor, min=0.0, max=1.0, step=0.01, description="floor"),
        use_judge=widgets.Checkbox(value=use_judge, description="judge", disabled=data.verdicts is None),
        tau=widgets.FloatSlider(
            value=tau, min=0.0, max=1.0, step=0.01, description="tau", disabled=data.p_true is None
        ),
        refusals=widgets.Dropdown(options=sets, value=refusals, description="refusals"),
    )
    help_text = widgets.HTML(CONTROLS.format(judge=html.escape(str(judge_model)), kinds=kinds))
    help_text.add_class("nomad-explore-help")
    off = "".join(f"<div>{html.escape(line)}</div>" for line in disabled_lines(data))
    disabled = widgets.HTML(f"<small>{off}</small>" if off else "")
    disabled.add_class("nomad-explore-disabled")
    return widgets.VBox([help_text, disabled, interactive])
