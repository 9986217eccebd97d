"""Candidate dumps for tests: a small valid one, and random pools for property tests of the gates."""

from __future__ import annotations

import random

GOOD_LINE = {"id": "ok", "query": "How long do I boil water?", "relevantDocIds": ["water-boiling"]}
GOOD_DUMP = {
    "fingerprint": "b4ebe5dce8699f5d",
    "params": {"topK": 5, "scoreThreshold": 0.3, "minFinalScore": 0.62, "kValues": [1, 3, 5, 10]},
    "pools": [
        {
            "id": "boil",
            "tags": ["single-hop"],
            "expectRefusal": False,
            "relevantDocIds": ["water-boiling"],
            "candidates": [
                {"docId": "water-boiling", "score": 0.9, "semanticScore": 0.7},
                {"docId": None, "score": 0.5, "semanticScore": 0.4},
            ],
        },
        {"id": "haiku", "tags": ["off-topic"], "expectRefusal": True, "relevantDocIds": [], "candidates": []},
    ],
}

PARAMS = {"topK": 5, "scoreThreshold": 0.3, "minFinalScore": 0.62, "kValues": [1, 3, 5, 10]}


def dump_of(records: list[dict]) -> dict:
    return {"fingerprint": "0123456789abcdef", "params": PARAMS, "pools": records}


def random_records(seed: int, n: int = 60) -> list[dict]:
    rng = random.Random(seed)
    docs = [f"doc-{i}" for i in range(8)] + [None]
    records = []
    for i in range(n):
        refusal = rng.random() < 0.4
        relevant = [] if refusal else rng.sample(docs[:8], rng.randint(1, 2))
        scores = sorted((round(rng.uniform(0.3, 0.9), 2) for _ in range(rng.randint(0, 15))), reverse=True)
        candidates = [
            {"docId": rng.choice(docs), "score": s, "semanticScore": round(s / 1.2, 3)} for s in scores
        ]
        records.append(
            {
                "id": f"q{i}",
                "tags": ["off-topic"] if refusal else ["single-hop"],
                "expectRefusal": refusal,
                "relevantDocIds": relevant,
                "candidates": candidates,
            }
        )
    return records
