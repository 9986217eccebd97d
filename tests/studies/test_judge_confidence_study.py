"""The confidence study over a judged run: every table from the same arrays, written with its plot."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from nomad_lab.eval.gating.inputs.verdicts import stratified_ids
from nomad_lab.gate.agreement import NO_RELEVANT
from nomad_lab.gate.pools import pools_from_records
from nomad_lab.publish.results import write
from nomad_lab.studies.gating.judge_confidence import confidence_parts, run_confidence_study
from nomad_lab.studies.gating.judges import JudgedRun
from nomad_lab.studies.result import Result


def records(n: int = 40) -> list[dict]:
    rng = np.random.default_rng(5)
    out = []
    for i in range(n):
        refusal = i % 2 == 0
        top = float(np.round(rng.uniform(0.4, 0.9), 3))
        out.append(
            {
                "id": f"q{i}",
                "tags": ["off-topic" if refusal else "single-hop"],
                "expectRefusal": refusal,
                "relevantDocIds": [] if refusal else [f"d{i}"],
                "candidates": [{"docId": f"d{i}", "score": top, "semanticScore": top}],
            }
        )
    return out


def test_study_tables_agree_with_the_arrays(tmp_path: Path) -> None:
    recs = records()
    pools = pools_from_records(recs)
    refusal = pools.expect_refusal
    p_true = np.where(refusal, 0.3, 0.7)  # a judge that separates perfectly at tau in (0.3, 0.7]
    p_true[3] = np.nan  # one answerable set without a confidence
    verdicts = np.ones(pools.size)  # ...but says true to everything
    gold = np.where(refusal, 0.0, 1.0)
    gold[5] = NO_RELEVANT
    judged = JudgedRun(
        pools, verdicts, np.full(pools.size, 10.0), 0.0, "m", "line", 0, pools.size, p_true, gold
    )
    study = run_confidence_study(judged, alpha=0.3)
    overall = study["agreement"][0]
    assert overall["n"] == pools.size - 1 and overall["n_with_p"] == pools.size - 2
    assert overall["auc"][0] == 1.0 and overall["accept_rate_off_topic"] == 1.0
    best = study["compositions_at_target"]["floor + P(true)"]
    assert best["leak"] == 0.0 and best["recall"] == 1.0 and best["setting"] == "floor 0.00, tau 0.32"
    assert study["compositions_at_target"]["floor"]["leak"] > 0.5  # a floor cannot separate these tops
    cal = study["calibrated"]
    assert cal["floor"] is not None and cal["leak"] == 0.0  # 0/20 certifies 0.3: 0.7**20 < 0.05/20 floors
    cascade = study["cascade"]
    assert cascade["judge_every_set"]["calls"] == pools.size
    document, page, figure = confidence_parts(study)
    paths = write(Result("judges", json=document, pages=(page,), figures=(figure,)), tmp_path)
    assert paths["confidence_m.png"].is_file() and paths["confidence_m.png"].with_suffix(".svg").is_file()
    assert json.loads(paths["confidence_m.json"].read_text())["model"] == "m"
    assert "ROC AUC" in paths["confidence_m.md"].read_text()


def test_stratified_sample_takes_both_classes_in_stored_order() -> None:
    recs = records(40)
    ids, refusal = [r["id"] for r in recs], [r["expectRefusal"] for r in recs]
    picked = stratified_ids(ids, refusal, 10, seed=1)
    assert len(picked) == 10 and sum(refusal[ids.index(i)] for i in picked) == 5
    assert [int(i[1:]) for i in picked] == sorted(int(i[1:]) for i in picked)
    assert stratified_ids(ids, refusal, 10, seed=1) == picked
    assert len(stratified_ids(ids[:3], refusal[:3], 10)) == 3
    with pytest.raises(TypeError):
        stratified_ids(ids, refusal, None)  # type: ignore[arg-type]


def test_ladder_row_names_the_file_and_reads_the_agreement() -> None:
    from nomad_lab.studies.gating.judge_confidence import ladder_markdown, ladder_row

    pools = pools_from_records(records())
    p_true = np.where(pools.expect_refusal, 0.3, 0.7)
    gold = np.where(pools.expect_refusal, 0.0, 1.0)
    judged = JudgedRun(
        pools,
        np.ones(pools.size),
        np.full(pools.size, 10.0),
        0.0,
        "embedded:smollm2-135m",
        "l",
        0,
        40,
        p_true,
        gold,
    )
    row = ladder_row(judged)
    assert row["file_mb"] > 50 and row["agreement"]["auc"][0] == 1.0 and row["median_ms"] == 10.0
    text = ladder_markdown([row], sampled=True)
    assert "stratified sample" in text and "embedded:smollm2-135m" in text and "floor 0.00, tau 0.32" in text
