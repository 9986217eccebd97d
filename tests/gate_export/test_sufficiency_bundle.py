"""The sufficiency check deployed: each corpus's published check (``nomad-lab study sufficiency``'s gate
file: the fine-tuned head, its answer-type weight and threshold) exported as a bundle and as the
runtime's JSON decides a sample of the corpus's stored questions as ``gate apply`` does: the same
"stated" decision from Node, the Python runtime and both framework adapters, the score within 1e-9.

``gate apply``'s side is the gatherer's own scorer (``sufficiency_scores`` with the store's body cache),
run twice: once filling the cache, once reading it, and the two must be equal (a cache that changed a
score would make the deploy disagree with the workbench). The check's files were fitted on the published
runs, whose index fingerprints these test runs do not share, so the gatherer's run check is not asked
here; what is compared is every step from the question and its top-5 set to the decision.

The bundle fails open: a missing model file and a malformed passage keep the chunks without a note,
each counted; the Python runtime refuses them in one line."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from nomad_lab.cli import main
from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.prompts import SUFFICIENCY_NOTE
from nomad_lab.core.workspace import RESULTS_DIR
from nomad_lab.gate import portable_sufficiency
from nomad_lab.gate.runtime import NOTE_KEY, load
from nomad_lab.gate.unit_reader import UnitBody
from nomad_lab.runners.node_packages import link_node_modules
from tests.gate_export.bundle_runs import sample_ids
from tests.gate_export.conftest import CORPORA, Fitted, reused_readings, run_node
from tests.support.built_once import built_once

pytestmark = pytest.mark.slow
RUNNER = Path(__file__).with_name("run_sufficiency.mjs")
CHECKS = {
    "default": RESULTS_DIR / "sufficiency" / "sufficiency-gate.json",
    "pydocs": RESULTS_DIR / "sufficiency" / "pydocs" / "sufficiency-gate.json",
}
SAMPLE = 12


def check_spec(corpus: str) -> str:
    return f"sufficiency:{CHECKS[corpus]}"


def top_sets(run: Fitted, ids: list[str]) -> list[dict[str, Any]]:
    """Each sampled question with its top-5 set (``{text}`` each) as ``gate apply`` reads it."""
    from nomad_lab.eval.gating import load_run
    from nomad_lab.eval.gating.context import GatherContext

    data = load_run(run.store, run.run)
    ctx = GatherContext(run.store, data)
    index = {gid: i for i, gid in enumerate(data.pools.ids)}
    return [
        {
            "id": gid,
            "question": data.queries[index[gid]],
            "passages": [{"text": t} for t in ctx.passages(index[gid])],
        }
        for gid in ids
    ]


def applied(run: Fitted, corpus: str, cases: list[dict[str, Any]]) -> list[float]:
    """``gate apply``'s scores: the gatherer's scorer with the store's body cache, filled then read."""
    from nomad_lab.retrieval.answer_cache import cache_root
    from nomad_lab.retrieval.sufficiency_model import sufficiency_scores

    questions = [(c["question"], [p["text"] for p in c["passages"]]) for c in cases]
    where = f"{check_spec(corpus)} on {run.run}"
    first = sufficiency_scores(str(CHECKS[corpus]), questions, cache_root(run.store), where)
    again = sufficiency_scores(str(CHECKS[corpus]), questions, cache_root(run.store), where)
    assert first.tobytes() == again.tobytes()  # bit for bit: the cache returns what it was given
    return first.tolist()


@pytest.fixture(scope="module")
def cases(
    fitted: dict[str, Fitted], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, list[dict[str, Any]]]:
    """Each corpus's sample (half answerable, half expected refusals) with ``gate apply``'s score, computed
    once per test run (``built_once``: both workers may run tests of this module)."""

    def build(root: Path) -> None:
        out = {}
        for corpus, run in fitted.items():
            sample = top_sets(run, sample_ids(run, SAMPLE))
            for case, score in zip(sample, applied(run, corpus, sample), strict=True):
                case["applied"] = score
            out[corpus] = sample
        (root / "cases.json").write_text(json.dumps(out), encoding="utf-8")

    shared = built_once(tmp_path_factory, "sufficiency-cases", build)
    return json.loads((shared / "cases.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def readings(cases: dict[str, list[dict[str, Any]]]) -> Any:
    """The runtime's checks read each (question, unit) pair once in this module (``reused_readings``);
    after ``cases``, so ``gate apply``'s side has read its own."""
    with pytest.MonkeyPatch.context() as patch:
        yield reused_readings(patch)


def export(corpus: str, run: Fitted, *where: str, action: str = "drop") -> Path:
    argv = ["gate", "export", check_spec(corpus), "--action", action, "--store", str(run.store), *where]
    assert main(argv) == 0
    return Path(where[-1])


def stated(score: float | None, threshold: float) -> bool:
    return score is not None and not math.isnan(score) and score >= threshold


@pytest.mark.parametrize("corpus", list(CORPORA))
def test_node_the_runtime_and_both_adapters_decide_as_gate_apply(
    fitted: dict[str, Fitted],
    cases: dict[str, list[dict[str, Any]]],
    readings: dict[tuple, Any],
    corpus: str,
    tmp_path: Path,
) -> None:
    from langchain_core.documents import Document
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

    from nomad_lab.frameworks.langchain import gate_compressor
    from nomad_lab.frameworks.llamaindex import gate_postprocessor

    run, sample = fitted[corpus], cases[corpus]
    folder = export(corpus, run, "--to", "ts", "--bundle", str(tmp_path / "bundle"))
    link_node_modules(folder)
    portable = export(corpus, run, "--to", "json", "--out", str(tmp_path / "check.json"))
    check = load(portable)
    threshold = check.threshold
    node = run_node(RUNNER, sample, tmp_path, str(folder), "{}")["cases"]
    compressor, postprocessor = gate_compressor(portable), gate_postprocessor(portable)
    decided = {True: 0, False: 0}
    for c in sample:
        expected = stated(c["applied"], threshold)
        python = check.decide(c["question"], c["passages"])
        assert abs(python.score - c["applied"]) <= 1e-9, c["id"]
        assert python.stated == expected and python.keep == expected and python.note is None, c["id"]
        ts = node[c["id"]]
        assert ts["judged"] and ts["stated"] == expected, c["id"]
        assert abs(ts["score"] - c["applied"]) <= 1e-9, c["id"]
        assert ts["kept"] == (len(c["passages"]) if expected else 0)
        docs = [Document(p["text"]) for p in c["passages"]]
        nodes = [NodeWithScore(node=TextNode(text=p["text"]), score=1.0) for p in c["passages"]]
        assert bool(compressor.compress_documents(docs, c["question"])) == expected, c["id"]
        kept = postprocessor.postprocess_nodes(nodes, query_bundle=QueryBundle(c["question"]))
        assert bool(kept) == expected, c["id"]
        decided[expected] += 1
    assert sum(decided.values()) == len(sample) >= 10


def test_the_note_action_keeps_the_passages_with_the_prompt_note(
    fitted: dict[str, Fitted],
    cases: dict[str, list[dict[str, Any]]],
    readings: dict[tuple, Any],
    tmp_path: Path,
) -> None:
    from langchain_core.documents import Document

    from nomad_lab.frameworks.langchain import gate_compressor

    run = fitted["default"]
    portable = export("default", run, "--to", "json", "--out", str(tmp_path / "note.json"), action="note")
    data = json.loads(portable.read_text())
    assert data["action"] == "note" and data["note"] == SUFFICIENCY_NOTE
    check, compressor = load(portable), gate_compressor(portable)
    for c in cases["default"]:
        decision = check.decide(c["question"], c["passages"])
        assert decision.keep
        assert decision.note == (None if decision.stated else SUFFICIENCY_NOTE)
        docs = compressor.compress_documents([Document(p["text"]) for p in c["passages"]], c["question"])
        assert len(docs) == len(c["passages"])
        assert {d.metadata.get(NOTE_KEY) for d in docs} == {decision.note}


def test_the_bundle_fails_open_on_a_missing_model_file_and_a_malformed_passage(
    fitted: dict[str, Fitted], cases: dict[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    run = fitted["default"]
    folder = export("default", run, "--to", "ts", "--bundle", str(tmp_path / "bundle"))
    link_node_modules(folder)
    good = cases["default"][0]
    malformed = {"id": "malformed", "question": good["question"], "passages": [{"text": 5}]}
    out = run_node(RUNNER, [good, malformed], tmp_path, str(folder), "{}")
    assert out["cases"][good["id"]]["judged"]
    bad = out["cases"]["malformed"]
    assert (bad["judged"], bad["kept"], bad["note"]) == (False, 1, None)
    assert bad["reason"] == "malformed passage 1: no text"
    empty = tmp_path / "empty"
    shutil.copytree(folder / "model", empty)
    (empty / "body.onnx").unlink()
    out = run_node(RUNNER, [good], tmp_path, str(folder), json.dumps({"modelDir": str(empty)}))
    verdict = out["cases"][good["id"]]
    assert (verdict["judged"], verdict["kept"], verdict["note"]) == (False, len(good["passages"]), None)
    assert out["stats"]["failures"] == 1 and len(out["warnings"]) == 1
    assert "body.onnx" in out["warnings"][0]


def test_the_runtime_refuses_a_missing_model_and_a_malformed_passage_in_one_line(
    fitted: dict[str, Fitted], cases: dict[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    run = fitted["default"]
    portable = export("default", run, "--to", "json", "--out", str(tmp_path / "check.json"))
    good = cases["default"][0]
    with pytest.raises(NomadLabError, match=r"missing; pass model_dir=") as err:
        load(portable, model_dir=tmp_path / "nowhere").decide(good["question"], good["passages"])
    assert "\n" not in str(err.value)
    with pytest.raises(NomadLabError, match=r"a passage without text") as err:
        load(portable).decide(good["question"], [{"text": 5}])
    assert "\n" not in str(err.value)


def test_the_runtime_check_runs_on_the_threads_nomad_lab_threads_gives(
    fitted: dict[str, Fitted], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two test workers (or a check beside a server) on two cores set NOMAD_LAB_THREADS=1: the body's
    onnxruntime session must take it, not spin two threads each. The real body, not the module's
    read-once stand-in (``readings``), which loads its session only on a pair it has not read."""
    monkeypatch.setattr(portable_sufficiency, "UnitBody", UnitBody)
    portable = export("default", fitted["default"], "--to", "json", "--out", str(tmp_path / "check.json"))
    for threads in ("1", "3"):
        monkeypatch.setenv("NOMAD_LAB_THREADS", threads)
        session = load(portable).body.session
        assert session.get_session_options().intra_op_num_threads == int(threads)


BOIL = (
    "# Boiling\nBoil water for one minute. At altitudes above 6,500 feet, boil for three minutes.\n\n"
    "# Storage\nStore water in clean containers.\n- Keep it 20 °C or cooler.\n1. Rotate every 6 months."
)


def test_zero_shot_exports_with_its_threshold_and_scores_as_gate_apply(tmp_path: Path, capsys) -> None:
    from nomad_lab.retrieval.sufficiency_model import sufficiency_scores

    out = tmp_path / "zero.json"
    assert main(["gate", "export", "sufficiency:zero-shot@1.5", "--to", "json", "--out", str(out)]) == 0
    check = load(out)
    assert (check.threshold, check.data["head"], check.data["typeWeight"]) == (1.5, None, 0.0)
    questions = [
        ("How long should I boil water above 6,500 feet?", [BOIL]),
        ("What temperature should stored water be kept at?", [BOIL, "Unrelated text about radios here."]),
        ("Who wrote Walden?", []),
    ]
    expected = sufficiency_scores("zero-shot", questions, None, "test")
    for (question, passages), score in zip(questions, expected, strict=True):
        got = check.decide(question, passages)
        assert got.score == score or (math.isnan(got.score) and math.isnan(score))
        assert got.stated == (not math.isnan(score) and score >= 1.5)
    assert main(["gate", "export", "sufficiency:zero-shot", "--to", "json", "--out", str(out)]) == 1
    assert "has no saved threshold" in capsys.readouterr().err
