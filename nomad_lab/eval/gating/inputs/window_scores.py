"""``pair_scores`` (key: a cross-encoder spec, :mod:`nomad_lab.retrieval.cross_encoder`): each question's
best windowed cross-encoder logit over its top-5 set (NaN: empty pool).

Only what the store's pair-score cache lacks is scored, a question at a time and stored as soon as it is
scored, so an interrupted gather resumes where it stopped. Each pair's scoring time is stored with its
score, so the cost per question reported here is the model's on this CPU even when every score came from
the cache (``pairs`` and ``seconds`` are what the leaderboard's calls and ms columns read).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from nomad_lab.core.reference import RAG_DEFAULT_TOP_K
from nomad_lab.eval.gating.context import GatherContext
from nomad_lab.gate.families import top_value
from nomad_lab.retrieval.cross_encoder import load_cross_encoder, locate_cross_encoder
from nomad_lab.store import Store, pair_sha256

KIND = "pair_scores"


@dataclass(frozen=True)
class WindowScores:
    """A cross-encoder over a run: ``passages`` (n, 5) each passage's best window (NaN: no passage),
    ``best`` each question's best passage, ``ms`` each question's scoring time as measured when its
    pairs were scored; ``pairs`` (question, window) pairs in the run, ``seconds`` their total scoring
    time, ``computed`` how many of them this gather scored (the rest came from the cache)."""

    spec: str
    identity: str
    passages: np.ndarray
    ms: np.ndarray
    pairs: int
    seconds: float
    computed: int

    @property
    def best(self) -> np.ndarray:
        return top_value(self.passages, ~np.isnan(self.passages))


def window_scores(ctx: GatherContext, key: str) -> WindowScores:
    """Score every (question, window) of the run's top-5 sets that the cache lacks; read the rest."""
    scorer = load_cross_encoder(key)
    texts: dict[str, tuple[str, str]] = {}  # pair hash -> (question, window)
    plan: list[list[list[str]]] = []  # question -> passage -> its windows' pair hashes
    for i, query in enumerate(ctx.data.queries):
        per_passage = []
        for passage in ctx.passages(i)[:RAG_DEFAULT_TOP_K]:
            cut = scorer.windows(passage)
            hashes = [pair_sha256(query, w) for w in cut]
            texts.update(zip(hashes, ((query, w) for w in cut), strict=True))
            per_passage.append(hashes)
        plan.append(per_passage)
    with Store(ctx.store_path, read_only=True) as store:
        cached = store.get_pair_scores(scorer.model_key, texts)
    todo = [i for i, per in enumerate(plan) if any(h not in cached for hs in per for h in hs)]
    computed = 0
    if todo:
        with Store(ctx.store_path) as store:
            for i in ctx.track(todo, f"cross-encoder {scorer.spec}", len(todo)):
                missing = list(dict.fromkeys(h for hs in plan[i] for h in hs if h not in cached))
                if not missing:  # scored with an earlier question of the same text
                    continue
                started = time.perf_counter()
                scores = scorer.score_pairs([texts[h] for h in missing])
                each = 1000 * (time.perf_counter() - started) / len(missing)
                rows = [(h, float(s), each) for h, s in zip(missing, scores, strict=True)]
                store.put_pair_scores(scorer.model_key, rows)
                cached.update({h: (s, ms) for h, s, ms in rows})
                computed += len(rows)
    n = ctx.data.pools.size
    passages, ms = np.full((n, RAG_DEFAULT_TOP_K), np.nan), np.zeros(n)
    for i, per in enumerate(plan):
        for j, hashes in enumerate(per):
            if hashes:
                passages[i, j] = max(cached[h][0] for h in hashes)
        ms[i] = sum(cached[h][1] or 0.0 for h in dict.fromkeys(h for hs in per for h in hs))
    pairs = len({h for per in plan for hs in per for h in hs})
    seconds = float(ms.sum()) / 1000
    return WindowScores(str(scorer.spec), scorer.identity, passages, ms, pairs, seconds, computed)


def gather(ctx: GatherContext, key: str) -> WindowScores:
    return window_scores(ctx, key)


def check(key: str) -> None:
    """The cross-encoder spec names a model a loader knows (nothing loaded)."""
    locate_cross_encoder(key)
