"""The ablation arms and the score-separation table, on candidates whose answers are known by hand."""

from __future__ import annotations

import pytest

from nomad_lab.data.golden_suites import Golden
from nomad_lab.eval.ablation import Ablation, ablation_markdown, arm_chunks
from nomad_lab.eval.retrieval_metrics import RetrievedChunk, aggregate, score_case
from nomad_lab.eval.separation import separation_markdown, separation_rows
from nomad_lab.gate.reference_ranking import Candidate, FloorResult, RankedResult, RetrievalStages


def chunk(doc: str, index: int, cosine: float, final: float | None) -> Candidate:
    return Candidate(text=doc, semantic_score=cosine, source=f"/c/{doc}.md", doc_id=doc,
                     chunk_id=f"{doc}#{index}", score=final)  # fmt: skip


def ranked() -> RankedResult:
    """Dense order y, x#0, x#1 (cosine); the rerank puts x#0, x#1 first; diversity (x0.85) moves y back up."""
    dense = [chunk("y", 0, 0.70, None), chunk("x", 0, 0.65, None), chunk("x", 1, 0.60, None)]
    reranked = [chunk("x", 0, 0.65, 0.90), chunk("x", 1, 0.60, 0.85), chunk("y", 0, 0.70, 0.80)]
    stages = RetrievalStages(dense=[c.__class__(**{**c.__dict__, "score": c.semantic_score}) for c in dense],
                             reranked=reranked[:2], diversified=[], candidates=reranked)  # fmt: skip
    return RankedResult([], FloorResult(reranked, 3, 0), stages)


def golden(relevant: str) -> Golden:
    return Golden(id=f"g-{relevant}", query="q", suite="s", file="f", line=1, relevant_doc_ids=(relevant,))


def test_each_arm_reads_its_own_stage() -> None:
    arms = arm_chunks(ranked(), top_k=2)
    assert [c.chunk_id for c in arms["dense"]] == ["y#0", "x#0"]
    assert [c.chunk_id for c in arms["+rerank"]] == ["x#0", "x#1"]
    # x#1's 0.85 becomes 0.85 * 0.85 = 0.7225 < y's 0.80
    assert [c.chunk_id for c in arms["+diversity"]] == ["x#0", "y#0"]
    assert arms["+diversity"][1].final == pytest.approx(0.80)


def test_the_ablation_table_scores_every_arm_and_pairs_it_with_dense() -> None:
    ablation = Ablation(k_values=(1, 2), top_k=2)
    ablation.add(golden("y"), ranked())  # y: dense finds it first, rerank loses it, diversity brings it back
    ablation.add(golden("x"), ranked())
    table = ablation.table(k=2)
    arms = table["arms"]
    assert arms["dense"]["recall@2"]["value"] == 1.0
    assert arms["+rerank"]["recall@2"]["value"] == 0.5
    assert arms["+diversity"]["recall@2"]["value"] == 1.0
    assert arms["dense"]["mrr"]["value"] == pytest.approx((1 + 1 / 2) / 2)
    assert arms["+rerank"]["vsDense"]["recallDelta"] == pytest.approx(-0.5)
    assert "| +rerank | 0.500" in ablation_markdown(table)


def test_separation_uses_nearest_rank_percentiles_per_axis_and_the_p10_p90_gap() -> None:
    relevant = [RetrievedChunk("r", 0.9 - 0.01 * i, 0.6 - 0.01 * i) for i in range(10)]  # final .81-.90
    noise = [RetrievedChunk("n", 0.5 + 0.01 * i, 0.55 + 0.01 * i) for i in range(10)]  # final .50-.59
    cases = [
        score_case("a", relevant[:5] + noise[:5], ("r",), False, (), (5,)),
        score_case("b", relevant[5:] + noise[5:], ("r",), False, (), (5,)),
        score_case("c", [RetrievedChunk("r", 0.95, 0.2)], (), True, (), (5,)),  # refusal: always irrelevant
    ]
    rows = {(r["axis"], r["side"]): r for r in separation_rows(aggregate(cases, (5,)).distributions())}
    final_rel, final_irr = rows[("final", "relevant")], rows[("final", "irrelevant")]
    assert final_rel["count"] == 10 and final_irr["count"] == 11
    assert final_rel["min"] == pytest.approx(0.81) and final_rel["p10"] == pytest.approx(0.81)
    assert final_rel["median"] == pytest.approx(0.85)  # nearest rank: ceil(0.5*10) = 5th of 10
    assert final_irr["p90"] == pytest.approx(0.59)  # ceil(0.9*11) = 10th of 11: .50 … .59, then .95
    assert final_rel["gap"] == pytest.approx(0.81 - 0.59)
    semantic_rel, semantic_irr = rows[("semantic", "relevant")], rows[("semantic", "irrelevant")]
    assert semantic_rel["p10"] == pytest.approx(0.51) and semantic_irr["p90"] == pytest.approx(0.63)
    assert semantic_rel["gap"] == pytest.approx(0.51 - 0.63)  # the cosine axis overlaps
    assert "| semantic | relevant | 10 |" in separation_markdown(aggregate(cases, (5,)).distributions())
