"""Test-wide settings: nothing may download a model or reach the network, or touch the user's store."""

import os
import tempfile

# Session fixtures shared across folders: `embedder` (real MiniLM), `shim` (Ollama API over a real model).
pytest_plugins = ["tests.support.retrieval", "tests.support.ollama_checks"]

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# Every default-store path in the suite (and in the notebooks and subprocesses it starts) goes to a
# scratch file, never to the workspace store a user or a running study holds.
os.environ["NOMAD_LAB_STORE"] = os.path.join(tempfile.mkdtemp(prefix="nomad-lab-tests-"), "store.duckdb")
