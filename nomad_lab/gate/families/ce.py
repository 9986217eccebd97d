"""``ce:SCORER_SPEC[@LOGIT]``: a cross-encoder's best windowed logit over the top-5 set, all or nothing.

The scorer reads question and passage together (:mod:`nomad_lab.retrieval.cross_encoder`; the default
``ms-marco-minilm-l12`` installs offline). Needs ``Need("pair_scores", SCORER_SPEC)``, gathered by
scoring each passage's windows (cached in the store). A logit is unbounded and its scale is the model's
own, so an omitted number sweeps the score's own quantiles. An empty pool has no score and keeps nothing.
"""

from nomad_lab.gate.families import best_score_family

FAMILY = best_score_family("ce", 70, "ce:SCORER_SPEC[@LOGIT]", "logit", "pair_scores")
