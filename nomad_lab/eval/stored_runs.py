"""Which retrieval runs a store holds, and which of them is the main job's run over a corpus.

Why: "the latest run" is whatever was stored last (a ``core``-only run over another library, a
labelling sitting's drafts), so a notebook that guesses shows a run nobody chose. ``nomad-lab store
runs`` lists every run with what tells them apart (corpus, suites, embedder, questions, date), and a
notebook or study names one with its RUN value: a run id, or :data:`MAIN_RUN`, the main job's run of the
corpus (the ``core,off_topic`` pools ``nomad-lab reproduce`` stores for the gate studies), found here by
:func:`main_run`. The value itself is read in one place, :func:`nomad_lab.eval.gating.runs.resolve_run`.

A run records its corpus by fingerprint only; the corpus folder is recognised by recomputing each
run's fingerprint over a folder's documents with the run's own ingest parameters and distractor
setting (:func:`runs_over`), so a later run over a grown library never passes for the default corpus.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from nomad_lab.core.first_run import FIRST_RUN_COMMAND, first_run_line, shown
from nomad_lab.core.workspace import DEFAULT_CORPUS_DIR
from nomad_lab.data.corpus import compute_fingerprint, load_corpus

MAIN_RUN = "main"
"""The RUN value meaning the main job's run of the corpus (:func:`main_run`)."""
MAIN_SUITE = "core,off_topic"
"""The suites of that run: ``nomad-lab reproduce`` stores them together (with their dump) for the gates."""
MAIN_RUN_COMMAND = FIRST_RUN_COMMAND
"""The command that stores such a run: the first-run route (:mod:`nomad_lab.core.first_run`)."""


@dataclass(frozen=True)
class RunSummary:
    """One stored run as ``store runs`` lists it."""

    run_id: str
    kind: str
    created_at: datetime
    corpus: str
    """The corpus folder the run is over (relative to the repository when inside it), else its fingerprint."""
    suites: str
    embedder: str
    questions: int
    distractors: bool


class _Fingerprints:
    """Each folder's fingerprint per (ingest parameters, distractor setting), each computed once."""

    def __init__(self, folders: list[Path]) -> None:
        self.folders = [f for f in folders if f.is_dir()]
        self._docs: dict[tuple[Path, bool], list[tuple[str, str]]] = {}
        self._prints: dict[tuple[Path, str, bool], str] = {}

    def folder_of(self, run: Any) -> Path | None:
        """The first folder whose documents, ingested as ``run`` was, give ``run``'s fingerprint."""
        distractors = bool(run.params.get("includeDistractors", True))
        parts = list(run.params.get("ingestParts", []))
        for folder in self.folders:
            key = (folder, "\n".join(parts), distractors)
            if key not in self._prints:
                if (folder, distractors) not in self._docs:
                    corpus = load_corpus(folder, include_distractors=distractors)
                    self._docs[(folder, distractors)] = [(d.doc_id, d.text) for d in corpus.docs]
                self._prints[key] = compute_fingerprint(parts, self._docs[(folder, distractors)])
            if self._prints[key] == run.fingerprint:
                return folder
        return None


def embedder_spec(params: dict[str, Any]) -> str:
    """The embedder as ``--embedder`` spells it (its recorded identity's spec), else its model name."""
    identity = params.get("embedder")
    spec = identity.get("spec") if isinstance(identity, dict) else identity
    return str(spec or params.get("embeddingModel") or "")


def list_runs(
    store: Any, corpora: list[Path] | None = None, kind: str | None = "retrieval"
) -> list[RunSummary]:
    """Every run of ``kind`` in ``store`` (an open :class:`nomad_lab.store.Store`), oldest first, each
    with the first of ``corpora`` (default: the default corpus) it is over."""
    prints = _Fingerprints(list(corpora) if corpora else [DEFAULT_CORPUS_DIR])
    counts = store.run_question_counts()
    out = []
    for run_id in store.run_ids(kind):
        run = store.get_run(run_id)
        folder = prints.folder_of(run)
        out.append(
            RunSummary(
                run_id,
                run.kind,
                run.created_at,
                shown(folder) if folder is not None else f"fingerprint {run.fingerprint}",
                run.suite or str(run.params.get("suite") or ""),
                embedder_spec(run.params),
                counts.get(run_id, 0),
                bool(run.params.get("includeDistractors", True)),
            )
        )
    return out


def runs_over(store: Any, corpus_dir: str | Path) -> list[str]:
    """The retrieval runs over the documents of ``corpus_dir`` (see the module doc), newest first."""
    prints = _Fingerprints([Path(corpus_dir)])
    return [r for r in reversed(store.run_ids("retrieval")) if prints.folder_of(store.get_run(r)) is not None]


def main_run(store: Any, corpus_dir: str | Path | None = None) -> str | None:
    """The newest run of :data:`MAIN_SUITE` over ``corpus_dir`` (None: the default corpus) with its
    distractors, or None."""
    for run_id in runs_over(store, corpus_dir if corpus_dir is not None else DEFAULT_CORPUS_DIR):
        run = store.get_run(run_id)
        if run.suite == MAIN_SUITE and run.params.get("includeDistractors", True):
            return run_id
    return None


def runs_table(runs: list[RunSummary], main: str | None = None, corpus: Path = DEFAULT_CORPUS_DIR) -> str:
    """The listing ``store runs`` prints: one line per run, oldest first, the ``main`` run (over
    ``corpus``) marked."""
    if not runs:
        return first_run_line("no retrieval runs stored", corpus)
    lines = ["run · date (UTC) · corpus · distractors · suites · embedder · questions"]
    for r in runs:
        lines.append(
            f"{r.run_id} · {r.created_at:%Y-%m-%d %H:%M} · {r.corpus} · {'yes' if r.distractors else 'no'} · "
            f"{r.suites} · {r.embedder} · {r.questions}" + ("   <- main" if r.run_id == main else "")
        )
    if main:
        lines.append(f"{MAIN_RUN} (the notebooks' default run): {main}")
    else:
        lines.append(first_run_line(f"{MAIN_RUN}: no {MAIN_SUITE} run over {shown(corpus)} yet", corpus))
    return "\n".join(lines)
