"""Training and scoring pairs for the sufficiency check: (question, sentence unit) pairs, labelled by
whether the unit states the answer.

Why this shape: the check scores a question by its best unit among the few its top-5 passages offer
(:func:`nomad_lab.retrieval.sufficiency_model.question_units`), so those units are the scoring pairs.
The model must learn containment, not relevance, so its negatives are chosen to be relevant and still
not answer: the other sentences of the answer's own document, and the same question with its entity or
asked attribute swapped, paired with the very sentence that answered the original (the near-miss
sentence about the right entity). Training examples, per fold, from:

- **goldens (training fold only)**: an answerable question's units from its relevant documents that
  hold one of its required answer patterns (``mustInclude``) are positives; its chosen units from other
  documents holding no pattern are negatives; refusals' :data:`HARDEST` chosen units (by the zero-shot
  logit) are negatives; entity/attribute swaps of its questions
  (:func:`nomad_lab.data.synthetic_refusals.swap_questions`) paired with its answer units are negatives;
- **pseudo-questions from the corpus** (no golden read): every sentence a drafting template turns into
  a question (:func:`nomad_lab.data.draft_forms.sourced_questions`, and the cloze form
  :func:`~nomad_lab.data.draft_forms.cloze_question`) gives a positive (the question, its
  source sentence's unit), :data:`SAME_DOC` negatives (the units of the same document sharing most of
  its words, the source excluded) and its swaps paired with the source unit. They hold no label of any
  golden, so every fold reads all of them.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from nomad_lab.data.draft_forms import cloze_question, sourced_questions
from nomad_lab.data.draft_text import doc_text
from nomad_lab.data.drafts import read_corpus
from nomad_lab.data.golden_suites import load_suites
from nomad_lab.data.sentence_units import choose_units, content_words, passage_sentences, passage_units
from nomad_lab.data.synthetic_refusals import answers_swap, swap_questions
from nomad_lab.eval.gating.run_data import RunData
from nomad_lab.retrieval.sufficiency_model import question_units
from nomad_lab.services.verdict_cache import judged_set
from nomad_lab.studies.gating.answer_pairs import Examples, stored_run

GOLD_CHUNKS = 3
"""Relevant-document chunks of a pool searched for answer units (best ranked first)."""
POSITIVES = 2
REPAIRS = 3
HARDEST = 3
SAME_DOC = 2
PSEUDO = 3000
"""Pseudo-questions drawn (seeded) from a corpus's templates: thousands, each with its source unit."""
PER_DOC = 80
NEIGHBOURS = 12
"""Same-document negatives come from the units this close to the source (its section: the hardest)."""
ANSWER_SHARE = 0.5


@dataclass(frozen=True)
class UnitQuestion:
    """One question of a run: ``units`` the (doc id, unit) pairs its check reads, ``answers`` the units of
    its relevant documents in its pool that hold a required answer pattern."""

    id: str
    query: str
    expect_refusal: bool
    kind: str
    relevant: tuple[str, ...]
    must_include: tuple[re.Pattern[str], ...]
    units: list[tuple[str | None, str]] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)

    @property
    def answer_read(self) -> bool:
        """Whether a unit the check reads holds a required answer pattern (from a relevant document)."""
        return any(doc in self.relevant and _holds(self, u) for doc, u in self.units)


def _holds(q: UnitQuestion, unit: str) -> bool:
    return any(p.search(unit) for p in q.must_include)


def run_questions(
    store_path: str | Path,
    data: RunData,
    kinds: Sequence[str],
    goldens_dir: str | Path | None,
    suite: str,
    k: int,
) -> list[UnitQuestion]:
    """The run's questions in pool order with the units they read and their answer units."""
    patterns = {g.id: g.must_include for g in load_suites(goldens_dir, suite)} if goldens_dir else {}
    out = []
    cases, stored, chunks = stored_run(store_path, data.run_id)
    for gid, query, kind in zip(data.pools.ids, data.queries, kinds, strict=True):
        case = cases[gid]
        entries = stored.get(gid, [])
        top = judged_set(entries, chunks, 0.0)
        chosen = set(question_units(query, [c.text for c in top], k))
        units = [(c.doc_id, u) for c in top for u in passage_units(c.text) if u in chosen]
        units = list(dict.fromkeys(units))
        q = UnitQuestion(gid, query, case.expect_refusal, kind, case.relevant_doc_ids, patterns.get(gid, ()))
        gold = [e for e in sorted(entries, key=lambda e: e.rank) if e.doc_id in case.relevant_doc_ids]
        texts = [chunks[e.chunk_id].text for e in gold[:GOLD_CHUNKS] if e.chunk_id in chunks]
        texts += [c.text for c in top if c.doc_id in case.relevant_doc_ids]
        answers = [u for t in texts for u in passage_units(t) if _holds(q, u)]
        out.append(
            UnitQuestion(
                q.id, q.query, q.expect_refusal, q.kind, q.relevant, q.must_include, units,
                list(dict.fromkeys(answers))[:POSITIVES],
            )
        )  # fmt: skip
    return out


@dataclass(frozen=True)
class Pseudo:
    """A question drafted from a corpus sentence: ``source`` the unit holding that sentence, ``others``
    the same document's units sharing most of its words (negatives)."""

    id: str
    query: str
    source: str
    others: tuple[str, ...]
    expect_refusal: bool = False


def pseudo_questions(corpus_dir: str | Path, seed: int, limit: int = PSEUDO) -> list[Pseudo]:
    """Up to ``limit`` pseudo-questions of the corpus: a seeded sample of every template question, at
    most :data:`PER_DOC` per document (so a long book does not make most of them)."""
    corpus = read_corpus(corpus_dir)
    found = []
    for doc in corpus.docs:
        units = passage_units(doc.text)
        at_sentence = {
            " ".join(sentence.split()): i for i, (_, sentence) in enumerate(passage_sentences(doc.text))
        }
        text = doc_text(doc.doc_id, doc.text)
        cloze = [(s, q) for s in text.sentences if (q := cloze_question(s))]
        made = []
        for n, (sentence, question) in enumerate([*sourced_questions(text), *cloze]):
            at = at_sentence.get(" ".join(sentence.split()))
            if at is None:
                continue
            flat = " ".join(sentence.split())
            span = range(max(0, at - NEIGHBOURS), min(len(units), at + NEIGHBOURS + 1))
            answer = set(content_words(sentence)) - set(content_words(question))
            near = [i for i in span if not _states(units[i], flat, answer)]
            picked = choose_units(question, [units[i] for i in near], SAME_DOC)
            made.append(
                Pseudo(f"pseudo:{doc.doc_id}:{n}", question, units[at], tuple(units[near[i]] for i in picked))
            )
        random.Random(f"{seed}:{doc.doc_id}").shuffle(made)
        found += made[:PER_DOC]
    random.Random(seed).shuffle(found)
    return found[:limit]


def _states(unit: str, sentence: str, answer: set[str]) -> bool:
    """Whether a unit may state a pseudo-question's answer too: it holds the source sentence (the next
    unit does, as context) or half the source's words the question left out (the answer's words)."""
    if sentence in " ".join(unit.split()):
        return True
    return bool(answer) and len(answer & set(content_words(unit))) >= ANSWER_SHARE * len(answer)


def pseudo_examples(pseudo: Sequence[Pseudo], seed: int) -> Examples:
    """The pseudo-questions' pairs: source unit (1), same-document units (0), swaps on the source (0)."""
    ex = Examples()
    for p in pseudo:
        ex.add(p.query, [p.source], 1, "pseudo")
        ex.add(p.query, p.others, 0, "pseudo-same-doc")
    by_id = {p.id: p for p in pseudo}
    for swap in swap_questions(pseudo, seed, per_question=1):
        source = by_id[swap.source_id].source
        if not answers_swap(swap, source):
            ex.add(swap.text, [source], 0, f"pseudo-swap-{swap.kind}")
    return ex


def golden_examples(
    questions: Sequence[UnitQuestion], train: np.ndarray, zero_shot: dict[tuple[str, str], float], seed: int
) -> Examples:
    """The training fold's golden pairs: only ``questions[train]`` are read."""
    chosen = [questions[i] for i in train]
    ex = Examples()
    for q in chosen:
        if q.expect_refusal:
            units = sorted({u for _, u in q.units}, key=lambda u: -zero_shot[(q.query, u)])
            ex.add(q.query, units[:HARDEST], 0, "refusal")
            continue
        ex.add(q.query, q.answers, 1, "gold")
        lacking = [u for doc, u in q.units if doc not in q.relevant and not _holds(q, u)]
        random.Random(f"{seed}:{q.id}").shuffle(lacking)
        ex.add(q.query, lacking[:REPAIRS], 0, "re-paired")
    by_id = {q.id: q for q in chosen}
    for swap in swap_questions([q for q in chosen if q.answers], seed):
        units = [u for u in by_id[swap.source_id].answers if not answers_swap(swap, u)]
        ex.add(swap.text, units, 0, f"swap-{swap.kind}")
    return ex


def scoring_pairs(questions: Sequence[UnitQuestion]) -> list[tuple[str, str]]:
    return [(q.query, u) for q in questions for _, u in q.units]
