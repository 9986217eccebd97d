"""A learned gate made portable: everything a pipeline outside this package needs to apply it, in one JSON.

Why: a fitted gate file names its features; computing them needs this package's keyword cutter, stop
words, the reference's query expansions and, for coverage, the index's document frequencies. A portable
gate carries all of that as data, so the Python runtime (:mod:`nomad_lab.gate.runtime`, standard library
only) and the TypeScript module ``gate export --to ts`` writes compute the same features from a question
and its retrieved passages alone. A gate reading the cross-encoder carries the model's identity and
windowing (``crossEncoder``): the pipeline runs that ONNX file itself (``gate export --bundle`` ships it
with the TypeScript; the Python runtime loads it with onnxruntime). Gates whose features need any other
model at apply time (a judge, a reranker) cannot be made portable, and are refused in one line naming
those kinds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.reference import DIVERSITY_PENALTY, RAG_DEFAULT_TOP_K, RAG_MIN_FINAL_SCORE
from nomad_lab.data.kind_check import STOPWORDS as FUNCTION_WORDS
from nomad_lab.gate.coverage import NAMES as COVERAGE_NAMES
from nomad_lab.gate.keywords import QUERY_EXPANSION_DICTIONARY, english_stopwords

PORTABLE_FORMAT = "nomad-lab portable gate v1"
LEARNED_FORMAT = "nomad-lab learned gate v1"
SUFFICIENCY_FORMAT = "nomad-lab portable sufficiency v1"  # gate.portable_sufficiency
EXPORTABLE_KINDS = {
    "pool": "pool statistics and keyword overlap, from the retrieved passages",
    "scores": "the named scores of the retrieved passages",
    "coverage": "lexical coverage, from the passages and an exported vocabulary table",
    "query": "the question's embedding, which the caller passes in (the server embeds it anyway)",
}
MODEL_KINDS = {"ce": "a cross-encoder", "judge": "a judge model"}


def refuse_unportable(kinds: Iterable[str], where: str, shipped: Iterable[str] = ()) -> None:
    """One error line naming the kinds a gate reads that a pipeline cannot compute without a model
    (``shipped``: the model kinds this export carries the model of, allowed)."""
    allowed = set(shipped)
    bad = [k for k in kinds if k not in EXPORTABLE_KINDS and k not in allowed]
    if bad:
        named = ", ".join(f"{k} ({MODEL_KINDS.get(k, 'not computable outside nomad-lab')})" for k in bad)
        hint = "; a cross-encoder gate exports with --bundle DIR" if bad == ["ce"] else ""
        raise NomadLabError(
            f"{where}: cannot export a gate that reads {named}{hint}; fit one on "
            f"{', '.join(EXPORTABLE_KINDS)} features (gate fit --features pool,coverage)"
        )


def portable_gate(
    gate: Mapping[str, Any],
    where: str,
    vocabulary: tuple[int, Mapping[str, int]] | None = None,
    corpus_fingerprint: str | None = None,
    cross_encoder: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The portable form of a learned gate file's fields (``vocabulary``: documents and the document
    frequency of each term, needed when the gate reads coverage; ``cross_encoder``: the model's name,
    digest, windowing and files, needed when it reads ``ce``)."""
    refuse_unportable(gate["kinds"], where, ["ce"] if cross_encoder is not None else [])
    if "coverage" in gate["kinds"] and vocabulary is None:
        raise NomadLabError(f"{where}: the gate reads coverage: export needs its index's vocabulary")
    features = list(gate["features"])
    return {
        "format": PORTABLE_FORMAT,
        "kinds": list(gate["kinds"]),
        "features": features,
        "mean": list(gate["mean"]),
        "scale": list(gate["scale"]),
        "coef": list(gate["coef"]),
        "intercept": gate["intercept"],
        "threshold": gate["threshold"],
        "embedder": gate.get("embedder"),
        "corpusFingerprint": corpus_fingerprint or gate.get("training", {}).get("fingerprint"),
        "trainingRun": gate.get("training", {}).get("run"),
        "floor": RAG_MIN_FINAL_SCORE,
        "topK": RAG_DEFAULT_TOP_K,
        "diversityPenalty": DIVERSITY_PENALTY,
        "stopwords": sorted(english_stopwords()),
        "expansions": dict(QUERY_EXPANSION_DICTIONARY),
        "coverageNames": list(COVERAGE_NAMES),
        "functionWords": sorted(FUNCTION_WORDS),
        "vocabulary": None
        if vocabulary is None
        else {"documents": vocabulary[0], "frequencies": dict(sorted(vocabulary[1].items()))},
        "crossEncoder": dict(cross_encoder) if "ce" in gate["kinds"] and cross_encoder else None,
    }
