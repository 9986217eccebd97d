"""The TypeScript a reference server runs: a portable gate rendered into ``gate_module.ts``, and the floor
as a settings snippet.

Why a template file: the feature code is TypeScript a reader can open and review beside
:mod:`nomad_lab.gate.runtime`, whose Python it mirrors line for line; only the ``GATE`` constant (the
portable gate's JSON: coefficients, threshold, fingerprints, stop words, vocabulary) is filled in.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

TEMPLATE = Path(__file__).with_name("gate_module.ts")
PLACEHOLDER = "__GATE__"


def render_gate_module(portable: Mapping[str, Any], command: str) -> str:
    """The self-contained module for one portable gate (``command``: what wrote it, in its first line)."""
    source = TEMPLATE.read_text(encoding="utf-8")
    body = json.dumps(dict(portable), indent=1, ensure_ascii=False, allow_nan=False)
    return f"// {command}\n" + source.replace(PLACEHOLDER, body, 1)


def render_floor_snippet(
    floor: float, embedder: Mapping[str, Any] | None, fingerprint: str | None, command: str
) -> str:
    """The reference's ``RAG_MIN_FINAL_SCORE`` for one embedder: a settings snippet to paste over the
    constant in ``constants/ollama.ts`` (the floor is a property of the embedding model's score scale)."""
    model = (embedder or {}).get("model", "the embedder of the run it was measured on")
    return (
        f"// {command}\n"
        f"// The score floor measured for {model} (corpus fingerprint {fingerprint or 'unknown'}).\n"
        "// A floor holds only on the score scale of the embedder it was measured with.\n"
        f"export const RAG_MIN_FINAL_SCORE_EMBEDDER = {json.dumps((embedder or {}).get('model'))};\n"
        f"export const RAG_MIN_FINAL_SCORE = {json.dumps(float(floor))};\n"
    )
