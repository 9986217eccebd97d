"""A labelling sitting: drafted questions, their retrieved passages, the person's decisions, and what
to label next.

Why here (the eval ring): a sitting retrieves the drafts once (a stored run, so the passages a person
reads are exactly what a gate will see; a reopened sitting reads that run again, loading no embedder,
unless the drafts or the documents changed since: :mod:`~nomad_lab.eval.gating.sitting_runs`), writes
labels through :class:`nomad_lab.data.labels.LabelFile`, and, once a few dozen labels exist, orders the
rest by how much they would move the gate: a logistic gate over pool and coverage features is fitted on
the labelled questions, its recall-target threshold is chosen on their out-of-fold scores, and the
drafts come next whose score sits closest to that threshold, those where the gate and the draft's own
guess disagree first. The live figures (leak at
recall@5 >= 0.90 with its interval, for the floor and for that gate, on the labelled questions) are
what tells a person whether more labels are worth it.

An edited question is judged by its own retrieval, never by its draft's: a person who rewords a draft
labels the new wording, so its recall@5 and the features the gate is fitted on must describe that
wording. Each distinct edited wording is retrieved once (runs of suite :data:`EDITS_SUITE` in the
sitting's store, found there again by a resumed sitting) when the labels are next read.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.first_run import DEFAULT_LABEL_DIR, first_run_line, shown
from nomad_lab.core.workspace import in_workspace
from nomad_lab.data.corpus import load_corpus
from nomad_lab.data.draft_deal import deal, draft_kind
from nomad_lab.data.golden_suites import DRAFTS_SUITE, Golden, load_suite_file, suite_path
from nomad_lab.data.labels import ANSWERABLE, REFUSAL, SKIP, Decision, LabelFile, decide
from nomad_lab.data.refusal_kinds import REFUSAL_KINDS, kind_of
from nomad_lab.eval.gating.context import GatherContext
from nomad_lab.eval.gating.fit import with_features
from nomad_lab.eval.gating.run_data import RunData, load_run
from nomad_lab.eval.gating.runs import retrieve_run
from nomad_lab.eval.gating.sitting_runs import EDITS_SUITE, stored_drafts_run
from nomad_lab.gate import crossval
from nomad_lab.gate.logistic_gate import fit_logistic, logistic_scores
from nomad_lab.gate.stats import bootstrap_means
from nomad_lab.store import Store

REORDER_AFTER = 30
"""Labels (with at least :data:`MIN_PER_CLASS` of each kind) before the queue is ordered by the gate."""
MIN_PER_CLASS = 5
KINDS = ("pool", "coverage")


@dataclass(frozen=True)
class Passage:
    doc_id: str
    text: str
    score: float


@dataclass(frozen=True)
class Labelled:
    """The labelled questions as asked (an edited one by its own retrieval), one row each: features
    (:data:`KINDS`), on-topic label, recall@5 (NaN for a refusal), whether retrieval returned anything,
    the top final score (what the floor thresholds) and the refusal kind ("" for an answerable label;
    a label given before kinds, such as ``adversarial/fictional``, has its kind derived from it)."""

    x: np.ndarray
    labels: np.ndarray
    recall: np.ndarray
    nonempty: np.ndarray
    floor: np.ndarray
    kinds: np.ndarray


@dataclass
class LabelSession:
    """One sitting over ``goldens_dir/drafts.jsonl`` and the corpus it was drafted from."""

    corpus_dir: Path
    goldens_dir: Path
    store: Path
    who: str | None = None
    drafts: list[Golden] = field(default_factory=list)
    data: RunData | None = None
    labels: LabelFile | None = None
    _ctx: GatherContext | None = None
    _edits: dict[str, tuple[GatherContext, int]] = field(default_factory=dict)
    """Each edited wording's run and row, as loaded or retrieved by this sitting."""
    _documents: dict[str, str] | None = None
    refusals_first: bool = False
    """Deal the refusal rounds before any answerable draft (:func:`nomad_lab.data.draft_deal.deal`)."""

    @classmethod
    def open(
        cls,
        corpus_dir: str | Path,
        goldens_dir: str | Path,
        store: str | Path,
        who: str | None = None,
        progress: bool = False,
        refusals_first: bool = False,
    ) -> LabelSession:
        """Load the drafts, retrieve them at floor 0 into ``store`` (or read the run that already did:
        :func:`~nomad_lab.eval.gating.sitting_runs.stored_drafts_run`) and read the decisions so far."""
        goldens_dir = Path(goldens_dir)
        path = suite_path(goldens_dir, DRAFTS_SUITE)
        if not path.is_file():
            raise NomadLabError(no_drafts_line(path, corpus_dir, goldens_dir))
        drafts = load_suite_file(path, drafts=True)
        stored = stored_drafts_run(store, corpus_dir, drafts)
        ctx = (
            _loaded(store, stored)
            if stored
            else _retrieved(corpus_dir, goldens_dir, DRAFTS_SUITE, store, progress)
        )
        labels = LabelFile(goldens_dir)
        session = cls(Path(corpus_dir), goldens_dir, Path(store), who, drafts, ctx.data, labels, ctx)
        session.refusals_first = refusals_first
        return session

    @property
    def by_id(self) -> dict[str, int]:
        return {gid: i for i, gid in enumerate(self.data.pools.ids)}

    def decisions(self) -> dict[str, Decision]:
        return self.labels.decisions()

    def draft(self, draft_id: str) -> Golden:
        for golden in self.drafts:
            if golden.id == draft_id:
                return golden
        raise NomadLabError(f"no draft {draft_id!r} in {suite_path(self.goldens_dir, DRAFTS_SUITE)}")

    def passages(self, draft_id: str) -> list[Passage]:
        """The top-5 set retrieval returns for the draft at floor 0, in rank order."""
        return [Passage(c.doc_id, c.text, float(c.score)) for c in self._ctx.chunks(self.by_id[draft_id])]

    def documents(self) -> dict[str, str]:
        """Every document of the corpus by id (its text): the gold may be any of them, not only one
        retrieval returned (a gold outside the top 5 is a retrieval miss, recorded as one)."""
        if self._documents is None:
            self._documents = {doc.doc_id: doc.text for doc in load_corpus(self.corpus_dir).docs}
        return self._documents

    def suggestion(self, draft_id: str) -> tuple[str, str | None]:
        """What the draft itself guesses: (``answerable``, its source document) or (``refusal``, its kind)."""
        draft = self.draft(draft_id)
        if draft.expect_refusal:
            return REFUSAL, draft_kind(draft)
        return ANSWERABLE, draft.relevant_doc_ids[0] if draft.relevant_doc_ids else None

    def record(self, draft_id: str, action: str, **choice: Any) -> Decision:
        """Decide on a draft (``answerable`` with ``gold``, any document of the corpus; ``refusal`` with
        ``refusal_type``, a refusal kind; ``skip``; ``query`` for an edited question, retrieved when the
        labels are next read) and write it."""
        gold = choice.get("gold")
        if action == ANSWERABLE and gold and gold not in self.documents():
            raise NomadLabError(f"label {draft_id}: no document {gold!r} in {self.corpus_dir}")
        decision = decide(self.draft(draft_id), action, who=self.who, **choice)
        self.labels.record(decision)
        return decision

    def undo(self) -> Decision | None:
        """Take back the last decision (its draft is undecided again, or back to its earlier label)."""
        return self.labels.undo()

    def retrieved(self, decision: Decision) -> bool:
        """Whether an answerable decision's gold is among the top 5 retrieval returned for the draft."""
        return decision.gold in {p.doc_id for p in self.passages(decision.draft_id)}

    def progress(self) -> tuple[int, int]:
        """(drafts decided, drafts in all)."""
        decided = set(self.decisions())
        return sum(1 for d in self.drafts if d.id in decided), len(self.drafts)

    # --- what the labels say, and what to label next -------------------------------------------------

    def _labelled(self, first: int | None = None) -> Labelled:
        """The labelled questions over the first ``first`` decisions in the order they were given (all
        when None), skips left out; an answerable label's recall@5 is its gold among the top 5 of the
        question as labelled."""
        asked = [
            decision
            for draft_id, decision in list(self.decisions().items())[:first]
            if decision.action != SKIP and draft_id in self.by_id
        ]
        edits = self._edited([d for d in asked if self._is_edit(d)])
        where = [edits[d.query] if self._is_edit(d) else (self._ctx, self.by_id[d.draft_id]) for d in asked]
        runs = {ctx.data.run_id: ctx.data for ctx, _ in where}
        matrices = {run_id: data.features.matrix(list(KINDS))[0] for run_id, data in runs.items()}
        names = self.data.features.matrix(list(KINDS))[1]
        x = np.zeros((len(asked), len(names)))
        recall = np.full(len(asked), np.nan)
        nonempty = np.zeros(len(asked), dtype=bool)
        for k, (decision, (ctx, j)) in enumerate(zip(asked, where, strict=True)):
            x[k] = matrices[ctx.data.run_id][j]
            nonempty[k] = ctx.data.base_nonempty[j]
            if decision.action == ANSWERABLE:
                recall[k] = float(decision.gold in {c.doc_id for c in ctx.chunks(j)})
        labels = np.array([d.action == ANSWERABLE for d in asked], dtype=bool)
        kinds = np.array(
            [kind_of([d.refusal_type]) if d.action == REFUSAL else "" for d in asked], dtype=object
        )
        return Labelled(x, labels, recall, nonempty, x[:, names.index("final_1")], kinds)

    def _is_edit(self, decision: Decision) -> bool:
        """Whether the question was labelled in other words than the drafts run retrieved."""
        return decision.query != self.data.queries[self.by_id[decision.draft_id]]

    def _edited(self, decisions: list[Decision]) -> dict[str, tuple[GatherContext, int]]:
        """The run and row of each edited wording in ``decisions``: from this sitting, else from a run
        an earlier sitting stored (same corpus and retrieval setup), else retrieved now (every missing
        wording in one run)."""
        missing = {d.query: d for d in decisions if d.query not in self._edits}
        if missing:
            for run_id in self._stored_edit_runs(set(missing)):
                self._add_edits(_loaded(self.store, run_id))
            missing = {query: d for query, d in missing.items() if query not in self._edits}
        if missing:
            with tempfile.TemporaryDirectory(prefix="nomad-label-edits-") as folder:
                lines = [{**d.golden_line(), "id": _edit_id(query)} for query, d in missing.items()]
                suite_path(folder, EDITS_SUITE).write_text(
                    "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
                )
                of = self.data.run_id
                self._add_edits(_retrieved(self.corpus_dir, folder, EDITS_SUITE, self.store, edits_of=of))
        return self._edits

    def _stored_edit_runs(self, wordings: set[str]) -> list[str]:
        """The stored edit runs, newest first, holding one of ``wordings`` and retrieved like the
        drafts (same corpus fingerprint, same parameters but the suite), each wording's newest run only:
        runs of kind ``label-edits``, and the retrieval runs of suite :data:`EDITS_SUITE` stores kept
        before edits had a kind of their own."""
        own = ("suite", "editsOf")
        with Store(self.store, read_only=True) as store:
            drafts = store.get_run(self.data.run_id)
            setup = {k: v for k, v in drafts.params.items() if k not in own}
            out, wanted = [], set(wordings)
            for run_id in reversed(store.run_ids(None)):
                run = store.get_run(run_id)
                if run.suite != EDITS_SUITE or run.fingerprint != drafts.fingerprint:
                    continue
                if {k: v for k, v in run.params.items() if k not in own} != setup:
                    continue
                held = wanted & {case.query for case in store.get_cases(run_id)}
                if held:
                    out.append(run_id)
                    wanted -= held
        return out

    def _add_edits(self, ctx: GatherContext) -> None:
        for j, query in enumerate(ctx.data.queries):
            self._edits[query] = (ctx, j)

    def _ready(self, labels: np.ndarray) -> bool:
        return labels.size >= REORDER_AFTER and min(labels.sum(), (~labels).sum()) >= MIN_PER_CLASS

    def _gate(self, labelled: Labelled):
        """The gate on the labelled questions: out-of-fold scores, its recall-target threshold, and the
        model fitted on all of them (to score the drafts not yet labelled)."""
        x, labels, recall = labelled.x, labelled.labels, labelled.recall
        y = labels.astype(int)
        groups = np.arange(y.size)
        splits = crossval.repeated_splits(y, groups, crossval.FOLDS, 1, 1341)[0]
        oof = np.full(y.size, np.nan)
        for train, test in splits:
            oof[test] = logistic_scores(*fit_logistic(x[train], y[train], 0.1), x[test])
        thresholds, rec, ne = crossval.threshold_grid(oof, recall, labelled.nonempty)
        at_recall, _ = crossval.choose_points(rec, ne, ~labels, crossval.RECALL_TARGET, crossval.LEAK_TARGET)
        threshold = float(thresholds[at_recall]) if at_recall is not None else 0.5
        model = fit_logistic(x, y, 0.1)
        return oof, threshold, logistic_scores(*model, self.data.features.matrix(list(KINDS))[0])

    def queue(self) -> list[str]:
        """The drafts not yet decided, in the order to label them: dealt with refusals early until the
        gate can be fitted (:func:`~nomad_lab.data.draft_deal.deal`), then closest to its threshold first
        (disagreeing with the draft's own guess before that)."""
        decided = set(self.decisions())
        todo = [i for i in deal(self.drafts, self.refusals_first) if i not in decided]
        labelled = self._labelled()
        if not self._ready(labelled.labels):
            return todo
        _, threshold, scores = self._gate(labelled)

        def key(draft_id: str) -> tuple[bool, float]:
            i = self.by_id[draft_id]
            agrees = (scores[i] >= threshold) == (not self.draft(draft_id).expect_refusal)
            return agrees, abs(scores[i] - threshold)

        return sorted(todo, key=key)

    def figures(self, first: int | None = None) -> dict[str, Any]:
        """Leak at recall@5 >= 0.90 with 95% bootstrap intervals on the labelled questions, for the
        floor (top final score, every point on the labels: in sample) and, once it can be fitted, the
        gate (out-of-fold scores): over all refusals (``leak``, blended) and per refusal kind
        (``byKind``: the off-topic leak, the unanswerable and near-domain pass rates, at the same
        point); and how many labels of each kind they rest on. ``first`` replays the sitting: only the
        first that many decisions (skips count as decisions) are read."""
        labelled = self._labelled(first)
        labels, recall, nonempty, kinds = labelled.labels, labelled.recall, labelled.nonempty, labelled.kinds
        out: dict[str, Any] = {
            "answerable": int(labels.sum()),
            "refusals": int((~labels).sum()),
            "refusalsByKind": {k: int((kinds == k).sum()) for k in REFUSAL_KINDS},
        }
        if not labels.any() or labels.all():
            return out
        out["floor"] = leak_at_recall(labelled.floor, recall, nonempty, ~labels, kinds)
        if self._ready(labels):
            oof, _, _ = self._gate(labelled)
            out["gate"] = leak_at_recall(oof, recall, nonempty, ~labels, kinds)
        return out


def no_drafts_line(path: Path, corpus_dir: str | Path, goldens_dir: Path) -> str:
    """What to run when ``goldens_dir`` holds no drafts: the first run for the sitting's default folder
    (:data:`~nomad_lab.core.first_run.DEFAULT_LABEL_DIR`), which drafts there; ``goldens draft`` for any
    other folder."""
    if goldens_dir.resolve() == in_workspace(DEFAULT_LABEL_DIR).resolve():
        return first_run_line(f"{shown(path)}: no drafts to label yet", corpus_dir)
    return (
        f"{shown(path)}: no drafts to label yet; run "
        f"`nomad-lab goldens draft --corpus {shown(corpus_dir)} --out {shown(goldens_dir)}` first"
    )


def _retrieved(
    corpus_dir: str | Path,
    goldens_dir: str | Path,
    suite: str,
    store: str | Path,
    progress: bool = False,
    edits_of: str | None = None,
) -> GatherContext:
    """Retrieve ``suite`` (drafts included) at floor 0 into ``store``: the stored run with the sitting's
    features, ready to read its passages (``edits_of``: stored as edits of that drafts run)."""
    run_id = retrieve_run(
        store,
        corpus=corpus_dir,
        goldens=goldens_dir,
        suite=suite,
        progress=progress,
        drafts=True,
        edits_of=edits_of,
    )
    return _loaded(store, run_id)


def _loaded(store: str | Path, run_id: str) -> GatherContext:
    return GatherContext(Path(store), with_features(store, load_run(store, run_id, embed=False), KINDS))


def _edit_id(query: str) -> str:
    """A stable golden id for an edited wording (the wording itself is the cache key)."""
    return "edit-" + hashlib.sha256(query.encode()).hexdigest()[:16]


def leak_at_recall(
    scores: np.ndarray,
    recall: np.ndarray,
    nonempty: np.ndarray,
    refusal: np.ndarray,
    kinds: np.ndarray | None = None,
) -> dict[str, Any] | None:
    """Leak and recall@5 (each with a 95% bootstrap interval) at the least-leaking threshold of an
    all-or-nothing score whose recall@5 reaches the target; None when no threshold does. With ``kinds``
    (each question's refusal kind, "" when answerable), ``byKind`` splits the leak at that same point:
    per kind present, its n and its pass rate [mean, 95% low, high]."""
    thresholds, rec, ne = crossval.threshold_grid(scores, recall, nonempty)
    point, _ = crossval.choose_points(rec, ne, refusal, crossval.RECALL_TARGET, crossval.LEAK_TARGET)
    if point is None:
        return None
    leak, leak_lo, leak_hi = bootstrap_means(ne[point, refusal].astype(float)[None])
    answerable = ~np.isnan(recall)
    rec_mean, rec_lo, rec_hi = bootstrap_means(rec[point, answerable][None])
    out: dict[str, Any] = {
        "threshold": float(thresholds[point]),
        "leak": float(leak[0]),
        "leakLow": float(leak_lo[0]),
        "leakHigh": float(leak_hi[0]),
        "recall": float(rec_mean[0]),
        "recallLow": float(rec_lo[0]),
        "recallHigh": float(rec_hi[0]),
    }
    if kinds is not None:
        kinds = np.asarray(kinds, dtype=object)
        out["byKind"] = {}
        for kind in (k for k in REFUSAL_KINDS if (kinds == k).any()):
            mask = kinds == kind
            rate = bootstrap_means(ne[point, mask].astype(float)[None])
            out["byKind"][kind] = {"n": int(mask.sum()), "pass": [float(r[0]) for r in rate]}
    return out


__all__ = ["ANSWERABLE", "REFUSAL", "SKIP", "LabelSession", "Passage", "leak_at_recall"]
