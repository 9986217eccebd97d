"""The floor study: sweep every gate over a stored dump, calibrate a floor, and write the results.

One study shared by ``nomad-lab study floor-sweep``, ``nomad-lab sweep --dump`` and the ``floor_sweep``
notebook, so the published table and plot are exactly what the command prints.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.first_run import DEFAULT_DUMP, first_run_line
from nomad_lab.core.reference import RAG_MIN_FINAL_SCORE as DEFAULT_FLOOR
from nomad_lab.core.workspace import PROJECT_ROOT
from nomad_lab.eval.gating import curve, load_run, subset_run
from nomad_lab.eval.gating.gate_spec_type import GATE_SPEC
from nomad_lab.eval.gating.runs import LATEST, RunChoice, parse_run, resolve_run
from nomad_lab.gate import masks
from nomad_lab.gate.apply import spec_curve, spec_needs
from nomad_lab.gate.families import Need
from nomad_lab.gate.operating_curves import (
    OperatingCurve,
    floor_margins,
    leak_by_tag,
    refusals_named,
    restrict_refusals,
)
from nomad_lab.gate.pools import PoolSet, load_dump
from nomad_lab.gate.spec import GateSpec, parse_gate_spec
from nomad_lab.gate.stats import CalibratedFloor
from nomad_lab.studies.gating.curves import plot_floor_sweep, plot_leak_vs_recall
from nomad_lab.studies.gating.run_param import named_by, pinned
from nomad_lab.studies.params import STORE, alpha_param
from nomad_lab.studies.result import Figure, Page, Result
from nomad_lab.studies.shape import Param, Params, Study


@dataclass(frozen=True)
class FloorStudy:
    """Curves for the score floor, cosine floor and contrast test, plus the numbers a note needs."""

    pools: PoolSet
    score: OperatingCurve
    cosine: OperatingCurve
    contrast: OperatingCurve
    margins: np.ndarray
    weakest_correct_top_hit: float | None
    calibrated: CalibratedFloor
    tags_at_default: dict[str, tuple[float, int, int]]
    extra: tuple[OperatingCurve, ...] = ()  # the curves of gate specs asked for by name (--gate)
    note: str = ""
    """A warning the table leads with (too few of the refusals the leak counts), else empty."""


def _spec_curves(
    pools: PoolSet,
    specs: tuple[GateSpec, ...],
    refusal_tag: str | None,
    store: Path | None,
    run: str | RunChoice,
) -> tuple[OperatingCurve, ...]:
    """One curve per spec: on the dump's pools when the spec needs nothing else, else through the gating
    service on the stored run the dump came from (``run``, a RUN value naming a stored run; its index and
    questions must be the dump's), restricted to the same refusals."""
    curves = []
    data = None
    for spec in specs:
        needs = spec_needs(spec)
        if not needs:
            curves.append(spec_curve(pools, spec))
            continue
        if data is None:
            data = _stored_run(pools, spec, needs, store, run, refusal_tag)
        curves.append(curve(store, data, spec))
    return tuple(curves)


def _stored_run(
    pools: PoolSet,
    spec: GateSpec,
    needs: tuple[Need, ...],
    store: Path | None,
    run: str | RunChoice,
    refusal_tag: str | None,
):
    where = f"gate {spec} needs {', '.join(map(str, needs))} from a stored run"
    if store is None:
        raise NomadLabError(f"{where}: give --store (and --run RUN)")
    data = load_run(store, resolve_run(store, run))  # a stored run: the dump holds no corpus to retrieve
    if data.pools.fingerprint != pools.fingerprint or set(data.pools.ids) < set(pools.ids):
        raise NomadLabError(
            f"{where}: run {data.run_id} holds another index or other questions than the dump; "
            "pass --run with the run the dump was exported from"
        )
    keep = np.isin(data.pools.ids, list(pools.ids))
    if refusal_tag is not None:
        keep &= ~data.pools.expect_refusal | refusals_named(data.pools, refusal_tag)
    return subset_run(data, keep)


def run_floor_study(
    pools: PoolSet,
    *,
    alpha: float = 0.05,
    refusal_tag: str | None = None,
    default_floor: float = DEFAULT_FLOOR,
    gate_specs: tuple[GateSpec | str, ...] = (),
    store: Path | None = None,
    run: str | RunChoice = LATEST,
) -> FloorStudy:
    """Sweep the three score gates over ``pools``; leak counts only refusals tagged ``refusal_tag``.

    ``gate_specs`` (``floor@0.4+contrast``, ``judge:SPEC``, ``ce:SPEC``, ...) add one curve each, named
    by the canonical spec; a spec that needs more than the pools is evaluated by the gating service on
    the stored ``run`` in ``store``. Each spec is parsed once, here (a :class:`GateSpec` given, as the
    study's GATE_SPEC parameter makes it at the edge, is never parsed again).
    """
    specs = tuple(parse_gate_spec(s) if isinstance(s, str) else s for s in gate_specs)
    extra = _spec_curves(pools, specs, refusal_tag, store, run)
    pools = restrict_refusals(pools, refusal_tag)
    floor, cosine, contrast = (parse_gate_spec(text) for text in ("floor", "cosine", "contrast"))
    score = spec_curve(pools, floor)
    return FloorStudy(
        pools=pools,
        score=score,
        cosine=spec_curve(pools, cosine),
        contrast=spec_curve(pools, contrast),
        margins=floor_margins(pools, masks.FLOOR_GRID),
        weakest_correct_top_hit=masks.weakest_correct_top_hit(pools),
        calibrated=score.calibrated(alpha),
        tags_at_default=leak_by_tag(pools, masks.score_floor(pools, [default_floor])),
        extra=extra,
    )


FEW_REFUSALS = 30
"""Fewer refusals of the counted kind than this in a dump, and the sweep warns: its leak intervals span
tens of points (a core-only dump holds 8 off-topic refusals; the first run's, over a hundred)."""


def counted_refusals(pools: PoolSet, refusal_tag: str | None, dump: str | Path) -> str:
    """The note for a dump with few of the refusals the leak counts (``refusal_tag``; None: all), or "".

    None at all is refused (one line naming the first-run command, whose dump holds the off-topic
    suite): a leak over no refusals is no figure."""
    named = refusals_named(pools, refusal_tag) if refusal_tag else pools.expect_refusal
    n, what = int(named.sum()), f"{refusal_tag} refusals" if refusal_tag else "refusals"
    if n == 0:
        raise NomadLabError(
            first_run_line(
                f"{dump}: no {what} among its {pools.size} questions, so no leak to sweep", dump=dump
            )
        )
    if n < FEW_REFUSALS:
        return (
            f"warning: {dump} holds only {n} {what} (fewer than {FEW_REFUSALS}), so every leak below "
            f"rests on {n} questions; {first_run_line('for the off-topic suite', dump=dump)}"
        )
    return ""


def markdown_table(
    study: FloorStudy, floors: tuple[float, ...] = (0.0, 0.55, 0.6, 0.62, 0.65, 0.66, 0.69, 0.72)
) -> str:
    """The score-floor sweep at the seed's landmark floors, with intervals and margins (led by the
    study's note, when it has one)."""
    lines = [
        *([f"> {study.note}", ""] if study.note else []),
        "| floor | leak rate [95% CI] | recall@5 [95% CI] | empty on answerable "
        "| margin to weakest correct top hit |",
        "|---|---|---|---|---|",
    ]
    for floor in floors:
        row = study.score.at(floor)
        i = int(np.argmin(np.abs(study.score.points - floor)))
        lines.append(
            f"| {row['point']:.2f} | {row['leak']:.3f} [{row['leak_lo']:.3f}, {row['leak_hi']:.3f}] "
            f"| {row['recall@5']:.3f} [{row['recall_lo']:.3f}, {row['recall_hi']:.3f}] "
            f"| {row['empty_on_answerable']:.3f} | {study.margins[i]:+.3f} |"
        )
    return "\n".join(lines)


def summary(study: FloorStudy) -> dict[str, Any]:
    """``floor_sweep.json``: the pools, the margins, the calibrated floor, the tags at the default floor
    and every gate's curve."""
    curves = {c.gate: c.rows() for c in (study.score, study.cosine, study.contrast, *study.extra)}
    return {
        "fingerprint": study.pools.fingerprint,
        "pools": study.pools.size,
        "refusals": int(study.pools.expect_refusal.sum()),
        "answerable": int((study.pools.n_relevant > 0).sum()),
        "weakest_correct_top_hit": study.weakest_correct_top_hit,
        "margin_by_floor": {
            f"{f:.2f}": float(m) for f, m in zip(masks.FLOOR_GRID, study.margins, strict=True)
        },
        "calibrated": asdict(study.calibrated),
        "leak_by_tag_at_default": study.tags_at_default,
        "curves": curves,
    }


def result(study: FloorStudy) -> Result:
    """The curves (JSON), the landmark table with the calibrated floor's message, and the two plots."""
    sweep = partial(
        plot_floor_sweep,
        [study.score],
        calibrated=study.calibrated.floor,
        margins=study.margins,
        title=f"Score floor sweep ({study.pools.size} questions)",
    )
    gates = [study.score, study.cosine, study.contrast, *study.extra]
    tradeoff = partial(plot_leak_vs_recall, gates, title="Leak vs recall by gate")
    page = Page("floor_sweep.md", (markdown_table(study), study.calibrated.message))
    figures = (Figure("floor_sweep.png", sweep), Figure("leak_vs_recall.png", tradeoff))
    return Result(
        "floor-sweep", value=study, json={"floor_sweep.json": summary(study)}, pages=(page,), figures=figures
    )


def tag_table(study: FloorStudy) -> str:
    """Leak rate per refusal tag at the default floor (markdown)."""
    rows = [f"| {tag} | {rate:.3f} | {k} / {n} |" for tag, (rate, k, n) in study.tags_at_default.items()]
    return "\n".join(["| tag | leak rate | leaked / refusals |", "|---|---|---|", *rows])


PARAMS = (
    Param(
        "dump",
        Path,
        PROJECT_ROOT / DEFAULT_DUMP,
        "candidate dump (reference --dump JSON format; `nomad-lab eval retrieval --dump`)",
        metavar="PATH",
    ),
    alpha_param(0.05, "target leak rate for the calibrated floor"),
    Param(
        "refusal_tag",
        str,
        "off-topic",
        "count leaks only on these refusals: a refusal kind (off-topic, unanswerable, near-domain) or a tag "
        "('' counts every refusal)",
        metavar="TAG",
    ),
    Param(
        "gate",
        GATE_SPEC,
        (),
        "also sweep this gate spec (repeatable), e.g. floor@0.4+contrast, cosine, judge:SPEC, ce:SPEC",
        many=True,
        metavar="SPEC",
    ),
    STORE,
    Param(
        "run",
        parse_run,
        LATEST,
        "stored run the dump came from, for --gate specs that need more than pools: RUN_ID, main or "
        "latest (its index and questions must be the dump's)",
        metavar="RUN",
        names_runs=named_by,
        pin=pinned,
    ),
)


def compute(params: Params) -> FloorStudy:
    """The study from its declared parameters: ``dump`` (candidate pools), ``alpha``, ``refusal_tag``,
    ``gate`` (gate spec strings, each one more curve, named by its canonical spec)."""
    pools = load_dump(params.dump)
    note = counted_refusals(pools, params.refusal_tag or None, params.dump)
    study = run_floor_study(
        pools,
        alpha=params.alpha,
        refusal_tag=params.refusal_tag or None,
        gate_specs=tuple(params.gate),  # GateSpec values, parsed once at the edge (GATE_SPEC)
        store=params.store,
        run=params.run,
    )
    return replace(study, note=note)


STUDY = Study(
    name="floor-sweep",
    title="Floor sweep: leak against recall@5 for three gates, calibrated floor",
    run=compute,
    rows=lambda study: (
        [row for c in (study.score, study.cosine, study.contrast) for row in c.rows()]
        + [{**row, "gate": c.gate} for c in study.extra for row in c.rows()]
    ),
    command=(
        "sweep",
        "--dump",
        DEFAULT_DUMP,
        "--refusal-tag",
        "off-topic",
        "--alpha",
        "0.05",
        "--out",
        "results/floor_sweep",
    ),
    figures=("floor_sweep.png", "leak_vs_recall.png"),
    stage=10,
    notebook="floor_sweep",
)
