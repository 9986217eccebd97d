"""The hand-written hard refusals (``hard_refusals.jsonl`` in both corpora): kinds, disjointness, checks.

A hard refusal is worth something only if it is new: not a repeat of any other golden, fixture or bank
question (a gate would be scored on a question it saw labelled), and not one of the synthetic
unanswerables the answerability trainer makes by swapping an entity or an attribute of an answerable
question (its negatives would then hold the test's refusals). The swap space is enumerated here in full
(every name of every answerable golden into every other one, every attribute into every other), which
covers whatever fold and seed the trainer draws; when the trainer's module is importable its own span
finder and lexicon are enumerated too. And each question must have been read against its nearest
documents: the committed check table lists every id with the verdict ``not answered``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from nomad_lab.core.workspace import DATASETS_DIR, DEFAULT_BANK_PATH
from nomad_lab.data.bank import NEAR_DUPLICATE_JACCARD, near_duplicates, normalized_query
from nomad_lab.data.corpus import load_corpus
from nomad_lab.data.golden_suites import (
    DECISIONS_SUFFIX,
    DRAFTS_SUITE,
    GATING_SUITES,
    Golden,
    load_suite_file,
    load_suites,
    parse_suite_spec,
)
from nomad_lab.eval import refusal_check
from tests.support.paths import FIXTURES

SUITE = "hard_refusals"
CORPORA = {
    "default": (DATASETS_DIR / "corpus", DATASETS_DIR / "goldens"),
    "pydocs": (
        DATASETS_DIR / "corpora" / "pydocs" / "corpus",
        DATASETS_DIR / "corpora" / "pydocs" / "goldens",
    ),
}
KINDS = ("adversarial", "near-domain", "out-of-corpus")
FICTIONAL = "fictional"  # with adversarial: the entity is one of the default corpus's invented documents
MIN_TOTAL = 150

_QUESTION_WORDS = frozenset(
    (
        "what",
        "which",
        "who",
        "when",
        "where",
        "why",
        "how",
        "is",
        "are",
        "do",
        "does",
        "can",
        "could",
        "should",
        "would",
        "i",
    )
)
_NAME_TOKEN = re.compile(r"[A-Za-z0-9][\w'/.-]*")
ATTRIBUTES = (
    "colour", "color", "weight", "price", "cost", "length", "size", "capacity", "temperature", "voltage",
    "frequency", "brand", "name", "phone number", "year", "fee", "rating", "range", "depth", "speed",
    "lifespan", "warranty", "dose", "time", "pressure", "height", "number",
)  # fmt: skip
"""Attributes a swap may ask for instead of the one asked (a deliberately broad, fixed list)."""


def hard(corpus: str) -> list[Golden]:
    corpus_dir, goldens_dir = CORPORA[corpus]
    return load_suites(goldens_dir, SUITE, load_corpus(corpus_dir).all_doc_ids)


def all_hard() -> list[Golden]:
    return hard("default") + hard("pydocs")


def other_questions() -> list[Golden]:
    """Every other golden of both corpora, the bank and the test fixtures."""
    paths = [*sorted(DATASETS_DIR.rglob("goldens/*.jsonl")), DEFAULT_BANK_PATH]  # not a sitting's log
    paths += sorted(FIXTURES.rglob("*.jsonl"))
    paths = [p for p in paths if p.stem != SUITE and "estimator" not in p.parts]
    paths = [p for p in paths if not p.name.endswith(DECISIONS_SUFFIX) and p.stem != DRAFTS_SUITE]
    return [g for p in paths for g in load_suite_file(p)]


def answerable() -> list[Golden]:
    return [g for g in other_questions() if not g.expect_refusal]


def name_spans(question: str) -> list[str]:
    """Runs of capitalized words, acronyms and tokens with digits (question words left out)."""
    spans, run = [], []
    for token in _NAME_TOKEN.findall(question):
        if token.lower() not in _QUESTION_WORDS and (token[0].isupper() or any(c.isdigit() for c in token)):
            run.append(token)
        elif run:
            spans.append(" ".join(run))
            run = []
    return list(dict.fromkeys(spans + ([" ".join(run)] if run else [])))


def _words(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"\w+", normalized_query(text)))


def _swap(golden: Golden, old: str, new: str, n: int) -> Golden:
    pattern = rf"(?<![A-Za-z0-9]){re.escape(old)}(?![A-Za-z0-9])"
    text = re.sub(pattern, lambda _: new, golden.query, count=1, flags=re.IGNORECASE)
    return Golden(id=f"{golden.id}~{n}", query=text, suite="swap", file="swap", line=n)


def every_swap(
    sources: Sequence[Golden],
    targets: Sequence[Golden],
    spans: Callable[[str], list[str]],
    attributes: Sequence[str],
) -> list[Golden]:
    """Every entity swap (a name of one source into the place of a name of another) and every attribute
    swap of ``sources`` that could come near any of ``targets``.

    Entity swaps are pruned without loss: a swap keeps the source's words F outside the name and adds
    the new name's words N, so its word Jaccard with a target h is at most |h| / |h u F|; a (source,
    name) pair whose bound misses the threshold for every target cannot yield a near-duplicate."""
    names = sorted({s for g in sources for s in spans(g.query)})
    target_words = [_words(t.query) for t in targets]
    out: list[Golden] = []
    for golden in sources:
        for old in spans(golden.query):
            fixed = _words(golden.query.replace(old, " "))
            if any(len(h) / len(h | fixed) >= NEAR_DUPLICATE_JACCARD for h in target_words if h):
                out += [_swap(golden, old, new, len(out) + i) for i, new in enumerate(names) if new != old]
        lowered = golden.query.lower()
        for old in (a for a in attributes if re.search(rf"\b{re.escape(a)}\b", lowered)):
            out += [_swap(golden, old, new, len(out) + i) for i, new in enumerate(attributes) if new != old]
    return out


def test_each_corpus_has_hard_refusals_of_every_kind_and_the_gating_default_reads_them() -> None:
    total = 0
    for corpus, (_, goldens_dir) in CORPORA.items():
        goldens = hard(corpus)
        total += len(goldens)
        assert all(g.expect_refusal and not g.turns and not g.relevant_doc_ids for g in goldens), corpus
        for g in goldens:
            kinds = [t for t in g.tags if t in KINDS]
            assert len(kinds) == 1 and set(g.tags) <= {*KINDS, FICTIONAL}, (g.id, g.tags)
            assert FICTIONAL not in g.tags or kinds == ["adversarial"], g.id
        assert {k for g in goldens for k in g.tags} >= set(KINDS), corpus
        assert SUITE in parse_suite_spec(GATING_SUITES, [p.stem for p in goldens_dir.glob("*.jsonl")])
    assert total >= MIN_TOTAL


def test_no_hard_refusal_repeats_another_golden_a_fixture_or_the_bank() -> None:
    hard_refusals, others = all_hard(), other_questions()
    assert len({g.id for g in hard_refusals} | {g.id for g in others}) == len(hard_refusals) + len(
        {g.id for g in others}
    )
    assert near_duplicates(hard_refusals) == []
    clashes = [(a.id, b.id, why) for a, b, why in near_duplicates(hard_refusals, others)]
    assert clashes == []


def test_no_hard_refusal_is_an_entity_or_attribute_swap_of_an_answerable_golden() -> None:
    hard_refusals = all_hard()
    swaps = every_swap(answerable(), hard_refusals, name_spans, ATTRIBUTES)
    assert len(swaps) > 1000  # the enumeration really ran
    assert [(a.id, b.query, why) for a, b, why in near_duplicates(hard_refusals, swaps)] == []


def test_no_hard_refusal_is_a_swap_the_answerability_trainer_can_make() -> None:
    trainer = pytest.importorskip("nomad_lab.data.synthetic_refusals")  # the answerability branch's module
    hard_refusals = all_hard()
    lexicon = (*trainer.ATTRIBUTES, *trainer.CUES)
    swaps = every_swap(answerable(), hard_refusals, trainer.entity_spans, lexicon)
    assert [(a.id, b.query, why) for a, b, why in near_duplicates(hard_refusals, swaps)] == []
    for seed in range(5):  # and the trainer's own draws, in case it ever swaps beyond its lexicon
        drawn = trainer.swap_questions(answerable(), seed=seed)
        made = [
            Golden(id=f"s{i}", query=s.text, suite="swap", file="swap", line=i) for i, s in enumerate(drawn)
        ]
        assert near_duplicates(hard_refusals, made) == []


@pytest.mark.parametrize("corpus", sorted(CORPORA))
def test_every_hard_refusal_was_read_against_its_nearest_documents(corpus: str) -> None:
    check = refusal_check
    table: Path = CORPORA[corpus][1] / f"{SUITE}_check.md"
    verdicts = check.old_verdicts(table)
    assert set(verdicts) == {g.id for g in hard(corpus)}, table
    for golden_id, (documents, verdict) in verdicts.items():
        assert len(documents.split(", ")) == check.NEAREST and verdict == check.VERDICT_OK, golden_id
