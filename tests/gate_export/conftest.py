"""Both corpora retrieved once per test run (the real MiniLM embedder, floor 0, the gating suites; built
once for all xdist workers, see ``tests.support.built_once``), a gate fitted on each for every exportable
feature set, and every question's whole pool as a pipeline sees it: what the export, runtime and adapter
tests hold to ``gate apply``.

Embedding is most of this fixture's cost, so each corpus is cut where nothing here depends on its size.
The default corpus keeps its distractor books short (:func:`short_distractors`): whole, they are four
fifths of its text; with none at all every pool looks alike and a gate keeps every question. The pydocs
corpus keeps every other document and the questions that need only those (:func:`document_subset`):
still over a hundred questions, its every refusal, and gates that keep some and drop others."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from nomad_lab.core.workspace import DATASETS_DIR, DEFAULT_CORPUS_DIR, DEFAULT_GOLDENS_DIR
from nomad_lab.data.golden_suites import GATING_SUITES
from nomad_lab.eval.gating.export import pipeline_questions
from tests.support.built_once import built_once

CORPORA = {
    "default": (DEFAULT_CORPUS_DIR, DEFAULT_GOLDENS_DIR),
    "pydocs": (
        DATASETS_DIR / "corpora" / "pydocs" / "corpus",
        DATASETS_DIR / "corpora" / "pydocs" / "goldens",
    ),
}
FEATURE_SETS = ("pool", "pool,coverage", "pool,query")
STORE = "store.duckdb"


def gate_file(kinds: str) -> str:
    return f"{kinds.replace(',', '-')}.json"


@dataclass(frozen=True)
class Fitted:
    """One corpus's stored run, its gates by feature set, and each question's pipeline view."""

    corpus: str
    store: Path
    run: str
    gates: dict[str, Path]
    questions: list[dict[str, Any]]


DISTRACTOR_CHARS = 12_000


def short_distractors(corpus: Path, out: Path) -> Path:
    """A copy of ``corpus`` whose distractor documents keep their first paragraphs, up to about
    :data:`DISTRACTOR_CHARS` characters each; the other documents are copied whole."""
    from nomad_lab.data.corpus import DISTRACTOR_PREFIX

    out.mkdir()
    for path in sorted(corpus.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        if path.name.startswith(DISTRACTOR_PREFIX) and len(text) > DISTRACTOR_CHARS:
            text = text[: text.rfind("\n\n", 0, DISTRACTOR_CHARS) + 1]
        (out / path.name).write_text(text, encoding="utf-8")
    return out


PYDOCS_EVERY = 2


def document_subset(corpus: Path, goldens: Path, out: Path, every: int) -> tuple[Path, Path]:
    """Copies of ``corpus`` keeping every ``every``-th document (in name order) and of ``goldens`` keeping
    the questions that need none of the others: every refusal, and each answerable question whose relevant
    documents were all kept (comment lines stay)."""
    kept = sorted(corpus.glob("*.md"))[::every]
    (out / "corpus").mkdir(parents=True)
    for path in kept:
        shutil.copy(path, out / "corpus" / path.name)
    names = {path.stem for path in kept}
    (out / "goldens").mkdir()
    for path in sorted(goldens.glob("*.jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        keep = [
            line
            for line in lines
            if not line.startswith("{") or set(json.loads(line)["relevantDocIds"]) <= names
        ]
        (out / "goldens" / path.name).write_text("".join(keep), encoding="utf-8")
    return out / "corpus", out / "goldens"


def build_corpora(root: Path, embedder) -> None:
    """Each corpus retrieved into its own store under ``root`` and a gate fitted on it for every exportable
    feature set; the run ids in ``runs.json``."""
    from nomad_lab.cli import main
    from nomad_lab.eval.retrieval_service import RetrievalRequest, retrieve

    runs = {}
    for name, (corpus, goldens) in CORPORA.items():
        folder = root / name
        folder.mkdir()
        store = folder / STORE
        if name == "default":
            corpus = short_distractors(corpus, folder / "corpus")
        else:
            corpus, goldens = document_subset(corpus, goldens, folder, PYDOCS_EVERY)
        request = RetrievalRequest(corpus_dir=corpus, goldens_dir=goldens, suite=GATING_SUITES, floor=0.0,
                                   store_path=store, progress=False)  # fmt: skip
        runs[name] = retrieve(request, embedder).run_id
        for kinds in FEATURE_SETS:
            fit = ["gate", "fit", "--run", runs[name], "--store", str(store), "--no-bank"]
            fit += ["--out", str(folder / gate_file(kinds)), "--features", kinds, "--folds", "2"]
            assert main([*fit, "--repeats", "1"]) == 0
    (root / "runs.json").write_text(json.dumps(runs))


@pytest.fixture(scope="session")
def shared_corpora(tmp_path_factory: pytest.TempPathFactory, embedder) -> Path:
    """The corpora built once per test run (embedding them takes half a minute): read only, every worker's."""
    return built_once(tmp_path_factory, "gate-export-corpora", lambda root: build_corpora(root, embedder))


@pytest.fixture(scope="session")
def fitted(tmp_path_factory: pytest.TempPathFactory, shared_corpora: Path) -> dict[str, Fitted]:
    """The shared corpora copied for this worker: the tests apply gates to the stores, which writes
    features to them."""
    local = tmp_path_factory.mktemp("gate-export")
    shutil.copytree(shared_corpora, local, dirs_exist_ok=True)
    out: dict[str, Fitted] = {}
    for name, run_id in json.loads((local / "runs.json").read_text()).items():
        store = local / name / STORE
        gates = {kinds: local / name / gate_file(kinds) for kinds in FEATURE_SETS}
        out[name] = Fitted(name, store, run_id, gates, pipeline_questions(store, run_id))
    return out


class StoredVectors:
    """The session's embedder, except that a batch of texts the run already embedded gets the vectors the
    store keeps for them: the ones this same embedder computed for those very texts when the corpus was
    retrieved (same model key), documents as documents and questions as queries (only a question that
    retrieval embedded as it is, not expanded or cut). The framework tests put the default corpus's
    chunks into their own vector stores and ask its questions again; embedding them again for each would
    repeat identical work. Any other text (a batch with one unseen text) goes to the embedder itself."""

    def __init__(self, embedder, run: Fitted) -> None:
        import numpy as np  # heavy

        from nomad_lab.retrieval.index import query_texts
        from nomad_lab.store import Store

        self.embedder = embedder
        with Store(run.store, read_only=True) as opened:
            fingerprint = opened.get_run(run.run).fingerprint
            chunks, matrix = opened.index_matrix(fingerprint, embedder.model_key)
        self.vectors = {
            "document": {c.text: row for c, row in zip(chunks, matrix, strict=True)},
            "query": {
                q["question"]: np.asarray(q["queryVector"], matrix.dtype)
                for q, embedded in zip(
                    run.questions, query_texts(embedder, [q["question"] for q in run.questions]), strict=True
                )
                if embedded == q["question"]
            },
        }

    def embed(self, texts, progress: bool = False, desc: str = "embedding", kind: str = "document"):
        import numpy as np  # heavy

        known = self.vectors.get(kind, {})
        if not texts or any(t not in known for t in texts):
            return self.embedder.embed(texts, progress, desc, kind)
        return np.stack([known[t] for t in texts])

    def __getattr__(self, name: str) -> Any:
        return getattr(self.embedder, name)


@pytest.fixture
def corpus_embedder(fitted: dict[str, Fitted], embedder) -> StoredVectors:
    """The session's embedder, reusing the default corpus's stored chunk vectors (see StoredVectors)."""
    return StoredVectors(embedder, fitted["default"])


def applied(fitted: Fitted, kinds: str) -> dict[str, Any]:
    """``gate apply``'s output for one gate on its own run (scores by question id, threshold)."""
    from nomad_lab.eval.gating import load_run
    from nomad_lab.eval.gating.fit import apply_gate, with_features
    from nomad_lab.gate.logistic_gate import LearnedGate

    gate = LearnedGate.load(fitted.gates[kinds])
    data = with_features(fitted.store, load_run(fitted.store, fitted.run), gate.kinds)
    return apply_gate(gate, data)


def run_node(script: Path, cases: list[dict[str, Any]], tmp_path: Path, *args: str) -> Any:
    """``script`` run by the project's TypeScript-capable Node as ``script ARGS[0] cases.json ARGS[1:]``
    (the cases written to ``tmp_path``), its standard output parsed as JSON."""
    import subprocess

    from nomad_lab.runners.programs import TYPESCRIPT_NEED, typescript_node

    node = typescript_node()
    assert node is not None, TYPESCRIPT_NEED
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases))
    flags = ["--experimental-strip-types", "--no-warnings"]
    argv = [str(node), *flags, str(script), args[0], str(path), *args[1:]]
    done = subprocess.run(argv, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def adapters_keep(compressor: Any, postprocessor: Any, q: dict[str, Any]) -> tuple[bool, bool]:
    """Whether the LangChain compressor and the LlamaIndex postprocessor keep question ``q``'s pool
    (each passage's score, raw cosine and source as metadata, as a pipeline would hold them)."""
    from nomad_lab.frameworks.langchain import documents
    from nomad_lab.frameworks.llamaindex import nodes

    return (
        bool(compressor.compress_documents(documents(q["passages"]), q["question"])),
        bool(postprocessor.postprocess_nodes(nodes(q["passages"]), query_str=q["question"])),
    )


@pytest.fixture
def cross_encoder_reused(monkeypatch: pytest.MonkeyPatch) -> dict[tuple, list[float]]:
    """Within one test, the runtime's cross-encoder (any gate loaded from the same model files) scores a
    question's top set once: the framework adapters load the gate again and would run the model on the
    very pairs the runtime just scored. The key is the model file, the windows, the question and the
    passages' texts in order, so an adapter that passes other texts, or the same ones in another order,
    gets them scored by the model."""
    from nomad_lab.gate.pair_model import PortableCrossEncoder

    score, seen = PortableCrossEncoder.score, {}

    def once(self, query: str, passages) -> list[float]:
        key = (self.runner.where, self.window, self.stride, query, tuple(passages))
        if key not in seen:
            seen[key] = score(self, query, passages)
        return list(seen[key])

    monkeypatch.setattr(PortableCrossEncoder, "score", once)
    return seen


def reused_readings(monkeypatch: pytest.MonkeyPatch) -> dict[tuple, Any]:
    """The runtime's sufficiency checks (any loaded from the same body files) read a (question, unit) pair
    once while ``monkeypatch`` holds, and load their ONNX session when they first read a pair: each
    framework adapter loads the check again and would run the body on the very pairs the runtime's check
    just read. The key is the body's bytes and outputs, the tokenizer, the question and the unit's text.
    Only the runtime's checks: ``gate apply``'s scorer reads its pairs itself."""
    import hashlib

    from nomad_lab.gate import portable_sufficiency
    from nomad_lab.gate.unit_reader import UnitBody

    seen: dict[tuple, Any] = {}

    class ReadOnce(UnitBody):
        def __init__(self, model_bytes: bytes, outputs, tokenizer, threads: int | None = None) -> None:
            self.args = (model_bytes, outputs, tokenizer, threads)
            self.key = (hashlib.sha256(model_bytes).hexdigest(), tuple(outputs), str(tokenizer))
            self.loaded = False

        def read_one(self, question: str, text: str):
            key = (*self.key, question, text)
            if key not in seen:
                if not self.loaded:
                    super().__init__(*self.args)
                    self.loaded = True
                seen[key] = super().read_one(question, text)
            return seen[key]

    monkeypatch.setattr(portable_sufficiency, "UnitBody", ReadOnce)
    return seen


from tests.gate_export.bundle_runs import ce_runs  # noqa: E402, F401  (the cross-encoder sample runs)
