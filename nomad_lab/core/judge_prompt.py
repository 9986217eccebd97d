"""The pure half of the retrieval relevance check: the grammar, the setting, and what the judge reads.

Why a model and not another threshold: on a library holding general prose the nearest chunk to *any*
question scores as high as a genuinely relevant one (the seed measured the weakest correct top hit at
0.666 post-rerank while "write me a haiku about autumn leaves" pulled Walden at 0.705), so the decision
has to be a judgement about the question. Why one verdict for the whole set: asked passage by passage,
every model tried rejected on-topic passages that did not spell the answer out and lost 9–17 points of
recall@5. Ported from the seed's ``relevance_judge.ts``; for text in the Basic Multilingual Plane every
function returns exactly what the TypeScript returns.

Astral characters (outside the BMP, e.g. emoji): JavaScript indexes strings in UTF-16 code units, so
an astral character counts as 2 there and 1 here. Term lengths are measured in UTF-16 units as in JS,
but excerpt windows and offsets are counted in code points, so an excerpt of text holding astral
characters can start or end a few characters away from where the seed's would.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from nomad_lab.core.jsstring import js_collapse_whitespace, js_split_non_alnum, js_trim, utf16_len

JUDGE_EXCERPT_CHARS = 1500
"""Longest excerpt of each passage the judge reads (700 cut answers off mid-sentence)."""

MIN_TERM_LENGTH = 4
"""Shorter question terms carry no topical signal and must not steer the excerpt."""

RELEVANCE_CHECK_MAX_TOKENS = 32
"""``num_predict`` of a judge call: the verdict is a dozen tokens of JSON."""

ELLIPSIS = "\u2026"

ON_TOPIC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"on_topic": {"type": "boolean"}},
    "required": ["on_topic"],
    "additionalProperties": False,
}

JUDGE_SYSTEM_PROMPT = (
    "You check whether search results are about what a user asked. Answer true if at least one "
    "passage is about the same specific subject as the question, even if it does not state the exact "
    "answer. Answer false if the passages only share a word or a loose theme with the question. Also "
    "answer false if the user is not asking for information at all: greetings, chit-chat, or asking "
    "you to produce something new such as a poem, a joke, a translation, or a letter. Respond with "
    'JSON: {"on_topic": true} or {"on_topic": false}'
)


def pick_on_topic(value: object) -> bool | None:
    """The verdict if ``value`` is a mapping whose ``on_topic`` is a real boolean, else None."""
    if isinstance(value, Mapping):
        verdict = value.get("on_topic")
        if isinstance(verdict, bool):
            return verdict
    return None


def is_relevance_check_enabled(raw: object) -> bool:
    """Interpret the stored ``rag.relevanceCheck`` setting: on only for ``True`` or ``"true"``.

    Off unless explicitly on, because the check costs a model call per turn and hurts recall on small
    models; ``1``, ``"1"``, ``"yes"`` and ``"True"`` all mean off, exactly as in the seed.
    """
    return raw is True or (isinstance(raw, str) and raw == "true")


def _question_terms(question: str) -> list[str]:
    seen: dict[str, None] = {}
    for term in js_split_non_alnum(question.lower()):
        if utf16_len(term) >= MIN_TERM_LENGTH:
            seen.setdefault(term, None)
    return list(seen)


def excerpt_for(text: str, question: str, max_chars: int = JUDGE_EXCERPT_CHARS) -> str:
    """The stretch of ``text`` most about ``question``, at most ``max_chars`` long (SPEC §1.2).

    Chunks run to ~3000 characters and the judge sees half of each, so which half matters: the window
    holding the most occurrences of the question's longer terms wins (earliest on ties), opening a
    fifth of the window before the first hit so its sentence reads whole; with no hits, the start.
    """
    clean = js_trim(js_collapse_whitespace(text))
    if len(clean) <= max_chars:
        return clean

    lower = clean.lower()
    hits: list[int] = []
    for term in _question_terms(question):
        at = lower.find(term)
        while at != -1:
            hits.append(at)
            at = lower.find(term, at + len(term))
    if not hits:
        return clean[:max_chars] + ELLIPSIS
    hits.sort()

    best_start, best_count, lo = hits[0], 0, 0
    for hi, position in enumerate(hits):
        while position - hits[lo] > max_chars:
            lo += 1
        if hi - lo + 1 > best_count:
            best_count = hi - lo + 1
            best_start = hits[lo]

    start = max(0, min(best_start - max_chars // 5, len(clean) - max_chars))
    end = start + max_chars
    return (ELLIPSIS if start > 0 else "") + clean[start:end] + (ELLIPSIS if end < len(clean) else "")


def _field(passage: object, name: str) -> Any:
    if isinstance(passage, Mapping):
        return passage.get(name)
    return getattr(passage, name, None)


def build_judge_input(question: str, passages: Iterable[object]) -> str:
    """The user turn of the judge call: the question, then each passage's excerpt (SPEC §1.3).

    Each passage is a mapping or an object with ``text`` and an optional ``title``; a title is shown
    only when truthy, and it must come from content metadata, never a file name (in the eval corpus a
    file name would leak "distractor-…" to the judge).
    """
    blocks = []
    for i, passage in enumerate(passages, start=1):
        title = _field(passage, "title")
        heading = f'p{i} (from "{title}")' if title else f"p{i}"
        blocks.append(f"{heading}:\n{excerpt_for(str(_field(passage, 'text') or ''), question)}")
    return f"Question: {js_trim(question)}\n\n" + "\n\n".join(blocks)


@dataclass(frozen=True)
class StructuredResult:
    """Outcome of reading a grammar-constrained reply: ``value`` when ``ok``, else why not."""

    ok: bool
    value: Any = None
    reason: str | None = None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # JSON.parse rejects NaN and Infinity


def extract_json_object(raw_text: str) -> dict[str, Any] | None:
    """The JSON object between the first ``{`` and the last ``}`` of a trimmed reply, else None.

    Small models wrap their JSON in prose or code fences; the seed cuts from the first brace to the
    last and requires a non-array object, which is what this does.
    """
    text = js_trim(raw_text)
    start, end = text.find("{"), text.rfind("}")
    if start == -1 or end <= start:
        return None
    try:
        value = json.loads(text[start : end + 1], parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def resolve_structured(raw_text: str, picker: Callable[[object], Any], constrained: bool) -> StructuredResult:
    """``resolveStructured`` of SPEC §1.5: parse, pick, and name the failure.

    ``constrained`` says whether the transport really applied the grammar; a failure then means the
    grammar did not hold ("constrained-parse-failed"), otherwise the model simply ignored the format
    ("unconstrained").
    """
    obj = extract_json_object(raw_text)
    value = picker(obj) if obj is not None else None
    if value is None:
        return StructuredResult(False, None, "constrained-parse-failed" if constrained else "unconstrained")
    return StructuredResult(True, value, None)


def parse_verdict(raw_text: str) -> bool | None:
    """The judge's ``on_topic`` verdict from its raw reply, or None when it gave no usable verdict."""
    return resolve_structured(raw_text, pick_on_topic, constrained=False).value
