"""Draft golden questions from a folder of documents: candidates for a person to label, never labels.

Why: every figure the workbench publishes rests on labelled questions, and a user who brings a library
has none. Drafting gives them candidates in the golden format, each marked ``draft`` with where it came
from (``{"source": ..., "doc": ..., "seed": ...}``), so the goldens loader keeps them out of every eval
and gate until someone labels them (``nomad_lab.data.golden_suites``):

- answerable candidates per document from its headings and sentences by general English templates
  (``template:heading``, ``template:sentence``; the forms and the ones retired are
  :mod:`nomad_lab.data.draft_forms`), each with its document as gold;
- from a language model the caller supplies (``llm:SPEC``), per passage a reader's question with the
  sentence answering it as ``mustInclude`` and a question the passage leaves open (``llm-refusal:SPEC``,
  unanswerable), each checked first, and read back by the model (:mod:`nomad_lab.data.model_drafts`);
- refusal candidates without a model: attributes no document states of the corpus's own entities
  (``fictional-attribute``, absence checked against every document naming the entity), near-domain
  questions with an entity swapped for a similar one the corpus lacks (``swap:entity``), and the
  out-of-scope bank's questions from the categories the corpus does not answer (``bank:CATEGORY``);
- deduplicated against each other and against the goldens already in the output folder with the bank's
  near-duplicate rules (:class:`nomad_lab.data.bank.NearDuplicateIndex`); the same seed gives the same file.

Pure: standard library only; a model, when used, is a plain callable (``Chat``) the command layer opens.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nomad_lab.core.errors import NomadLabError
from nomad_lab.data.bank import NearDuplicateIndex, bank_category, load_bank
from nomad_lab.data.corpus import Corpus, CorpusError, load_corpus
from nomad_lab.data.draft_forms import drafted_questions
from nomad_lab.data.draft_text import (
    DocText,
    WordIndex,
    doc_text,
    entities,
    restore_names,
    well_formed,
    words,
)
from nomad_lab.data.golden_suites import (
    DRAFTS_SUITE,
    SUITE_SUFFIX,
    DraftMark,
    Golden,
    available_suites,
    load_suite_file,
    suite_path,
)
from nomad_lab.data.model_drafts import Chat, model_draft, passages
from nomad_lab.data.refusal_kinds import kind_of

__all__ = [
    "ATTRIBUTES",
    "Chat",
    "DraftOptions",
    "DraftResult",
    "draft_goldens",
    "read_corpus",
    "write_drafts",
]

ATTRIBUTES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("What is the warranty period of {}?", ("warranty", "warranties", "guarantee", "guaranteed")),
    ("How much does {} cost?", ("price", "prices", "priced", "cost", "costs", "$", "€", "£", "dollars")),
    ("When was {} first introduced?", ("introduced", "launched", "released", "founded", "established")),
    ("Where is {} manufactured?", ("manufactured", "manufacturer", "made in", "factory")),
    ("What is the official website of {}?", ("website", "http", "www", "url")),
    ("What is the customer support phone number for {}?", ("phone", "telephone", "hotline")),
    ("What colours does {} come in?", ("colour", "color", "colours", "colors")),
    ("Who founded {}?", ("founder", "founders", "founded", "creator", "invented", "inventor")),
    ("What is the maximum operating altitude of {}?", ("altitude", "elevation")),
    ("What is the minimum age requirement for {}?", ("age", "aged", "years old")),
    (
        "Which certification standard does {} meet?",
        ("certified", "certification", "iso", "standard", "standards"),
    ),
    ("What is the annual budget of {}?", ("budget", "funding", "funded")),
)
"""Attributes a reader may ask of a named thing, with the words that would state them. A fictional
question asks for one no document naming the entity contains any of the words for."""

SWAP_NAMES = (
    "Ashcombe", "Brinmoor", "Corrowby", "Dunfell", "Elderwick", "Fallowmere", "Glenhallow", "Harrowdene",
    "Ivybridge", "Kestlemoor", "Larkhollow", "Marrowby", "Northwold", "Oakhurst", "Penmarrow", "Quarrendon",
)  # fmt: skip
"""Invented names put in place of an entity's first word when it has no number to change."""


@dataclass(frozen=True)
class DraftOptions:
    """How many drafts of each kind, and the seed every choice is drawn from."""

    seed: int = 1341
    per_doc: int = 4
    refusals_per_doc: int = 1
    bank_per_category: int = 5
    bank_skip: tuple[str, ...] = ()
    bank_path: Path | None = None
    llm_per_doc: int = 2
    limit: int | None = None


@dataclass
class DraftResult:
    drafts: list[dict[str, Any]] = field(default_factory=list)
    duplicates: int = 0  # candidates dropped as near-duplicates of a golden or an earlier draft
    malformed: int = 0  # answerable candidates dropped by the well-formedness check
    model_rejected: dict[str, int] = field(default_factory=dict)  # a model's drafts failing a check, by why
    documents: int = 0
    bytes: int = 0

    def counts(self) -> dict[str, int]:
        """Drafts per source kind (``template``, ``swap`` ...)."""
        out: dict[str, int] = {}
        for draft in self.drafts:
            kind = draft["draft"]["source"].split(":", 1)[0]
            out[kind] = out.get(kind, 0) + 1
        return out


def read_corpus(directory: str | Path) -> Corpus:
    """The corpus, or a one-line :class:`CorpusError` when it is missing, empty or unreadable."""
    try:
        corpus = load_corpus(directory)
    except OSError as exc:
        raise CorpusError(f"{exc.filename or directory}: cannot read: {exc.strerror or exc}") from exc
    if not any(doc.text.strip() for doc in corpus.docs):
        raise CorpusError(f"{corpus.directory}: every document is empty; nothing to draft from")
    return corpus


def existing_goldens(out_dir: Path) -> list[Golden]:
    """Every golden (labelled or draft) already in ``out_dir``, except the drafts file this run rewrites."""
    if not out_dir.is_dir():
        return []
    names = [name for name in available_suites(out_dir) if name != DRAFTS_SUITE]
    return [g for name in names for g in load_suite_file(suite_path(out_dir, name), drafts=True)]


class _Drafter:
    """Collects drafts while enforcing uniqueness; one instance per run."""

    def __init__(self, seed: int, existing: Sequence[Golden]) -> None:
        self.seed = seed
        self.index = NearDuplicateIndex()
        for golden in existing:
            self.index.add(golden.query, golden.id)
        self.result = DraftResult()

    def offer(
        self, query: str, source: str, doc: str | None, gold: str | None, tags: Sequence[str], must: str = ""
    ) -> bool:
        query = " ".join(query.split())
        if not query or self.index.clash(query) is not None:
            self.result.duplicates += bool(query)
            return False
        digest = hashlib.sha1(f"{source}\n{query}".encode()).hexdigest()[:12]
        ident = f"draft-{digest}"
        self.index.add(query, ident)
        self.result.drafts.append(
            {
                "id": ident,
                "query": query,
                "turns": [],
                "relevantDocIds": [gold] if gold else [],
                "mustInclude": [re.escape(must)] if must else [],
                "mustNotInclude": [],
                "expectRefusal": gold is None,
                "tags": list(tags),
                **({"refusalKind": kind_of(tags)} if gold is None else {}),
                "draft": DraftMark(source, doc, self.seed).as_json(),
            }
        )
        return True


def _well_formed(drafter: _Drafter, question: str) -> bool:
    """Whether a drafted question passes :func:`well_formed` (counting the ones that do not)."""
    bad = well_formed(question) is not None
    drafter.result.malformed += bad
    return not bad


def _answerable(drafter: _Drafter, doc: DocText, rng: random.Random, n: int, text: str) -> list[str]:
    forms = list(drafted_questions(doc))
    headings = [(source, q) for source, q in forms if source == "template:heading"]
    sentences = [(source, q) for source, q in forms if source == "template:sentence"]
    rng.shuffle(headings)
    rng.shuffle(sentences)
    taken: list[str] = []
    queue = (
        [c for pair in zip(headings, sentences, strict=False) for c in pair]
        + headings[len(sentences) :]
        + sentences[len(headings) :]
    )
    for source, question in queue:
        if len(taken) >= n:
            break
        question = restore_names(question, text)
        if _well_formed(drafter, question) and drafter.offer(
            question, source, doc.doc_id, doc.doc_id, ["single-hop"]
        ):
            taken.append(question)
    return taken


def _llm(drafter: _Drafter, doc: DocText, rng: random.Random, chat: Chat, spec: str, n: int) -> None:
    """``n`` passages of the document, each asked of the model once (its checked drafts offered)."""
    if not doc.sentences:
        return
    for passage in passages(doc.sentences, n, rng.randrange(len(doc.sentences))):
        drafted = model_draft(chat, doc.title, passage, doc.sentences)
        for why in drafted.rejected:
            drafter.result.model_rejected[why] = drafter.result.model_rejected.get(why, 0) + 1
        if drafted.question and drafted.answer:
            drafter.offer(
                drafted.question, f"llm:{spec}", doc.doc_id, doc.doc_id, ["single-hop"], drafted.answer
            )
        if drafted.refusal:
            drafter.offer(drafted.refusal, f"llm-refusal:{spec}", doc.doc_id, None, ["fictional"])


def _mentions(name: str, index: WordIndex, lowered: dict[str, str]) -> set[str]:
    phrase = name.lower()
    return {d for d in index.docs_with_all(words(name)) if phrase in lowered[d]}


def _states(term: str, docs: set[str], index: WordIndex, lowered: dict[str, str]) -> bool:
    if re.fullmatch(r"[a-z0-9]+", term):
        return bool(index.postings.get(term, set()) & docs)
    return any(term in lowered[d] for d in docs)


def _swap(name: str, rng: random.Random, index: WordIndex, lowered: dict[str, str]) -> str | None:
    """A similar name the corpus lacks: its numbers changed, else its first word replaced."""
    if re.search(r"\d", name):
        swapped = re.sub(r"\d+", lambda m: str(int(m.group()) + rng.randint(1, 9)), name)
    else:
        fresh = [n for n in SWAP_NAMES if not index.holds(n.lower())]
        if not fresh:
            return None
        swapped = rng.choice(fresh) + name[len(name.split()[0]) :]
    return None if _mentions(swapped, index, lowered) else swapped


def _refusals(
    drafter: _Drafter,
    doc: DocText,
    rng: random.Random,
    n: int,
    asked: list[str],
    index: WordIndex,
    lowered: dict[str, str],
) -> None:
    made_fictional = made_swap = 0
    for name in entities(doc)[: 4 * n]:
        mentioning = _mentions(name, index, lowered) or {doc.doc_id}
        if made_fictional < n:
            unstated = [
                a for a, terms in ATTRIBUTES if not any(_states(t, mentioning, index, lowered) for t in terms)
            ]
            if unstated:
                question = rng.choice(unstated).format(name)
                made_fictional += drafter.offer(
                    question, "fictional-attribute", doc.doc_id, None, ["fictional"]
                )
        if made_swap < n and (swapped := _swap(name, rng, index, lowered)):
            carriers = [q for q in asked if name in q]
            question = rng.choice(carriers).replace(name, swapped) if carriers else f"What is {swapped}?"
            made_swap += drafter.offer(question, "swap:entity", doc.doc_id, None, ["near-domain"])
        if made_fictional >= n and made_swap >= n:
            return


def _bank(drafter: _Drafter, rng: random.Random, options: DraftOptions) -> None:
    bank = load_bank(options.bank_path)
    known = sorted({bank_category(g) for g in bank})
    unknown = sorted(set(options.bank_skip) - set(known))
    if unknown:
        raise NomadLabError(f"no bank category {', '.join(unknown)} to skip (available: {', '.join(known)})")
    for category in known:
        if category in options.bank_skip:
            continue
        questions = [g for g in bank if bank_category(g) == category]
        for golden in rng.sample(questions, min(options.bank_per_category, len(questions))):
            drafter.offer(golden.query, f"bank:{category}", None, None, list(golden.tags))


def draft_goldens(
    corpus: Corpus,
    existing: Sequence[Golden] = (),
    options: DraftOptions = DraftOptions(),
    *,
    chat: Chat | None = None,
    chat_spec: str = "",
    on_doc: Callable[[str], None] | None = None,
) -> DraftResult:
    """Drafts for every document of ``corpus`` (see the module doc), none repeating ``existing``.

    Every choice draws from ``random.Random(f"{seed}:{doc id}")``, so a document's drafts do not change
    when another document is added (the bank's from ``f"{seed}:bank"``). ``on_doc`` is called after each
    document (a progress bar).
    """
    drafter = _Drafter(options.seed, existing)
    index, lowered = WordIndex(), {}
    for doc in corpus.docs:
        lowered[doc.doc_id] = doc.text.lower()
        index.add(doc.doc_id, doc.text)
    for doc in corpus.docs:
        parsed = doc_text(doc.doc_id, doc.text)
        rng = random.Random(f"{options.seed}:{doc.doc_id}")
        asked = _answerable(drafter, parsed, rng, options.per_doc, doc.text)
        if chat is not None:
            _llm(drafter, parsed, rng, chat, chat_spec, options.llm_per_doc)
        _refusals(drafter, parsed, rng, options.refusals_per_doc, asked, index, lowered)
        drafter.result.documents += 1
        drafter.result.bytes += len(doc.text.encode("utf-8"))
        if on_doc is not None:
            on_doc(doc.doc_id)
    _bank(drafter, random.Random(f"{options.seed}:bank"), options)
    result = drafter.result
    if options.limit is not None and len(result.drafts) > options.limit:
        keep = set(random.Random(f"{options.seed}:limit").sample(range(len(result.drafts)), options.limit))
        result.drafts = [d for i, d in enumerate(result.drafts) if i in keep]
    result.drafts = across_documents(result.drafts, random.Random(f"{options.seed}:order"))
    return result


def across_documents(drafts: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    """The drafts in the order a sitting meets them before its gate can be fitted: one from each
    document in turn, the documents in a seeded random order, so the first
    dozens span the library and each kind of document (distractors too) comes in its share; the bank's
    questions, tied to no document, take turns as one more group."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for draft in drafts:
        groups.setdefault(draft["draft"].get("doc") or "", []).append(draft)
    order = sorted(groups)
    rng.shuffle(order)
    rounds = max((len(g) for g in groups.values()), default=0)
    return [groups[key][i] for i in range(rounds) for key in order if i < len(groups[key])]


def write_drafts(out_dir: str | Path, result: DraftResult, corpus: Corpus, command: str = "") -> Path:
    """Write ``<out_dir>/drafts.jsonl`` and read it back through the golden validator (drafts allowed)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{DRAFTS_SUITE}{SUITE_SUFFIX}"
    header = "// drafts: candidate questions nobody has labelled; the goldens loaders skip them unless asked"
    lines = [
        header,
        *([f"// {command}"] if command else []),
        *(json.dumps(d, ensure_ascii=False) for d in result.drafts),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    load_suite_file(path, corpus.all_doc_ids, drafts=True)
    return path
