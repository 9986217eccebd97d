"""``gate export --to ts --bundle``: the repository's best gate (``learned: pool + ce + bank``, which reads
the cross-encoder) as a folder the reference server vendors, run under the project's Node with the pinned
npm packages (installed once into ``.cache/gate-node``), against ``gate apply`` on a sample of each
corpus's stored questions: the same keep decision, the gate's score within 1e-9 of Python's on Node's own
cross-encoder features, each passage's cross-encoder logit within 1e-5 of the stored one."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from nomad_lab.cli import main
from nomad_lab.runners.node_packages import link_node_modules
from tests.gate_export.bundle_runs import BEST_GATE, export_best
from tests.gate_export.conftest import CORPORA, Fitted, applied, run_node

pytestmark = pytest.mark.slow
RUNNER = Path(__file__).with_name("run_bundle.mjs")
CE_TOLERANCE = 1e-5


def bundle(run: Fitted, out: Path, *extra: str) -> Path:
    link_node_modules(export_best(run, "ts", "--bundle", str(out), *extra))
    return out


def stored_passage_scores(run: Fitted) -> dict[str, list[float]]:
    """Each question's top-set passage logits as the gatherer stores them (``gate apply`` filled it)."""
    from nomad_lab.eval.gating import load_run
    from nomad_lab.eval.gating.context import GatherContext
    from nomad_lab.eval.gating.inputs.window_scores import window_scores
    from nomad_lab.retrieval.cross_encoder import DEFAULT_CROSS_ENCODER

    data = load_run(run.store, run.run)
    scores = window_scores(GatherContext(run.store, data), DEFAULT_CROSS_ENCODER)
    assert scores.computed == 0  # every pair came from the cache gate apply filled
    return {gid: row.tolist() for gid, row in zip(data.pools.ids, scores.passages, strict=True)}


@pytest.mark.parametrize("corpus", list(CORPORA))
def test_the_bundle_decides_as_gate_apply_with_its_own_cross_encoder(
    ce_runs: dict[str, Fitted], corpus: str, tmp_path: Path
) -> None:
    run = ce_runs[corpus]
    python = applied(run, "pool,ce")
    threshold, expected = python["threshold"], python["scores"]
    stored = stored_passage_scores(run)
    folder = bundle(run, tmp_path / "bundle")
    assert (folder / "model" / "model.onnx").is_file() and (folder / "model" / "tokenizer.json").is_file()
    package = json.loads((folder / "package.json").read_text())
    assert package["dependencies"] == {"onnxruntime-node": "1.30.0", "@huggingface/tokenizers": "0.2.0"}
    ts = run_node(RUNNER, run.questions, tmp_path, str(folder))
    assert len(ts) == len(expected) == len(run.questions) >= 10
    kept, compared = 0, 0
    for q in run.questions:
        gid, score = q["id"], expected[q["id"]]
        node = [math.nan if s is None else s for s in ts[gid]["passages"]]
        python_passages = [s for s in stored[gid] if not math.isnan(s)]
        assert len([s for s in node if not math.isnan(s)]) == len(python_passages), gid
        for mine, theirs in zip(node, stored[gid], strict=False):
            assert math.isnan(mine) == math.isnan(theirs), gid
            if not math.isnan(mine):
                assert abs(mine - theirs) <= CE_TOLERANCE, (gid, mine, theirs)
                compared += 1
        assert abs(ts[gid]["score"] - score) <= 1e-6, (gid, ts[gid]["score"], score)
        assert ts[gid]["keep"] == (score >= threshold), gid
        kept += score >= threshold
    assert compared >= 2 * len(run.questions)  # most top sets hold several passages
    assert 0 < kept < len(run.questions)  # the gate decides something both ways


def test_a_judge_gate_is_refused_in_one_line_naming_the_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gate = json.loads(BEST_GATE.read_text())
    gate["kinds"] = [*gate["kinds"], "judge"]
    path = tmp_path / "judge.json"
    path.write_text(json.dumps(gate))
    argv = ["gate", "export", str(path), "--to", "ts", "--store", str(tmp_path / "s.duckdb")]
    assert main([*argv, "--bundle", str(tmp_path / "b")]) == 1
    err = capsys.readouterr().err
    assert "cannot export a gate that reads judge (a judge model)" in err and err.count("\n") == 1
    assert not (tmp_path / "b").exists()


def test_model_path_points_the_bundle_at_the_servers_copy(tmp_path: Path) -> None:
    out = tmp_path / "b"
    argv = ["gate", "export", str(BEST_GATE), "--to", "ts", "--store", str(tmp_path / "s.duckdb")]
    assert main([*argv, "--bundle", str(out), "--model-path", "/srv/models/ms-marco"]) == 0
    assert not (out / "model").exists()
    assert '"modelDir": "/srv/models/ms-marco"' in (out / "gate.ts").read_text()
    assert {p.name for p in out.iterdir()} == {
        "gate.ts", "cross_encoder.ts", "relevance_check.ts", "package.json", "README.md"
    }  # fmt: skip


JUDGE_RUNNER = Path(__file__).with_name("run_judge.mjs")


def test_the_relevance_check_drops_in_for_the_judge_and_fails_open(
    ce_runs: dict[str, Fitted], tmp_path: Path
) -> None:
    """The reference pipeline's judge call on the bundle's class: on when the setting says so, keep or drop
    all as ``gate apply`` decides, and every error kept and counted: a malformed passage, a missing model.
    The pipeline's floor is 0 here (the gate replacing it): at the reference's 0.62 the sample's refusals
    that pass the floor are the near-domain ones this gate keeps, and a drop is what is under test."""
    from nomad_lab.core.reference import RAG_DEFAULT_TOP_K

    floor = 0.0
    run = ce_runs["default"]
    python = applied(run, "pool,ce")
    decide = {gid: s >= python["threshold"] for gid, s in python["scores"].items()}
    judged = [q for q in run.questions if any(p["score"] >= floor for p in q["passages"])]
    picked = [q for q in judged if decide[q["id"]]][:2] + [q for q in judged if not decide[q["id"]]][:2]
    assert len(picked) == 4  # two the gate keeps, two it drops, each with chunks above the floor
    first = picked[0]
    cases = [{**q, "setting": True} for q in picked]
    cases += [{**first, "id": f"setting-{raw}", "setting": raw} for raw in ("1", "yes", None, "TRUE")]
    cases += [{**first, "id": "setting-string", "setting": "true"}]
    cases += [{**first, "id": "blank", "question": "  ", "setting": True}]
    broken = [*first["passages"], {"text": "a passage", "score": "high"}]  # a malformed one in the pool
    cases += [{**first, "id": "malformed", "passages": broken, "setting": True}]
    options = {"floor": floor, "topK": RAG_DEFAULT_TOP_K}
    folder = bundle(run, tmp_path / "bundle")
    out = run_node(JUDGE_RUNNER, cases, tmp_path, str(folder), json.dumps(options))
    verdicts = out["cases"]
    for q in picked:
        chunks = len([p for p in q["passages"] if p["score"] >= floor][:RAG_DEFAULT_TOP_K])
        keep = decide[q["id"]]
        assert verdicts[q["id"]] == {
            "kept": chunks if keep else 0, "rejected": 0 if keep else chunks, "judged": True,
            "verdict": keep, "reason": None,
        }  # fmt: skip
    assert all(verdicts[f"setting-{raw}"] is None for raw in ("1", "yes", "None", "TRUE"))
    as_string = verdicts["setting-string"]
    assert as_string["judged"] and as_string["verdict"] == decide[first["id"]]
    assert verdicts["blank"]["reason"] == "blank-question" and not verdicts["blank"]["judged"]
    malformed = verdicts["malformed"]
    assert not malformed["judged"] and malformed["rejected"] == 0 and malformed["kept"] > 0
    assert malformed["reason"] == f'malformed passage {len(broken)}: score "high" is not a number'

    stats = out["stats"]
    assert (stats["calls"], stats["failures"]) == (6, 1)  # the blank question is not a call
    assert stats["rejected"] == sum(verdicts[q["id"]]["rejected"] for q in picked) > 0
    assert "6 calls" in out["line"] and "1 failed open" in out["line"] and len(out["warnings"]) == 1

    missing = {**options, "modelDir": str(tmp_path / "no-model")}
    gone = run_node(JUDGE_RUNNER, cases[:2], tmp_path, str(folder), json.dumps(missing))
    assert all(v["judged"] is False and v["rejected"] == 0 for v in gone["cases"].values())
    assert all("no-model" in v["reason"] for v in gone["cases"].values())
    assert (gone["stats"]["calls"], gone["stats"]["failures"]) == (2, 2)
