"""A labelling sitting: drafted questions, their retrieved passages, the person's decisions, and what
to label next.

Why here (the eval ring): a sitting retrieves the drafts once (a stored run, so the passages a person
reads are exactly what a gate will see), writes labels through :class:`nomad_lab.data.labels.LabelFile`,
and, once a few dozen labels exist, orders the rest by how much they would move the gate: a logistic
gate over pool and coverage features is fitted on the labelled questions, its recall-target threshold
is chosen on their out-of-fold scores, and the drafts come next whose score sits closest to that
threshold, those where the gate and the draft's own guess disagree first. The live figures (leak at
recall@5 >= 0.90 with its interval, for the floor and for that gate, on the labelled questions) are
what tells a person whether more labels are worth it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.core.errors import NomadLabError
from nomad_lab.data.golden_suites import DRAFTS_SUITE, Golden, load_suite_file, suite_path
from nomad_lab.data.labels import ANSWERABLE, REFUSAL, SKIP, Decision, LabelFile, decide
from nomad_lab.eval.gating.context import GatherContext
from nomad_lab.eval.gating.fit import with_features
from nomad_lab.eval.gating.run_data import RunData, load_run
from nomad_lab.eval.retrieval_service import RetrievalRequest, retrieve
from nomad_lab.gate import crossval
from nomad_lab.gate.logistic_gate import fit_logistic, logistic_scores
from nomad_lab.gate.stats import bootstrap_means

REORDER_AFTER = 30
"""Labels (with at least :data:`MIN_PER_CLASS` of each kind) before the queue is ordered by the gate."""
MIN_PER_CLASS = 5
KINDS = ("pool", "coverage")


@dataclass(frozen=True)
class Passage:
    doc_id: str
    text: str
    score: float


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

    @classmethod
    def open(
        cls,
        corpus_dir: str | Path,
        goldens_dir: str | Path,
        store: str | Path,
        who: str | None = None,
        progress: bool = False,
    ) -> LabelSession:
        """Load the drafts, retrieve them at floor 0 into ``store`` and read the decisions so far."""
        goldens_dir = Path(goldens_dir)
        path = suite_path(goldens_dir, DRAFTS_SUITE)
        if not path.is_file():
            raise NomadLabError(
                f"{path}: no drafts to label; run nomad-lab goldens draft --out {goldens_dir}"
            )
        drafts = load_suite_file(path, drafts=True)
        request = RetrievalRequest(
            corpus_dir=Path(corpus_dir),
            goldens_dir=goldens_dir,
            suite=DRAFTS_SUITE,
            floor=0.0,
            store_path=Path(store),
            progress=progress,
            drafts=True,
        )
        data = with_features(store, load_run(store, retrieve(request).run_id, embed=False), KINDS)
        session = cls(Path(corpus_dir), goldens_dir, Path(store), who, drafts, data, LabelFile(goldens_dir))
        session._ctx = GatherContext(Path(store), data)
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

    def record(self, draft_id: str, action: str, **choice: Any) -> Decision:
        """Decide on a draft (``answerable`` with ``gold``, ``refusal`` with ``refusal_type``, ``skip``;
        ``query`` for an edited question) and write it."""
        decision = decide(self.draft(draft_id), action, who=self.who, **choice)
        self.labels.record(decision)
        return decision

    def progress(self) -> tuple[int, int]:
        """(drafts decided, drafts in all)."""
        decided = set(self.decisions())
        return sum(1 for d in self.drafts if d.id in decided), len(self.drafts)

    # --- what the labels say, and what to label next -------------------------------------------------

    def _labelled(self, first: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(run indices, on-topic labels, recall@5 of each answerable label: its gold among the top 5),
        over the first ``first`` decisions in the order they were given (all when None)."""
        index, labels, recall = [], [], []
        for draft_id, decision in list(self.decisions().items())[:first]:
            if decision.action == SKIP or draft_id not in self.by_id:
                continue
            i = self.by_id[draft_id]
            index.append(i)
            labels.append(decision.action == ANSWERABLE)
            hit = decision.gold in {c.doc_id for c in self._ctx.chunks(i)}
            recall.append(float(hit) if decision.action == ANSWERABLE else np.nan)
        return np.array(index, dtype=int), np.array(labels, dtype=bool), np.array(recall, dtype=float)

    def _ready(self, labels: np.ndarray) -> bool:
        return labels.size >= REORDER_AFTER and min(labels.sum(), (~labels).sum()) >= MIN_PER_CLASS

    def _gate(self, index: np.ndarray, labels: np.ndarray, recall: np.ndarray):
        """The gate on the labelled questions: out-of-fold scores, its recall-target threshold, and the
        model fitted on all of them (to score the drafts not yet labelled)."""
        x = self.data.features.matrix(list(KINDS))[0]
        y = labels.astype(int)
        groups = np.arange(y.size)
        splits = crossval.repeated_splits(y, groups, crossval.FOLDS, 1, 1341)[0]
        oof = np.full(y.size, np.nan)
        for train, test in splits:
            oof[test] = logistic_scores(*fit_logistic(x[index[train]], y[train], 0.1), x[index[test]])
        nonempty = self.data.base_nonempty[index]
        thresholds, rec, ne = crossval.threshold_grid(oof, recall, nonempty)
        at_recall, _ = crossval.choose_points(rec, ne, ~labels, crossval.RECALL_TARGET, crossval.LEAK_TARGET)
        threshold = float(thresholds[at_recall]) if at_recall is not None else 0.5
        model = fit_logistic(x[index], y, 0.1)
        return oof, threshold, logistic_scores(*model, x)

    def queue(self) -> list[str]:
        """The drafts not yet decided, in the order to label them: as drafted until the gate can be
        fitted, then closest to its threshold first (disagreeing with the draft's own guess before that)."""
        decided = set(self.decisions())
        todo = [d.id for d in self.drafts if d.id not in decided]
        index, labels, recall = self._labelled()
        if not self._ready(labels):
            return todo
        _, threshold, scores = self._gate(index, labels, recall)

        def key(draft_id: str) -> tuple[bool, float]:
            i = self.by_id[draft_id]
            agrees = (scores[i] >= threshold) == (not self.draft(draft_id).expect_refusal)
            return agrees, abs(scores[i] - threshold)

        return sorted(todo, key=key)

    def figures(self, first: int | None = None) -> dict[str, Any]:
        """Leak at recall@5 >= 0.90 with 95% bootstrap intervals on the labelled questions, for the
        floor (top final score, every point on the labels: in sample) and, once it can be fitted, the
        gate (out-of-fold scores); and how many labels of each kind they rest on. ``first`` replays the
        sitting: only the first that many decisions (skips count as decisions) are read."""
        index, labels, recall = self._labelled(first)
        out: dict[str, Any] = {"answerable": int(labels.sum()), "refusals": int((~labels).sum())}
        if not labels.any() or labels.all():
            return out
        top = self.data.features.blocks["pool"]
        floor_scores = top.matrix[index, top.names.index("final_1")]
        out["floor"] = leak_at_recall(floor_scores, recall, self.data.base_nonempty[index], ~labels)
        if self._ready(labels):
            oof, _, _ = self._gate(index, labels, recall)
            out["gate"] = leak_at_recall(oof, recall, self.data.base_nonempty[index], ~labels)
        return out


def leak_at_recall(
    scores: np.ndarray, recall: np.ndarray, nonempty: np.ndarray, refusal: np.ndarray
) -> dict[str, float] | None:
    """Leak and recall@5 (each with a 95% bootstrap interval) at the least-leaking threshold of an
    all-or-nothing score whose recall@5 reaches the target; None when no threshold does."""
    thresholds, rec, ne = crossval.threshold_grid(scores, recall, nonempty)
    point, _ = crossval.choose_points(rec, ne, refusal, crossval.RECALL_TARGET, crossval.LEAK_TARGET)
    if point is None:
        return None
    leak, leak_lo, leak_hi = bootstrap_means(ne[point, refusal].astype(float)[None])
    answerable = ~np.isnan(recall)
    rec_mean, rec_lo, rec_hi = bootstrap_means(rec[point, answerable][None])
    return {
        "threshold": float(thresholds[point]),
        "leak": float(leak[0]),
        "leakLow": float(leak_lo[0]),
        "leakHigh": float(leak_hi[0]),
        "recall": float(rec_mean[0]),
        "recallLow": float(rec_lo[0]),
        "recallHigh": float(rec_hi[0]),
    }


__all__ = ["ANSWERABLE", "REFUSAL", "SKIP", "LabelSession", "Passage", "leak_at_recall"]
