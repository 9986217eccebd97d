"""Test-wide settings: nothing may download a model or reach the network, or touch the user's store."""

import os
import tempfile

# Session fixtures shared across folders: `embedder` (real MiniLM), `shim` (Ollama API over a real model),
# `worker_lab` (the worker's JupyterLab, for the browser tests).
pytest_plugins = ["tests.support.retrieval", "tests.support.ollama_checks", "tests.support.browser"]

# Two workers on two cores (the README's command runs the suite in parallel): each model runner gets
# the cores divided among the workers, so no runner's threads wait on a core the other worker holds
# (llama.cpp's spinning threads slow down many times over when they do).
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _WORKERS > 1:
    _THREADS = str(max(1, (os.cpu_count() or 1) // _WORKERS))
    for _name in ("NOMAD_LAB_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_name, _THREADS)

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# Every default-store path in the suite (and in the notebooks and subprocesses it starts) goes to a
# scratch file, never to the workspace store a user or a running study holds.
os.environ["NOMAD_LAB_STORE"] = os.path.join(tempfile.mkdtemp(prefix="nomad-lab-tests-"), "store.duckdb")
