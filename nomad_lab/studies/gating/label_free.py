"""``nomad-lab study label-free``: thresholds set with no label, measured against labels on two corpora.

The declaration and its files; the measurement is :mod:`nomad_lab.eval.gating.label_free_vs_labels`.
Each row's leak is split by refusal kind (the ``core,off_topic`` runs hold off-topic and near-domain
refusals), never blended. Opt-in (``published=False``): about a minute and a half on 2 cores.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nomad_lab.core.workspace import DATASETS_DIR
from nomad_lab.data.refusal_kinds import OFF_TOPIC, REFUSAL_KINDS, kind_label
from nomad_lab.eval.gating.label_free_vs_labels import FEATURES, TOLERANCE, Corpus, compare
from nomad_lab.eval.provenance import command_line
from nomad_lab.gate import crossval
from nomad_lab.studies.params import CORPUS, GOLDENS, PROGRESS, STORE, suite_param
from nomad_lab.studies.result import Field, Page, Result, Table
from nomad_lab.studies.shape import Param, Params, Study, argv

PYDOCS = DATASETS_DIR / "corpora" / "pydocs"
PARAMS = (
    Param("corpus_name", str, "default", "the first corpus's name in the tables"),
    CORPUS,  # the first corpus
    GOLDENS,
    Param("bank_skip", str, (), "bank categories it answers", many=True, metavar="CATEGORY"),
    Param("other_corpus_name", str, "pydocs", "the second corpus's name in the tables"),
    Param("other_corpus", Path, PYDOCS / "corpus", "the second corpus (*.md)"),
    Param("other_goldens", Path, PYDOCS / "goldens", "its goldens"),
    Param("other_bank_skip", str, ("coding",), "bank categories it answers", many=True, metavar="CATEGORY"),
    suite_param("core,off_topic", "suite(s) of both goldens"),
    Param(
        "bank",
        Path,
        None,
        "out-of-scope questions as the learned gates' negatives (default: the shared bank)",
    ),
    STORE,
    PROGRESS,
)


def compute(params: Params) -> dict[str, Any]:
    """Both corpora, each against the other's labelled thresholds."""
    started = time.perf_counter()
    corpora = (
        Corpus(params.corpus_name, params.corpus, params.goldens, tuple(params.bank_skip)),
        Corpus(
            params.other_corpus_name, params.other_corpus, params.other_goldens, tuple(params.other_bank_skip)
        ),
    )
    rows = compare(params.store, corpora, params.suite, bank=params.bank, progress=not params.no_progress)
    return {
        "command": " ".join(command_line()),
        "recallTarget": crossval.RECALL_TARGET,
        "tolerance": TOLERANCE,
        "features": list(FEATURES),
        "refusalKinds": list(REFUSAL_KINDS),
        "headlineKind": OFF_TOPIC,
        "seconds": round(time.perf_counter() - started, 1),
        "corpora": rows,
    }


def _kind_field(kind: str, n: int) -> Field:
    return Field(f"byKind.{kind}.pass", f"{kind_label(kind)} (n = {n}) [95% CI]", "share", ".1%", absent="-")


def corpus_table(corpus: Mapping[str, Any]) -> Table:
    """One corpus's rows: a column per refusal kind present (the off-topic leak first), its n in the
    header; the corpus's counts in the title line."""
    kinds = [k for k in REFUSAL_KINDS if corpus["refusalsByKind"].get(k)]
    fields = (
        Field("gate", "gate"),
        Field("threshold", "threshold"),
        Field("point", "point", "", ".3f", absent="-"),
        Field("recall", "recall@5 [95% CI]", "share", ".3f"),
        *(_kind_field(k, corpus["refusalsByKind"][k]) for k in kinds),
        Field("recallMinusInFold", "recall - in fold", "share", "+.3f", absent=""),
    )
    title = (
        f"**{corpus['name']}** ({corpus['questions']} labelled questions, {corpus['refusals']} refusals; "
        f"{corpus['pseudoQuestions']} pseudo-questions drafted, their recall@5 with no gate "
        f"{corpus['pseudoBaseRecall']:.3f}; labelled {corpus['baseRecall']:.3f}; thresholds transferred "
        f"from {corpus['other']})"
    )
    return Table(str(corpus["name"]), fields, tuple(corpus["rows"]), title=title)


def pages(doc: Mapping[str, Any]) -> tuple[Page, ...]:
    """``label_free.md`` from the stored document alone: the command, then one table per corpus."""
    return (Page("label_free.md", (f"`{doc['command']}`", *(corpus_table(c) for c in doc["corpora"]))),)


def result(out: dict[str, Any]) -> Result:
    """``label_free.json`` (the run's id left out: the provenance record holds it) and its page."""
    return STUDY.documented(out, {k: v for k, v in out.items() if k != "run_id"})


STUDY = Study(
    name="label-free",
    title="Thresholds without labels: label-free, in-fold and transferred, on both corpora, per refusal kind",
    run=compute,
    rows=lambda out: [{"corpus": c["name"], **row} for c in out["corpora"] for row in c["rows"]],
    command=argv("study label-free --store runs/label_free.duckdb"),
    published=False,  # two corpora retrieved, drafted and fitted: about a minute and a half on 2 cores
    stage=63,
)
