"""Model drafting: a language model writes, per passage, a question a reader of the library would ask
with the sentence that answers it, and a question about the same subject the passage does not answer;
every draft is checked before a person sees it.

Why a model beside the templates: rated blind, templates were kept as written 11-33% of the time
(issue 43): grammar rules can turn a sentence into a question, not choose the question a reader asks.
Why checked: a small model copies the passage into its "question", invents an "answer" the passage never
says, or answers instead of asking. A draft is kept only when

- its answer sentence is in the passage verbatim (whitespace, quotes and markup normalised,
  :func:`nomad_lab.data.sentence_units.normalised`):
  the draft's ``mustInclude`` is that sentence, so a label can be checked against the document;
- its question does not copy the answer (no run of :data:`COPY_RUN` words shared, at most
  :data:`MAX_OVERLAP` of its content words in the answer): a question that restates its answer tests
  word matching, not reading;
- its question reads as a question (:func:`nomad_lab.data.draft_text.well_formed`);
- its question and its refusal stand alone for a reader of the library (:func:`leans_on_prompt`): no
  framing word of :data:`PROMPT`, no "the passage" or "this document" the user never sees;
- neither question points at something it never names (:func:`unanchored`: "this", "these", "those");
- its refusal question shares a content word with the passage (it is about the same subject) and no
  sentence of its whole document holds most of its content words (:func:`answers`): it asks for
  something the document lacks, not only the passage the model read;
- the model, asked back as a reader (:mod:`nomad_lab.data.reader_quote`: copy the sentence that
  answers, or NONE), quotes the answer sentence for its question (:func:`reads_back`) and NONE for its
  refusal over the document's sentences nearest to it (:func:`left_open`). Why: word overlap cannot see an
  answer in other words ("How can bash users enable completion?" against "install bash-completion and
  enable it in /etc/bash.bashrc"), and a question broader than its sentence, or misread from it, is
  not read back to that sentence. Copying a sentence is an extractive task whose output is checked
  against the text, not a verdict; any doubt (another sentence, a quote the text does not hold) rejects.

Pure: the model is a callable ``ask(prompt) -> reply`` the command layer opens (``--backend SPEC``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from nomad_lab.data.draft_text import NOT_SUBJECT, well_formed, words
from nomad_lab.data.reader_quote import parse_quote, reader_prompt, shown, verify
from nomad_lab.data.sentence_units import normalised

__all__ = [
    "ANSWERED_SHARE",
    "CHECKED_SENTENCES",
    "COPY_RUN",
    "FRAMING",
    "MAX_OVERLAP",
    "PROMPT",
    "Chat",
    "ModelDraft",
    "answers",
    "check_draft",
    "copies",
    "leans_on_prompt",
    "left_open",
    "model_draft",
    "parse_reply",
    "passages",
    "reads_back",
    "unanchored",
]

Chat = Callable[[str], str]
"""``chat(prompt)`` -> the model's reply (one user turn, greedy)."""

PROMPT = (
    'You help write test questions for a library of documents. This passage is from "{title}":\n\n'
    "{passage}\n\n"
    "1. Write one question a reader of this library would ask, in their own words, that one sentence of "
    "the passage answers. The question names what it asks about (the program, command, file or thing), "
    'so that it makes sense without the passage: never "this", "it" or "the passage". Do not copy the '
    "sentence into the question.\n"
    "2. Copy that sentence from the passage exactly.\n"
    "3. Pick one thing the passage names and ask for a specific fact about it that the passage does not "
    "give (such as a number, a default, a limit, a date, a version or a name): a question a user of it "
    "might ask.\n\n"
    "Reply with all three lines, in this form:\n"
    "QUESTION: <your question>\nANSWER: <the sentence copied from the passage>\n"
    "UNANSWERED: <a question the passage does not answer>"
)
"""Why the refusal asks for one named thing's unstated fact: asked for "a question about the same
subject that the passage does not answer", a model writes a broad one ("How does X work?") that a
document about X answers elsewhere; a specific fact (a number, a default, a version) is one a
document either states or lacks, and the checks below can tell which."""
COPY_RUN = 5
"""A question sharing this many words in a row with its answer sentence copies it."""
MAX_OVERLAP = 0.8
"""At most this share of a question's content words may appear in its answer sentence."""
PASSAGE_SENTENCES = 6
"""Sentences per passage: enough for a question with context, short enough for a 270M model's prompt."""
ANSWERED_SHARE = 0.5
"""A sentence holding more than this share of a refusal's content words answers it ("most of them")."""
CHECKED_SENTENCES = 8
"""Sentences of its document a refusal's read-back shows the model: the ones sharing the most of its
words (:func:`nomad_lab.data.reader_quote.shown`), the reader probe's choice; a whole document is
thousands of tokens, a minute of prompt per draft for a 1.5B model on two cores."""
FRAMING = ("library of documents", "this library", "a reader", "in their own words", "test questions")
"""Words of :data:`PROMPT` that frame the task, not the library's subject: a question carrying one was
written for the prompt, not by a reader (a test checks each is in the prompt)."""
_TEXT = r"(?:passage|text|document|excerpt|article|section|paragraph)s?"
_POINTER = re.compile(
    r"\b(?:the|this|that|these|those)\s+(?:given\s+|above\s+|provided\s+|following\s+)?(?:passage|excerpt)s?\b"
    rf"|\b(?:this|these|the given|the above|the provided|the following)\s+{_TEXT}\b"
    rf"|\b(?:according to|in|from|by)\s+the\s+{_TEXT}(?=\s*(?:[?,.;:!)]|$))"
    rf"|\b(?:does|do|did)\s+the\s+(?:{_TEXT}|author)\s+(?:say|state|describe|mention|suggest|explain)"
)
"""A pointer at a text the question's asker never sees: "the passage", "this document", "according to
the text", "in the article?", "does the section say"; "the text editor" or "in the text file" is not one."""


@dataclass(frozen=True)
class ModelDraft:
    """What a model wrote for one passage, after the checks: a question with the answer sentence (or
    None, with why), and a refusal question (or None, with why)."""

    question: str | None
    answer: str | None
    refusal: str | None
    rejected: tuple[str, ...] = ()


def passages(sentences: Sequence[str], n: int, start: int) -> list[str]:
    """Up to ``n`` passages of :data:`PASSAGE_SENTENCES` consecutive sentences, the first at ``start``
    (a seeded choice), the others after it in turn: spread over the document, never overlapping."""
    if not sentences or n <= 0:
        return []
    count = max(1, len(sentences) // PASSAGE_SENTENCES)
    firsts = [((start // PASSAGE_SENTENCES + i) % count) * PASSAGE_SENTENCES for i in range(min(n, count))]
    return [" ".join(sentences[f : f + PASSAGE_SENTENCES]) for f in firsts]


_FIELD = re.compile(r"^\W*(question|answer|unanswered)\W*:\s*(.+?)\s*$", re.IGNORECASE)


def parse_reply(reply: str) -> dict[str, str]:
    """The reply's ``QUESTION:``, ``ANSWER:`` and ``UNANSWERED:`` lines by lowercase name (the first of
    each; markdown bold and numbering tolerated), the answer's surrounding quotes dropped."""
    found: dict[str, str] = {}
    for line in reply.splitlines():
        line = re.sub(r"^\s*(?:\d+[.)]|[-*])\s*", "", line.replace("**", ""))
        if (match := _FIELD.match(line)) and match.group(1).lower() not in found:
            found[match.group(1).lower()] = match.group(2).strip().strip("\"'\u201c\u201d")
    return found


def _content(text: str) -> list[str]:
    return [w for w in words(text) if len(w) >= 4 and w not in NOT_SUBJECT]


def copies(question: str, answer: str) -> str | None:
    """Why ``question`` copies ``answer`` (a run of :data:`COPY_RUN` words, or most of its content words
    in the answer), or None."""
    q, a = words(question), " ".join(words(answer))
    for i in range(len(q) - COPY_RUN + 1):
        if " ".join(q[i : i + COPY_RUN]) in a:
            return f"shares {COPY_RUN} words in a row with its answer"
    content = _content(question)
    inside = sum(w in set(words(answer)) for w in content)
    if content and inside / len(content) > MAX_OVERLAP:
        return f"{inside} of its {len(content)} content words are in its answer"
    return None


def leans_on_prompt(question: str) -> str | None:
    """Why ``question`` does not stand alone for a reader of the library, or None.

    Why: rated blind, many of the model's answerable drafts needing an edit carried the prompt's framing
    into the question or pointed at the passage it was shown; a person asking the library never saw that
    passage, so such a question must be reworded before it can be kept. The words come from
    :data:`FRAMING` (the prompt's own) and :data:`_POINTER` (any "the passage/text/document ..." that
    points at the model's input), not from the rated questions.
    """
    lowered = " ".join(words(question))
    if any(f" {phrase} " in f" {lowered} " for phrase in FRAMING):
        return "leans on the prompt's framing"
    if _POINTER.search(question.lower()):
        return "points at a passage the user never sees"
    return None


_DEMONSTRATIVE = re.compile(r"\b(?:this|these|those)\b", re.IGNORECASE)


def unanchored(question: str) -> str | None:
    """Why ``question`` points at something it never names ("How can users customize these
    interfaces?", "What does this option do?"), or None.

    Why: a question stands alone only if it names what it asks about; "this", "these" and "those" point
    back at the passage the model read, which the person asking the library never saw. (He, she, it and
    they are :func:`nomad_lab.data.draft_text.well_formed`'s.)"""
    if match := _DEMONSTRATIVE.search(question):
        return f"{match.group(0).lower()!r} points at something it never names"
    return None


def answers(sentence: str, refusal: str) -> bool:
    """Whether ``sentence`` answers ``refusal``: it copies the sentence (:func:`copies`) or the sentence
    holds more than :data:`ANSWERED_SHARE` of its content words."""
    if copies(refusal, sentence):
        return True
    content = _content(refusal)
    inside = sum(w in set(words(sentence)) for w in content)
    return bool(content) and inside / len(content) > ANSWERED_SHARE


def _answered(refusal: str, passage: str, document: Sequence[str]) -> str | None:
    """Why ``refusal`` is no refusal: a sentence of the passage or, elsewhere, of its document answers it
    (:func:`answers`), or None.

    Why the whole document: rated blind, most of the model's refusals were answered in their own document
    outside the passage the model read, so a question "the passage leaves open" is kept only when no
    sentence of the document answers it; the two are counted apart.
    """
    inside = normalised(passage)
    found = [s for s in document if answers(s, refusal)]
    if any(normalised(s) in inside for s in found):
        return "a sentence of the passage answers it"
    return "a sentence elsewhere in its document answers it" if found else None


def _sentence_of(answer: str, passage: str, sentences: Sequence[str]) -> str | None:
    """The passage's sentence the model copied: the one sentence of ``sentences`` holding the answer
    verbatim (a small model often copies a span, "up to 600 W"), else the answer itself when it is in
    the passage verbatim and long enough to be a sentence; None when it is not in the passage, or is a
    single word, or sits in more than one sentence (which one answers is unknown)."""
    said = normalised(answer).rstrip(".!?")
    if len(said.split()) < 2 or said not in normalised(passage):
        return None
    whole = [s for s in sentences if said in normalised(s)]
    if len(whole) == 1:
        return whole[0]
    return answer if not whole and len(said.split()) >= 6 else None


def check_draft(fields: dict[str, str], passage: str, sentences: Sequence[str]) -> ModelDraft:
    """The checks of the module doc on one parsed reply; ``sentences`` are the whole document's."""
    rejected: list[str] = []
    question, answer, refusal = fields.get("question"), fields.get("answer"), fields.get("unanswered")
    sentence = _sentence_of(answer, passage, sentences) if answer else None
    if question is None or answer is None:
        rejected.append("no QUESTION or ANSWER line")
    elif sentence is None:
        rejected.append("its answer is not a sentence of the passage")
    elif why := (
        well_formed(question)
        or copies(question, sentence)
        or leans_on_prompt(question)
        or unanchored(question)
    ):
        rejected.append(f"question: {why}")
    kept = question if not rejected else None
    passage_words = set(_content(passage))
    if refusal is None:
        rejected.append("no UNANSWERED line")
    elif why := (well_formed(refusal) or leans_on_prompt(refusal) or unanchored(refusal)):
        rejected.append(f"refusal: {why}")
        refusal = None
    elif not set(_content(refusal)) & passage_words:
        rejected.append("refusal: not about the passage's subject")
        refusal = None
    elif kept and normalised(refusal) == normalised(kept):
        rejected.append("refusal: a sentence of the passage answers it")
        refusal = None
    elif why := _answered(refusal, passage, sentences):
        rejected.append(f"refusal: {why}")
        refusal = None
    return ModelDraft(kept, sentence if kept else None, refusal, tuple(rejected))


def reads_back(chat: Chat, question: str, answer: str, passage: str) -> str | None:
    """Why the model, asked its own question as a reader of the passage (quote the sentence that
    answers it, or NONE), does not quote ``answer``; or None when it does (its quote holds the answer
    sentence or lies within it)."""
    lines = shown(question, [passage])
    quote = verify(parse_quote(chat(reader_prompt(question, lines))), lines)
    if quote is None:
        return "read back, the model quotes no sentence of the passage"
    said, meant = normalised(quote).rstrip(".!?;: "), normalised(answer).rstrip(".!?;: ")
    return None if said in meant or meant in said else "read back, the model quotes another sentence"


def left_open(chat: Chat, refusal: str, sentences: Sequence[str]) -> str | None:
    """Why the model, asked the refusal as a reader of its document's :data:`CHECKED_SENTENCES`
    sentences nearest to it, does not write NONE; or None when it does. A quote the sentences do not
    hold rejects too: the model answered it in its own words, and a refusal in doubt is not kept."""
    lines = shown(refusal, sentences, CHECKED_SENTENCES)
    quote = parse_quote(chat(reader_prompt(refusal, lines)))
    if quote is None:
        return None
    if verify(quote, lines) is not None:
        return "read back, the model quotes a sentence of its document"
    return "read back, the model answers it in its own words"


def model_draft(
    chat: Chat, title: str, passage: str, sentences: Sequence[str], *, read_back: bool = True
) -> ModelDraft:
    """Ask the model for one passage's drafts and check them (:func:`check_draft`); with ``read_back``
    each draft that passed is asked back (:func:`reads_back`, :func:`left_open`): one more call each."""
    reply = chat(PROMPT.format(title=title, passage=passage))
    drafted = check_draft(parse_reply(reply), passage, sentences)
    if not read_back:
        return drafted
    question, answer, refusal = drafted.question, drafted.answer, drafted.refusal
    rejected = list(drafted.rejected)
    if question and answer and (why := reads_back(chat, question, answer, passage)):
        rejected.append(f"question: {why}")
        question = answer = None
    if refusal and (why := left_open(chat, refusal, sentences)):
        rejected.append(f"refusal: {why}")
        refusal = None
    return ModelDraft(question, answer, refusal, tuple(rejected))
