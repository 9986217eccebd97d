"""Label-free thresholds against thresholds from labels, on both repository corpora (issue 24, item 5).

For each corpus and for two gates (the score floor, and the logistic gate over pool + coverage features
with the bank, the best learned row that needs no model call), the recall@5 and leak each threshold
achieves on that corpus's labelled goldens:

- ``in fold``: the threshold chosen from labels inside training folds, scored on held-out folds
  (the leaderboard's figure);
- ``label-free``: the threshold set on pseudo-questions drafted from the corpus (no label read); for
  the learned gate with the same per-fold models as ``in fold``, so only the threshold differs;
- ``transferred``: the threshold (and, for the learned gate, the model) chosen on the other corpus
  with all its labels;
- ``transferred model, label-free threshold``: the other corpus's gate, its threshold set here without
  labels (what a user with a new library can do);
- ``label-free model``: a gate fitted on pseudo-questions against the bank, its threshold from them.

Run from the repository root (about a minute and a half on 2 cores):

    flock runs/heavy.lock python scripts/label_free.py --store runs/label_free.duckdb

Writes ``results/label_free/label_free.json`` and ``label_free.md``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.data.refusal_kinds import NEAR_DOMAIN, OFF_TOPIC, REFUSAL_KINDS
from nomad_lab.eval.gating import RunData, gather, load_run
from nomad_lab.eval.gating.fit import bank_run, default_bank, fit_gate, with_features
from nomad_lab.eval.gating.label_free import fit_label_free, pseudo_run, score_threshold, spec_point
from nomad_lab.eval.provenance import provenance_record, write_provenance
from nomad_lab.eval.retrieval_service import RetrievalRequest, retrieve
from nomad_lab.gate import crossval, masks
from nomad_lab.gate.apply import spec_mask
from nomad_lab.gate.crossval import Figures
from nomad_lab.gate.logistic_gate import REGULARIZATION_C, feature_columns, fit_logistic, logistic_scores

ROOT = Path(__file__).resolve().parent.parent
CORPORA = {
    "default": (ROOT / "datasets/corpus", ROOT / "datasets/goldens", ()),
    "pydocs": (
        ROOT / "datasets/corpora/pydocs/corpus",
        ROOT / "datasets/corpora/pydocs/goldens",
        ("coding",),
    ),
}
"""Corpus, goldens and the bank categories it answers (the leaderboard's own --bank-skip)."""
KINDS = ("pool", "coverage")
SEED = 1341
TOLERANCE = 0.03  # the target: label-free recall within 0.03 of the in-fold one


def _triple(t: tuple[float, float, float] | None) -> list[float] | None:
    return None if t is None else [round(float(x), 4) for x in t]


def row_of(
    kinds: np.ndarray,
    row_id: str,
    gate: str,
    threshold: str,
    figures: Figures,
    point: float | None,
    **extra: Any,
) -> dict:
    """One table row; its leak per refusal kind (``kinds``: the run's), never blended."""
    by_kind = crossval.kind_figures(figures, kinds, REFUSAL_KINDS)
    return {
        "id": row_id,
        "gate": gate,
        "threshold": threshold,
        "point": None if point is None else round(float(point), 4),
        "recall": _triple(figures.recall_at_recall),
        "byKind": {k: {"n": v["n"], "pass": _triple(v["passAtRecallTarget"])} for k, v in by_kind.items()},
        **extra,
    }


def _labelled(store: Path, corpus: Path, goldens: Path, skip: tuple[str, ...]) -> tuple[RunData, RunData]:
    request = RetrievalRequest(corpus, goldens, "core,off_topic", floor=0.0, store_path=store, progress=False)
    data = with_features(store, load_run(store, retrieve(request).run_id), KINDS)
    bank = with_features(store, bank_run(store, data, default_bank(), skip), KINDS)
    return data, bank


def _floor_curve(store: Path, data: RunData) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    _, inputs = gather(store, data, "floor")
    points, keep = spec_mask(data.pools, "floor", inputs)
    recall, nonempty = masks.evaluate(data.pools, keep)
    return points, recall, nonempty


def _splits(data: RunData) -> tuple[np.ndarray, np.ndarray, list]:
    y = (~data.pools.expect_refusal).astype(int)
    groups = crossval.question_groups(data.pools.tags, data.pools.expect_refusal, data.features.query)
    return y, groups, crossval.repeated_splits(y, groups, crossval.FOLDS, crossval.REPEATS, SEED)


def floor_rows(store: Path, data: RunData, pseudo: RunData, other: RunData) -> list[dict]:
    points, recall, nonempty = _floor_curve(store, data)
    refusal = data.pools.expect_refusal
    _, _, splits = _splits(data)
    in_fold = crossval.grid_figures(recall, nonempty, refusal, splits)
    lf_points, lf, reached = spec_point(store, pseudo, "floor")
    other_points, other_recall, other_nonempty = _floor_curve(store, other)
    assert np.array_equal(points, lf_points) and np.array_equal(points, other_points)
    tr, _ = crossval.choose_points(
        other_recall, other_nonempty, other.pools.expect_refusal, crossval.RECALL_TARGET, 1.0
    )
    tr = 0 if tr is None else tr  # the other corpus never reaches the target: its loosest point

    def fixed(i: int) -> Figures:
        return crossval.point_figures(recall[i], nonempty[i], refusal, None)

    _row = partial(row_of, data.pools.refusal_kinds)

    return [
        _row("floor/in-fold", "floor", "in fold", in_fold, None),
        _row("floor/label-free", "floor", "label-free", fixed(lf), points[lf], reachedOnPseudo=reached),
        _row("floor/transferred", "floor", "transferred", fixed(tr), points[tr]),
    ]


def _gate_scores(gate: Any, data: RunData) -> np.ndarray:
    x, names = data.features.matrix(gate.kinds)
    return gate.score(x[:, feature_columns(names, gate.features, data.run_id)])


def learned_rows(
    store: Path, data: RunData, bank: RunData, pseudo: RunData, other: tuple, skip: tuple
) -> list:
    pseudo = with_features(store, pseudo, KINDS)
    y, groups, splits = _splits(data)
    refusal = data.pools.expect_refusal
    x, xb, xp = (d.features.matrix(list(KINDS))[0] for d in (data, bank, pseudo))
    rows = np.vstack([x, xp])  # the pseudo-questions after the labelled ones, scored like a held-out fold

    def fit_score(train: np.ndarray, score: np.ndarray, c: float) -> np.ndarray:
        model = fit_logistic(np.vstack([x[train], xb]), np.concatenate([y[train], np.zeros(len(xb), int)]), c)
        return logistic_scores(*model, rows[score])

    in_fold, oof, _ = crossval.learned_figures(
        fit_score,
        y,
        groups,
        data.base_recall,
        data.base_nonempty,
        splits,
        seed=SEED,
        choices=REGULARIZATION_C,
        also=np.arange(len(x), len(rows)),
    )
    keep = np.zeros_like(oof, dtype=bool)
    reached = []
    folds = ((r, test) for r, split in enumerate(splits) for _, test in split)
    for (r, test), pseudo_scores in zip(folds, in_fold.extra["also"], strict=True):
        threshold, ok = score_threshold(pseudo_scores, pseudo)
        keep[r, test] = oof[r, test] >= threshold
        reached.append(ok)

    def decided(k: np.ndarray) -> Figures:
        return crossval.decision_figures(k, None, data.base_recall, data.base_nonempty, refusal, None)

    lf_in = crossval.decision_figures(
        keep, None, data.base_recall, data.base_nonempty, refusal, None, reached, None, splits
    )
    other_data, other_bank = other
    transferred = fit_gate(other_data, [KINDS], other_bank, seed=SEED).gate
    scores = _gate_scores(transferred, data)
    t_lf, t_ok = score_threshold(_gate_scores(transferred, pseudo), pseudo)
    free = fit_label_free(store, pseudo, KINDS, default_bank(), skip, seed=SEED)
    name = "learned: pool + coverage + bank"
    free_scores = _gate_scores(free.gate, data)
    _row = partial(row_of, data.pools.refusal_kinds)
    return [
        _row("learned/in-fold", name, "in fold", in_fold, None),
        _row("learned/label-free", name, "label-free (same per-fold models)", lf_in, None),
        _row("learned/transferred", name, "transferred (model and threshold)",
             decided(scores >= transferred.threshold), transferred.threshold),
        _row("learned/transferred-label-free", name, "transferred model, label-free threshold",
             decided(scores >= t_lf), t_lf, reachedOnPseudo=t_ok),
        _row("learned/label-free-model", "label-free gate: pseudo-questions vs bank, pool + coverage",
             "label-free (model and threshold)", decided(free_scores >= free.gate.threshold),
             free.gate.threshold, reachedOnPseudo=free.reached),
    ]  # fmt: skip


def markdown(out: dict) -> str:
    lines = [f"`{out['command']}`", ""]
    for corpus in out["corpora"]:
        lines += [
            f"**{corpus['name']}** ({corpus['questions']} labelled questions, {corpus['refusals']} refusals; "
            f"{corpus['pseudoQuestions']} pseudo-questions drafted, their recall@5 with no gate "
            f"{corpus['pseudoBaseRecall']:.3f}; labelled {corpus['baseRecall']:.3f}; thresholds transferred "
            f"from {corpus['other']})",
            "",
            "| gate | threshold | point | recall@5 [95% CI] | off-topic leak [95% CI] "
            "| near-domain pass [95% CI] | recall - in fold |",
            "|---|---|---|---|---|---|---|",
        ]
        for row in corpus["rows"]:
            r = row["recall"]
            point = "-" if row["point"] is None else f"{row['point']:.3f}"
            delta = "" if row.get("recallMinusInFold") is None else f"{row['recallMinusInFold']:+.3f}"
            kinds = [row["byKind"].get(k, {}).get("pass") for k in (OFF_TOPIC, NEAR_DOMAIN)]
            cells = " | ".join("-" if k is None else f"{k[0]:.1%} [{k[1]:.1%}, {k[2]:.1%}]" for k in kinds)
            lines.append(
                f"| {row['gate']} | {row['threshold']} | {point} | {r[0]:.3f} [{r[1]:.3f}, {r[2]:.3f}] | "
                f"{cells} | {delta} |"
            )
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=ROOT / "runs/label_free.duckdb", help="DuckDB store")
    parser.add_argument("--out", type=Path, default=ROOT / "results/label_free", help="output folder")
    args = parser.parse_args()
    started = time.perf_counter()
    labelled = {name: _labelled(args.store, c, g, s) for name, (c, g, s) in CORPORA.items()}
    corpora = []
    for name, (corpus_dir, _, skip) in CORPORA.items():
        other = next(n for n in CORPORA if n != name)
        data, bank = labelled[name]
        pseudo = pseudo_run(args.store, corpus_dir, seed=SEED)
        rows = floor_rows(args.store, data, pseudo, labelled[other][0])
        rows += learned_rows(args.store, data, bank, pseudo, labelled[other], skip)
        base = {r["gate"]: r["recall"][0] for r in rows if r["threshold"] == "in fold"}
        for row in rows:
            row["recallMinusInFold"] = round(row["recall"][0] - base.get(row["gate"], np.nan), 4)
            if row["gate"] not in base:
                row["recallMinusInFold"] = None
        corpora.append(
            {
                "name": name,
                "other": other,
                "questions": data.pools.size,
                "refusals": int(data.pools.expect_refusal.sum()),
                "baseRecall": round(float(np.nanmean(data.base_recall)), 4),
                "pseudoQuestions": pseudo.pools.size,
                "pseudoBaseRecall": round(float(np.nanmean(pseudo.base_recall)), 4),
                "rows": rows,
                "withinTolerance": {
                    gate: abs(r["recallMinusInFold"]) <= TOLERANCE
                    for r in rows
                    if r["id"].endswith("/label-free") and (gate := r["id"].split("/")[0])
                },
            }
        )
    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    out = {
        "command": " ".join(["python", *sys.argv]),
        "gitSha": sha,
        "recallTarget": crossval.RECALL_TARGET,
        "tolerance": TOLERANCE,
        "features": list(KINDS),
        "seconds": round(time.perf_counter() - started, 1),
        "corpora": corpora,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "label_free.json").write_text(json.dumps(out, indent=1) + "\n")
    (args.out / "label_free.md").write_text(markdown(out))
    write_provenance(args.out, provenance_record(argv=sys.argv), file="label_free.json")
    print(markdown(out))
    print(f"wrote {args.out}/label_free.json and label_free.md ({out['seconds']} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
