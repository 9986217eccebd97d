"""Each moved study's files from a planted raw result, through whichever code is on the path: the old
study writer (``study.write`` + ``execute``'s JSON rewrite) or the result value + the publish writer.

Why: a study moved onto the value must publish the same figures, and rerunning the heavy ones (model
training, a chat model over 60 questions) proves nothing the fixtures do not. Run it at the commit
before a move and at the move, then compare (``scripts/results_equal.py``)::

    git worktree add /tmp/old HEAD~1
    (cd /tmp/old && PYTHONPATH=/tmp/old python /work/wt/scripts/writer_fixtures.py /tmp/before)
    PYTHONPATH=$PWD python scripts/writer_fixtures.py /tmp/after
    python scripts/results_equal.py /tmp/before /tmp/after
"""

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path.cwd() / "tests" / "studies"))
from nomad_lab.eval.provenance import write_json

out = Path(sys.argv[1])


def planted_answerability():
    from test_sufficiency_report import planted

    raw = planted()
    kinds = raw["kinds"]
    refusal = np.array([k != "" for k in kinds])
    tags = [("off-topic", "fictional") if k == "off-topic" else (k,) if k else () for k in kinds]
    row = raw["rows"][1]
    data = SimpleNamespace(
        pools=SimpleNamespace(
            expect_refusal=refusal,
            tags=tags,
            size=len(kinds),
            fingerprint="fp",
            ids=[str(i) for i in range(len(kinds))],
        ),
        base_nonempty=np.ones(len(kinds), dtype=bool),
        embedder={},
    )
    return {
        "run": "r1",
        "bank_run": "b1",
        "data": data,
        "figures": row["figures"],
        "zero_figures": raw["rows"][0]["figures"],
        "keep": row["figures"].extra["kept"],
        "splits": raw["splits"],
        "threshold": 0.5,
        "examples": {"gold": 3, "bank": 2},
        "config": SimpleNamespace(epochs=1, seed=3),
        "seconds": {"total": 1.0, "read": 0.5, "readPairs": 2, "pairs": 4, "trainMean": 0.1, "trainings": 1},
        "timing": {"questions": 2, "windows": 8, "windowsPerQuestion": 4.0, "msPerQuestion": 50.0},
    }


def planted_note_effect():
    sys.path.insert(0, str(Path.cwd()))
    from nomad_lab.data.refusal_kinds import UNANSWERABLE
    from nomad_lab.eval.note_conditions import CONDITIONS, choose_action, costs, summarize
    from tests.eval.test_note_conditions import two_strata

    asked, answers = two_strata(claim="It weighs 5 kg | or 6.")
    for i, by in enumerate(answers.values()):
        for c in CONDITIONS:
            by[c] |= {"ms": 100.0 + i, "promptTokens": 80 + i, "cachedPromptTokens": 10, "injected": 1}
    s = summarize(asked, answers)
    return {
        "run": "r1",
        "model": "m",
        "params": {"perStratum": 20},
        "available": {"x": 3},
        "asked": asked,
        "answers": answers,
        "summary": s,
        "costs": costs(answers),
        "choice": choose_action(s, UNANSWERABLE),
        "seconds": 3.0,
        "loadAtStart": [0.5, 0.4, 0.3],
        "run_id": "study-1",
    }


def planted_label_free():
    from test_label_free_study import _row, corpus

    piped = {**_row(), "gate": "floor | a piped name", "recallMinusInFold": None}
    mine = corpus(piped, {**_row(), "recallMinusInFold": 0.01})
    return {"command": "nomad-lab study label-free", "corpora": [mine], "seconds": 1.0, "run_id": "x"}


def planted_rewrite():
    from dataclasses import asdict

    from test_rewrite import rows

    from nomad_lab.studies.gating.rewrite import summarize

    planted = rows({"raw": [0, 0, 1, 1], "free-text": [1, 0, 1, 1], "structured": [1, 1, 1, 1]})
    return summarize(planted, "m", "core") | {"rows": [asdict(r) for r in planted], "run_id": "x"}


def committed_judges(folder: Path):
    """The judges study's raw result read back from a committed folder (the cascade's open ends, stored
    as null, back to -inf and inf)."""
    from nomad_lab.gate.stats import PairedTest
    from nomad_lab.studies.gating.judges import GateComparison, JudgesResult

    rows = [
        GateComparison(**(r | {k: PairedTest(**r[k]) for k in ("leak_test", "recall_test")}))
        for r in json.loads((folder / "judges.json").read_text())
    ]
    confidence = [json.loads(p.read_text()) for p in sorted(folder.glob("confidence_*.json"))]
    for study in confidence:
        for step in study["cascade"].values():
            if isinstance(step, dict):
                step["low"] = float("-inf") if step["low"] is None else step["low"]
                step["high"] = float("inf") if step["high"] is None else step["high"]
    return JudgesResult(rows, confidence)


def committed_growth(folder: Path):
    """The growth study's raw result read back from a committed ``growth.json``."""
    from nomad_lab.studies.gating.growth import GrowthRow
    from nomad_lab.studies.gating.growth_kinds import KindPass

    document = json.loads((folder / "growth.json").read_text())
    rows = []
    for stored in document["rows"]:
        values = {k: v for k, v in stored.items() if k != "chunks_per_s"}
        values["by_kind"] = {kind: KindPass(**p) for kind, p in values["by_kind"].items()}
        rows.append(GrowthRow(**values))
    return {"rows": rows, "judge_model": document["judge_model"], "embedder": document["embedder"]}


def committed_estimator():
    """The estimator's raw result re-summarized from the committed real counts (no tokenizer loaded)."""
    from nomad_lab.studies.budgeting.estimator import EstimatorResult, rows_from_csv, summarize

    rows = rows_from_csv(Path("results/estimator/rows.csv"), Path("datasets"))
    return EstimatorResult(rows, summarize(rows))


def cases():
    from test_sufficiency_report import planted

    from nomad_lab.studies.budgeting.transport import TransportResult

    yield (
        "transport",
        "nomad_lab.studies.budgeting.transport",
        TransportResult("http://h:1", "m", 4000, 1000, 2048, 1000, 980),
    )
    from nomad_lab.gate.stats import PairedTest
    from nomad_lab.studies.gating.per_passage import PerPassageComparison

    for folder in ("", "qwen2.5-coder-0.5b/", "qwen2.5-coder-1.5b/"):
        row = json.loads(Path(f"results/judge_per_passage/{folder}per_passage.json").read_text())
        tests = {k: PairedTest(**row[k]) for k in ("leak_test", "recall_test")}
        raw = {"row": PerPassageComparison(**(row | tests)), "sampled": True}
        yield f"per_passage/{folder}", "nomad_lab.studies.gating.per_passage", raw
    narrowed = json.loads(Path("results/labelling/narrowing.json").read_text())
    shares = json.loads(Path("results/labelling/draft_share.json").read_text())
    yield "labelling", "nomad_lab.studies.gating.labelling", {"narrowing": narrowed, "draftShare": shares}
    ladder = json.loads(Path("results/judge_ladder/ladder.json").read_text())
    yield "ladder", "nomad_lab.studies.gating.ladder", {"rows": ladder, "sampled": True}
    yield (
        "placement",
        "nomad_lab.studies.budgeting.placement",
        json.loads(Path("results/placement/placement.json").read_text()),
    )

    yield "rewrite", "nomad_lab.studies.gating.rewrite", planted_rewrite()

    yield "label_free", "nomad_lab.studies.gating.label_free", planted_label_free()

    yield "note_effect", "nomad_lab.studies.gating.note_effect", planted_note_effect()
    yield "answerability", "nomad_lab.studies.gating.answerability", planted_answerability()
    yield "sufficiency", "nomad_lab.studies.gating.sufficiency", planted()
    yield "estimator", "nomad_lab.studies.budgeting.estimator", committed_estimator()
    for folder in ("judges", "judge_confidence"):
        yield folder, "nomad_lab.studies.gating.judges", committed_judges(Path("results") / folder)
    for folder in ("library_growth", "library_scale"):
        yield folder, "nomad_lab.studies.gating.growth", committed_growth(Path("results") / folder)


for name, module, raw in cases():
    import importlib

    study = importlib.import_module(module).STUDY
    folder = out / name
    if getattr(study, "write", None) is not None:  # the old way, at a commit before the move (no gate file)
        from nomad_lab.studies.gating import answer_report, sufficiency_report

        writers = {
            "answerability": getattr(answer_report, "write", None),
            "sufficiency": getattr(sufficiency_report, "write", None),
        }
        paths = (writers.get(name) or study.write)(raw, folder)
        for path in paths.values():
            if Path(path).suffix == ".json":
                write_json(path, json.loads(Path(path).read_text()))
    else:
        from nomad_lab.publish.results import write

        write(study.result(raw).placed(artefacts=()), folder)
    print(name, sorted(p.name for p in folder.iterdir()))
