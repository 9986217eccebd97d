"""The second corpus, ``datasets/corpora/pydocs``: it loads through the same parsers as the default one,
its goldens cite documents that exist and contain their answers, and its questions are disjoint from
the default goldens and the out-of-scope bank (a gate checked on it must not have seen them).

The committed documents are exactly what the builder writes from the committed ``datasets/sources``.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from nomad_lab.core.workspace import DATASETS_DIR
from nomad_lab.data.bank import OFF_TOPIC_TAG, load_bank, near_duplicates
from nomad_lab.data.corpus import load_corpus
from nomad_lab.data.golden_suites import Golden, available_suites, load_suite_file, load_suites
from tests.support.dataset_scripts import load_script

PYDOCS = DATASETS_DIR / "corpora" / "pydocs"
CORPUS, GOLDENS = PYDOCS / "corpus", PYDOCS / "goldens"
MIN_DOCS, MAX_DOCS, MIN_ANSWERABLE, MIN_REFUSALS = 40, 80, 100, 80


def pydocs_goldens() -> list[Golden]:
    return load_suites(GOLDENS, "*", load_corpus(CORPUS).doc_ids)


def default_goldens() -> list[Golden]:
    return [g for path in sorted((DATASETS_DIR / "goldens").glob("*.jsonl")) for g in load_suite_file(path)]


def test_the_corpus_loads_with_provenance_on_every_document() -> None:
    corpus = load_corpus(CORPUS)
    assert MIN_DOCS <= len(corpus.docs) <= MAX_DOCS
    for doc in corpus.docs:
        assert re.fullmatch(r"(?:py|mdn)-[a-z0-9]+(?:-[a-z0-9]+)*", doc.doc_id), doc.doc_id
        title, blank, provenance = doc.text.split("\n")[:3]
        assert title.startswith("# ") and not blank, doc.doc_id
        assert "Licence: " in provenance and "(source lines " in provenance, doc.doc_id
        assert 1_000 <= len(doc.text) <= 10_000, (doc.doc_id, len(doc.text))


def test_the_suites_load_and_every_answer_is_in_its_cited_documents() -> None:
    assert available_suites(GOLDENS) == ["core", "hard_refusals", "off_topic"]  # hard_refusals: its own test
    goldens = pydocs_goldens()
    texts = {doc.doc_id: doc.text for doc in load_corpus(CORPUS).docs}
    core = [g for g in goldens if g.suite == "core"]
    refusals = [g for g in goldens if g.suite == "off_topic"]
    assert len(core) >= MIN_ANSWERABLE and not any(g.expect_refusal for g in core)
    assert len(refusals) >= MIN_REFUSALS and all(g.expect_refusal for g in refusals)
    for g in core:
        assert g.relevant_doc_ids and set(g.relevant_doc_ids) <= set(texts), g.id
        cited = "\n\n".join(texts[d] for d in g.relevant_doc_ids)
        assert g.must_include and all(p.search(cited) for p in g.must_include), g.id
    cited_docs = {d for g in core for d in g.relevant_doc_ids}
    assert len(cited_docs) == len(texts), sorted(set(texts) - cited_docs)


def test_refusals_are_tagged_off_topic_with_one_category_and_hold_near_domain_ones() -> None:
    refusals = [g for g in pydocs_goldens() if g.suite == "off_topic"]
    categories = Counter(next(t for t in g.tags if t != OFF_TOPIC_TAG) for g in refusals)
    assert all(OFF_TOPIC_TAG in g.tags and len(g.tags) == 2 for g in refusals)
    assert len(categories) >= 6, categories
    assert categories["near-domain"] >= 20 and categories["other-language"] >= 10, categories


def test_the_suites_are_disjoint_from_the_default_goldens_and_the_bank() -> None:
    mine, others = pydocs_goldens(), default_goldens() + load_bank()
    assert not {g.id for g in mine} & {g.id for g in others}
    clashes = near_duplicates(mine, others)
    assert not clashes, [f"{a.id} ~ {b.id} ({b.location}): {why}" for a, b, why in clashes]
    within = near_duplicates(mine)
    assert not within, [f"{a.id} ~ {b.id}: {why}" for a, b, why in within]


def test_the_committed_documents_are_what_the_builder_writes(tmp_path: Path) -> None:
    build = load_script("corpora/build_pydocs.py")
    assert build.DEFAULT_SOURCES == DATASETS_DIR / "sources"
    docs = build.build(build.DEFAULT_SOURCES, tmp_path)
    build.write_sources(docs, tmp_path)
    built = {p.name: p.read_bytes() for p in (tmp_path / "corpus").glob("*.md")}
    committed = {p.name: p.read_bytes() for p in CORPUS.glob("*.md")}
    assert built == committed
    assert (tmp_path / "SOURCES.md").read_bytes() == (PYDOCS / "SOURCES.md").read_bytes()
