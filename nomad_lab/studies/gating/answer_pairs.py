"""Training and scoring pairs for the answerability gate, from a stored run (and the bank's run).

Why this shape: the gate scores a question by the best answerability logit over the windows of its
judged top-5 passages (what the answer is generated from), so those windows are the scoring pairs.
Training examples are built per fold from the training questions only:

- positives: an answerable question with the windows of its relevant documents' chunks in its pool
  that hold one of its required answer patterns (``mustInclude``), else its best such window by the
  zero-shot model (the gold document's best passage);
- negatives: refusal questions' windows; the out-of-scope bank's windows (always training-side);
  entity/attribute swaps of training questions paired with the source's positive windows when the
  window does not name what was swapped in (:mod:`nomad_lab.data.synthetic_refusals`); and each
  training question re-paired with retrieved windows that lack its answer (not a relevant document,
  no required pattern), at most :data:`REPAIRS` per question, drawn with a fixed seed.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.data.golden_suites import load_suites
from nomad_lab.data.synthetic_refusals import answers_swap, lacks_answer, swap_questions
from nomad_lab.eval.gating.run_data import RunData
from nomad_lab.retrieval.answer_model import passage_windows
from nomad_lab.services.verdict_cache import judged_set
from nomad_lab.store import Store

GOLD_CHUNKS = 3
"""Relevant-document chunks of a pool read for positives (best ranked first)."""
POSITIVES = 2
REPAIRS = 3
HARDEST = 3
"""Windows of a refusal or bank question kept as negatives: the ones the zero-shot model rates highest
(the gate scores a question by its best window, so those are the ones that leak)."""


@dataclass(frozen=True)
class Question:
    """One question of a run with its windows: ``top`` = (doc id, window) of its judged top-5 set at
    floor 0, ``gold`` = windows of its relevant documents' chunks in its pool."""

    id: str
    query: str
    expect_refusal: bool
    tags: tuple[str, ...]
    relevant: tuple[str, ...]
    must_include: tuple[re.Pattern[str], ...]
    top: list[tuple[str | None, str]] = field(default_factory=list)
    gold: list[str] = field(default_factory=list)


def stored_run(
    store_path: str | Path, run_id: str
) -> tuple[dict[str, Any], dict[str, list[Any]], dict[str, Any]]:
    """A run's cases by golden id, its stored pools and its index's chunks by id: what the answerability
    and the sufficiency pairs both cut a question's passages from (read at once, the store closed after)."""
    with Store(store_path, read_only=True) as store:
        run = store.get_run(run_id)
        cases = {c.golden_id: c for c in store.get_cases(run_id)}
        stored = store.get_pools(run_id)
        chunks = {c.chunk_id: c for c in store.get_chunks(run.fingerprint)}
    return cases, stored, chunks


def run_questions(
    store_path: str | Path, data: RunData, goldens_dir: str | Path | None, suite: str
) -> list[Question]:
    """The run's questions in pool order, with their windows and (from the goldens) answer patterns."""
    patterns = {}
    if goldens_dir is not None:
        patterns = {g.id: g.must_include for g in load_suites(goldens_dir, suite)}
    out = []
    cases, stored, chunks = stored_run(store_path, data.run_id)
    for gid, query in zip(data.pools.ids, data.queries, strict=True):
        case = cases[gid]
        entries = stored.get(gid, [])
        top = [(c.doc_id, w) for c in judged_set(entries, chunks, 0.0) for w in passage_windows(c.text)]
        gold_chunks = [e for e in sorted(entries, key=lambda e: e.rank) if e.doc_id in case.relevant_doc_ids]
        gold = [
            w
            for e in gold_chunks[:GOLD_CHUNKS]
            if e.chunk_id in chunks
            for w in passage_windows(chunks[e.chunk_id].text)
        ]
        out.append(
            Question(
                gid,
                query,
                case.expect_refusal,
                case.tags,
                case.relevant_doc_ids,
                patterns.get(gid, ()),
                top,
                gold,
            )
        )
    return out


def positive_windows(question: Question, zero_shot: dict[tuple[str, str], float]) -> list[str]:
    """The gold windows holding a required answer pattern (at most :data:`POSITIVES`), else the one the
    zero-shot model rates best; none for a refusal or a question whose pool has no relevant chunk."""
    if question.expect_refusal or not question.gold:
        return []
    holding = [w for w in question.gold if any(p.search(w) for p in question.must_include)]
    if holding:
        return holding[:POSITIVES]
    return [max(question.gold, key=lambda w: zero_shot[(question.query, w)])]


def repaired_windows(question: Question, seed: int) -> list[str]:
    """Retrieved windows that lack the question's answer, at most :data:`REPAIRS`, drawn with ``seed``."""
    lacking = [w for doc, w in question.top if lacks_answer(w, doc, question.relevant, question.must_include)]
    lacking = list(dict.fromkeys(lacking))
    random.Random(f"{seed}:{question.id}").shuffle(lacking)
    return lacking[:REPAIRS]


def hardest_windows(question: Question, zero_shot: dict[tuple[str, str], float]) -> list[str]:
    """The question's :data:`HARDEST` retrieved windows by zero-shot logit (a refusal's negatives)."""
    windows = list(dict.fromkeys(w for _, w in question.top))
    return sorted(windows, key=lambda w: -zero_shot[(question.query, w)])[:HARDEST]


@dataclass
class Examples:
    """Training pairs and labels (1: the passage, or sentence unit, states the answer) with each pair's
    source kind; the answerability and sufficiency studies build theirs alike."""

    pairs: list[tuple[str, str]] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)

    def add(self, question: str, windows: Sequence[str], label: int, kind: str) -> None:
        for w in windows:
            self.pairs.append((question, w))
            self.labels.append(label)
            self.kinds.append(kind)

    def counts(self) -> dict[str, int]:
        return {k: self.kinds.count(k) for k in dict.fromkeys(self.kinds)}


def training_examples(
    questions: Sequence[Question],
    train: np.ndarray,
    bank: Sequence[Question],
    zero_shot: dict[tuple[str, str], float],
    seed: int,
) -> Examples:
    """Every training pair of a fold: only ``questions[train]`` (and the bank) are read."""
    chosen = [questions[i] for i in train]
    ex = Examples()
    positives = {q.id: positive_windows(q, zero_shot) for q in chosen}
    for q in chosen:
        if q.expect_refusal:
            ex.add(q.query, hardest_windows(q, zero_shot), 0, "refusal")
        else:
            ex.add(q.query, positives[q.id], 1, "gold")
            ex.add(q.query, repaired_windows(q, seed), 0, "re-paired")
    for q in bank:
        ex.add(q.query, hardest_windows(q, zero_shot), 0, "bank")
    by_id = {q.id: q for q in chosen}
    for swap in swap_questions([q for q in chosen if positives.get(q.id)], seed):
        windows = [w for w in positives[swap.source_id] if not answers_swap(swap, w)]
        ex.add(swap.text, windows, 0, f"swap-{swap.kind}")
        assert swap.source_id in by_id  # swaps come from training questions only
    return ex


def scoring_pairs(questions: Sequence[Question]) -> list[tuple[str, str]]:
    return [(q.query, w) for q in questions for _, w in q.top]


def best_per_question(questions: Sequence[Question], logits: dict[tuple[str, str], float]) -> np.ndarray:
    """Each question's best logit over its top-5 windows (NaN: nothing retrieved)."""
    return np.array(
        [max((logits[(q.query, w)] for _, w in q.top), default=np.nan) for q in questions], dtype=float
    )
