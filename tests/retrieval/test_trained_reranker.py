"""The optional nanoranker adapter: one-line errors without it, real scores in passage order with it."""

from __future__ import annotations

import importlib.util
import math
import sys
from importlib.metadata import version

import pytest

from nomad_lab.retrieval.trained_reranker import Reranker, RerankerError, load_reranker

INSTALLED = importlib.util.find_spec("nanoranker") is not None
needs_nanoranker = pytest.mark.skipif(
    not INSTALLED, reason="nanoranker not installed: `pip install -e .[rerank]` (scripts/setup.sh does it)"
)


@pytest.fixture(scope="module")
def reranker():
    return load_reranker("nanoranker")


def test_an_unknown_spec_is_one_line_listing_the_accepted_forms() -> None:
    with pytest.raises(
        RerankerError, match=r"^unknown reranker spec 'bge-reranker' \(accepted: nanoranker\)$"
    ):
        load_reranker("bge-reranker")


def test_a_missing_install_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoranker", None)  # makes `import nanoranker` raise ImportError
    with pytest.raises(RerankerError) as info:
        load_reranker("nanoranker")
    message = str(info.value)
    assert "\n" not in message and "pip install -e .[rerank]" in message


@needs_nanoranker
@pytest.mark.slow
def test_scores_are_raw_per_passage_in_the_given_order(reranker) -> None:
    query = "How do I keep bread from going stale?"
    relevant = (
        "Store bread in a cloth bag at room temperature, or slice and freeze it to keep it fresh longer."
    )
    unrelated = [
        "The violin concerto premiered in Leipzig in 1845 under Mendelssohn's friend Ferdinand David.",
        "Set the router's channel width to 20 MHz when neighbouring networks crowd the 2.4 GHz band.",
    ]
    forward = reranker.score(query, [relevant, *unrelated])
    backward = reranker.score(query, [*unrelated[::-1], relevant])
    assert len(forward) == 3 and all(isinstance(s, float) and math.isfinite(s) for s in forward)
    assert forward[0] > max(forward[1:])
    assert backward[::-1] == pytest.approx(forward, abs=1e-5)  # same pairs, reversed order
    # raw, not normalized over the call: a passage's score does not depend on its neighbours
    assert reranker.score(query, [relevant])[0] == pytest.approx(forward[0], abs=1e-5)
    assert sum(forward) != pytest.approx(1.0)
    assert reranker.score(query, []) == []


@needs_nanoranker
@pytest.mark.slow
def test_cached_scores_equal_nanorankers_own_rank(reranker) -> None:
    import nanoranker  # optional

    query = "Quelle est la capitale du Canada ?"
    passages = [
        "Ottawa is the capital city of Canada, on the south bank of the Ottawa River.",
        "Toronto is the largest city in Canada by population.",
        "Ottawa is the capital city of Canada, on the south bank of the Ottawa River.",  # a repeat
        "Bake the loaf at 220 °C for thirty minutes.",
    ]
    expected = dict(nanoranker.rank(query, passages, top_n=len(passages), normalize_scores=False))
    first = reranker.score(query, passages)
    assert first == pytest.approx([expected[p] for p in passages], abs=1e-6)
    assert first[0] == first[2] and first[0] > first[3]
    assert reranker.score(query, passages) == first  # the second call reads the cached embeddings


def test_the_cache_keeps_at_most_cache_size_texts() -> None:
    calls: list[str] = []

    class Network:
        def run(self, _names, feed):
            pairs = feed["input"]
            return [pairs[:, :1] * pairs[:, 1:2]]

    def embed(text: str) -> list[float]:
        calls.append(text)
        return [float(len(text))]

    reranker = Reranker("nanoranker", "stub", embed, Network(), cache_size=2)
    assert reranker.score("abc", ["de", "f"]) == [6.0, 3.0]
    assert calls == ["de", "f", "abc"]
    assert reranker.score("abc", ["f"]) == [3.0] and len(calls) == 3  # both cached
    assert reranker.score("abc", ["de"]) == [6.0] and calls[3:] == ["de"]  # "de" had been evicted
    assert reranker.score("abc", []) == []
    reranker.cache_size = 0  # no cache: every text embedded on every call
    assert reranker.score("abc", ["de"]) == [6.0] and calls[4:] == ["de", "abc"]


@needs_nanoranker
@pytest.mark.slow
def test_identity_names_the_version_and_weights(reranker) -> None:
    assert reranker.identity.startswith(f"nanoranker=={version('nanoranker')} (")
    assert ".onnx" in reranker.identity and reranker.spec == "nanoranker"
