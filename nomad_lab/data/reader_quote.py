"""A reader that quotes the answer or says none: the prompt, the reply's reading, and the quote's check.

Why a reader and not a judge: every sufficiency probe so far asked a model whether a passage answers
the question (the best check passes 74.7% of unanswerable refusals at answerable keep >= 0.90). Copying
the sentence that answers is an extractive task a small instruct model may do better than a judgement,
and unlike a verdict its output can be checked: a quote that is not in the passages is a hallucination,
counted as no answer. A verified quote is then scored by the cross-encoder against the question
(:mod:`nomad_lab.studies.gating.reader_probe`), so "quoted something" is not taken as "answered".

What the reader sees: the question and the sentences of its top-5 passages (each with its heading), in
passage order. With ``sentences`` > 0 only that many are shown, the ones sharing the most question words
(:func:`nomad_lab.data.sentence_units.choose_units`): five whole chunks are ~4,000 tokens, a minute of
prompt per question for a 1.5B model on two cores; 24 sentences are ~800. 0 shows every sentence.

Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from nomad_lab.data.sentence_units import choose_units, normalised, passage_sentences

__all__ = ["MIN_QUOTE_WORDS", "NONE", "PROMPT_VERSION", "parse_quote", "reader_prompt", "shown", "verify"]

NONE = "NONE"
PROMPT_VERSION = "reader-quote-1"
"""Part of the stored answers' key: a changed prompt never reads an answer given to the old one."""
MIN_QUOTE_WORDS = 3
"""A quote shorter than this is a span, not a sentence ("600 W"): it may sit anywhere."""

_PROMPT = (
    "Sentences from a library's documents:\n\n{sentences}\n\nQuestion: {question}\n\n"
    "Copy, word for word, the one sentence above that answers the question. If no sentence answers it, "
    "write NONE. Reply with that sentence or NONE, nothing else."
)


def shown(question: str, passages: Sequence[str], sentences: int = 0) -> list[str]:
    """The lines the reader sees: each sentence of the passages after its heading (``heading: text``),
    in passage order; the ``sentences`` sharing the most question words when > 0 (see the module doc)."""
    lines = [f"{h}: {s}" if h else s for passage in passages for h, s in passage_sentences(passage)]
    if sentences <= 0 or len(lines) <= sentences:
        return lines
    return [lines[i] for i in choose_units(question, lines, sentences)]


def reader_prompt(question: str, lines: Sequence[str]) -> str:
    """The one user turn asking the reader to quote the answering sentence or write NONE."""
    return _PROMPT.format(sentences="\n".join(f"- {line}" for line in lines), question=question)


_LEAD = re.compile(r"^\s*(?:[-*>]\s*|\d+[.)]\s*|(?:the\s+)?(?:answer|sentence|quote)\s*:\s*)+", re.IGNORECASE)


def parse_quote(reply: str) -> str | None:
    """The sentence the reader quoted, or None when it wrote NONE (any case, any punctuation, with or
    without a sentence after it) or nothing. The first non-empty line is the quote, its list marker,
    ``Answer:`` label and surrounding quotes or bold dropped."""
    for line in reply.splitlines():
        line = _LEAD.sub("", line.replace("**", "")).strip().strip("\"'\u201c\u201d`").strip()
        if not line:
            continue
        if re.match(rf"^{NONE}\b", line, re.IGNORECASE):
            return None
        return line
    return None


def verify(quote: str | None, passages: Sequence[str]) -> str | None:
    """The part of ``quote`` the passages hold verbatim (normalised: case, quotes, Markdown, whitespace;
    its end mark ignored): the whole quote, or what follows a ``heading:`` it copied from the lines shown
    (a heading may itself hold a colon: "Step 3: Tourniquet: Place it ..."); at least
    :data:`MIN_QUOTE_WORDS` words. None for no quote or one the passages do not hold. The part verified
    is what the cross-encoder scores, so a prefix the reader made up never counts."""
    if quote is None:
        return None
    text = quote.strip().rstrip(".!?;: ")
    held = [normalised(p) for p in passages]
    cuts = [0, *(m.end() for m in re.finditer(r":\s+", text))]
    for cut in cuts:
        part = text[cut:].strip()
        said = normalised(part)
        if len(said.split()) >= MIN_QUOTE_WORDS and any(said in p for p in held):
            return part
    return None
