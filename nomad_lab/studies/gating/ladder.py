"""The judge ladder: small GGUF judges by size on the same stored sets (AUC, kappa, leak, recall).

Each rung judges the same retrieval run (the run given, or one retrieved here) through the verdict
cache; its row reads the confidence study of that judged run (:mod:`judge_confidence`).
"""

from __future__ import annotations

import json
from typing import Any

from nomad_lab.studies.gating.judge_confidence import LADDER, LADDER_MODELS, ladder_markdown, ladder_row
from nomad_lab.studies.gating.judges import JudgedRun, run_judge_study
from nomad_lab.studies.gating.run_param import RUN, study_run
from nomad_lab.studies.params import WORKSPACE, judge_param, not_negative, suite_param
from nomad_lab.studies.result import Page, Result
from nomad_lab.studies.shape import Param, Params, Study, argv

PARAMS = (
    judge_param(LADDER, "judge spec (repeatable; smallest to largest)"),
    suite_param("core,off_topic", "suite(s) to judge"),
    Param("sample", int, 40, "stratified sample size (0: all)", check=not_negative, metavar="N"),
    *WORKSPACE,
    RUN,
)


def compute(params: Params) -> dict[str, Any]:
    """Judge the run with every rung; one row per rung."""
    judged_runs: list[JudgedRun] = []
    run_judge_study(
        params.judge_model,
        study_run(params),
        store_path=params.store,
        progress=not params.no_progress,
        sample=params.sample or None,
        judged_runs=judged_runs,
    )
    return {"rows": [ladder_row(judged) for judged in judged_runs], "sampled": bool(params.sample)}


def result(raw: dict[str, Any]) -> Result:
    """``ladder.json`` (one row per rung) and ``ladder.md``."""
    page = Page("ladder.md", (ladder_markdown(raw["rows"], raw["sampled"]),))
    return Result("ladder", value=raw, json={"ladder.json": raw["rows"]}, pages=(page,))


STUDY = Study(
    name="ladder",
    title="The judge ladder: four small GGUF judges on a 30-question stratified sample",
    run=compute,
    rows=lambda result: json.loads(json.dumps(result["rows"], default=float)),
    out_dir="results/judge_ladder",
    command=argv("study ladder --sample 30 --store runs/judge.duckdb"),
    published=False,  # four models, the Qwen ones an optional extra: its own command
    stage=66,
    prefix=LADDER_MODELS,
)
