"""``study gates``, ``gate fit`` and ``gate apply`` end to end on the fixture corpus with real MiniLM."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nomad_lab.cli import main
from tests.support.paths import CORPUS, FIXTURES, GOLDENS, ROOT
from tests.support.retrieval import CountingJudgeBackend, fixture_run

BANK = FIXTURES / "gates" / "bank.jsonl"


@pytest.fixture
def run(tmp_path: Path, embedder) -> tuple[Path, str]:
    store = tmp_path / "store.duckdb"
    return store, fixture_run(store, embedder)


def _plain_gates(run_id: str, store: Path, out: Path) -> list[str]:
    """``study gates`` on a stored run with no bank and no cross-encoder (the fast leaderboard)."""
    plain = ["--no-bank", "--no-ce", "--out", str(out)]
    return ["study", "gates", "--run", run_id, "--store", str(store), *plain]


def test_study_gates_writes_the_leaderboard(run: tuple[Path, str], tmp_path: Path, capsys, embedder) -> None:
    from nomad_lab.store import Store
    from nomad_lab.studies.gating.judges import judge_run

    store, run_id = run
    core = fixture_run(store, embedder, suite="core")  # the transfer row's training run
    backend = CountingJudgeBackend()
    with Store(store) as opened:  # verdicts cached beforehand: the study itself makes no judge call
        judge_run(opened, run_id, "counting", floor=0.0, backend=backend, progress=False)
    calls = backend.calls
    out = tmp_path / "gates"
    argv = ["study", "gates", "--run", run_id, "--store", str(store), "--bank", str(BANK), "--out", str(out)]
    argv += [
        "--judge",
        "counting",
        "embedded:gemma3-270m",
        "--transfer-run",
        core,
        "--reranker",
        "nanoranker",
    ]
    assert main([*argv, "--folds", "3", "--repeats", "2"]) == 0
    printed = capsys.readouterr().out
    assert calls > 0 and backend.calls == calls
    for name in (
        "floor (swept)",
        "contrast (swept)",
        "judge counting: verdict",
        "learned: query only",
        "learned: pool + query + bank",
        f"transfer: gate from run {core}",
        "rerank:nanoranker (swept)",
    ):
        assert f"| {name} |" in printed
    assert "| judge embedded:gemma3-270m | - |" in printed and "lack a cached verdict" in printed
    assert "scored on the 3 questions it never saw" in printed
    summary = json.loads((out / "gates.json").read_text())
    assert summary["run"] == run_id and summary["bank"]["questions"] == 6
    learned = next(r for r in summary["rows"] if r["gate"] == "learned: pool + query")
    assert learned["outOfFold"] and learned["repeats"] == 2 and learned["calls"] == 0
    ce_row = next(r for r in summary["rows"] if r["gate"].startswith("ce:"))
    with_ce = next(r for r in summary["rows"] if r["gate"] == "learned: pool + ce + bank")
    assert with_ce["calls"] == pytest.approx(ce_row["calls"]) and ce_row["calls"] > 0  # it pays the passes
    assert with_ce["msPerQuestion"] >= ce_row["msPerQuestion"] > 0
    assert (out / "gates.png").stat().st_size > 5_000
    gate = json.loads((out / "learned_gate.json").read_text())
    assert gate["embedder"]["model"] and gate["training"]["run"] == run_id


def test_gate_fit_then_apply_and_refuse_another_embedder(
    run: tuple[Path, str], tmp_path: Path, capsys
) -> None:
    store, run_id = run
    path = tmp_path / "g.json"
    fit = ["gate", "fit", "--run", run_id, "--out", str(path), "--store", str(store), "--no-bank"]
    assert main([*fit, "--folds", "3", "--repeats", "1"]) == 0
    assert "out of fold" in capsys.readouterr().out
    assert main(["gate", "apply", str(path), "--run", run_id, "--store", str(store)]) == 0
    assert "in sample" in capsys.readouterr().out
    data = json.loads(path.read_text())
    data["embedder"]["model"] = "nomic-embed-text"
    path.write_text(json.dumps(data))
    assert main(["gate", "apply", str(path), "--run", run_id, "--store", str(store)]) == 1
    error = capsys.readouterr().err.strip()
    assert "fitted on nomic-embed-text" in error and "\n" not in error


def test_study_gates_retrieves_another_corpus_when_no_run_is_given(tmp_path: Path, embedder) -> None:
    store, out = tmp_path / "store.duckdb", tmp_path / "gates"
    argv = ["study", "gates", "--corpus", str(CORPUS), "--goldens", str(GOLDENS), "--store", str(store)]
    assert main([*argv, "--no-bank", "--folds", "3", "--repeats", "1", "--out", str(out)]) == 0
    summary = json.loads((out / "gates.json").read_text())
    assert summary["questions"] == 9 and summary["bank"] is None
    assert not any(r["gate"].endswith("+ bank") for r in summary["rows"])
    command = (out / "gates.md").read_text().splitlines()[0]  # the line that reruns it on this corpus
    assert f"--corpus {CORPUS.relative_to(ROOT)} --goldens {GOLDENS.relative_to(ROOT)}" in command
    assert f"--store {store}" in command and command.endswith(f"--out {out}`")


def test_the_transfer_row_can_retrieve_its_own_source_corpus(
    run: tuple[Path, str], tmp_path: Path, capsys
) -> None:
    """``--transfer-corpus/--transfer-goldens`` retrieve the other corpus into the same store and fit the
    transfer gate there, so a published command needs no run id; they go together."""
    store, run_id = run
    other = tmp_path / "other-goldens"
    other.mkdir()
    for suite in ("core", "off_topic"):  # the same questions under other ids: none of them seen by --run
        lines = (GOLDENS / f"{suite}.jsonl").read_text().splitlines()
        other.joinpath(f"{suite}.jsonl").write_text(
            "\n".join(line.replace('"id": "', '"id": "t-', 1) for line in lines) + "\n"
        )
    argv = ["study", "gates", "--run", run_id, "--store", str(store), "--no-bank", "--folds", "2"]
    argv += ["--repeats", "1", "--out", str(tmp_path / "out"), "--transfer-corpus", str(CORPUS)]
    assert main([*argv, "--transfer-goldens", str(other)]) == 0
    printed = capsys.readouterr().out
    assert f"| transfer: gate from corpus {CORPUS} |" in printed
    command = printed.splitlines()[0]  # the table's command names what was set, nothing empty
    assert "--transfer-corpus" in command and "--bank-skip" not in command and "()" not in command
    assert main(argv) == 1
    assert "--transfer-corpus and --transfer-goldens go together" in capsys.readouterr().err


def test_bank_categories_a_corpus_answers_are_left_out_and_an_unknown_one_is_refused(
    run: tuple[Path, str], tmp_path: Path, capsys
) -> None:
    store, run_id = run
    fit = ["gate", "fit", "--run", run_id, "--store", str(store), "--bank", str(BANK), "--folds", "2"]
    fit += ["--repeats", "1", "--out", str(tmp_path / "g.json")]
    assert main(fit) == 0
    with_all = capsys.readouterr().out
    category = json.loads(BANK.read_text().splitlines()[-1])["tags"][1]
    assert main([*fit, "--bank-skip", category]) == 0
    kept = capsys.readouterr().out
    assert "bank 6 extra negatives" in with_all and "bank 6 extra negatives" not in kept
    assert main([*fit, "--bank-skip", "no-such-category"]) == 1
    assert "no bank category no-such-category to skip" in capsys.readouterr().err


def test_judge_rows_on_a_sample_stand_beside_the_floor_on_the_same_questions(
    run: tuple[Path, str], tmp_path: Path, capsys
) -> None:
    from nomad_lab.eval.gating.inputs.verdicts import select_ids
    from nomad_lab.store import Store
    from nomad_lab.studies.gating.judges import judge_run

    store, run_id = run
    backend = CountingJudgeBackend()
    with Store(store) as opened:  # only the sample is judged: the rest of the run stays without verdicts
        judged = judge_run(opened, run_id, "counting", floor=0.0, backend=backend, progress=False, sample=8)
        sampled = select_ids(opened, run_id, sample=8)
    assert list(judged.pools.ids) == sampled and len(sampled) == 8
    out = tmp_path / "gates"
    argv = _plain_gates(run_id, store, out)
    assert main([*argv, "--judge", "counting", "--folds", "2", "--repeats", "2"]) == 0
    assert "| judge counting | - |" in capsys.readouterr().out  # every question: not measured
    assert main([*argv, "--judge", "counting", "--judge-sample", "8", "--folds", "2", "--repeats", "2"]) == 0
    rows = {r["gate"]: r for r in json.loads((out / "gates.json").read_text())["rows"]}
    verdict, floor = rows["judge counting: verdict (sample)"], rows["floor (swept), on the judge's sample"]
    assert verdict["family"] == floor["family"] == "sample"
    assert verdict["note"].startswith("on a stratified sample of 8 questions")
    assert "against the floor on the same sample" in verdict["note"]
    assert rows[json.loads((out / "gates.json").read_text())["best"]]["family"] != "sample"


def test_every_row_splits_by_refusal_kind_and_its_decisions_recompute_it(
    run: tuple[Path, str], tmp_path: Path
) -> None:
    """Each row reports each refusal kind apart, and the decisions file re-splits any row to the same
    figures (here: by kind, as the page does)."""
    from nomad_lab.gate.decisions import pass_rates, read_decisions

    store, run_id = run
    out = tmp_path / "gates"
    argv = _plain_gates(run_id, store, out)
    assert main([*argv, "--folds", "2", "--repeats", "2"]) == 0
    summary = json.loads((out / "gates.json").read_text())
    by_kind = summary["refusalsByKind"]
    assert summary["headlineKind"] == "off-topic" and sum(by_kind.values()) == summary["refusals"]
    decisions = read_decisions(out / "decisions.csv.gz")
    for row in summary["rows"]:
        if "outOfFold" not in row:
            continue
        assert {k for k, v in by_kind.items() if v} == set(row["byKind"])
        rates = pass_rates(decisions, row["gate"])
        for kind, figures in row["byKind"].items():
            assert rates[kind] == pytest.approx(figures["passAtRecallTarget"][0], abs=1e-12)
    floor = [d for d in decisions if d.row == "floor (swept)"]
    assert {d.repeat for d in floor} == {0, 1} and {d.fold for d in floor} == {0, 1}
    assert summary["bestVsFloor"].keys() == {k for k, v in by_kind.items() if v}
