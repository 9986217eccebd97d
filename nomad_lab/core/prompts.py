"""The system prompts and schemas the pipeline sends, in one place so every caller sends the same bytes.

The seed keeps these in ``constants/ollama.ts``, which is not in the seed documents; the texts below
follow SPEC §1.4, §5.3 and §5.5 clause by clause. The judge prompt lives in ``nomad_lab.core.judge_prompt``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful assistant running on an offline knowledge server. Answer clearly and "
    "accurately. Format your response using markdown for readability: use headings, bullet points, "
    "numbered lists and **bold** where they help, and code blocks for commands or code."
)

QUERY_REWRITE_SYSTEM_PROMPT = (
    "You rewrite the user's latest message into a standalone search query for a knowledge base. "
    "Use the conversation to resolve pronouns and references, keep the important names, numbers "
    "and terms, and drop greetings and filler. Do not answer the question. "
    'Respond with a JSON object whose "queries" array holds the rewritten query.'
)

QUERY_REWRITE_LEGACY_SYSTEM_PROMPT = (
    "You rewrite the user's latest message into a standalone search query for a knowledge base. "
    "Use the conversation to resolve pronouns and references, keep the important names, numbers "
    "and terms, and drop greetings and filler. Do not answer the question. "
    "Respond with the rewritten query only, on one line, with no explanation."
)
"""The rewrite before the structured form: free text, taken as the query when non-empty (kept so the
change can be measured paired; ``rewrite_query(..., structured=False)``)."""

QUERIES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"queries": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
    "required": ["queries"],
}

QUERY_REWRITE_MAX_TOKENS = 160


SUFFICIENCY_NOTE_ACTION = "note"
SUFFICIENCY_DROP_ACTION = "drop"
SUFFICIENCY_ACTIONS = (SUFFICIENCY_NOTE_ACTION, SUFFICIENCY_DROP_ACTION)
"""What the assistant does when its sufficiency check (does a passage state the answer?) says no:
keep the passages with :data:`SUFFICIENCY_NOTE` (the default: a check tuned to keep 90% of answerable
questions flags about one answerable question in ten, and a note costs that question nothing but a
sentence, where dropping loses its passages), or drop them as a failed relevance check does."""
SUFFICIENCY_NOTE = (
    "NOTE: a check found that these passages may not state the answer to this question. If they do "
    "not, say that the library does not state it rather than answering from general knowledge."
)


def rag_context(context_block: str, note: str | None = None) -> str:
    """The system message wrapping the retrieved passages (``SYSTEM_PROMPTS.rag_context``); ``note`` (not
    the reference: the sufficiency check's :data:`SUFFICIENCY_NOTE`) follows the passages."""
    return (
        "The following passages were retrieved from the knowledge base for the user's question. They "
        "cleared a relevance filter, but they may still lack the detail the question needs.\n\n"
        "[Knowledge Base Context]\n"
        f"{context_block}\n\n" + (f"{note}\n\n" if note else "") + "HOW TO ANSWER:\n"
        "1. If the passages answer the question, use them.\n"
        "2. If they do not, answer from your general knowledge without mentioning the passages.\n"
        '3. Never narrate the retrieval: do not write "according to Context 1", "the provided context" '
        "or similar.\n"
        "4. Do not fabricate specifics (numbers, names, procedures) that you do not know.\n\n"
        "Format your response using markdown for readability."
    )


def _meta(chunk: Mapping[str, Any], key: str) -> Any:
    metadata = chunk.get("metadata")
    if isinstance(metadata, Mapping) and metadata.get(key):
        return metadata.get(key)
    return chunk.get(key)


def build_context_block(chunks: Iterable[Mapping[str, Any]]) -> str:
    """``[Context i — <title> (<date>)]`` then the text, per chunk; scores are never shown.

    The title is ``archive_title`` || ``full_title`` || ``article_title`` from the chunk's metadata
    (or the chunk itself); without one the header is ``[Context i]``.
    """
    blocks = []
    for i, chunk in enumerate(chunks, start=1):
        title = _meta(chunk, "archive_title") or _meta(chunk, "full_title") or _meta(chunk, "article_title")
        date = _meta(chunk, "archive_date")
        if title:
            header = f"[Context {i} \u2014 {title}" + (f" ({date})" if date else "") + "]"
        else:
            header = f"[Context {i}]"
        blocks.append(f"{header}\n{chunk.get('text', '')}")
    return "\n\n".join(blocks)


def render_rag_message(chunks: Iterable[Mapping[str, Any]], note: str | None = None) -> str:
    """The full RAG system message content for ``chunks``: the planner's default renderer."""
    return rag_context(build_context_block(chunks), note)
