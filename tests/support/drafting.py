"""Drafts of the small fixture library for the labelling tests: the templates plus a scripted stand-in
for ``goldens draft --backend``.

Why a stand-in model: with the heading frames people rejected retired (``nomad_lab.data.draft_forms``),
the five fixture documents draft two template questions, fewer than a sitting's first rounds deal;
model drafts are how a library with bare headings gets answerable drafts, so the sittings here take
theirs from a chat that answers the drafting prompt as a model would (a question in its own words, the
passage's first sentence as the answer), with no model loaded.
"""

from __future__ import annotations

import itertools
import re

from nomad_lab.data.corpus import Corpus
from nomad_lab.data.drafts import DraftOptions, DraftResult, draft_goldens

SPEC = "test:scripted"


def scripted_chat():
    """A ``Chat`` answering :data:`nomad_lab.data.model_drafts.PROMPT` with QUESTION and ANSWER lines,
    and a read-back (the reader's prompt, ``nomad_lab.data.reader_quote``) with the first sentence shown:
    the passage's first sentence, its own answer."""
    count = itertools.count(1)

    def chat(prompt: str) -> str:
        if prompt.startswith("Sentences from"):
            return prompt.split("\n- ", 1)[1].split("\n", 1)[0]
        title = re.search(r'is from "(.+?)":', prompt).group(1)
        passage = prompt.split("\n\n")[1]
        first = re.split(r"(?<=[.!?])\s+(?=[A-Z\"'(])", passage)[0]  # as drafting splits sentences
        topic = " ".join(w for w in title.split() if w.lower() not in {"it", "its", "they"})
        return f"QUESTION: Which point of {topic} comes first in part {next(count)}?\nANSWER: {first}"

    return chat


def fixture_drafts(corpus: Corpus, **options) -> DraftResult:
    """The fixture library's drafts with ``options`` (``DraftOptions`` fields) and scripted model drafts."""
    return draft_goldens(corpus, options=DraftOptions(**options), chat=scripted_chat(), chat_spec=SPEC)
