"""What a stored pool's passage carries into a framework's document or node, shared by both adapters so
LangChain's ``documents()`` and LlamaIndex's ``nodes()`` hand the gate the same fields."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PASSAGE_METADATA = ("score", "semanticScore", "source")
"""The fields the adapters' ``passages_of`` read back: the retrieval score, the raw cosine, the source."""


def passage_metadata(passage: Mapping[str, Any]) -> dict[str, Any]:
    """The passage's :data:`PASSAGE_METADATA` fields that it has, as a framework object's metadata."""
    return {key: passage[key] for key in PASSAGE_METADATA if key in passage}
