"""``nomad-lab study label-free``: thresholds set with no label, measured against labels on two corpora.

The declaration and its files; the measurement is :mod:`nomad_lab.eval.gating.label_free_vs_labels`.
Each row's leak is split by refusal kind (the ``core,off_topic`` runs hold off-topic and near-domain
refusals), never blended. Opt-in (``published=False``): about a minute and a half on 2 cores.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from nomad_lab.core.workspace import DATASETS_DIR
from nomad_lab.data.refusal_kinds import OFF_TOPIC, REFUSAL_KINDS
from nomad_lab.eval.gating.label_free_vs_labels import FEATURES, TOLERANCE, Corpus, compare
from nomad_lab.eval.provenance import command_line
from nomad_lab.gate import crossval
from nomad_lab.studies.params import CORPUS, GOLDENS, PROGRESS, STORE, suite_param
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


def _kind_cell(figure: dict[str, Any] | None) -> str:
    if not figure or figure["pass"] is None:
        return "-"
    p = figure["pass"]
    return f"{p[0]:.1%} [{p[1]:.1%}, {p[2]:.1%}]"


def markdown(out: dict[str, Any]) -> str:
    """One table per corpus; a column per refusal kind present (the off-topic leak first), its n in the
    header."""
    lines = [f"`{out['command']}`", ""]
    for corpus in out["corpora"]:
        kinds = [k for k in REFUSAL_KINDS if corpus["refusalsByKind"].get(k)]
        names = [
            f"{'off-topic leak' if k == OFF_TOPIC else k + ' pass'} (n = {corpus['refusalsByKind'][k]}) "
            "[95% CI]"
            for k in kinds
        ]
        lines += [
            f"**{corpus['name']}** ({corpus['questions']} labelled questions, {corpus['refusals']} refusals; "
            f"{corpus['pseudoQuestions']} pseudo-questions drafted, their recall@5 with no gate "
            f"{corpus['pseudoBaseRecall']:.3f}; labelled {corpus['baseRecall']:.3f}; thresholds transferred "
            f"from {corpus['other']})",
            "",
            f"| gate | threshold | point | recall@5 [95% CI] | {' | '.join(names)} | recall - in fold |",
            "|---|---|---|---|" + "---|" * len(kinds) + "---|",
        ]
        for row in corpus["rows"]:
            r = row["recall"]
            point = "-" if row["point"] is None else f"{row['point']:.3f}"
            delta = "" if row.get("recallMinusInFold") is None else f"{row['recallMinusInFold']:+.3f}"
            cells = " | ".join(_kind_cell(row["byKind"].get(k)) for k in kinds)
            lines.append(
                f"| {row['gate']} | {row['threshold']} | {point} | {r[0]:.3f} [{r[1]:.3f}, {r[2]:.3f}] | "
                f"{cells} | {delta} |"
            )
        lines.append("")
    return "\n".join(lines)


def write(out: dict[str, Any], out_dir: Path) -> dict[str, Path]:
    """``label_free.json`` and ``label_free.md``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"json": out_dir / "label_free.json", "md": out_dir / "label_free.md"}
    stored = {k: v for k, v in out.items() if k != "run_id"}
    paths["json"].write_text(json.dumps(stored, indent=1) + "\n", encoding="utf-8")
    paths["md"].write_text(markdown(out), encoding="utf-8")
    return paths


STUDY = Study(
    name="label-free",
    title="Thresholds without labels: label-free, in-fold and transferred, on both corpora, per refusal kind",
    run=compute,
    rows=lambda out: [{"corpus": c["name"], **row} for c in out["corpora"] for row in c["rows"]],
    markdown=markdown,
    write=write,
    out_dir="results/label_free",
    command=argv("study label-free --store runs/label_free.duckdb"),
    tables=("label_free.md",),
    published=False,  # two corpora retrieved, drafted and fitted: about a minute and a half on 2 cores
    stage=63,
    params=PARAMS,
)
