"""Index specs: one string names how retrieval finds its candidate net, the same in CLI, notebooks and Python.

Why a spec: the reference searches Qdrant's HNSW index (approximate), this workbench searched an exact
cosine matrix, and a user's library already lives in their server's Qdrant collection. Which index a
figure was measured on changes the candidate pools, so it is named once (``--index``), recorded in each
run's params, and parsed here before any work starts:

- ``exact`` (the default): cosine over the stored matrix, every chunk scored;
- ``hnsw`` / ``hnsw?m=32&ef_construction=200&ef_search=1024``: faiss's HNSW graph over the same vectors
  (approximate; its parameters are part of the spec and of provenance);
- ``qdrant`` / ``qdrant:DIR``: a Qdrant collection in local mode (``qdrant-client``'s embedded store, the
  API a server has), written from the workspace index in the reference's payload layout;
- ``qdrant://HOST:PORT/COLLECTION``: a real Qdrant server's collection, searched read-only as the
  reference searches it, with nothing embedded or written (pair it with the server's own ``--embedder``).

Options follow ``?`` as URL query parameters; ``collection=NAME`` adds the reference's payload filter
(``must: collection == NAME``) to a Qdrant search, ``api_key_env=VAR`` reads a server's API key from an
environment variable (never from the spec, which is recorded).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlsplit

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.spec_text import SpecText

__all__ = [
    "DEFAULT_INDEX_SPEC",
    "HNSW_DEFAULTS",
    "INDEX_SPEC",
    "IndexSpec",
    "IndexSpecError",
    "index_forms",
    "parse_index_spec",
]

DEFAULT_INDEX_SPEC = "exact"
HNSW_DEFAULTS = {"m": 32, "ef_construction": 200, "ef_search": 1024}
"""faiss's HNSW parameters unless the spec says: graph degree, build beam and search beam.

The search beam is wide because questions are not chunks: a question's vector sits away from the rows
it should find, and a narrow beam walks past them. 1024 is the narrowest beam that kept MiniLM's recall@5
on the large library's 51 and 101 MB sizes (``python benchmarks/index_beam.py``; the figures are on
``docs/gates_at_size.md``). A larger library or a weaker embedder needs a wider one: that benchmark
measures yours."""

QDRANT_OPTIONS = ("collection", "api_key_env")
FORMS = (
    "exact",
    "hnsw",
    "hnsw?m=32&ef_construction=200&ef_search=1024",
    "qdrant",
    "qdrant:/path/to/local/dir",
    "qdrant://HOST:6333/COLLECTION?collection=NAME",
)


class IndexSpecError(NomadLabError, ValueError):
    """An index spec that does not parse."""


def index_forms() -> list[str]:
    """The accepted forms, for help texts and errors."""
    return list(FORMS)


@dataclass(frozen=True)
class IndexSpec:
    """A parsed spec: ``kind`` (exact, hnsw, qdrant), a local ``path`` or server ``url`` and ``collection``
    for Qdrant, and the ``options`` given after ``?`` (HNSW parameters as integers)."""

    text: str
    kind: str
    path: str = ""
    url: str = ""
    collection: str = ""
    options: dict[str, str | int] = field(default_factory=dict)

    @property
    def remote(self) -> bool:
        """A real server's collection: searched read-only, never built from the workspace."""
        return bool(self.url)

    def identity(self) -> dict[str, object]:
        """What provenance records: the kind, the parameters that change results, where a server is."""
        found: dict[str, object] = {"kind": self.kind, **self.options}
        if self.url:
            found |= {"url": self.url, "collection": self.collection}
        return found


def _bad(text: str, problem: str) -> IndexSpecError:
    return IndexSpecError(f"index spec {text!r}: {problem}; accepted forms: {', '.join(FORMS)}")


def _hnsw_options(text: str, query: str) -> dict[str, str | int]:
    options: dict[str, str | int] = dict(HNSW_DEFAULTS)
    for name, value in parse_qsl(query, keep_blank_values=True, strict_parsing=False):
        if name not in HNSW_DEFAULTS:
            raise _bad(text, f"unknown hnsw option {name!r} (known: {', '.join(HNSW_DEFAULTS)})")
        if not value.isdigit() or int(value) < 2:
            raise _bad(text, f"hnsw option {name} must be an integer >= 2, got {value!r}")
        options[name] = int(value)
    return options


def _qdrant_options(text: str, query: str) -> dict[str, str]:
    options = dict(parse_qsl(query, keep_blank_values=True))
    unknown = sorted(set(options) - set(QDRANT_OPTIONS))
    if unknown:
        raise _bad(text, f"unknown qdrant option {unknown[0]!r} (known: {', '.join(QDRANT_OPTIONS)})")
    return {k: v for k, v in options.items() if v}


def parse_index_spec(text: str | None) -> IndexSpec:
    """``exact``, ``hnsw[?...]``, ``qdrant[:DIR]`` or ``qdrant://HOST:PORT/COLLECTION[?...]``; raises
    :class:`IndexSpecError` naming the spec and the accepted forms."""
    raw = (text or DEFAULT_INDEX_SPEC).strip()
    head, _, query = raw.partition("?")
    if head == "exact":
        if query:
            raise _bad(raw, "exact search takes no options")
        return IndexSpec(raw, "exact")
    if head == "hnsw":
        return IndexSpec(raw, "hnsw", options=_hnsw_options(raw, query))
    if head.startswith("qdrant://"):
        parts = urlsplit(head)
        collection = parts.path.strip("/")
        if not parts.hostname or not parts.port:
            raise _bad(raw, "a Qdrant server needs HOST:PORT")
        if not collection or "/" in collection:
            raise _bad(raw, "name one collection after the port: qdrant://HOST:PORT/COLLECTION")
        options = _qdrant_options(raw, query)
        url = f"http://{parts.hostname}:{parts.port}"
        return IndexSpec(raw, "qdrant", url=url, collection=collection, options=dict(options))
    if head == "qdrant" or head.startswith("qdrant:"):
        path = head.removeprefix("qdrant").removeprefix(":")
        options = _qdrant_options(raw, query)
        return IndexSpec(raw, "qdrant", path=path, options=dict(options))
    raise _bad(raw, "unknown index kind")


INDEX_SPEC = SpecText(parse_index_spec, index_forms)
"""The ``--index`` parameter type: checked where it is typed, carried as text."""
