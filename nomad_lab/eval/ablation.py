"""``eval retrieval --ablate``: what each ranking stage adds, scored side by side on the same questions.

Why: the reference ranks in three steps (dense cosine net, keyword rerank, source diversity); a change to
one is only worth its cost if it moves recall. Each arm is read off the same retrieval (the captured stages,
so nothing is retrieved twice) and scored with the same metrics:

- ``dense``: the first top-k of the cosine net, by cosine;
- ``+rerank``: the first top-k of the reranked net (SPEC §2.3);
- ``+diversity``: the reranked net after the source-diversity penalty, first top-k (the full pipeline).

No floor is applied in any arm: the ablation is about ranking, and a floor on the final score has no
counterpart in the dense arm (the floor is the floor study's subject). Each arm's recall@k is compared
with the dense arm's by a paired bootstrap over questions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nomad_lab.data.golden_suites import Golden
from nomad_lab.eval.retrieval_metrics import (
    CaseResult,
    RetrievedChunk,
    aggregate,
    metric_intervals,
    score_case,
)
from nomad_lab.gate.reference_ranking import Candidate, RankedResult, apply_source_diversity
from nomad_lab.gate.stats import paired_bootstrap

__all__ = ["ARMS", "Ablation", "ablation_markdown", "arm_chunks"]

ARMS = ("dense", "+rerank", "+diversity")


def arm_chunks(ranked: RankedResult, top_k: int) -> dict[str, list[Candidate]]:
    """Each arm's returned chunks for one question, from the captured stages."""
    stages = ranked.stages
    return {
        "dense": list(stages.dense[:top_k]),
        "+rerank": list(stages.candidates[:top_k]),
        "+diversity": apply_source_diversity(stages.candidates)[:top_k],
    }


class Ablation:
    """Collects every question's arms during a retrieval run, then scores them."""

    def __init__(self, k_values: Sequence[int], top_k: int) -> None:
        self.k_values, self.top_k = tuple(k_values), top_k
        self.cases: dict[str, list[CaseResult]] = {arm: [] for arm in ARMS}

    def add(self, golden: Golden, ranked: RankedResult) -> None:
        for arm, chunks in arm_chunks(ranked, self.top_k).items():
            self.cases[arm].append(
                score_case(
                    golden.id,
                    [RetrievedChunk(c.doc_id, c.final, c.semantic_score) for c in chunks],
                    golden.relevant_doc_ids,
                    golden.expect_refusal,
                    golden.tags,
                    self.k_values,
                )
            )

    def table(self, k: int = 5) -> dict[str, Any]:
        """Per arm: recall@k, hitRate@k, ndcg@k, mrr (with 95% intervals where defined), and the paired
        recall@k difference against the dense arm."""
        dense_recall = [c.recall.get(k) for c in self.cases["dense"]]
        rows = {}
        for arm in ARMS:
            cases = self.cases[arm]
            metrics = aggregate(cases, self.k_values).metrics()
            intervals = metric_intervals(cases, self.k_values)
            recall = [c.recall.get(k) for c in cases]
            test = paired_bootstrap(
                [float("nan") if v is None else v for v in dense_recall],
                [float("nan") if v is None else v for v in recall],
            )
            rows[arm] = {
                name: {"value": metrics.get(name), "interval": None if intervals.get(name) is None else
                       [intervals[name].low, intervals[name].high]}
                for name in (f"recall@{k}", f"hitRate@{k}", f"ndcg@{k}", "mrr")
            }  # fmt: skip
            rows[arm]["vsDense"] = {
                "recallDelta": test.statistic,
                "ci": [test.low, test.high],
                "p": test.p_value,
            }
        return {"k": k, "floor": "none", "arms": rows}


def ablation_markdown(table: dict[str, Any]) -> str:
    k = table["k"]
    names = (f"recall@{k}", f"hitRate@{k}", f"ndcg@{k}", "mrr")
    lines = [
        "| arm | " + " | ".join(names) + f" | recall@{k} vs dense [95% CI], p |",
        "|---|" + "---:|" * (len(names) + 1),
    ]
    for arm, row in table["arms"].items():
        cells = []
        for name in names:
            value, interval = row[name]["value"], row[name]["interval"]
            text = "n/a" if value is None else f"{value:.3f}"
            cells.append(text + ("" if interval is None else f" [{interval[0]:.3f}, {interval[1]:.3f}]"))
        vs = row["vsDense"]
        delta = (
            "—"
            if arm == "dense"
            else f"{vs['recallDelta']:+.3f} [{vs['ci'][0]:+.3f}, {vs['ci'][1]:+.3f}], p={vs['p']:.3g}"
        )
        lines.append(f"| {arm} | " + " | ".join(cells) + f" | {delta} |")
    return "\n".join(lines)
