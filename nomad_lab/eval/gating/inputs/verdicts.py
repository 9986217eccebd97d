"""``verdicts`` (key: a judge spec): the judge's verdict and P(true) on each question's set, and the one
place a judge is run over a stored run.

Why one home: the judges study, the gates leaderboard, library growth, the per-passage study and the
Dask grid all judge the sets of a stored run. Here :func:`judge_inputs` finds the judge inputs without a
reusable verdict (the cache's one rule, ``verdict_reusable``), has exactly those computed and stored by a
:data:`Filler` (in process by default, :func:`fill_in_process`; the Dask grid,
``nomad_lab.runners.cluster.verdict_filler``, is the optional hook), then reads every verdict back;
:func:`run_verdicts` does it over a run's sets, the set retrieval returns at a floor (a floor that leaves
nothing reaches no judge, so nothing is asked). A judge fails open, so a failed call is a stored verdict
too (``ok`` false), never an exception.

As a gate input the kind computes only for the judge specs its context may call
(:attr:`~nomad_lab.eval.gating.context.GatherContext.judge`, ``study gates --judge-model``), as the
cross-encoder's kind computes what its cache lacks; any other judge is read from the cache, and
``missing`` counts the sets still unjudged, so a caller can say "not measured" instead of scoring a partly
judged run.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from nomad_lab.backends import Backend, open_backend
from nomad_lab.eval.gating.context import GatherContext
from nomad_lab.gate.agreement import NO_RELEVANT, OFF_TOPIC, ON_TOPIC
from nomad_lab.gate.reference_ranking import Candidate
from nomad_lab.services.judge_service import JudgeStats, RelevanceJudge
from nomad_lab.services.verdict_cache import (
    cached_result,
    judge_passages_and_key,
    judged_set,
    verdict_reusable,
)
from nomad_lab.store import CaseRecord, Store, Verdict

KIND = "verdicts"


@dataclass(frozen=True)
class JudgeInput:
    """One judge call: the verdict-cache key and what the judge reads (picklable: a Dask task carries it)."""

    key: str
    question: str
    passages: list[dict[str, str]]


def judge_input(question: str, chunks: Sequence[Candidate]) -> JudgeInput:
    """The judge input of ``question`` over ``chunks``, keyed as the verdict cache keys it."""
    passages, key = judge_passages_and_key(question, chunks)
    return JudgeInput(key, question, passages)


Filler = Callable[[Store, Mapping[str, Sequence[JudgeInput]]], object]
"""Computes the verdict of every input, per judge spec, and stores it (and its model calls) in the store."""


def _track(items: Sequence[JudgeInput], label: str, progress: bool) -> Iterable[JudgeInput]:
    if not progress:
        return items
    from tqdm import tqdm  # heavy

    return tqdm(items, desc=label, file=sys.stderr)


def fill_in_process(
    store: Store,
    todo: Mapping[str, Sequence[JudgeInput]],
    *,
    backend: Backend | None = None,
    progress: bool = False,
) -> None:
    """The default :data:`Filler`: each spec's backend opened here (``backend``: one already open,
    serving every spec), one call per input, each verdict stored as it lands, each call logged."""
    for spec, inputs in todo.items():
        judge = RelevanceJudge(backend if backend is not None else open_backend(spec), sink=store)
        for item in _track(inputs, f"judge {spec}", progress):
            store.put_verdict(spec, item.key, Verdict.of(judge.judge(item.question, item.passages)))


def missing_inputs(
    store: Store,
    spec: str,
    inputs: Iterable[JudgeInput],
    *,
    retry_failed: bool = False,
    reask_confidence: bool = False,
) -> list[JudgeInput]:
    """The distinct ``inputs`` with no reusable verdict for ``spec`` (``verdict_reusable``'s rule)."""
    missing: dict[str, JudgeInput] = {}
    for item in inputs:
        if item.key in missing:
            continue
        cached = store.get_verdict(spec, item.key)
        if not verdict_reusable(cached, retry_failed=retry_failed, reask_confidence=reask_confidence):
            missing[item.key] = item
    return list(missing.values())


def judge_inputs(
    store: Store,
    specs: Sequence[str],
    inputs: Sequence[JudgeInput],
    *,
    compute: bool = True,
    filler: Filler | None = None,
    backend: Backend | None = None,
    retry_failed: bool = False,
    reask_confidence: bool = False,
    progress: bool = False,
) -> dict[str, dict[str, Verdict | None]]:
    """Each spec's verdict on each input (None: none stored), after computing what the cache lacks when
    ``compute``: every spec's missing inputs go to ``filler`` at once (None: :func:`fill_in_process`
    with ``backend``), so a grid spreads all of them over its workers; nothing missing, no call."""
    if compute:
        rule = {"retry_failed": retry_failed, "reask_confidence": reask_confidence}
        todo = {spec: missing_inputs(store, spec, inputs, **rule) for spec in specs}
        todo = {spec: items for spec, items in todo.items() if items}
        if todo:
            (filler or partial(fill_in_process, backend=backend, progress=progress))(store, todo)
    return {spec: {item.key: store.get_verdict(spec, item.key) for item in inputs} for spec in specs}


def stratified_ids(ids: Sequence[str], refusal: Sequence[bool], size: int, seed: int = 0) -> list[str]:
    """Up to ``size`` of ``ids``, half refusals and half answerable (seeded), in their given order."""
    rng = np.random.default_rng(seed)
    refusals = [i for i, r in enumerate(refusal) if r]
    answerable = [i for i, r in enumerate(refusal) if not r]
    take_refusal = min(len(refusals), max(size // 2, size - len(answerable)))
    take = list(rng.choice(refusals, take_refusal, replace=False)) if take_refusal else []
    rest = min(len(answerable), size - take_refusal)
    take += list(rng.choice(answerable, rest, replace=False)) if rest else []
    return [ids[i] for i in sorted(int(i) for i in take)]


def select_ids(
    store: Store,
    run_id: str,
    *,
    only: Collection[str] | None = None,
    limit: int | None = None,
    sample: int | None = None,
) -> list[str]:
    """The questions a judge reads, in run order: those in ``only`` (default all), the first ``limit``
    of them, then a stratified ``sample`` of those (:func:`stratified_ids`)."""
    cases = store.get_cases(run_id)
    cases = [c for c in cases if c.golden_id in only] if only is not None else cases
    cases = cases[:limit] if limit else cases
    ids = [c.golden_id for c in cases]
    return stratified_ids(ids, [c.expect_refusal for c in cases], sample) if sample else ids


@dataclass(frozen=True)
class RunSets:
    """A stored run's questions and each one's judged set at ``floor`` (empty: the floor left nothing)."""

    cases: list[CaseRecord]
    sets: list[list[Candidate]]

    def inputs(self) -> list[JudgeInput | None]:
        """Each question's judge input (None for an empty set: the pipeline never calls the judge)."""
        return [
            judge_input(c.query or "", s) if s else None for c, s in zip(self.cases, self.sets, strict=True)
        ]


def run_sets(store: Store, run_id: str, *, floor: float, ids: Sequence[str] | None = None) -> RunSets:
    """The run's questions (all in run order, or ``ids`` in their order) with the set retrieval returns
    for each at ``floor`` (floor, then source diversity, then top k; chunk texts from the store)."""
    run = store.get_run(run_id)
    by_id = {c.golden_id: c for c in store.get_cases(run_id)}
    cases = [by_id[i] for i in ids] if ids is not None else list(by_id.values())
    pools = store.get_pools(run_id)
    chunks = {c.chunk_id: c for c in store.get_chunks(run.fingerprint)}
    return RunSets(cases, [judged_set(pools.get(c.golden_id, []), chunks, floor) for c in cases])


@dataclass(frozen=True)
class RunVerdicts:
    """One judge over a run's questions (``ids``): verdict (1 on topic, 0 off topic, NaN unjudged), P(true)
    and ms (NaN: none), ``gold`` the label of the set it read (``gate.agreement``; NaN: empty set),
    ``stats`` the judge summary (cached verdicts count as the calls they were), ``missing`` the
    non-empty sets with no verdict stored."""

    spec: str
    ids: list[str]
    verdicts: np.ndarray
    p_true: np.ndarray
    ms: np.ndarray
    gold: np.ndarray
    stats: JudgeStats
    missing: int


def _arrays(
    spec: str, sets: RunSets, inputs: list[JudgeInput | None], found: Mapping[str, Any]
) -> RunVerdicts:
    verdicts, p_true, ms, gold = (np.full(len(inputs), np.nan) for _ in range(4))
    stats, missing = JudgeStats(model=spec), 0
    for i, (case, chosen, item) in enumerate(zip(sets.cases, sets.sets, inputs, strict=True)):
        if item is None:
            continue
        holds = any(p.doc_id in set(case.relevant_doc_ids) for p in chosen)
        gold[i] = OFF_TOPIC if case.expect_refusal else (ON_TOPIC if holds else NO_RELEVANT)
        verdict = found[item.key]
        if verdict is None:
            missing += 1
            continue
        result = cached_result(verdict, chosen)
        stats.record(result)
        ms[i] = result.ms
        if result.judged:
            verdicts[i] = 1.0 if result.verdict else 0.0
        if result.p_true is not None:
            p_true[i] = result.p_true
    ids = [c.golden_id for c in sets.cases]
    return RunVerdicts(spec, ids, verdicts, p_true, ms, gold, stats, missing)


def run_verdicts(
    store: Store,
    run_id: str,
    specs: Sequence[str],
    *,
    floor: float = 0.0,
    ids: Sequence[str] | None = None,
    **judging: Any,
) -> dict[str, RunVerdicts]:
    """Each judge's verdicts over the run's questions (all, or ``ids`` in their order) at ``floor``:
    what the cache lacks computed first (:func:`judge_inputs`; ``judging`` holds its ``compute``,
    ``filler``, ``backend``, ``retry_failed``, ``reask_confidence`` and ``progress``)."""
    sets = run_sets(store, run_id, floor=floor, ids=ids)
    inputs = sets.inputs()
    found = judge_inputs(store, specs, [item for item in inputs if item is not None], **judging)
    return {spec: _arrays(spec, sets, inputs, found[spec]) for spec in specs}


def gather(ctx: GatherContext, key: str) -> RunVerdicts:
    calls = key in ctx.judge
    with Store(ctx.store_path, read_only=not calls) as store:
        ids = list(ctx.data.pools.ids)
        return run_verdicts(store, ctx.data.run_id, [key], ids=ids, compute=calls, progress=ctx.progress)[key]
