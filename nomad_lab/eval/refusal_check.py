"""Hard refusals read against their nearest documents: the table a person fills, kept across reruns.

Why: a hard refusal looks answerable by design, so "the corpus cannot answer it" has to be checked by
reading what retrieval brings back for it, not assumed. :func:`check_suite` retrieves every question of
the suite with the project's own index (the default embedder, as ``eval retrieval`` does) and writes a
Markdown table: the question, its three nearest documents by cosine (whatever the thresholds, so a
question that retrieves nothing still names its neighbours), whether retrieval at floor 0 returns
anything, and a ``checked`` column that a person fills after reading those documents (``not answered``).

Verdicts already in the table are kept when the question and its three documents are unchanged; a
changed question or neighbour set resets the verdict to ``recheck``, a new question gets ``TODO``.
``nomad-lab goldens check`` is the command (it exits 1 while any verdict is not ``not answered``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nomad_lab.core.workspace import PROJECT_ROOT
from nomad_lab.data.corpus import load_corpus
from nomad_lab.data.golden_suites import Golden, load_suites
from nomad_lab.retrieval.embedding import load_embedder
from nomad_lab.retrieval.index import RetrievalIndex, build_index
from nomad_lab.store import Store

NEAREST = 3
VERDICT_OK = "not answered"
HEADER = "| id | tags | question | nearest documents (cosine) | at floor 0 | checked |"
_ROW = re.compile(r"^\| `(?P<id>[^`]+)` \|.*\| (?P<docs>[^|]*) \| (?P<floor>[^|]*) \| (?P<verdict>[^|]*) \|$")


def nearest(index: RetrievalIndex, vector: np.ndarray) -> list[tuple[str, float, str]]:
    """The ``NEAREST`` best documents by their best chunk's cosine: ``(doc_id, cosine, chunk text)``."""
    seen: dict[str, tuple[str, float, str]] = {}
    for candidate in index.dense(vector, len(index.chunks), -1.0):
        if candidate.doc_id not in seen:
            seen[candidate.doc_id] = (candidate.doc_id, candidate.semantic_score, candidate.text)
        if len(seen) == NEAREST:
            break
    return list(seen.values())


def old_verdicts(table: Path) -> dict[str, tuple[str, str]]:
    """``id -> (documents cell, verdict)`` from a previous table, so a rerun keeps what was read."""
    if not table.is_file():
        return {}
    rows = (_ROW.match(line.strip()) for line in table.read_text(encoding="utf-8").splitlines())
    return {m["id"]: (m["docs"].strip(), m["verdict"].strip()) for m in rows if m}


def shown(path: Path) -> str:
    """A path as the command line in the table should read: relative to the repository when inside it."""
    resolved = path.resolve()
    return str(resolved.relative_to(PROJECT_ROOT)) if resolved.is_relative_to(PROJECT_ROOT) else str(path)


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def snippet(query: str, text: str, width: int = 700) -> str:
    """The part of a passage around the query's longest shared words (what a reader checks first)."""
    words = sorted({w for w in re.findall(r"[a-z0-9_.]{4,}", query.lower())}, key=len, reverse=True)
    lowered = text.lower()
    hits = [lowered.find(w) for w in words if w in lowered]
    start = max(0, (min(hits) if hits else 0) - width // 4)
    return text[start : start + width].replace("\n", " ")


@dataclass(frozen=True)
class SuiteCheck:
    """What a check wrote: the table, its rows, how many retrieve at floor 0 and how many await a reader."""

    table: Path
    rows: int
    retrieving: int
    pending: int


def check_suite(
    corpus_dir: Path,
    goldens_dir: Path,
    suite: str,
    store_path: Path,
    table: Path | None = None,
    show: Callable[[str], None] | None = None,
) -> SuiteCheck:
    """Write ``table`` (default ``GOLDENS/SUITE_check.md``) for ``suite``; ``show`` gets the nearest
    passages of each question still to read."""
    table = table or goldens_dir / f"{suite}_check.md"
    corpus = load_corpus(corpus_dir)
    goldens: list[Golden] = load_suites(goldens_dir, suite, corpus.all_doc_ids)
    previous = old_verdicts(table)
    store_path.parent.mkdir(parents=True, exist_ok=True)
    with Store(store_path) as store:
        index, _ = build_index(corpus, store, load_embedder(None), progress=True)
    vectors = index.embed_queries([g.query for g in goldens], progress=True)
    rows, pending = [], 0
    for golden, vector in zip(goldens, vectors, strict=True):
        near = nearest(index, vector)
        docs = ", ".join(f"{doc} ({cos:.2f})" for doc, cos, _ in near)
        nonempty = bool(index.search(golden.query, min_final_score=0.0, query_vector=vector).chunks)
        old_docs, verdict = previous.get(golden.id, ("", "TODO"))
        same = [d.split(" (")[0] for d in old_docs.split(", ")] == [doc for doc, _, _ in near]
        verdict = (
            verdict if golden.id in previous and same else ("recheck" if golden.id in previous else "TODO")
        )
        if verdict != VERDICT_OK:
            pending += 1
            if show is not None:
                show(f"\n## {golden.id}: {golden.query}  [{verdict}]")
                for doc, cos, text in near:
                    show(f"  - {doc} ({cos:.2f}): {snippet(golden.query, text)}")
        rows.append(
            f"| `{golden.id}` | {', '.join(golden.tags)} | {cell(golden.query)} | {docs} | "
            f"{'retrieves' if nonempty else 'empty'} | {verdict} |"
        )
    retrieving = sum("| retrieves |" in row for row in rows)
    table.write_text(
        f"# `{suite}` checked against its nearest documents\n\n"
        f"Written by `nomad-lab goldens check --corpus {shown(corpus_dir)} --goldens {shown(goldens_dir)}`"
        f" (rows and documents); the `checked` column is filled by hand after reading the three documents"
        f" ({VERDICT_OK!r}: none of them answers the question). Index {index.fingerprint}, embedder"
        f" {index.embedder.name}. {retrieving} of {len(rows)} questions retrieve something at floor 0.\n\n"
        + HEADER
        + "\n|---|---|---|---|---|---|\n"
        + "\n".join(rows)
        + "\n",
        encoding="utf-8",
    )
    return SuiteCheck(table, len(rows), retrieving, pending)
