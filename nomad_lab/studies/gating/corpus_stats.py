"""How big is a corpus: documents, distractors, chunks as the index cuts them, questions per suite.

Kept as the smallest whole study: a new study is one module like this one, ending with
``STUDY = Study(...)``; the registry finds it, ``nomad-lab study corpus-stats`` gets its options
from ``PARAMS``, and its rows land in the store (see :mod:`nomad_lab.studies.shape`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nomad_lab.data.corpus import load_corpus
from nomad_lab.data.goldens import load_suites
from nomad_lab.retrieval.index import chunk_text
from nomad_lab.studies.params import CORPUS, GOLDENS, STORE, suite_param
from nomad_lab.studies.shape import Params, Study

PARAMS = (CORPUS, GOLDENS, suite_param("*"), STORE)


def compute(params: Params) -> list[dict[str, Any]]:
    """One row per suite, each with the corpus counts beside its questions and refusals."""
    corpus = load_corpus(params.corpus)
    docs = {
        "documents": len(corpus.docs),
        "distractors": sum(d.is_distractor for d in corpus.docs),
        "chunks": sum(len(chunk_text(d.text)) for d in corpus.docs),
    }
    goldens = load_suites(params.goldens, params.suite, corpus.all_doc_ids)
    suites = sorted({g.suite for g in goldens})
    return [
        docs
        | {
            "suite": name,
            "questions": sum(g.suite == name for g in goldens),
            "refusals": sum(g.suite == name and g.expect_refusal for g in goldens),
        }
        for name in suites
    ]


def markdown(rows: list[dict[str, Any]]) -> str:
    head = (
        f"{rows[0]['documents']} documents ({rows[0]['distractors']} distractors), {rows[0]['chunks']} chunks"
    )
    table = [f"| {r['suite']} | {r['questions']} | {r['refusals']} |" for r in rows]
    return "\n".join([head, "", "| suite | questions | refusals |", "|---|---:|---:|", *table]) + "\n"


def write(rows: list[dict[str, Any]], out_dir: Path) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "corpus_stats.md").write_text(markdown(rows), encoding="utf-8")
    return {"md": out_dir / "corpus_stats.md"}


STUDY = Study(
    name="corpus-stats",
    title="Corpus size: documents, chunks and questions per suite",
    run=compute,
    rows=lambda rows: rows,
    markdown=markdown,
    write=write,
    out_dir="results/corpus_stats",
    command=("study", "corpus-stats"),
    tables=("corpus_stats.md",),
    published=False,  # an example and a quick look: not a result of the main job
    stage=90,
    params=PARAMS,
)
