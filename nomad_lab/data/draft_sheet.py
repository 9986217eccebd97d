"""A blind rating sheet of drafts: a seeded sample of each source's drafts, shuffled, sources hidden.

Why blind: whether a model drafts better questions than the templates is decided by a rater reading
them, and a rater who knows which came from the model rates what they expect (issue 43). The sheet
holds, per row, only what a rater needs: an opaque id, whether the draft asks for an answer or a
refusal, the question, its document's id and title, and an excerpt of that document. Which source
wrote each row is in a key kept apart (:func:`rating_sheet` returns it separately), read only when the
verdicts are counted (:mod:`nomad_lab.eval.gating.draft_rates`).

Sources and kinds (never blended when counted): ``template`` is every draft the rules wrote from the
document (heading and sentence forms, fictional attributes, swapped entities), ``model`` every draft a
language model wrote (``llm:``, ``llm-refusal:``); the bank's questions are drafted from no document of
the library and are left out. Each (source, kind) group is sampled on its own, so the sheet has the same
number of each where the drafts allow.

Why an excerpt chosen by the question, the same way for every row: the model's drafts carry their
answer sentence and the templates do not, so showing it would tell the sources apart. The excerpt is the
:data:`EXCERPT_SENTENCES` prose sentences around the one sharing most content words with the question.

Pure: standard library only.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from nomad_lab.data.draft_text import doc_text
from nomad_lab.data.golden_suites import Golden
from nomad_lab.data.sentence_units import content_words

__all__ = ["EXCERPT_SENTENCES", "KINDS", "SOURCES", "excerpt", "rating_sheet", "source_of"]

SOURCES = ("template", "model")
KINDS = ("answerable", "refusal")
EXCERPT_SENTENCES = 7
"""Sentences shown around the best-matching one: a paragraph or two, enough to judge most questions."""
_MODEL_KINDS = ("llm", "llm-refusal")
_TEMPLATE_KINDS = ("template", "fictional-attribute", "swap")


def source_of(draft: Golden) -> str | None:
    """``model`` or ``template`` for a draft written from a document of the library; None otherwise
    (the bank's questions, a labelled golden)."""
    if draft.draft is None or draft.draft.doc is None:
        return None
    kind = draft.draft.kind
    return "model" if kind in _MODEL_KINDS else "template" if kind in _TEMPLATE_KINDS else None


def excerpt(question: str, sentences: Sequence[str], size: int = EXCERPT_SENTENCES) -> str:
    """``size`` consecutive sentences centred on the first sentence sharing the most content words with
    ``question`` (the document's first ones when none shares a word)."""
    if not sentences:
        return ""
    asked = set(content_words(question))
    shared = [len(asked & set(content_words(s))) for s in sentences]
    best = shared.index(max(shared))
    first = max(0, min(best - size // 2, len(sentences) - size))
    return " ".join(sentences[first : first + size])


def rating_sheet(
    drafts: Sequence[Golden], texts: Mapping[str, str], per_group: int, seed: int
) -> tuple[list[dict[str, Any]], dict[str, dict[str, str]]]:
    """The sheet's rows and its key (row id -> source, kind, draft id, generator).

    Up to ``per_group`` drafts of each (source, kind) are drawn with ``random.Random(f"{seed}:{source}:
    {kind}")`` from the drafts in file order, then all are shuffled with ``random.Random(f"{seed}:order")``
    and numbered in that order (``r001`` ...), so a row's id says nothing of its source. ``texts`` maps a
    document id to its text."""
    groups: dict[tuple[str, str], list[Golden]] = {}
    for draft in drafts:
        if (source := source_of(draft)) is not None:
            kind = "refusal" if draft.expect_refusal else "answerable"
            groups.setdefault((source, kind), []).append(draft)
    picked: list[tuple[str, str, Golden]] = []
    for (source, kind), members in sorted(groups.items()):
        rng = random.Random(f"{seed}:{source}:{kind}")
        picked += [(source, kind, d) for d in rng.sample(members, min(per_group, len(members)))]
    random.Random(f"{seed}:order").shuffle(picked)
    parsed = {doc: doc_text(doc, text) for doc, text in texts.items()}
    rows, key = [], {}
    for number, (source, kind, draft) in enumerate(picked, 1):
        row_id = f"r{number:03d}"
        doc = parsed[draft.draft.doc]
        rows.append(
            {
                "id": row_id,
                "kind": kind,
                "question": draft.query,
                "doc": doc.doc_id,
                "title": doc.title,
                "excerpt": excerpt(draft.query, doc.sentences),
            }
        )
        key[row_id] = {"source": source, "kind": kind, "draft": draft.id, "generator": draft.draft.source}
    return rows, key
