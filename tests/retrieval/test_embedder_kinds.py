"""A new embedder is one module: dropped into a package, it is parsed, listed in ``--embedder`` help texts
and errors, loaded, and builds a real index in a real store, with no other file touched."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from nomad_lab.cli import main
from nomad_lab.core.errors import NomadLabError
from nomad_lab.data.corpus import load_corpus
from nomad_lab.retrieval import embedder_kinds as registry
from nomad_lab.retrieval.embedder_spec import EmbedderError, accepted_forms, parse_embedder_spec
from nomad_lab.retrieval.embedding import load_embedder
from nomad_lab.retrieval.index import build_index
from nomad_lab.store import Store
from nomad_lab.studies import registry as studies
from nomad_lab.studies.shape import resolve_params
from tests.support.paths import CORPUS
from tests.support.registries import dropped_package

HASHED_KIND = '''"""``hashed:<dimension>``: character trigrams hashed into buckets (no model)."""

from __future__ import annotations

import zlib

import numpy as np

from nomad_lab.retrieval.embedder_base import Embedder
from nomad_lab.retrieval.embedder_kinds import EmbedderKind
from nomad_lab.retrieval.embedder_spec import EmbedderSpec, bad_embedder


class HashedEmbedder(Embedder):
    def __init__(self, spec: EmbedderSpec) -> None:
        self.spec, self.name, self.model_version = spec, "hashed-trigrams", "1"
        self.dimension = int(spec.target)

    def _forward(self, batch):
        out = np.zeros((len(batch), self.dimension))
        for row, text in enumerate(batch):
            padded = f"  {text.lower()} "
            for i in range(len(padded) - 2):
                out[row, zlib.crc32(padded[i : i + 3].encode()) % self.dimension] += 1
        return out


def parse(text, rest, options):
    if not rest.isdigit():
        raise bad_embedder(text, "hashed: takes a dimension")
    return EmbedderSpec(text, "hashed", target=rest, options=dict(options))


KIND = EmbedderKind("hashed", ("hashed:<dimension>",), parse, lambda spec, device: HashedEmbedder(spec))
'''


@pytest.fixture
def hashed_registered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from dropped_package(
        tmp_path, monkeypatch, registry, "more_embedder_kinds", {"embed_hashed.py": HASHED_KIND}
    )


def test_the_registered_kinds_are_the_five_the_project_documents() -> None:
    assert set(registry.kinds()) == {"st", "ollama", "openai", "gguf", "wordllama"}
    assert "wordllama:[<dimension>]" in accepted_forms() and "st:[<directory or package>]" in accepted_forms()


def test_a_new_embedder_is_one_module(
    hashed_registered: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert parse_embedder_spec("hashed:64?window_chars=300").kind == "hashed"
    with pytest.raises(EmbedderError, match="unknown kind 'bert'") as refused:
        parse_embedder_spec("bert:x")
    assert "hashed:<dimension>" in str(refused.value) and "\n" not in str(refused.value)
    with pytest.raises(EmbedderError, match="hashed: takes a dimension"):
        parse_embedder_spec("hashed:big")

    for argv in (["study", "embedders", "--help"], ["eval", "retrieval", "--help"], ["serve", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
        shown = " ".join(capsys.readouterr().out.split())
        assert "hashed:<dimension>" in shown and "gguf:<path or alias>" in shown, argv

    embedder = load_embedder("hashed:64")
    with Store(tmp_path / "s.duckdb") as store:
        index, built = build_index(load_corpus(CORPUS), store, embedder, progress=False)
    assert built.embedded > 0 and index.matrix.shape[1] == 64
    assert np.allclose(np.linalg.norm(index.matrix, axis=1), 1, atol=1e-5)
    top = index.search("How do I install a Python package offline?", score_threshold=0.0)
    assert top.stages.candidates and top.stages.candidates[0].semantic_score > 0

    growth = studies.get("growth").params
    assert resolve_params(growth, {"embedder": "hashed:64"}, "study growth").embedder == "hashed:64"
    with pytest.raises(
        NomadLabError, match=r"^study growth: --embedder 'hashed:x': embedder spec 'hashed:x'"
    ):
        resolve_params(growth, {"embedder": "hashed:x"}, "study growth")
