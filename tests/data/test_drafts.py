"""Drafted goldens: they load only when asked, carry their mark and source, never repeat a golden, and
the same seed writes the same file; a missing, empty or unreadable corpus is a one-line error."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from nomad_lab.cli import main
from nomad_lab.data.bank import NearDuplicateIndex, load_bank, near_duplicates
from nomad_lab.data.corpus import CorpusError
from nomad_lab.data.drafts import (
    ATTRIBUTES,
    DraftOptions,
    draft_goldens,
    existing_goldens,
    read_corpus,
    write_drafts,
)
from nomad_lab.data.golden_suites import Golden, GoldenError, load_suite_file, load_suites
from nomad_lab.data.reader_quote import NONE

DOCS = {
    "widget-care": """# Acme Widget 7: Care Guide

The Acme Widget 7 is a hand-cranked grain mill made by the Hollis Tool Company for small kitchens.
The warranty covers the crank for 2 years.

## Cleaning the burrs

You should brush the burrs after every use, before the flour dust hardens.
Soak the hopper for 10 minutes in warm water once a month.

## Storage

A dry cupboard is the best place for the mill between uses.
""",
    "bread-basics": """# Baking Bread at Home

Sourdough is a bread leavened by wild yeast and lactic bacteria rather than by baker's yeast.
Proof the dough for 4 hours at room temperature, or overnight in the refrigerator.

## Shaping

Loaves should be shaped with wet hands so that the dough does not stick to the fingers.

## Baking

Bake the loaf at 230 degrees in a covered pot, then uncover it for the last 15 minutes.
""",
    "harbor-lodge": """# Harbor Point Lodge

The lodge at Harbor Point opens its kitchen to the Millbrook Baking Club every Sunday.
Members of the Millbrook Baking Club bring their own flour and share the Acme Widget 7 mill.

## Booking

Bookings can be made at the front desk up to 3 weeks ahead.
""",
}


def corpus_dir(tmp_path: Path, docs: dict[str, str] = DOCS) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    for doc_id, text in docs.items():
        (folder / f"{doc_id}.md").write_text(text, "utf-8")
    return folder


def drafted(tmp_path: Path, out: Path, seed: int = 7, existing: list[Golden] | None = None) -> list[Golden]:
    corpus = read_corpus(tmp_path / "corpus")
    result = draft_goldens(corpus, existing or existing_goldens(out), DraftOptions(seed=seed, per_doc=3))
    return load_suite_file(write_drafts(out, result, corpus), corpus.all_doc_ids, drafts=True)


def test_drafts_load_with_their_mark_source_and_gold(tmp_path: Path) -> None:
    corpus_dir(tmp_path)
    drafts = drafted(tmp_path, tmp_path / "goldens")
    assert drafts and all(g.draft is not None and g.draft.seed == 7 for g in drafts)
    kinds = {g.draft.kind for g in drafts if g.draft}
    assert {"template", "fictional-attribute", "swap", "bank"} <= kinds
    for golden in drafts:
        assert golden.draft is not None
        if golden.draft.kind == "template":  # answerable, its source document is the gold
            assert golden.relevant_doc_ids == (golden.draft.doc,) and not golden.expect_refusal
        else:
            assert golden.expect_refusal and golden.relevant_doc_ids == ()
        if golden.draft.kind == "bank":
            assert golden.draft.doc is None and golden.draft.source.startswith("bank:")
    assert not near_duplicates(drafts)  # no two drafts are the same question


def test_refusal_drafts_ask_what_no_document_states(tmp_path: Path) -> None:
    corpus_dir(tmp_path)
    drafts = drafted(tmp_path, tmp_path / "goldens")
    text = " ".join(DOCS.values()).lower()
    fictional = [g for g in drafts if g.draft and g.draft.kind == "fictional-attribute"]
    assert fictional
    templates = {form: terms for form, terms in ATTRIBUTES}
    for golden in fictional:
        form = next(f for f in templates if re.fullmatch(re.escape(f).replace(r"\{\}", ".+"), golden.query))
        name = re.fullmatch(re.escape(form).replace(r"\{\}", "(.+)"), golden.query).group(1)
        naming = [t.lower() for t in DOCS.values() if name.lower() in t.lower()]
        assert naming, name
        assert not any(re.search(rf"\b{re.escape(term)}\b", t) for t in naming for term in templates[form])
    # the widget's warranty is stated, so no draft may ask for it
    assert not any("warranty" in g.query and "Widget" in g.query for g in fictional)
    swaps = [g for g in drafts if g.draft and g.draft.kind == "swap"]
    assert swaps and all(g.query.lower() not in text for g in swaps)


def test_drafts_never_repeat_an_existing_golden(tmp_path: Path) -> None:
    corpus_dir(tmp_path)
    first = drafted(tmp_path, tmp_path / "a")
    out = tmp_path / "goldens"
    out.mkdir()
    taken = [g for g in first if g.draft and g.draft.kind == "template"][:3]
    labelled = [
        {"id": f"mine-{i}", "query": g.query.upper() + " ", "relevantDocIds": list(g.relevant_doc_ids)}
        for i, g in enumerate(taken)
    ]
    (out / "core.jsonl").write_text("\n".join(json.dumps(line) for line in labelled), "utf-8")
    again = drafted(tmp_path, out)
    assert not near_duplicates(again, existing_goldens(out))
    assert {g.query for g in taken}.isdisjoint(g.query for g in again)


def test_same_seed_same_file_other_seed_other_drafts(tmp_path: Path) -> None:
    corpus_dir(tmp_path)
    drafted(tmp_path, tmp_path / "a", seed=3)
    drafted(tmp_path, tmp_path / "b", seed=3)
    drafted(tmp_path, tmp_path / "c", seed=4)
    a, b, c = ((tmp_path / x / "drafts.jsonl").read_bytes() for x in "abc")
    assert a == b and a != c


def test_the_labelled_loaders_never_count_a_draft(tmp_path: Path) -> None:
    corpus_dir(tmp_path)
    out = tmp_path / "goldens"
    drafts = drafted(tmp_path, out)
    with pytest.raises(GoldenError, match=r"drafts\.jsonl:1: only drafts in file"):
        load_suites(out, "drafts")
    mine = {"id": "mine", "query": "How do I shape a loaf?", "relevantDocIds": ["bread-basics"]}
    (out / "core.jsonl").write_text(json.dumps(mine), "utf-8")
    assert [g.id for g in load_suites(out, "*")] == ["mine"]  # * never expands to the drafts
    both = load_suites(out, "*", drafts=True)
    assert len(both) == len(drafts) + 1 and sum(g.draft is None for g in both) == 1
    mixed = out / "mixed.jsonl"
    mixed.write_text((out / "core.jsonl").read_text() + "\n" + (out / "drafts.jsonl").read_text(), "utf-8")
    assert [g.id for g in load_suite_file(mixed)] == ["mine"]


@pytest.mark.parametrize(
    ("draft", "message"),
    [
        ("yes", "field 'draft' must be an object"),
        ({"source": "guess", "doc": None, "seed": 1}, "field 'draft.source' must start with one of"),
        ({"source": "template:heading", "doc": 3, "seed": 1}, "field 'draft.doc' must be a doc id"),
        ({"source": "template:heading", "doc": "nowhere", "seed": 1}, "'nowhere' is not a corpus document"),
        ({"source": "bank:chit-chat", "doc": None, "seed": "1"}, "field 'draft.seed' must be an integer"),
    ],
)
def test_a_bad_draft_mark_names_file_and_line(tmp_path: Path, draft: object, message: str) -> None:
    path = tmp_path / "drafts.jsonl"
    line = {"id": "d", "query": "Hi?", "expectRefusal": True, "draft": draft}
    path.write_text("// header\n" + json.dumps(line), "utf-8")
    with pytest.raises(GoldenError) as info:
        load_suite_file(path, {"bread-basics"}, drafts=True)
    assert info.value.errors[0].startswith(f"{path}:2: ") and message in info.value.errors[0]


def test_near_duplicate_index_agrees_with_the_pairwise_rule() -> None:
    bank = load_bank()
    index = NearDuplicateIndex()
    for golden in bank[::2]:
        index.add(golden.query, golden.id)
    near = (Golden(f"p{i}", g.query + " please", "s", "f", 1) for i, g in enumerate(bank[:40:2]))
    probes = [*bank[1::2], *near]
    for probe in probes:
        pairwise = near_duplicates([probe], bank[::2])
        assert (index.clash(probe.query) is not None) == bool(pairwise), probe.query


def test_bad_corpus_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusError, match=r"no \.md documents"):
        read_corpus(tmp_path / "empty")
    blank = tmp_path / "blank"
    blank.mkdir()
    (blank / "a.md").write_text("  \n", "utf-8")
    with pytest.raises(CorpusError, match="every document is empty"):
        read_corpus(blank)
    nowhere = str(tmp_path / "nowhere")
    assert main(["goldens", "draft", "--corpus", nowhere, "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.endswith("nowhere: corpus directory not found")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_unreadable_document_is_a_one_line_error(tmp_path: Path) -> None:
    folder = corpus_dir(tmp_path)
    (folder / "bread-basics.md").chmod(0)
    with pytest.raises(CorpusError, match=r"bread-basics\.md: cannot read"):
        read_corpus(folder)


def test_command_writes_drafts_and_says_how_many(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = corpus_dir(tmp_path)
    out = tmp_path / "goldens"
    argv = ["goldens", "draft", "--corpus", str(folder), "--out", str(out), "--no-progress", "--limit", "12"]
    assert main([*argv, "--bank-skip", "coding"]) == 0
    assert "12 drafts" in capsys.readouterr().out
    lines = (out / "drafts.jsonl").read_text("utf-8").splitlines()
    assert lines[1].startswith("// nomad-lab goldens draft --corpus") and "--bank-skip coding" in lines[1]
    assert len(load_suite_file(out / "drafts.jsonl", drafts=True)) == 12
    assert main([*argv, "--bank-skip", "cooking"]) == 1
    assert "no bank category cooking to skip" in capsys.readouterr().err


def test_model_drafts_carry_the_backend_spec_their_answer_sentence_and_a_refusal(tmp_path: Path) -> None:
    corpus = read_corpus(corpus_dir(tmp_path))
    prompts: list[str] = []

    def chat(prompt: str) -> str:  # stands in for a chat model: asks about the passage's first sentence
        if prompt.startswith("Sentences from"):  # a read-back: the first sentence shown, NONE for the mill
            return NONE if "mill weigh" in prompt else prompt.split("\n- ", 1)[1].split("\n", 1)[0]
        prompts.append(prompt)
        first = prompt.split("\n\n")[1].split(". ")[0].rstrip(".") + "."
        return (
            f"QUESTION: Which thing is described first?\nANSWER: {first}\n"
            "UNANSWERED: How much does the mill weigh?"
        )

    result = draft_goldens(corpus, (), DraftOptions(llm_per_doc=1), chat=chat, chat_spec="embedded:x")
    model = [d for d in result.drafts if d["draft"]["source"] == "llm:embedded:x"]
    assert len(prompts) == len(DOCS)
    assert model and all(d["relevantDocIds"] == [d["draft"]["doc"]] and not d["expectRefusal"] for d in model)
    for draft in model:
        (pattern,) = draft["mustInclude"]
        assert re.search(pattern, DOCS[draft["draft"]["doc"]], re.IGNORECASE)  # the sentence, verbatim
    refusals = [d for d in result.drafts if d["draft"]["source"] == "llm-refusal:embedded:x"]
    assert refusals and all(d["expectRefusal"] and d["refusalKind"] == "unanswerable" for d in refusals)
    assert len(refusals) == 1  # the same refusal from every passage is kept once, mentioning the mill


PLANTED_BAD = {
    "What is wickham is by no?": "ends on 'no'",
    "What is Wickham is a man?": "two finite verbs",
    "Must vain indeed be all her attentions?": "an adverb where the subject should be",
    "Should she tell them before the ball?": "a pronoun with nothing to refer to",
    "What should I know about chapter xii for Dracula?": "a chapter numeral",
    "What does the the manual say?": "a word twice in a row",
    "What is {{domxref}}?": "markup or code",
    "What is (the size?": "unbalanced",
    "what is a burr?": "no capital first letter",
    "Why?": "not the length of a question",
}
GOOD = (
    "What is a sourdough?",
    "Should I brush the burrs after every use?",
    "Proof the dough: how many hours at room temperature?",
    "What are the signs of a worn burr?",
    "What is the warranty period of Acme Widget 7?",
    "Can I open the mill during a storm?",
)


def test_the_well_formedness_check_drops_planted_bad_drafts_and_keeps_good_ones() -> None:
    from nomad_lab.data.draft_text import restore_names, well_formed

    for question, why in PLANTED_BAD.items():
        assert why in (well_formed(question) or ""), question
    assert [q for q in GOOD if well_formed(q) is not None] == []
    text = "Mr. Wickham went to London. London was grey; the train left at noon."
    assert restore_names("What is london like, at noon?", text) == "What is London like, at noon?"


def test_drafts_are_well_formed_and_the_warm_up_spans_the_documents(tmp_path: Path) -> None:
    from nomad_lab.data.draft_text import well_formed

    novel = "# A Novel\n\nWickham is by no means what he seems. Vain indeed must be all her attentions.\n"
    docs = {**DOCS, "novel": novel}
    corpus = read_corpus(corpus_dir(tmp_path, docs))
    result = draft_goldens(corpus, options=DraftOptions(seed=3, per_doc=3, bank_per_category=1))
    answerable = [d for d in result.drafts if not d["expectRefusal"]]
    assert answerable and all(well_formed(d["query"]) is None for d in answerable)
    assert result.malformed >= 2  # the novel's two fragments at least
    first = [d["draft"].get("doc") or "bank" for d in result.drafts[: len(docs) + 1]]
    assert sorted(first) == sorted([*docs, "bank"])  # one of each in the first round, not file order
