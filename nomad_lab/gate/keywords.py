"""Query expansion, keyword extraction and text sanitizing, as the reference does them (SPEC §2.2, §2.6).

The rerank formula (``nomad_lab.gate.reference_ranking``) boosts a chunk by how many query keywords it
contains, so
the keywords must be cut exactly as the reference cuts them or the boosts, and every score near the
0.62 floor, move. Pure: standard library plus the English list of the ``stopwords`` package.

Stop-word list. The reference calls the npm ``stopword`` package's ``removeStopwords`` with its default
English list (v3: 108 words, from Chris Umbel's ``natural``; tokens are lower-cased before the look-up).
No PyPI package ships that list. We use the ``stopwords`` package (``get_stopwords("english")``,
174 words, the classic "ranks.nl" function-word list), the closest maintained match:
- only in npm (kept as keywords here, dropped by the reference), length > 2 only since shorter words are
  dropped anyway: also, another, came, can, come, get, got, like, make, many, might, much, must, never,
  now, said, since, still, take, way, well;
- only here (dropped here, kept by the reference): function words and contractions such as does, doing,
  when, why, not, during, until, above, below, down, off, once, own, few, its, she, whom, yourself ….
The larger ``stop-words`` package (1,333 words) is a superset of the npm list, but it drops content words
this corpus depends on ("first", "fire", "five", "use", "need"), which would cost more fidelity than it buys.
The list in use is recorded in the corpus fingerprint (``STOPWORDS_SOURCE``) because keywords are stored
in the index.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from functools import lru_cache

from nomad_lab.core.jsstring import JS_WHITESPACE_CLASS, js_trim

__all__ = [
    "MAX_SAFE_TOKENS",
    "QUERY_EXPANSION_DICTIONARY",
    "STOPWORDS_SOURCE",
    "english_stopwords",
    "extract_keywords",
    "ingest_keywords",
    "js_split_whitespace",
    "keyword_overlap",
    "preprocess_query",
    "sanitize_text",
    "truncate_to_tokens",
]

# The reference's 27-entry dictionary (its README says 28; the dict has 27 keys).
QUERY_EXPANSION_DICTIONARY: dict[str, str] = {
    "bob": "bug out bag",
    "bov": "bug out vehicle",
    "bol": "bug out location",
    "edc": "every day carry",
    "mre": "meal ready to eat",
    "shtf": "shit hits the fan",
    "teotwawki": "the end of the world as we know it",
    "opsec": "operational security",
    "ifak": "individual first aid kit",
    "ghb": "get home bag",
    "ghi": "get home in",
    "wrol": "without rule of law",
    "emp": "electromagnetic pulse",
    "ham": "ham amateur radio",
    "nbr": "nuclear biological radiological",
    "cbrn": "chemical biological radiological nuclear",
    "sar": "search and rescue",
    "comms": "communications radio",
    "fifo": "first in first out",
    "mylar": "mylar bag food storage",
    "paracord": "paracord 550 cord",
    "ferro": "ferro rod fire starter",
    "bivvy": "bivvy bivy emergency shelter",
    "bdu": "battle dress uniform",
    "gmrs": "general mobile radio service",
    "frs": "family radio service",
    "nbc": "nuclear biological chemical",
}

STOPWORDS_SOURCE = "stopwords-1.0.2:english"

CHAR_TO_TOKEN_RATIO = 2
MAX_SAFE_TOKENS = 1600

# JS regexes without the `u` flag: \w is ASCII [A-Za-z0-9_], unlike Python's Unicode \w.
_NON_WORD = re.compile(r"[^A-Za-z0-9_]")
_JS_SPLIT_WS = re.compile(JS_WHITESPACE_CLASS + "+")
# NUL and C0 controls except \t \n \r, DEL, and lone UTF-16 surrogates (only reachable in Python through
# surrogateescape or surrogatepass decoding, but the reference strips them, so we do too).
_UNSAFE_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")


def js_split_whitespace(text: str) -> list[str]:
    """``text.split(/\\s+/)`` minus empty pieces, with JavaScript's whitespace set."""
    return [piece for piece in _JS_SPLIT_WS.split(text) if piece]


@lru_cache(maxsize=1)
def english_stopwords() -> frozenset[str]:
    """The English stop-word set in use (see the module docstring for how it differs from the reference)."""
    import stopwords  # heavy: a third-party package; this module imports with the stdlib alone

    return frozenset(word.strip().lower() for word in stopwords.get_stopwords("english") if word.strip())


def preprocess_query(query: str) -> str:
    """Append the expansion of every dictionary word in the query (§2.2 step 1).

    Words are the lower-cased query split on whitespace with non-word characters stripped, so "EMP?"
    expands; an expansion is appended once per matching word (duplicates allowed), after the trimmed query.
    """
    processed = js_trim(query)
    expansions = []
    for word in js_split_whitespace(processed.lower()):
        expansion = QUERY_EXPANSION_DICTIONARY.get(_NON_WORD.sub("", word))
        if expansion:
            expansions.append(expansion)
    if expansions:
        processed = f"{processed} {' '.join(expansions)}"
    return processed


def extract_keywords(text: str, stopwords: Iterable[str] | None = None) -> list[str]:
    """Keywords as the reference cuts them (§2.2 step 2), quirks kept.

    Quirks reproduced on purpose, since they decide which rerank boosts fire:
    - the text is split on single spaces only, so "word\\nnext" stays one token and becomes "wordnext";
    - stop words are removed from the RAW tokens (lower-cased, punctuation still attached), so "what?" is
      not recognised as the stop word "what" and survives as the keyword "what".
    Then each token has non-ASCII-word characters stripped, is lower-cased, kept if longer than 2
    characters, and deduplicated in first-occurrence order.
    """
    stop = english_stopwords() if stopwords is None else frozenset(stopwords)
    keywords: dict[str, None] = {}
    for token in text.split(" "):
        if token.lower() in stop:
            continue
        word = _NON_WORD.sub("", token).lower()
        if len(word) > 2:
            keywords.setdefault(word, None)
    return list(keywords)


def keyword_overlap(query: str, passages: Iterable[str]) -> float:
    """Share of the question's keywords (as the reranker extracts them) found in the passages' text: a
    gate feature (``nomad_lab.gate.features``, and the portable runtime's, so it stays pure)."""
    keywords = set(extract_keywords(preprocess_query(query)))
    if not keywords:
        return 0.0
    text = " ".join(passages).lower()
    return sum(1 for word in keywords if word in text) / len(keywords)


def ingest_keywords(chunk_text: str, titles: Iterable[str | None] = ()) -> str:
    """The stored ``keywords`` payload: title keywords, then chunk keywords, deduped, space-joined."""
    merged: dict[str, None] = {}
    for title in titles:
        if title:
            merged.update(dict.fromkeys(extract_keywords(title)))
    merged.update(dict.fromkeys(extract_keywords(chunk_text)))
    return " ".join(merged)


def sanitize_text(text: str) -> str:
    """Remove NUL, control characters (except tab, newline, carriage return) and lone surrogates; trim.

    Why: the reference stores this form as the chunk ``text`` that the rerank formula and the judge read.
    """
    return js_trim(_UNSAFE_CHARS.sub("", text))


def truncate_to_tokens(text: str, max_tokens: int) -> str:
    """Cut text to an estimated token budget the way the reference guards its embedding calls (§2.2 step 3).

    Tokens are estimated as ceil(len/2); over budget, the text is cut to ``max_tokens*2`` characters and
    then back to the last space if that space lies in the final 20% of the cut (so no word is split).
    """
    if math.ceil(len(text) / CHAR_TO_TOKEN_RATIO) <= max_tokens:
        return text
    max_chars = max_tokens * CHAR_TO_TOKEN_RATIO
    cut = text[:max_chars]
    last_space = cut.rfind(" ")
    if last_space > max_chars * 0.8:
        cut = cut[:last_space]
    return cut
