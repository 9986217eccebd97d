"""The reference system's constants, in one place: both halves import them, nothing retypes them.

Gating: the rerank's top k, candidate net and boosts, the relevance floor ``RAG_MIN_FINAL_SCORE`` with
the settings presets, and the source-diversity penalty (SPEC §2.3–2.5). Budgeting: where the retrieved
context sits in the prompt (``RAG_PLACEMENTS``; ``tail`` keeps the KV-cache prefix byte-identical).
"""

from __future__ import annotations

RAG_DEFAULT_TOP_K = 5
RAG_DEFAULT_SCORE_THRESHOLD = 0.3  # the candidate net on raw cosine
CANDIDATE_MULTIPLIER = 3
MIN_SEMANTIC_THRESHOLD = 0.35  # below this no boosts are applied
RAG_MIN_FINAL_SCORE = 0.62
RAG_MIN_RELEVANCE_PRESETS: dict[float, str] = {
    0.0: "Off — use every passage retrieved",
    0.55: "Lenient",
    0.62: "Balanced (recommended)",
    0.66: "Strict",
}
DIVERSITY_PENALTY = 0.85

KEYWORD_BOOST = 0.10
DIRECT_MATCH_BOOST = 0.075
HEADING_BOOST = 0.10
MIN_QUERY_TERM_LENGTH = 3  # query terms must be LONGER than this

RAG_TAIL = "tail"  # the retrieved block goes after the history, just before the query (the default)
RAG_FRONT = "front"  # ... or first, right after the system prompt
RAG_PLACEMENTS = (RAG_TAIL, RAG_FRONT)
