"""A retrieved passage as a person reads it in the labeller: whole, rendered, its question's words marked.

Why: a labeller decides whether a passage answers a question, and the answer is often far into a chunk
of some 3,000 characters. So the whole chunk is shown, never a prefix; it is widened to whole words (a
chunk boundary may fall inside a word: the document supplies the rest of it); source markup a reader
should not have to parse is stripped (HTML comments and tags, MDN ``{{macro("Name")}}`` calls keep their
name, reST roles, link targets); the Markdown that remains is drawn (headings, lists, tables, code,
bold, italics); a passage that starts or ends inside a paragraph of its document shows an ellipsis where
it was cut, so a reader knows the sentence goes on; every word sharing a stem with a content word of the
question is marked, and the one sentence sharing the most of them is emphasized, so the eye lands where
the answer would be.

The HTML is built here from escaped text (no Markdown library, no raw HTML from the document), so a
passage can never inject markup into the notebook.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from nomad_lab.gate.coverage import stem, terms

_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)
_MACRO_NAMED = re.compile(r"\{\{\s*[\w-]+\(\s*[\"']([^\"']+)[\"'][^}]*\)\s*\}\}")
_MACRO = re.compile(r"\{\{[^}]*\}\}")
_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_ROLE = re.compile(r":[\w:-]+:`([^`<]*?)(?:\s*<[^>]*>)?`")
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_INLINE = re.compile(r"(`[^`]+`|\*\*[^*]+\*\*|__[^_]+__|\*[^*\s][^*]*\*)")
_WORD = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)?")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")


def strip_markup(text: str) -> str:
    """``text`` without the markup a reader should not parse (see the module doc); Markdown stays."""
    text = _COMMENT.sub("", text)
    text = _MACRO_NAMED.sub(r"\1", text)
    text = _MACRO.sub("", text)
    text = _TAG.sub("", text)
    text = _ROLE.sub(r"\1", text)
    text = _IMAGE.sub(r"\1", text)
    return _LINK.sub(r"\1", text)


def cut_ends(chunk: str, document: str | None) -> tuple[bool, bool]:
    """Whether the chunk (widened to whole words) starts and ends inside a paragraph of ``document``:
    text goes on before it (not a line break) or after it. Without the document to look in, a chunk
    starting with a lowercase letter, or ending without a full stop, is taken as cut there."""
    text = whole_words(chunk, document)
    start = document.find(text) if document else -1
    if document is None or start < 0:
        body = text.strip()
        return (body[:1].islower(), bool(body) and body[-1] not in ".!?:)\"'`|")
    before, after = document[:start], document[start + len(text) :]
    return (
        bool(before.strip()) and not before.endswith("\n"),
        bool(after.strip()) and not after.startswith("\n"),
    )


def whole_words(chunk: str, document: str | None) -> str:
    """``chunk`` widened to whole words at both ends, from ``document`` when the chunk is found in it;
    otherwise a broken word at either end is cut and marked with an ellipsis."""
    start = document.find(chunk) if document else -1
    if document is not None and start >= 0:
        end = start + len(chunk)
        while start > 0 and document[start - 1].isalnum():
            start -= 1
        while end < len(document) and document[end].isalnum():
            end += 1
        return document[start:end]
    return chunk


def mark_words(text: str, wanted: set[str]) -> str:
    """``text`` as HTML, every word whose stem is in ``wanted`` in ``<mark>``."""
    out, last = [], 0
    for match in _WORD.finditer(text):
        out.append(html.escape(text[last : match.start()]))
        word = match.group(0)
        token = stem(word.lower().replace("’", "'"))
        out.append(f"<mark>{html.escape(word)}</mark>" if token in wanted else html.escape(word))
        last = match.end()
    out.append(html.escape(text[last:]))
    return "".join(out)


def _inline(text: str, wanted: set[str]) -> str:
    """Inline Markdown (code, bold, italics) drawn, words marked inside each piece."""
    parts = []
    for piece in _INLINE.split(text):
        if not piece:
            continue
        if piece.startswith("`") and piece.endswith("`") and len(piece) > 1:
            parts.append(f"<code>{mark_words(piece[1:-1], wanted)}</code>")
        elif piece[:2] in ("**", "__") and len(piece) > 4:
            parts.append(f"<b>{mark_words(piece[2:-2], wanted)}</b>")
        elif piece.startswith("*") and piece.endswith("*") and len(piece) > 2:
            parts.append(f"<i>{mark_words(piece[1:-1], wanted)}</i>")
        else:
            parts.append(mark_words(piece, wanted))
    return "".join(parts)


@dataclass(frozen=True)
class _Block:
    kind: str  # "h", "p", "li", "pre", "table" (its rows, one per line)
    text: str


_TABLE_RULE = re.compile(r"\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?")


def _cells(row: str) -> list[str]:
    return [cell.strip() for cell in row.strip().strip("|").split("|")]


def _table(rows: str, wanted: set[str]) -> str:
    """A Markdown table's rows as an HTML table: the row above a ``|---|`` rule as its header."""
    lines = rows.split("\n")
    header = len(lines) > 1 and _TABLE_RULE.fullmatch(lines[1].strip()) is not None
    body = [line for line in lines if not _TABLE_RULE.fullmatch(line.strip())]
    out = []
    for k, line in enumerate(body):
        tag = "th" if header and k == 0 else "td"
        out.append("<tr>" + "".join(f"<{tag}>{_inline(c, wanted)}</{tag}>" for c in _cells(line)) + "</tr>")
    return f"<table class='nomad-label-table'>{''.join(out)}</table>"


def _blocks(text: str) -> list[_Block]:
    """Headings, paragraphs, list items and code blocks of a Markdown fragment."""
    blocks: list[_Block] = []
    paragraph: list[str] = []
    code: list[str] | None = None

    def flush() -> None:
        if paragraph:
            blocks.append(_Block("p", " ".join(paragraph)))
            paragraph.clear()

    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            if code is None:
                flush()
                code = []
            else:
                blocks.append(_Block("pre", "\n".join(code)))
                code = None
            continue
        if code is not None:
            code.append(line)
        elif not stripped:
            flush()
        elif stripped.startswith("|") and stripped.count("|") >= 2:
            flush()
            if blocks and blocks[-1].kind == "table":
                blocks[-1] = _Block("table", f"{blocks[-1].text}\n{stripped}")
            else:
                blocks.append(_Block("table", stripped))
        elif heading := re.match(r"#{1,6}\s+(.*?)\s*#*$", stripped):
            flush()
            blocks.append(_Block("h", heading.group(1)))
        elif item := re.match(r"(?:[-*+]|\d+[.)])\s+(.*)", stripped):
            flush()
            blocks.append(_Block("li", item.group(1)))
        elif blocks and blocks[-1].kind == "li" and not paragraph and line.startswith((" ", "\t")):
            blocks[-1] = _Block("li", f"{blocks[-1].text} {stripped}")  # a list item's wrapped line
        else:
            paragraph.append(stripped)
    flush()
    if code:
        blocks.append(_Block("pre", "\n".join(code)))
    return blocks


def _sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(text) if s]


def best_sentence(blocks: list[_Block], wanted: set[str]) -> tuple[int, int] | None:
    """(block, sentence) sharing the most distinct question stems (the first such), or None if none does."""
    best, where = 0, None
    for b, block in enumerate(blocks):
        if block.kind in ("pre", "table"):
            continue
        for s, sentence in enumerate(_sentences(block.text)):
            shared = len(wanted & {stem(w.lower()) for w in _WORD.findall(sentence)})
            if shared > best:
                best, where = shared, (b, s)
    return where


def passage_html(text: str, query: str, document: str | None = None) -> str:
    """The whole passage as HTML: widened to whole words, markup stripped, Markdown drawn, the question's
    content words in ``<mark>``, the best-matching sentence in ``<span class="nomad-best">``, an
    ellipsis (``<span class="nomad-cut">``) where the passage was cut inside a paragraph."""
    wanted = set(terms(query))
    blocks = _blocks(strip_markup(whole_words(text, document)))
    best = best_sentence(blocks, wanted)
    cut_start, cut_end = cut_ends(text, document)
    out = (
        ["<span class='nomad-cut' title='the passage starts inside a paragraph'>…</span>"]
        if cut_start
        else []
    )
    for b, block in enumerate(blocks):
        listing = block.kind == "li"
        if listing != (b > 0 and blocks[b - 1].kind == "li"):
            out.append("<ul>" if listing else "</ul>")
        if block.kind == "pre":
            out.append(f"<pre>{mark_words(block.text, wanted)}</pre>")
            continue
        if block.kind == "table":
            out.append(_table(block.text, wanted))
            continue
        pieces = []
        for s, sentence in enumerate(_sentences(block.text)):
            drawn = _inline(sentence, wanted)
            pieces.append(f"<span class='nomad-best'>{drawn}</span>" if best == (b, s) else drawn)
        body = " ".join(pieces)
        tag = {"h": "h4", "li": "li", "p": "p"}[block.kind]
        out.append(f"<{tag}>{body}</{tag}>")
    if blocks and blocks[-1].kind == "li":
        out.append("</ul>")
    if cut_end:
        out.append("<span class='nomad-cut' title='the passage ends inside a paragraph'>…</span>")
    return "".join(out)
