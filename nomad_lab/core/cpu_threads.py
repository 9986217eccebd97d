"""How many CPU threads one model runner uses: 2 (the machines this project targets have two cores), or
what ``NOMAD_LAB_THREADS`` says.

Why one place: llama.cpp, onnxruntime and the GGUF embedder each start their own thread pool. When two
processes run models at once on a 2-core machine (the test suite's two workers, a study beside a model
server), four busy threads share two cores, and llama.cpp's threads, which spin while they wait for each
other, then run many times slower than one thread each would. A process that shares the machine sets
``NOMAD_LAB_THREADS=1``; the test suite does, per worker. Standard library only.
"""

from __future__ import annotations

import os

from nomad_lab.core.errors import NomadLabError

THREADS_ENV = "NOMAD_LAB_THREADS"
DEFAULT = 2


def cpu_threads(default: int = DEFAULT) -> int:
    """The threads a model runner may use: ``NOMAD_LAB_THREADS`` when set (a whole number >= 1)."""
    text = os.environ.get(THREADS_ENV, "").strip()
    if not text:
        return default
    if not text.isdigit() or int(text) < 1:
        raise NomadLabError(f"{THREADS_ENV}={text!r}: expected a whole number of threads, at least 1")
    return int(text)
