"""Per-passage judge against one verdict per set, on a real stored retrieval run (scripted judge)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from nomad_lab.backends import ChatResult
from nomad_lab.studies.gating.per_passage import compare_per_passage, markdown
from tests.support.retrieval import fixture_run


class HashJudge:
    """On topic iff the judge input's hash is even: arbitrary but fixed, so subsets really differ."""

    kind = "test"
    model = "hash-judge"

    def __init__(self) -> None:
        self.calls = 0

    def chat(self, request):
        self.calls += 1
        digest = hashlib.sha256(request.messages[-1]["content"].encode()).digest()
        return ChatResult(content=json.dumps({"on_topic": digest[0] % 2 == 0}), structured=True)

    def show(self, model=None):
        raise RuntimeError("no show")


@pytest.mark.slow
def test_per_passage_is_paired_cached_and_never_keeps_more_than_the_floor(tmp_path: Path, embedder) -> None:
    from nomad_lab.store import Store

    store_path = tmp_path / "ws.duckdb"
    run_id = fixture_run(store_path, embedder)
    backend = HashJudge()
    with Store(store_path) as store:
        first = compare_per_passage(store, run_id, "test:hash", backend=backend, progress=False)
        calls = backend.calls
        again = compare_per_passage(store, run_id, "test:hash", backend=backend, progress=False)
    # a one-passage set is the same judge input whole or per passage: asked once, then cached
    assert first.calls["one verdict"] < calls <= first.calls["one verdict"] + first.calls["per passage"]
    assert backend.calls == calls  # the second comparison asked nothing
    assert first.calls["per passage"] > first.calls["one verdict"] == first.sets
    assert again.recall == first.recall and again.leak == first.leak
    for gate in ("one verdict", "per passage"):
        assert first.leak[gate][0] <= first.leak["floor only"][0]
        assert first.recall[gate][0] <= first.recall["floor only"][0]
    assert first.recall_test.n > 0 and "per passage" in markdown([first], sampled=False)
    assert f"leak over its {first.leak_test.n} off-topic sets" in markdown([first], sampled=False)
    floor_only = next(
        line for line in markdown([first], sampled=False).splitlines() if "| floor only |" in line
    )
    assert floor_only.endswith("| 0 | – |")  # no judge call, no time: absent, never "nan"
