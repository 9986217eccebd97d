"""``nomad-lab library build --embedder`` indexes a library on Dask workers, and resumes.

Real parts throughout: WordLlama (its weights ship in its wheel) embeds on the workers of a real
LocalCluster, the client writes each batch into a DuckDB store, and the vectors must be the ones an
in-process build writes. A build that stopped midway (its committed batches in the store) embeds only
the chunks still missing, by hash.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from nomad_lab.core.workspace import DEFAULT_CORPUS_DIR
from nomad_lab.data.corpus import load_corpus
from nomad_lab.retrieval.index import build_index, chunk_records, ingest_params
from nomad_lab.runners.cluster import dask_client
from nomad_lab.runners.library_build import dask_fill, task_sizes
from nomad_lab.store import Store
from tests.support.paths import CORPUS

pytest.importorskip("wordllama")
SPEC = "wordllama:64"


@pytest.fixture(scope="module")
def wordllama():
    from nomad_lab.retrieval.embedding import load_embedder

    return load_embedder(SPEC)


def vectors(store: Path, model_key: str, shas: list[str]) -> np.ndarray:
    with Store(store, read_only=True) as opened:
        found = opened.get_embeddings(model_key, shas)
    return np.stack([found[s] for s in shas])


def test_workers_embed_what_the_store_lacks_and_equal_an_in_process_build(
    tmp_path: Path, wordllama, monkeypatch
) -> None:
    corpus = load_corpus(DEFAULT_CORPUS_DIR)  # 341 chunks: several batches, several in flight
    records = chunk_records(corpus, ingest_params(wordllama))
    shas = list(dict.fromkeys(r.text_sha256 for r in records))
    here, there = tmp_path / "here.duckdb", tmp_path / "there.duckdb"
    with Store(here) as store:
        _, in_process = build_index(corpus, store, wordllama, progress=False)
    with Store(there) as store:  # a build that was killed after its first batch was committed
        first = shas[:100]
        texts = {r.text_sha256: r.text for r in records}
        store.put_embeddings(wordllama.model_key, first, wordllama.embed([texts[s] for s in first]))
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    with dask_client(workers=1) as client, Store(there) as store:
        # Dask's trim threshold, which slows a model's batches on a worker, is left out
        assert set(client.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_")).values()) == {None}
        _, resumed = build_index(
            corpus, store, wordllama, progress=False, fill=dask_fill(client, batch_size=64)
        )
    assert in_process.embedded == len(shas)
    assert resumed.embedded == len(shas) - 100  # nothing embedded twice
    assert resumed.chunks == in_process.chunks and resumed.fingerprint == in_process.fingerprint
    assert np.allclose(
        vectors(here, wordllama.model_key, shas), vectors(there, wordllama.model_key, shas), atol=1e-6
    )


@pytest.mark.parametrize(
    "total, batch, workers", [(2048, 256, 2), (341, 64, 1), (10, 256, 2), (100_000, 256, 4)]
)
def test_tasks_cover_the_work_once_and_shrink_toward_the_end(total: int, batch: int, workers: int) -> None:
    """Every chunk in exactly one task, none over the batch, sizes never growing; the last tasks small
    enough that no worker waits on another's last whole batch."""
    sizes = task_sizes(total, batch, workers)
    assert sum(sizes) == total and max(sizes) <= batch
    assert sizes == sorted(sizes, reverse=True)
    assert sizes[-1] <= max(32, -(-batch // (2 * workers)))
    assert task_sizes(0, batch, workers) == []


def test_the_command_indexes_a_folder_and_a_rerun_embeds_nothing(tmp_path: Path, capsys) -> None:
    from nomad_lab.cli import main

    docs = tmp_path / "docs"
    shutil.copytree(CORPUS, docs)
    argv = ["library", "build", "--out", str(tmp_path / "lib"), "--source", "--add", str(docs)]
    argv += ["--embedder", SPEC, "--store", str(tmp_path / "lib.duckdb"), "--workers", "1", "--no-progress"]
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert "on 1 local worker(s)" in first and " 0 from the cache" in first
    build = json.loads((tmp_path / "lib" / "index_builds.json").read_text())[SPEC]
    assert (
        build["workers"] == 1
        and build["embedded"] == build["chunks"] > 0
        and "othersCpuShare" in build["load"]
    )
    assert main([*argv, "--no-collect"]) == 0  # the folder as the first build left it: nothing to embed
    again = capsys.readouterr().out
    assert ", 0 embedded" in again and "library:" not in again


def test_a_bad_batch_size_is_refused_before_any_work(tmp_path: Path, capsys) -> None:
    from nomad_lab.cli import main

    argv = ["library", "build", "--out", str(tmp_path / "lib"), "--source", "--add", str(CORPUS)]
    assert main([*argv, "--embedder", SPEC, "--store", str(tmp_path / "s.duckdb"), "--batch", "0"]) == 1
    assert "--batch: must be positive, got 0" in capsys.readouterr().err
    assert not (tmp_path / "s.duckdb").exists()
