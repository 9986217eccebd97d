"""Real retrieval over the fixture corpus, shared by the retrieval, study and runner tests.

``embedder`` is a session fixture (MiniLM loads once per test run); ``fixture_run`` stores one real
retrieval run; ``several_runs`` stores the runs ``main`` must tell apart; ``CountingJudgeBackend`` answers
the judge's schema and counts the calls it gets.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.support.paths import CORPUS, GOLDENS


def fixture_run(
    store: Path,
    embedder,
    suite: str = "core,off_topic",
    corpus_dir: Path = CORPUS,
    dump_path: Path | None = None,
    **extra,
) -> str:
    """A real retrieval run (no floor) of ``suite`` over the fixture corpus (or ``corpus_dir``) into
    ``store``, its pools also written as a reference dump to ``dump_path`` when given; its run id."""
    from nomad_lab.eval.retrieval_service import RetrievalRequest, retrieve
    from nomad_lab.store import Store

    config = RetrievalRequest(
        corpus_dir=corpus_dir,
        goldens_dir=GOLDENS,
        suite=suite,
        floor=0.0,
        store_path=store,
        progress=False,
        **extra,
    )
    run_id = retrieve(config, embedder).run_id
    if dump_path is not None:
        with Store(store) as opened:
            opened.write_dump(run_id, dump_path)
    return run_id


@pytest.fixture(scope="session")
def embedder():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from nomad_lab.retrieval.embedding import load_embedder

    return load_embedder()  # process-wide: the CLI below reuses this instance


@pytest.fixture
def several_runs(tmp_path: Path, embedder) -> dict:
    """A store holding the main run (``core,off_topic`` over the fixture corpus, distractors in), then one
    without distractors, one of another suite, and last one of ``core`` over a grown library: the latest
    run is never the one ``main`` means. ``store``, ``grown`` (that library's folder), ``runs`` by name."""
    store = tmp_path / "ws.duckdb"
    grown = tmp_path / "grown"
    shutil.copytree(CORPUS, grown)
    (grown / "extra-book.md").write_text("# Extra\n\nA chapter about whales and the sea, told at length.\n")
    runs = {
        "main": fixture_run(store, embedder),
        "no_distractors": fixture_run(store, embedder, include_distractors=False),
        "core": fixture_run(store, embedder, suite="core"),
        "grown": fixture_run(store, embedder, suite="core", corpus_dir=grown),
    }
    return {"store": store, "grown": grown, "runs": runs}


class CountingJudgeBackend:
    """A backend that answers the judge's schema like a model would, and counts the calls it receives."""

    kind = "test"
    model = "counting-judge"

    def __init__(self) -> None:
        self.calls = 0

    def chat(self, request):
        from nomad_lab.backends import ChatResult

        self.calls += 1
        question = request.messages[-1]["content"].splitlines()[0]
        on_topic = "haiku" not in question and "hello" not in question
        return ChatResult(content=json.dumps({"on_topic": on_topic}), structured=True)
