"""The studies that fit or pair a gate read the pools the gates are fitted on: a run they retrieve
themselves is retrieved as ``study gates`` retrieves one, each follow-up by its standalone rewrite."""

from __future__ import annotations

from typing import Any

import pytest

from nomad_lab.studies.gating import answerability, gates, reader_probe, sufficiency
from nomad_lab.studies.shape import resolve_params


class Retrieved(Exception):
    """Raised by the stand-in retrieval: the test needs only what the study asked for."""


@pytest.mark.parametrize(
    "module", [gates, sufficiency, answerability, reader_probe], ids=lambda m: m.__name__.rsplit(".", 1)[-1]
)
def test_a_run_retrieved_now_is_retrieved_standalone(module: Any, monkeypatch, tmp_path) -> None:
    asked: dict[str, Any] = {}

    def study_run(p: Any, run: Any = None, **retrieval: Any) -> str:
        asked.update(retrieval)
        raise Retrieved

    monkeypatch.setattr(module, "study_run", study_run)
    params = resolve_params(module.PARAMS, {"store": str(tmp_path / "s.duckdb")}, "test")
    with pytest.raises(Retrieved):
        module.compute(params)
    assert asked == {"standalone": True}
