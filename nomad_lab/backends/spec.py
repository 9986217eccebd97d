"""Backend spec strings: one short string names a backend the same way in the CLI, notebooks and Python.

Why a string and not keyword arguments: notebook parameters (papermill ``-p``) and CLI flags carry
strings, and a study's results must record exactly which backend produced them; a spec string is both
the configuration and the record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote, urlsplit

from nomad_lab.backends.models import PART_MODELS
from nomad_lab.core.errors import NomadLabError

ACCEPTED_FORMS = """accepted backend specs:
  ollama://HOST:PORT/MODEL              native Ollama API (/api/chat), e.g. ollama://127.0.0.1:11434/llama3:8b
  openai://HOST:PORT/v1/MODEL           OpenAI-compatible (LM Studio, llama.cpp server, Ollama /v1),
                                        e.g. openai://127.0.0.1:1234/v1/qwen2.5
  openai+noformat://HOST:PORT/v1/MODEL  the same, but never sends a response format (the seed's behaviour)
  auto://HOST:PORT/MODEL                probe GET /api/tags (SPEC 7.1): native Ollama if it answers, else /v1
  embedded:gemma3-270m | embedded:smollm2-135m | embedded:/path/to/model.gguf
                                        llama-cpp-python in-process (the default)
query options: ?timeout=SECONDS (HTTP backends), ?format=auto|json_schema|json_object|none (openai),
               ?n_ctx=N&threads=N (embedded)"""

EMBEDDED_ALIASES = ("gemma3-270m", "smollm2-135m", *PART_MODELS)
"""The embedded models by name: the two defaults, and the judge ladder's Qwen GGUFs (opt-in extra)."""
DEFAULT_SPEC = "embedded:gemma3-270m"
OPENAI_FORMAT_MODES = ("auto", "json_schema", "json_object", "none")


@dataclass(frozen=True)
class BackendSpec:
    """A parsed spec string. ``text`` keeps the original so results can cite it verbatim."""

    kind: str  # "ollama" | "openai" | "auto" | "embedded"
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


class BackendSpecError(NomadLabError, ValueError):
    """A malformed backend spec; the message lists the accepted forms."""


def _bad(spec: str, why: str) -> BackendSpecError:
    return BackendSpecError(f"bad backend spec {spec!r}: {why}\n{ACCEPTED_FORMS}")


def _float_param(spec: str, params: dict[str, str], name: str) -> float | None:
    if name not in params:
        return None
    try:
        value = float(params[name])
    except ValueError:
        raise _bad(spec, f"{name} must be a number, got {params[name]!r}") from None
    if value <= 0:
        raise _bad(spec, f"{name} must be positive")
    return value


def parse_spec(spec: str) -> BackendSpec:
    """Parse a backend spec string; any malformed spec raises ValueError listing the accepted forms."""
    text = (spec or "").strip()
    if text.startswith("embedded:"):
        return _parse_embedded(text)
    scheme, sep, _rest = text.partition("://")
    if not sep:
        raise _bad(spec, "no scheme (expected ollama://, openai://, auto:// or embedded:)")
    kinds = {"ollama": "ollama", "auto": "auto", "openai": "openai", "openai+noformat": "openai"}
    if scheme not in kinds:
        raise _bad(spec, f"unknown scheme {scheme!r}")
    kind = kinds[scheme]

    parts = urlsplit(text)
    try:
        port = parts.port
    except ValueError:
        raise _bad(spec, "the port is not a number") from None
    if not parts.hostname or port is None:
        raise _bad(spec, "HOST:PORT is required")
    params = dict(parse_qsl(parts.query, keep_blank_values=True))
    timeout = _float_param(spec, params, "timeout")
    segments = [unquote(s) for s in parts.path.split("/") if s]

    base_path, model_segments = "", segments
    format_mode = "auto"
    if kind == "openai":
        if "v1" not in segments:
            raise _bad(spec, "an openai spec needs the API base path, e.g. /v1/MODEL")
        cut = segments.index("v1") + 1
        base_path, model_segments = "/" + "/".join(segments[:cut]), segments[cut:]
        format_mode = "none" if scheme == "openai+noformat" else params.get("format", "auto")
        if format_mode not in OPENAI_FORMAT_MODES:
            raise _bad(spec, f"format must be one of {', '.join(OPENAI_FORMAT_MODES)}")
    model = "/".join(model_segments) or None
    return BackendSpec(kind, text, parts.hostname, port, base_path, model, format_mode, timeout, params)


def _parse_embedded(text: str) -> BackendSpec:
    target, _, query = text[len("embedded:") :].partition("?")
    params = dict(parse_qsl(query, keep_blank_values=True))
    if not target:
        raise _bad(text, "name a model after embedded:")
    if target not in EMBEDDED_ALIASES and not target.endswith(".gguf"):
        raise _bad(text, f"unknown embedded model {target!r}")
    for name in ("n_ctx", "threads"):
        if name in params and not params[name].isdigit():
            raise _bad(text, f"{name} must be a positive integer")
    return BackendSpec("embedded", text, model=target, params=params)
