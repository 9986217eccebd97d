"""Backend spec strings: one short string names a backend the same way in the CLI, notebooks and Python.

Why a string and not keyword arguments: notebook parameters (papermill ``-p``) and CLI flags carry
strings, and a study's results must record exactly which backend produced them; a spec string is both
the configuration and the record.

Which strings are accepted is not written here: each kind of backend is one module of
:mod:`nomad_lab.backends.chat_kinds` declaring its prefix(es), forms, parser and opener. This module holds
what the kinds share (the parsed value, its error, the reading of ``scheme://HOST:PORT/...``) and the one
parse that picks the kind by prefix; the accepted forms in help texts and errors are the registry's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote, urlsplit

from nomad_lab.backends import chat_kinds
from nomad_lab.backends.chat_kinds import ChatKind
from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.spec_text import SpecText

DEFAULT_SPEC = "embedded:gemma3-270m"
DEFAULT_HTTP_TIMEOUT_S = 120.0
"""Per-request HTTP timeout when the spec names none: long enough for a cold model load on 2 cores."""


@dataclass(frozen=True)
class BackendSpec:
    """A parsed spec string. ``text`` keeps the original so results can cite it verbatim; ``kind`` is
    the name of the registered kind that parsed it (``ollama``, ``openai``, ``auto``, ``embedded`` ...)."""

    kind: str
    text: str
    host: str = ""
    port: int | None = None
    base_path: str = ""
    model: str | None = None
    format_mode: str = "auto"
    timeout: float | None = None
    params: dict[str, str] = field(default_factory=dict)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}{self.base_path}"

    @property
    def timeout_s(self) -> float:
        """The spec's ``?timeout=``, else :data:`DEFAULT_HTTP_TIMEOUT_S`."""
        return self.timeout or DEFAULT_HTTP_TIMEOUT_S


class BackendSpecError(NomadLabError, ValueError):
    """A malformed backend spec; the message lists the accepted forms."""


def accepted_forms() -> str:
    """Every registered form with what it opens, and each kind's query options: the block help texts
    and :class:`BackendSpecError` show."""
    kinds = chat_kinds.kinds().values()
    rows = [row for kind in kinds for row in kind.forms]
    width = max(len(form) for form, _ in rows) + 2
    lines = ["accepted backend specs:"]
    for form, what in rows:
        lines.append(f"  {form.ljust(width)}{what}")
    options = [f"{kind.options} ({kind.name})" for kind in kinds if kind.options]
    if options:
        lines.append("query options: " + "; ".join(options))
    return "\n".join(lines)


def prefixes() -> list[str]:
    """Every registered prefix (``ollama://``, ``embedded:`` ...), in registry order."""
    return [prefix for kind in chat_kinds.kinds().values() for prefix in kind.prefixes]


def bad_spec(spec: str, why: str) -> BackendSpecError:
    """The error for a spec a kind refuses: the problem, then the accepted forms."""
    return BackendSpecError(f"bad backend spec {spec!r}: {why}\n{accepted_forms()}")


def positive_number(spec: str, params: dict[str, str], name: str) -> float | None:
    """Query option ``name`` as a positive number (None when absent)."""
    if name not in params:
        return None
    try:
        value = float(params[name])
    except ValueError:
        raise bad_spec(spec, f"{name} must be a number, got {params[name]!r}") from None
    if value <= 0:
        raise bad_spec(spec, f"{name} must be positive")
    return value


def parse_http(kind: str, text: str) -> BackendSpec:
    """``scheme://HOST:PORT/PATH?query`` read the way every HTTP kind reads it: the whole path is the
    model (a kind with an API base path, like openai's ``/v1``, splits it further), ``?timeout=``
    checked."""
    parts = urlsplit(text)
    try:
        port = parts.port
    except ValueError:
        raise bad_spec(text, "the port is not a number") from None
    if not parts.hostname or port is None:
        raise bad_spec(text, "HOST:PORT is required")
    params = dict(parse_qsl(parts.query, keep_blank_values=True))
    timeout = positive_number(text, params, "timeout")
    model = "/".join(unquote(s) for s in parts.path.split("/") if s) or None
    return BackendSpec(kind, text, parts.hostname, port, "", model, "auto", timeout, params)


def kind_for(text: str) -> tuple[ChatKind, str]:
    """The registered kind whose prefix starts ``text`` (the longest wins), and that prefix."""
    matches = [(p, k) for k in chat_kinds.kinds().values() for p in k.prefixes if text.startswith(p)]
    if matches:
        prefix, kind = max(matches, key=lambda m: len(m[0]))
        return kind, prefix
    scheme, sep, _ = text.partition("://")
    if sep:
        raise bad_spec(text, f"unknown scheme {scheme!r}")
    raise bad_spec(text, f"no scheme (expected {', '.join(prefixes())})")


def parse_spec(spec: str | BackendSpec) -> BackendSpec:
    """Parse a backend spec string; any malformed spec raises ValueError listing the accepted forms."""
    if isinstance(spec, BackendSpec):
        return spec
    text = (spec or "").strip()
    kind, prefix = kind_for(text)
    return kind.parse(text, prefix)


def forms() -> list[str]:
    """The registered forms, one per entry (``ollama://HOST:PORT/MODEL`` ...): for one-line help texts."""
    return [form for kind in chat_kinds.kinds().values() for form, _ in kind.forms]


BACKEND_SPEC = SpecText(parse_spec, forms)
"""The parameter type of a backend spec: checked at the edge, kept as the text results cite."""
