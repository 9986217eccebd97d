"""Index specs parse into the kind and parameters a run records, and a bad one is one clear line."""

from __future__ import annotations

import pytest

from nomad_lab.core.errors import NomadLabError
from nomad_lab.retrieval.index_spec import HNSW_DEFAULTS, INDEX_SPEC, IndexSpecError, parse_index_spec


def test_default_and_exact_are_exact() -> None:
    assert parse_index_spec(None).kind == "exact"
    assert parse_index_spec(" exact ").identity() == {"kind": "exact"}


def test_hnsw_parameters_have_defaults_and_overrides() -> None:
    assert parse_index_spec("hnsw").options == HNSW_DEFAULTS
    spec = parse_index_spec("hnsw?m=16&ef_search=400")
    assert spec.identity() == {"kind": "hnsw", "m": 16, "ef_construction": 200, "ef_search": 400}


def test_qdrant_forms() -> None:
    local = parse_index_spec("qdrant")
    assert (local.kind, local.path, local.remote) == ("qdrant", "", False)
    assert parse_index_spec("qdrant:/tmp/q").path == "/tmp/q"
    server = parse_index_spec("qdrant://10.0.0.5:6333/nomad_knowledge_base?collection=__nomad_eval__")
    assert server.remote
    assert server.identity() == {
        "kind": "qdrant",
        "collection": "nomad_knowledge_base",
        "url": "http://10.0.0.5:6333",
    }
    assert server.options == {"collection": "__nomad_eval__"}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("annoy", "unknown index kind"),
        ("exact?m=3", "takes no options"),
        ("hnsw?m=x", "integer >= 2"),
        ("hnsw?depth=3", "unknown hnsw option 'depth'"),
        ("qdrant://host/coll", "HOST:PORT"),
        ("qdrant://host:6333", "name one collection"),
        ("qdrant?filter=1", "unknown qdrant option"),
    ],
)
def test_bad_specs_are_one_line_naming_spec_and_forms(text: str, problem: str) -> None:
    with pytest.raises(IndexSpecError) as caught:
        parse_index_spec(text)
    message = str(caught.value)
    assert problem in message and repr(text) in message and "qdrant://HOST:6333/COLLECTION" in message
    assert "\n" not in message
    with pytest.raises(NomadLabError):  # the CLI's parameter type: refused where it is typed
        INDEX_SPEC(text)
