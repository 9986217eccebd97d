"""Apply a saved gate in any Python RAG pipeline: ``load(path).keep(question, passages)``.

Why a runtime apart from ``gate apply``: a pipeline should not need the workbench (numpy, DuckDB, the
store) to ask one question "do these passages go into the prompt?". This module and what it imports
are the standard library and this package's pure keyword and coverage code, and its features are the
ones ``gate fit`` learned on, computed from the question and its retrieved passages alone: the same
numbers the batch code computes over a stored run (tests hold it to ``gate apply`` within 1e-9).

``passages`` is the whole retrieved pool in rank order, best first, before any floor: mappings (or
objects) with ``score`` (the final score your stack ranks by), and as the gate reads them ``text``,
``semanticScore``, ``source`` (the diversity key: the document the passage came from) and ``scores``
(named scores). A gate reading the query embedding takes ``query_vector``, made by the embedder the gate
file names. The framework adapters (``nomad_lab.frameworks``) call this.

A gate reading the cross-encoder (``ce``) runs it here, on the top set's passages, as the workbench scored
them (:class:`nomad_lab.gate.pair_model.PortableCrossEncoder`: the same files, checked by digest, windows
and pair encoding); that needs onnxruntime and tokenizers (``pip install nomad-lab[runtime]``), imported
only when such a gate first scores. ``load(path, model_dir=...)`` points it at another copy of the model.

A portable sufficiency check (``gate export sufficiency:... --to json``) loads here too, as a
:class:`nomad_lab.gate.portable_sufficiency.SufficiencyCheck` (it reads the passages' text only, runs the
ms-marco body with onnx, onnxruntime and tokenizers, and says what its action does with a "no");
:func:`apply_check` is the framework adapters' step for it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from nomad_lab.core.errors import NomadLabError
from nomad_lab.gate.coverage import NAMES as COVERAGE_NAMES
from nomad_lab.gate.coverage import Vocabulary, coverage
from nomad_lab.gate.keywords import keyword_overlap
from nomad_lab.gate.portable import LEARNED_FORMAT, PORTABLE_FORMAT, SUFFICIENCY_FORMAT, portable_gate
from nomad_lab.gate.reference_ranking import Candidate, apply_relevance_floor, apply_source_diversity

QUERY_DIM = re.compile(r"query_\d+")
TOP_SCORES = 10  # as nomad_lab.gate.features.TOP_SCORES (sorted final and semantic scores)
SCORE_TOP = 5  # sorted values per named score column (the scores kind)


def _field(passage: Any, name: str, default: Any = None) -> Any:
    if isinstance(passage, Mapping):
        return passage.get(name, default)
    return getattr(passage, name, default)


def _sorted_top(values: Sequence[float], k: int) -> list[float]:
    ordered = sorted(values, reverse=True)[:k]
    return ordered + [0.0] * (k - len(ordered))  # a missing candidate scores 0


def _pool_features(passages: Sequence[Any], floor: float, k: int, top_k: int) -> dict[str, float]:
    scores = [float(_field(p, "score")) for p in passages]
    final = _sorted_top(scores, k)
    semantic = _sorted_top([float(_field(p, "semanticScore", _field(p, "score"))) for p in passages], k)
    top = final[:top_k]
    mean = sum(top) / len(top)
    std = math.sqrt(sum((x - mean) * (x - mean) for x in top) / len(top))
    pool_mean = sum(scores) / len(scores) if scores else 0.0
    out = {f"final_{i + 1}": v for i, v in enumerate(final)}
    out |= {f"semantic_{i + 1}": v for i, v in enumerate(semantic)}
    out |= {
        "gap_1_2": final[0] - final[1],
        f"mean_top{top_k}": mean,
        f"std_top{top_k}": std,
        "nqc": std / abs(mean) if abs(mean) > 1e-9 else 0.0,
        "wig": mean - pool_mean,
        "above_floor": float(sum(1 for s in scores if s >= floor)),
        "pool_size": float(len(scores)),
    }
    return out


@dataclass(frozen=True)
class Gate:
    """A loaded gate: :meth:`keep` decides, :meth:`score` is its P(on topic), :meth:`features` its inputs."""

    data: Mapping[str, Any]
    vocabulary: Vocabulary | None
    model_dir: str | Path | None = None

    @property
    def threshold(self) -> float:
        return float(self.data["threshold"])

    @cached_property
    def cross_encoder(self) -> Any:
        """The gate's cross-encoder, loaded on first use (None: the gate reads none)."""
        spec = self.data.get("crossEncoder")
        if not spec:
            return None
        from nomad_lab.gate.pair_model import PortableCrossEncoder  # heavy: numpy, for ce only

        return PortableCrossEncoder(spec, self.model_dir)

    def top_set(self, passages: Sequence[Any]) -> list[str]:
        """The texts retrieval returns at floor 0 (source diversity, then the top k): what the keyword
        overlap and coverage features read, as they are read from a stored run."""
        candidates = [
            Candidate(
                text=_field(p, "text") or "",
                semantic_score=float(_field(p, "semanticScore", _field(p, "score"))),
                source=_field(p, "source"),
                score=float(_field(p, "score")),
            )
            for p in passages
        ]
        kept = apply_source_diversity(apply_relevance_floor(candidates, 0.0).kept)
        return [c.text for c in kept[: int(self.data["topK"])]]

    def features(
        self, question: str, passages: Sequence[Any], query_vector: Sequence[float] | None = None
    ) -> dict[str, float]:
        """Every feature the gate reads, by name."""
        d, out = self.data, {}
        wanted = set(d["features"])
        out |= _pool_features(passages, float(d["floor"]), TOP_SCORES, int(d["topK"]))
        if "keyword_overlap" in wanted or self.vocabulary is not None or "ce" in d["kinds"]:
            texts = self.top_set(passages)
            out["keyword_overlap"] = keyword_overlap(question, texts)
            if self.vocabulary is not None:
                out |= dict(zip(COVERAGE_NAMES, coverage(question, texts, self.vocabulary), strict=True))
            if "ce" in d["kinds"]:
                if self.cross_encoder is None:
                    raise NomadLabError("this gate reads the cross-encoder: load its gate export --to json")
                out |= self.cross_encoder.features(question, texts)
        for name in {f.removeprefix("score_").rsplit("_", 1)[0] for f in wanted if f.startswith("score_")}:
            values = [float(_field(p, "scores", {})[name]) for p in passages]
            out |= {f"score_{name}_{i + 1}": v for i, v in enumerate(_sorted_top(values, SCORE_TOP))}
        if any(QUERY_DIM.fullmatch(f) for f in wanted):  # query_0 ... (not coverage's query_terms)
            if query_vector is None:
                raise NomadLabError("this gate reads the query embedding: pass query_vector")
            out |= {f"query_{i}": float(v) for i, v in enumerate(query_vector)}
        return out

    def score(
        self, question: str, passages: Sequence[Any], query_vector: Sequence[float] | None = None
    ) -> float:
        """P(on topic): standardize, dot, sigmoid, as the gate file's numbers say."""
        d = self.data
        x = self.features(question, passages, query_vector)
        logit = float(d["intercept"])
        for name, mean, scale, coef in zip(d["features"], d["mean"], d["scale"], d["coef"], strict=True):
            logit += (x[name] - mean) / scale * coef
        return 1.0 / (1.0 + math.exp(-min(500.0, max(-500.0, logit))))

    def keep(
        self, question: str, passages: Sequence[Any], query_vector: Sequence[float] | None = None
    ) -> bool:
        """Whether the passages go into the prompt (all of them) or none do."""
        return self.score(question, passages, query_vector) >= self.threshold


def load(path: str | Path, model_dir: str | Path | None = None) -> Any:
    """A gate from a portable file (``gate export --to json``) or a learned gate file (``gate fit``; one
    reading coverage needs the portable export, which carries its vocabulary, and one reading the
    cross-encoder the export naming its model; ``model_dir``: the model's folder, if not where the export
    found it). A portable sufficiency check (``gate export sufficiency:... --to json``) loads as a
    :class:`nomad_lab.gate.portable_sufficiency.SufficiencyCheck`: the same ``keep``, and ``decide``
    for its action and prompt note."""
    where = str(path)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise NomadLabError(f"{where}: cannot read a gate file: {exc}") from None
    if isinstance(data, dict) and data.get("format") == SUFFICIENCY_FORMAT:
        from nomad_lab.gate.portable_sufficiency import SufficiencyCheck  # heavy: numpy, onnx when run

        return SufficiencyCheck(data, model_dir)
    if not isinstance(data, dict) or data.get("format") not in (PORTABLE_FORMAT, LEARNED_FORMAT):
        raise NomadLabError(
            f"{where}: not a gate file ({PORTABLE_FORMAT!r}, {LEARNED_FORMAT!r} or {SUFFICIENCY_FORMAT!r})"
        )
    if data["format"] == LEARNED_FORMAT:
        data = portable_gate(data, where)
    vocabulary = data.get("vocabulary")
    if vocabulary is None:
        return Gate(data, None, model_dir)
    from collections import Counter

    counts = Vocabulary(Counter(vocabulary["frequencies"]), int(vocabulary["documents"]))
    return Gate(data, counts, model_dir)


NOTE_KEY = "sufficiency_note"
"""The metadata key the framework adapters put a sufficiency check's prompt note under."""


def apply_check(
    gate: Any, question: str, items: Sequence[Any], text: Any, with_note: Any
) -> list[Any] | None:
    """A framework adapter's step for a sufficiency check (a loaded object with ``decide``): the items
    kept, each with the prompt note through ``with_note(item, note)`` when the action notes a "no"
    (``text(item)``: its passage text); None for any other gate, which the adapter applies itself."""
    if not hasattr(gate, "decide"):
        return None
    decision = gate.decide(question, [text(item) for item in items])
    if not decision.keep:
        return []
    return list(items) if decision.note is None else [with_note(item, decision.note) for item in items]
