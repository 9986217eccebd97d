"""Which stored run a labelling sitting reads its drafts' passages from, instead of retrieving them again.

Why: a sitting retrieves its drafts into the workspace store (real embedder, every draft embedded), and a
person closes the notebook and opens it again many times over a library. The passages a reopened sitting
would retrieve are the ones already stored, so it reads that run, loading no embedder, as long as the
drafts file and the documents are what that run retrieved; a new draft, a reworded one or a changed
document makes it retrieve (and store) a new run.
"""

from __future__ import annotations

from pathlib import Path

from nomad_lab.core.reference import RAG_DEFAULT_SCORE_THRESHOLD, RAG_DEFAULT_TOP_K
from nomad_lab.data.golden_suites import DRAFTS_SUITE, Golden
from nomad_lab.eval.retrieval_metrics import DEFAULT_K_VALUES
from nomad_lab.eval.stored_runs import embedder_spec, runs_over
from nomad_lab.retrieval.embedder_spec import DEFAULT_EMBEDDER_SPEC
from nomad_lab.store import Store

EDITS_SUITE = "label-edits"
"""The suite of the runs that retrieve edited wordings. Its file is written to a temporary folder for
the retrieval only, never beside the drafts (so ``*`` never finds it); the stored runs carry the name
and are of kind ``label-edits``, recording the drafts run they edit (``editsOf``): a resumed sitting
finds the wordings already retrieved there, and ``latest`` or ``store runs`` never see them."""
SITTING_RETRIEVAL = {
    "topK": RAG_DEFAULT_TOP_K,
    "scoreThreshold": RAG_DEFAULT_SCORE_THRESHOLD,
    "minFinalScore": 0.0,
    "kValues": list(DEFAULT_K_VALUES),
    "suite": DRAFTS_SUITE,
    "includeDistractors": True,
    "judgeModel": None,
}
"""The parameters a sitting's drafts run records (``labelling._retrieved``), besides corpus and embedder."""


def stored_drafts_run(store: str | Path, corpus_dir: str | Path, drafts: list[Golden]) -> str | None:
    """The newest stored run that retrieved exactly ``drafts`` (ids, wordings, guesses, in order) as a
    sitting does (:data:`SITTING_RETRIEVAL`, the default embedder) over the documents of ``corpus_dir``
    as they are now; None when there is none (or no store yet)."""
    if not Path(store).is_file():
        return None
    want = [(d.id, d.retrieval_text(), d.expect_refusal, tuple(d.relevant_doc_ids)) for d in drafts]
    with Store(store, read_only=True) as opened:
        for run_id in runs_over(opened, corpus_dir):
            run = opened.get_run(run_id)
            params = {k: run.params.get(k) for k in SITTING_RETRIEVAL}
            if params != SITTING_RETRIEVAL or run.params.get("standalone"):
                continue
            if embedder_spec(run.params) != DEFAULT_EMBEDDER_SPEC:
                continue
            cases = opened.get_cases(run_id)
            if [(c.golden_id, c.query, c.expect_refusal, tuple(c.relevant_doc_ids)) for c in cases] == want:
                return run_id
    return None
