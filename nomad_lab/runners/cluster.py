"""Scale-out on Dask distributed: the judge-model grid and the notebook grid as tasks on a cluster.

Why Dask and this split: a judge grid over a large library is many independent model calls, and each
model server (an Ollama per GPU box, an embedded llama.cpp per worker process) answers one at a time.
So the work is cut into batches of judge inputs, each batch bound to one backend endpoint and sent to
the worker that owns that endpoint. Workers only call models; they never open the DuckDB store. The
client that submitted the tasks writes every verdict into the store's verdict cache, and every model call
into its call log, as its batch finishes, so a run interrupted at any point keeps every finished verdict,
and a rerun submits only the inputs still missing. The grid is a hook of the one place a judge runs over
a run (``eval.gating.inputs.verdicts.run_verdicts``): that finds what the cache lacks, hands exactly that
to the grid and reads every verdict back, so the grid and an in-process run judge the same inputs.

A ``LocalCluster`` (``--workers N``) runs on one machine; ``--scheduler tcp://host:8786`` uses a real
cluster started with ``dask scheduler`` and ``dask worker`` (each worker needs nomad-lab installed).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import lru_cache, partial
from typing import Any

from tqdm import tqdm

from nomad_lab.backends import open_backend
from nomad_lab.core.errors import NomadLabError
from nomad_lab.eval.gating.inputs.verdicts import Filler, JudgeInput
from nomad_lab.services.judge_service import RelevanceJudge
from nomad_lab.services.model_calls import CallBuffer
from nomad_lab.store import ModelCall, Store, Verdict

UNSET_IN_WORKERS: dict[str, None] = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}
"""Dask's setting that a LocalCluster here leaves out of its workers' environment (None unsets it).

Why: Dask starts workers with ``MALLOC_TRIM_THRESHOLD_=65536``, and any explicit trim threshold turns off
glibc's adaptive mmap threshold, so each large buffer a model allocates per batch (a MiniLM batch's
activations) is mapped and unmapped anew: MiniLM embedded markedly slower on a worker than in the
client's process with the same threads (``benchmarks/library_build.py`` measures the two side by side).
A value the user sets in the environment still reaches the workers (they inherit it)."""


@contextmanager
def dask_client(scheduler: str | None = None, workers: int = 0) -> Iterator[Any | None]:
    """A Dask client on ``scheduler``, or on a new LocalCluster of ``workers`` processes; None for neither.
    Closed on exit, with the LocalCluster it started.

    Local workers get one thread each: llama.cpp already uses the cores, and a process per worker keeps
    each embedded model in its own memory. They start without the glibc trim threshold Dask sets in its
    workers (:data:`UNSET_IN_WORKERS`).
    """
    if not scheduler and workers <= 0:
        yield None
        return
    import dask  # heavy
    from distributed import Client, LocalCluster  # heavy

    cluster = None
    if not scheduler:
        with dask.config.set(UNSET_IN_WORKERS):
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=40,
            )
    client = Client(scheduler or cluster)
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


@lru_cache(maxsize=8)
def _worker_judge(endpoint: str) -> Any:
    """One judge per endpoint per worker process: an embedded model loads once, not once per batch."""
    return RelevanceJudge(open_backend(endpoint))


def judge_batch(
    endpoint: str, inputs: Sequence[JudgeInput]
) -> tuple[list[tuple[str, Verdict]], list[ModelCall]]:
    """Runs on a worker: one verdict per input through ``endpoint`` (fails open, never raises), and the
    model calls it made, for the client to log (the worker has no store)."""
    calls = CallBuffer()
    judge = copy.copy(_worker_judge(endpoint))  # the loaded backend is shared; the sink is this batch's
    judge.sink = calls
    return [(item.key, Verdict.of(judge.judge(item.question, item.passages))) for item in inputs], calls


def fill_verdicts(
    client: Any,
    store: Store,
    todo: Mapping[str, Sequence[JudgeInput]],
    *,
    endpoints: Mapping[str, Sequence[str]] | None = None,
    batch_size: int = 4,
    progress: bool = True,
) -> dict[str, int]:
    """Compute the verdict of every input of ``todo`` (judge spec -> the inputs the verdict cache lacks,
    as ``run_verdicts`` finds them) on the cluster; each stored as its batch lands.

    ``endpoints[spec]`` lists backend specs that serve that same model (several Ollama hosts, say); each
    endpoint is pinned to its own worker, round-robin, and batches are spread over the endpoints. By
    default a spec is its own single endpoint. Returns how many verdicts were computed per spec.
    """
    from distributed import as_completed  # heavy

    workers = sorted(client.scheduler_info()["workers"])
    if not workers:
        raise RuntimeError("the Dask cluster has no workers")
    futures: dict[Any, str] = {}
    slot = 0
    for spec, inputs in todo.items():
        pinned = [
            (endpoint, workers[(slot + i) % len(workers)])
            for i, endpoint in enumerate((endpoints or {}).get(spec) or [spec])
        ]
        slot += len(pinned)
        for n, start in enumerate(range(0, len(inputs), batch_size)):
            endpoint, worker = pinned[n % len(pinned)]
            future = client.submit(
                judge_batch,
                endpoint,
                inputs[start : start + batch_size],
                workers=[worker],
                allow_other_workers=True,  # a lost worker's batches still run elsewhere, same endpoint
                pure=False,
            )
            futures[future] = spec
    bar = tqdm(total=sum(map(len, todo.values())), desc="judge grid", unit="verdict", disable=not progress)
    for future in as_completed(list(futures)):
        verdicts, calls = future.result()
        for call in calls:
            store.record_call(call)
        for key, verdict in verdicts:
            store.put_verdict(futures[future], key, verdict)
            bar.update()
    bar.close()
    return {spec: len(inputs) for spec, inputs in todo.items()}


def verdict_filler(
    client: Any, *, endpoints: Mapping[str, Sequence[str]] | None = None, progress: bool = True
) -> Filler | None:
    """``fill_verdicts`` on ``client``: the judge study's ``fill_missing`` hook, called by the one place a
    judge runs over a run with exactly the inputs the cache lacks (None without a client)."""
    if client is None:
        return None
    return partial(fill_verdicts, client, endpoints=endpoints, progress=progress)


def endpoints_by_spec(pairs: Sequence[str], specs: Sequence[str]) -> dict[str, list[str]]:
    """``SPEC=ENDPOINT`` options grouped by judge spec (each spec first, then its other servers); a spec
    not among ``specs`` (the ``--judge-model`` values) is refused."""
    grouped: dict[str, list[str]] = {}
    for pair in pairs:
        spec, sep, endpoint = pair.partition("=")
        if not sep or not endpoint or spec not in specs:
            raise NomadLabError(
                f"--endpoint {pair}: expected SPEC=ENDPOINT where SPEC is one of the --judge-model values"
            )
        grouped.setdefault(spec, [spec]).append(endpoint)
    return grouped
