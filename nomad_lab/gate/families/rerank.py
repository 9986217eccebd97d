"""``rerank:SPEC[@S]``: a trained reranker's best score over the top-5 set, all or nothing on the pool.

Needs ``Need("rerank_scores", SPEC)`` (gathered by running the reranker over the stored sets); an
omitted number sweeps the score's own quantiles, since each reranker has its own scale.
"""

from nomad_lab.gate.families import best_score_family

FAMILY = best_score_family("rerank", 60, "rerank:RERANKER_SPEC[@S]", "score", "rerank_scores")
