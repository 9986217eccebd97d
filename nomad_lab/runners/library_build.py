"""A library's index built on Dask workers: the embedding cut into batches, each batch embedded on a
worker, each result written by the client as it lands.

Why Dask, and this split: embedding is the whole cost of indexing a library (MiniLM embeds a few chunks a
second per core here; a Wikipedia-sized library is millions of chunks), and it is embarrassingly
parallel, so it spreads over as many processes or machines as there are. The judge grid already runs on
Dask (:mod:`nomad_lab.runners.cluster`) and this follows its rules: workers load the embedder once and
only embed, they never open the DuckDB store; the client chunks the library, asks the store which chunk
hashes it lacks, submits those in batches (a bounded number in flight, so a library larger than memory
streams), and commits each batch's vectors as it finishes. A run killed at any point keeps every batch
already committed, and a rerun embeds only what is still missing, by chunk hash.

Two things keep the workers busy to the end. Every worker loads its model before the first batch is
dealt (:func:`warm_workers`), so no batch waits behind a model load on one worker while another idles.
And batches shrink as the work runs out (:func:`task_sizes`, guided self-scheduling): a fixed batch left
one worker embedding its last whole batch while the other had nothing left.

``dask_fill`` has :data:`nomad_lab.retrieval.index.EmbedFill`'s shape, so :func:`build_index` takes it in
place of the in-process fill and everything after the embedding (the index rows, the search kinds) is
the same code.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from nomad_lab.core.cpu_threads import THREADS_ENV
from nomad_lab.retrieval.embedding import Embedder, load_embedder
from nomad_lab.retrieval.index import check_cached_dimension
from nomad_lab.store import Store

__all__ = ["DEFAULT_BATCH", "MIN_BATCH", "dask_fill", "embed_batch", "task_sizes", "warm_workers"]

DEFAULT_BATCH = 256
"""Chunks per task: large enough that a task's overhead is noise, small enough that a kill loses little."""
MIN_BATCH = 32
"""The smallest task :func:`task_sizes` deals near the end: still tens of windows for a model to sort by
length and batch, so a small task pads little."""


@lru_cache(maxsize=4)
def _worker_embedder(spec: str, threads: int | None) -> Embedder:
    """One embedder per spec per worker process: the model loads once, not once per batch. ``threads``
    caps the model runner's threads (two workers on two cores must not each spin two)."""
    if threads:
        os.environ[THREADS_ENV] = str(threads)
        import torch  # heavy: only to cap its intra-op pool before the model runs

        torch.set_num_threads(threads)
    return load_embedder(spec)


def embed_batch(spec: str, texts: Sequence[str], threads: int | None = None) -> np.ndarray:
    """Runs on a worker: the texts' document vectors by the embedder ``spec`` names (no store here)."""
    return _worker_embedder(spec, threads).embed(list(texts), progress=False)


def warm_worker(spec: str, threads: int | None = None) -> None:
    """Runs on a worker: load its embedder (once per process) without embedding anything."""
    _worker_embedder(spec, threads)


def warm_workers(client: Any, spec: str, threads: int | None = None) -> None:
    """Every current worker loads the embedder ``spec`` names, all at once, before any batch is dealt."""
    client.run(warm_worker, spec, threads)


def task_sizes(total: int, batch: int, workers: int, smallest: int = MIN_BATCH) -> list[int]:
    """Chunks per task, in dealing order: ``batch`` while there is plenty, then a share of what is left
    (a ``2 * workers``-th, never under ``smallest``), so the last tasks are small and the workers finish
    close together instead of one waiting on another's last whole batch."""
    sizes, left = [], total
    while left > 0:
        size = min(batch, left, max(smallest, -(-left // (2 * max(1, workers)))))
        sizes.append(size)
        left -= size
    return sizes


def dask_fill(
    client: Any, batch_size: int = DEFAULT_BATCH, in_flight: int = 0, threads: int | None = None
) -> Callable[..., int]:
    """An embed-what-is-missing function for :func:`~nomad_lab.retrieval.index.build_index` that embeds on
    ``client``'s workers. ``in_flight`` bounds the batches submitted at once (default: twice the workers);
    ``threads`` caps each worker's model threads (a LocalCluster: the cores divided among its workers)."""

    def fill(store: Store, embedder: Embedder, texts: dict[str, str], progress: bool = True) -> int:
        from distributed import as_completed  # heavy

        check_cached_dimension(store, embedder)
        cached = store.cached_embedding_keys(embedder.model_key, texts)
        todo = [(sha, text) for sha, text in texts.items() if sha not in cached]
        workers = max(1, len(client.scheduler_info()["workers"]))
        batches, begin = [], 0
        for size in task_sizes(len(todo), batch_size, workers, min(MIN_BATCH, batch_size)):
            batches.append(todo[begin : begin + size])
            begin += size
        window = in_flight or 2 * workers
        spec = embedder.spec.text
        if todo:
            warm_workers(client, spec, threads)
        pending = iter(batches)
        running: dict[Any, list[tuple[str, str]]] = {}

        def submit_next() -> None:
            batch = next(pending, None)
            if batch is not None:
                future = client.submit(embed_batch, spec, [t for _, t in batch], threads, pure=False)
                running[future] = batch

        for _ in range(window):
            submit_next()
        bar = tqdm(
            total=len(todo), desc=f"embedding on {workers} worker(s)", unit="chunk", disable=not progress
        )
        done = as_completed(list(running))
        for future in done:
            batch = running.pop(future)
            store.put_embeddings(embedder.model_key, [sha for sha, _ in batch], future.result())
            bar.update(len(batch))
            before = set(running)
            submit_next()
            done.update(set(running) - before)
        bar.close()
        return len(todo)

    return fill
