"""Lexical coverage: how much of the question the retrieved passages, and the whole index, even mention.

Why: a floor, a reranker and pool statistics all ask "is this passage close to the question"; an
in-domain question about something the library does not hold (a fictional attribute of a real entity,
a neighbouring topic) retrieves close passages that still lack its rarest words. Inverse document
frequency over the index's own chunks weighs a word by how specific it is to this library, with no
label and no model: the IDF share and the largest IDF of the question's words missing from its top-5
set, and the share of its words absent from the whole index. Pure: the standard library (numpy only for
the matrix of many questions).
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from nomad_lab.data.kind_check import entity_terms
from nomad_lab.gate.keywords import english_stopwords

if TYPE_CHECKING:
    import numpy as np

NAMES = (
    "missing_idf_share",
    "missing_idf_max",
    "unseen_share",
    "unseen_count",
    "query_terms",
    "unseen_entity_share",
    "entity_missing_idf_max",
)
"""The feature columns, in order. ``unseen_entity_share``: the share of the question's named entities
(:func:`nomad_lab.data.kind_check.entity_terms`: names, model codes, code identifiers) holding a word the
index never contains. Why apart from ``unseen_share``: an off-topic question often borrows the library's
vocabulary ("How do closures capture variables in Rust?" against a Python manual) and differs only in
the thing it is about, which a share over every word dilutes; every corpus has names, so this reads any
library the same way. ``entity_missing_idf_max``: the largest IDF of a named entity's word that the
top-5 passages never mention (0: no entity, or every one is there): a name the library mentions in
passing elsewhere ("Java" in a Python tutorial) is rare, and absent from what the question retrieved."""

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_SUFFIXES = ("ies", "es", "s", "ing", "ed")


@functools.lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A crude, general English suffix strip so "tourniquets" matches "tourniquet" (both sides alike)."""
    word = word.split("'")[0]
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


@functools.lru_cache(maxsize=1 << 13)
def terms(text: str) -> tuple[str, ...]:
    """Content words of ``text``: lower-cased, stop words and one-letter tokens out, suffixes stripped.

    Remembered per text: a chunk is read once for every question that retrieves it (a run of 600
    questions reads each of a few hundred chunks dozens of times), and splitting it was most of the
    coverage features' time."""
    stop = english_stopwords()
    words = _WORD.findall(text.lower().replace("’", "'"))
    return tuple(stem(w) for w in words if len(w) > 1 and w not in stop)


@dataclass(frozen=True)
class Vocabulary:
    """Document frequencies of the index's chunks: ``idf(t)`` is BM25's smoothed inverse frequency."""

    frequencies: Counter
    documents: int

    @classmethod
    def of(cls, texts: Iterable[str]) -> Vocabulary:
        frequencies: Counter = Counter()
        documents = 0
        for text in texts:
            frequencies.update(set(terms(text)))
            documents += 1
        return cls(frequencies, documents)

    def idf(self, term: str) -> float:
        df = self.frequencies.get(term, 0)
        return math.log(1.0 + (self.documents - df + 0.5) / (df + 0.5))


def coverage(query: str, passages: Sequence[str], vocabulary: Vocabulary) -> list[float]:
    """The :data:`NAMES` features of one question and its top-5 passages (an empty question: zeros)."""
    asked = list(dict.fromkeys(terms(query)))
    if not asked:
        return [0.0] * len(NAMES)
    present = set()
    for passage in passages:
        present.update(terms(passage))
    weights = {t: vocabulary.idf(t) for t in asked}
    missing = [t for t in asked if t not in present]
    unseen = [t for t in asked if vocabulary.frequencies.get(t, 0) == 0]
    total = sum(weights.values())
    entities = [terms(e) for e in entity_terms(query)]
    entities = [e for e in entities if e]
    unseen_entities = sum(any(vocabulary.frequencies.get(t, 0) == 0 for t in e) for e in entities)
    entity_missing = [vocabulary.idf(t) for e in entities for t in e if t not in present]
    return [
        sum(weights[t] for t in missing) / total if total > 0 else 0.0,
        max((weights[t] for t in missing), default=0.0),
        len(unseen) / len(asked),
        float(len(unseen)),
        float(len(asked)),
        unseen_entities / len(entities) if entities else 0.0,
        max(entity_missing, default=0.0),
    ]


def coverage_matrix(
    queries: Sequence[str], passages: Sequence[Sequence[str]], vocabulary: Vocabulary
) -> np.ndarray:
    """One row of :data:`NAMES` per question."""
    import numpy as np  # heavy: the rest of this module is pure, for the portable runtime

    rows = [coverage(q, p, vocabulary) for q, p in zip(queries, passages, strict=True)]
    return np.array(rows, dtype=float).reshape(len(rows), len(NAMES))
