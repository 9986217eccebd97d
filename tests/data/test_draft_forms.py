"""The draft forms people rejected cannot come back, on either shipped corpus, and drafts stay English.

Properties, not goldens: every question a form makes from the default corpus and from pydocs is read
against the retired list (:data:`nomad_lab.data.draft_forms.RETIRED`) and the context-free check, and
every drafted question against grammar rules a person would apply (a capital and a final mark, articles
lowered inside a question, a plural after "how many", balanced brackets).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from nomad_lab.core.workspace import PROJECT_ROOT
from nomad_lab.data.corpus import load_corpus
from nomad_lab.data.draft_forms import (
    RETIRED,
    context_free,
    definition_question,
    heading_question,
    modal_question,
    quantity_question,
    retired_form,
    sourced_questions,
)
from nomad_lab.data.draft_text import DocText, doc_text, well_formed
from nomad_lab.data.drafts import draft_goldens, read_corpus

CORPORA = ("datasets/corpus", "datasets/corpora/pydocs/corpus")

REJECTED = {  # what people threw away (issue 43), each caught by the retired form named
    "What does the Sharpening a Knife documentation say about method?": "documentation say about",
    "What does Python Tutorial say about Syntax Errors?": "documentation say about",
    "Tell me about recognise life-threatening bleeding in Controlling Severe Bleeding.": "tell me about",
    "Dehydrating Food: how do temperatures work?": "TITLE: how does",
    "What is the warranty period of Walden (excerpt)?": "editorial note",
    "What is boiling?": "one-word definition",
    "What is the antenna?": "pointing definition",
    "What is another helpful tool?": "pointing definition",
    "What is storing water ahead of time?": "gerund definition",
}


@cache
def parsed(corpus: str) -> tuple[DocText, ...]:
    return tuple(doc_text(d.doc_id, d.text) for d in load_corpus(PROJECT_ROOT / corpus).docs)


@cache
def drafted(corpus: str) -> tuple[dict, ...]:
    return tuple(draft_goldens(read_corpus(PROJECT_ROOT / corpus)).drafts)


def test_each_rejected_draft_is_caught_by_its_retired_form() -> None:
    for question, form in REJECTED.items():
        assert form in (retired_form(question) or ""), question
    assert all(r.why for r in RETIRED)
    kept = ("What is a tourniquet?", "What is SKYWARN?", "What are the signs of infection?")
    assert [q for q in kept if retired_form(q)] == []


@pytest.mark.parametrize("corpus", CORPORA)
def test_no_form_makes_a_retired_question_on_a_shipped_corpus(corpus: str) -> None:
    made = [q for doc in parsed(corpus) for h in doc.headings if (q := heading_question(doc, h))]
    made += [q for doc in parsed(corpus) for _, q in sourced_questions(doc)]
    assert len(made) > 50
    assert [(q, retired_form(q)) for q in made if retired_form(q)] == []


@pytest.mark.parametrize("corpus", CORPORA)
def test_drafts_are_neither_retired_nor_context_free_and_read_as_english(corpus: str) -> None:
    docs = {d.doc_id: d for d in parsed(corpus)}
    drafts = drafted(corpus)
    answerable = [d for d in drafts if d["draft"]["source"].startswith("template")]
    assert len(answerable) >= len(docs) // 2  # the retirements leave one for every other document
    assert [d["query"] for d in drafts if retired_form(d["query"])] == []
    assert [d["query"] for d in answerable if context_free(d["query"], docs[d["draft"]["doc"]])] == []
    for draft in answerable:
        question = draft["query"]
        assert well_formed(question) is None, question
        assert not re.search(r"\s(?:A|An|The)\s+[a-z]", question), question  # articles lowered inside
        assert not re.search(r"\bhow many (?:inch|foot|hour|day|minute|litre|gallon|mile)\b", question)
        assert not re.search(r"\s[:;,]\s*\w*\?$|\s:", question), question  # no clause cut at its mark


def test_a_gap_that_does_not_say_what_it_is_about_is_not_drafted() -> None:
    text = (
        "# Ridgeline R4 Portable Power Station\n\n## Charging\n\nCharging from empty takes roughly 5 hours.\n"
    )
    doc = doc_text("r4", text)
    question = quantity_question(doc.sentences[0])
    assert question == "Charging from empty takes roughly how many hours?"
    assert context_free(question, doc)
    assert not context_free("The Ridgeline R4 charges in how many hours?", doc)


def test_an_editorial_note_never_reaches_a_draft(tmp_path: Path) -> None:
    folder = tmp_path / "corpus"
    folder.mkdir()
    body = "The Old Mill Pond is a quiet place where Henry Ashford fished every morning in June.\n"
    (folder / "walden.md").write_text(f"# Walden (excerpt)\n\n{body}\n## Economy (continued)\n\n{body}")
    drafts = draft_goldens(read_corpus(folder)).drafts
    assert drafts and not [d["query"] for d in drafts if re.search(r"\((?:excerpt|continued)\)", d["query"])]


def test_the_forms_that_stay_read_as_a_person_asks() -> None:
    doc = doc_text("x", "# Water\n\n## How to purify water\n\n## When to stop\n\n## Signs of infection\n")
    asked = [heading_question(doc, h) for h in doc.headings]
    assert asked == ["How do I purify water?", None, "What are the signs of infection?"]
    assert definition_question("A tourniquet is a band that stops bleeding.") == "What is a tourniquet?"
    assert definition_question("Boiling is the surest way to kill germs.") is None
    assert definition_question("The antenna is the most important part.") is None
    assert modal_question("A module can contain executable statements as well.") == (
        "Can a module contain executable statements as well?"
    )
    assert quantity_question("Keep the jars covered by at least 1 inch of water.") == (
        "Keep the jars covered by at least how many inches of water?"
    )
