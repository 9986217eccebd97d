"""The retrieval tier of the eval harness (the reference's ``eval:retrieval``): goldens in; metrics,
candidate pools and a report out.

One run is the retrieval service (``eval.retrieval_service``: load, index, search, judge, score, store)
followed by
the report over the stored run (``eval.retrieval_report``), the candidate dump and the report files.
Studies that only need the stored pools call :func:`nomad_lab.eval.retrieval_service.retrieve` directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from nomad_lab.eval.reports import write_report
from nomad_lab.eval.retrieval_report import (
    RetrievalEvalResult,
    format_summary,
    render_retrieval_markdown,
    retrieval_report,
)
from nomad_lab.eval.retrieval_service import RetrievalRequest, retrieve
from nomad_lab.store import Store

if TYPE_CHECKING:
    from nomad_lab.backends import Backend
    from nomad_lab.retrieval.embedding import Embedder

__all__ = [
    "RetrievalEvalConfig",
    "RetrievalEvalResult",
    "format_summary",
    "render_retrieval_markdown",
    "run_retrieval_eval",
]


@dataclass(frozen=True)
class RetrievalEvalConfig(RetrievalRequest):
    """A retrieval request plus where the report goes: the candidate dump and the report directory."""

    dump_path: Path | None = None
    report_dir: Path | None = None


def run_retrieval_eval(
    config: RetrievalEvalConfig, embedder: Embedder | None = None, judge_backend: Backend | None = None
) -> RetrievalEvalResult:
    """Retrieve into the store (the service), then report the stored run; writes the dump and the
    report files when configured. ``embedder`` and ``judge_backend`` are handed to :func:`retrieve`."""
    run = retrieve(config, embedder, judge_backend)
    result = retrieval_report(run)
    if config.dump_path:
        with Store(config.store_path) as store:
            result.dump_path = store.write_dump(run.run_id, config.dump_path)
    if config.report_dir is not None:
        result.report_paths = write_report(
            result.report, config.report_dir, render_retrieval_markdown(result.report)
        )
    return result
