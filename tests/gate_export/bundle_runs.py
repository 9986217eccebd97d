"""The cross-encoder gate's test runs: a sample of each corpus's questions retrieved again into copies of the
export fixture's stores (its index reused: only the sample's questions are embedded) and the repository's
published ``learned: pool + ce + bank`` gate (``results/gates/learned_gate.json``), which the bundle exports.
The sample runs are built once per test run, with ``gate apply``'s cross-encoder scores in their stores
(:func:`build_samples`).

Why ``gate apply`` scores the sample's pairs here instead of reading the committed cross-encoder cache: the
model is INT8, and onnxruntime's INT8 kernels differ by CPU (VNNI or AVX2), so a score cached on another
machine can differ from this machine's in the third decimal. The runtime, the bundle and the workbench must
agree on one machine; the cache states what another machine measured.

Why a sample: the cross-encoder reads every window of every question's top-5 set, about 35 ms a pair on
this CPU in Python and again in Node; every stored question of both corpora is the benchmark's job
(``benchmarks/gate_bundle.py``), a few dozen are enough to hold the two to each other here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from nomad_lab.core.workspace import RESULTS_DIR
from tests.gate_export.conftest import CORPORA, STORE, Fitted, applied, pipeline_questions
from tests.support.built_once import built_once

BEST_GATE = RESULTS_DIR / "gates" / "learned_gate.json"
SAMPLE = 12
"""Questions per corpus: every n-th of the run's, half answerable and half expected refusals."""


def export_best(run: Fitted, to: str, *where: str) -> Path:
    """``gate export`` of the published gate against ``run``'s store (``where``: ``--out FILE`` or
    ``--bundle DIR`` and its options); the file or folder written."""
    from nomad_lab.cli import main

    argv = ["gate", "export", str(BEST_GATE), "--to", to, "--store", str(run.store), *where]
    assert main(argv) == 0
    return Path(where[1])


def sample_ids(run: Fitted, size: int = SAMPLE) -> list[str]:
    """``size`` question ids spread over the run: half answerable, half expected refusals (the golden
    files' ``expectRefusal``), each taken at even steps through its own kind."""
    goldens = golden_lines(run)
    kinds: dict[bool, list[str]] = {False: [], True: []}
    for q in run.questions:
        if q["passages"]:
            kinds[bool(json.loads(goldens[q["id"]]).get("expectRefusal"))].append(q["id"])
    out = []
    for ids in kinds.values():
        step = max(1, len(ids) // (size // 2))
        out += ids[step // 2 :: step][: size // 2]
    return out


def goldens_dir(run: Fitted) -> Path:
    return CORPORA["default"][1] if run.corpus == "default" else run.store.parent / "goldens"


def golden_lines(run: Fitted) -> dict[str, str]:
    lines = {}
    for path in sorted(goldens_dir(run).glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("{"):
                lines[json.loads(line)["id"]] = line
    return lines


def sample_run(run: Fitted, embedder, folder: Path) -> Fitted:
    """The sample's questions retrieved into ``run``'s store as a run of their own (floor 0); the published
    gate as its only gate."""
    from nomad_lab.eval.retrieval_service import RetrievalRequest, retrieve

    lines = golden_lines(run)
    (folder / "goldens").mkdir(parents=True)
    ids = sample_ids(run)
    (folder / "goldens" / "sample.jsonl").write_text("".join(lines[i] + "\n" for i in ids), encoding="utf-8")
    request = RetrievalRequest(corpus_dir=run.store.parent / "corpus", goldens_dir=folder / "goldens",
                               suite="sample", floor=0.0, store_path=run.store, progress=False)  # fmt: skip
    run_id = retrieve(request, embedder).run_id
    questions = pipeline_questions(run.store, run_id)
    return Fitted(run.corpus, run.store, run_id, {"pool,ce": BEST_GATE}, questions)


def build_samples(root: Path, corpora: Path, embedder) -> None:
    """Each corpus's folder of the shared export corpora (``corpora``) copied under ``root``, its sample run
    (:func:`sample_run`) retrieved into its store and ``gate apply`` of the published gate run on it once,
    which caches the sample's cross-encoder scores in the store; the run ids in ``runs.json``."""
    runs = {}
    for name, run_id in json.loads((corpora / "runs.json").read_text()).items():
        shutil.copytree(corpora / name, root / name)
        store = root / name / STORE
        sample = sample_run(Fitted(name, store, run_id, {}, pipeline_questions(store, run_id)), embedder,
                            root / name / "sample")  # fmt: skip
        applied(sample, "pool,ce")
        runs[name] = sample.run
    (root / "runs.json").write_text(json.dumps(runs))


@pytest.fixture(scope="session")
def ce_runs(shared_corpora: Path, embedder, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Fitted]:
    """Each corpus's sample run with ``gate apply``'s cross-encoder scores in its store, built once per test
    run (:func:`build_samples`: the scores are what costs) and copied for this worker, whose tests write
    to the stores."""
    shared = built_once(
        tmp_path_factory, "gate-export-ce", lambda root: build_samples(root, shared_corpora, embedder)
    )
    local = tmp_path_factory.mktemp("ce-sample")
    shutil.copytree(shared, local, dirs_exist_ok=True)
    out = {}
    for name, run_id in json.loads((local / "runs.json").read_text()).items():
        store = local / name / STORE
        out[name] = Fitted(name, store, run_id, {"pool,ce": BEST_GATE}, pipeline_questions(store, run_id))
    return out
