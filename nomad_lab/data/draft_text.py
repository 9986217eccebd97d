"""The text rules behind drafted questions: a document's headings, sentences and named entities, and the
checks a drafted question must pass (well-formed English, names capitalized); the forms that turn them
into questions are :mod:`nomad_lab.data.draft_forms`.

Why rules and not a model: drafting must run on a user's whole library in minutes on two cores, with
no model installed, and give the same drafts for the same seed. The rules are plain English grammar
(a definition "X is a ..." asks "What is X?", a modal "X should Y" asks "Should X Y?"), written without
looking at any golden question, so they say nothing about how a suite happens to be phrased. They will
draft some clumsy questions: drafts are candidates for a person to label, never labels.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

__all__ = [
    "EDITORIAL",
    "NOT_SUBJECT",
    "DocText",
    "WordIndex",
    "doc_text",
    "entities",
    "restore_names",
    "well_formed",
    "words",
]

_ATX = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
_UNDERLINE = re.compile(r"^([=\-~^*+#\"'`])\1{2,}\s*$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")
_WORD = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")
_PRONOUNS = frozenset((
    "it", "this", "that", "these", "those", "there", "they", "he", "she", "we", "you", "i", "here", "such",
    "which", "what", "who", "one", "each", "some", "all", "any", "many", "most", "both", "either", "neither",
    "its", "his", "her", "their", "our", "your", "my", "me",
))  # fmt: skip
NOT_SUBJECT = _PRONOUNS | frozenset((
    "but", "and", "or", "nor", "yet", "so", "if", "while", "when", "whenever", "as", "because", "though",
    "although", "unless", "until", "where", "then", "now", "only", "also", "even", "just", "in", "on", "at",
    "since", "once",
    "of", "to", "with", "by", "from", "after", "before", "under", "over", "into", "for", "not", "no",
))  # fmt: skip  # a "subject" opening with one of these is a clause fragment, not a noun phrase
# Capitalized runs of 2-4 words (or one word with a digit, a model name) not opening a sentence.
_ENTITY = re.compile(
    r"(?<=[a-z,;:(] )((?:[A-Z][\w'-]*\d[\w-]*)|(?:[A-Z][\w'-]+(?:\s+(?:[A-Z][\w'-]*|\d[\w-]*)){1,3}))"
)


def words(text: str) -> list[str]:
    """Lowercase word tokens (hyphenated and apostrophe words kept whole)."""
    return _WORD.findall(text.lower())


@dataclass(frozen=True)
class DocText:
    """A document as drafting sees it: its title, its headings, its prose sentences."""

    doc_id: str
    title: str
    headings: tuple[str, ...]
    sentences: tuple[str, ...]

    @property
    def short_title(self) -> str:
        """The title before a subtitle (``Kestrel K-9 Gravity Water Filter: Owner's Guide`` -> its name)."""
        return re.split(r"\s*(?::|\s-\s|\s—\s|\|)\s*", self.title, maxsplit=1)[0].strip() or self.title


EDITORIAL = re.compile(
    r"\s*[(\[](?:excerpts?|extracts?|abridged|continued|cont\.?|draft|sample|part \w+)[)\]]", re.I
)
"""A file's note on its own title or heading (``Walden (excerpt)``): not part of the thing's name, so a
question drafted from the title must not carry it."""


def _clean_heading(line: str) -> str:
    line = EDITORIAL.sub("", line)
    line = re.sub(r":\w+:`([^`]*)`", r"\1", line).replace("`", "").replace("\\", "")
    text = re.sub(
        r"^(?:chapter|part|section|book)?\s*[\dIVXLC]+[.)]?\s+", "", line.strip(), flags=re.IGNORECASE
    )
    return text.strip(" :.-*_`")


def _usable_heading(text: str) -> bool:
    return 3 <= len(text) <= 80 and "|" not in text and bool(re.search(r"[A-Za-z]{3}", text))


def doc_text(doc_id: str, text: str) -> DocText:
    """Headings (Markdown ``#`` lines and reST/setext underlined lines) and prose sentences of ``text``.

    The title is the first heading, else the doc id. Code blocks (indented lines, fenced blocks, reST
    ``::`` blocks) and list markers are left out of the sentences, since a question drafted from code is
    rarely one a person would type.
    """
    lines = text.splitlines()
    headings: list[str] = []
    prose: list[str] = []
    fenced = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced = not fenced
            continue
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if fenced or line.startswith(("    ", "\t")) or stripped.startswith(".. "):
            prose.append("\n")
            continue
        if (match := _ATX.match(stripped)) or (
            stripped and _UNDERLINE.match(nxt) and len(nxt) >= len(stripped)
        ):
            heading = _clean_heading(match.group(1) if match else stripped)
            if _usable_heading(heading):
                headings.append(heading)
            prose.append("\n")
        elif not stripped or _UNDERLINE.match(stripped):
            prose.append("\n")
        else:
            prose.append(re.sub(r"^(?:[-*+]|\d+[.)])\s+", "", stripped))
    title = headings[0] if headings else doc_id.replace("-", " ")
    sentences = []
    for paragraph in " ".join(prose).split("\n"):
        for sentence in _SENTENCE_END.split(" ".join(paragraph.split())):
            if 30 <= len(sentence) <= 300 and sentence[-1:] in ".!?":
                sentences.append(sentence)
    seen = set()
    unique = [
        h
        for h in headings[1:]
        if h.lower() != title.lower() and not (h.lower() in seen or seen.add(h.lower()))
    ]
    return DocText(doc_id, title, tuple(unique), tuple(sentences))


def entities(doc: DocText) -> list[str]:
    """Named things the document talks about: capitalized multi-word names (and single words with a
    digit, such as model names) that do not open a sentence, most mentioned first; its short title last."""
    counts: dict[str, int] = {}
    for sentence in doc.sentences:
        for match in _ENTITY.finditer(sentence):
            name = match.group(1).strip()
            if not any(word.lower() in NOT_SUBJECT or "'" in word for word in name.split()):
                counts[name] = counts.get(name, 0) + 1
    title = doc.short_title
    ranked = sorted((n for n in counts if n != title), key=lambda name: (-counts[name], name))
    return [*ranked, title] if re.search(r"[A-Za-z]", title) else ranked


class WordIndex:
    """Which documents hold which words: mention and absence checks over a whole library in one pass."""

    def __init__(self) -> None:
        self.postings: dict[str, set[str]] = {}

    def add(self, doc_id: str, text: str) -> None:
        for word in set(words(text)):
            self.postings.setdefault(word, set()).add(doc_id)

    def docs_with_all(self, terms: list[str]) -> set[str]:
        """Documents holding every one of ``terms`` (a phrase's words; the phrase itself is not checked)."""
        sets = [self.postings.get(term, set()) for term in terms]
        return set.intersection(*sets) if sets else set()

    def holds(self, term: str) -> bool:
        return term in self.postings


_FUNCTION_END = NOT_SUBJECT | frozenset((
    "a", "an", "the", "is", "are", "was", "were", "be", "been", "has", "have", "had", "do", "does", "did",
    "than", "very", "more", "less", "about",
))  # fmt: skip  # a question ending on one of these lost its object: a fragment
_FINITE = frozenset(("is", "are", "was", "were"))
_ADVERBS = frozenset((
    "indeed", "also", "even", "only", "still", "yet", "thus", "hence", "therefore", "however", "perhaps",
    "very", "too", "quite", "rather", "ever", "never", "always", "often", "already", "almost", "merely",
))  # fmt: skip
_THIRD_PERSON = frozenset(("he", "she", "him", "her", "his", "hers", "they", "them", "their", "it", "its"))
_ROMAN = re.compile(r"^(?=[ivxlc]+$)c{0,3}(xc|xl|l?x{0,3})(ix|iv|v?i{0,3})$")
_ABBREVIATIONS = frozenset(("mr", "mrs", "ms", "dr", "st", "fig", "vol", "ch", "pp", "etc", "vs", "cf"))
_OPENERS = frozenset(("what", "should", "must", "can", "will", "may", "how"))


def well_formed(question: str) -> str | None:
    """Why a drafted question is not one a person would ask as written, or None when it reads as one.

    General English checks, none tied to a corpus: a length a question has; a capital first letter and
    a final ``?`` (or ``.`` for a request); no markup or code characters, balanced brackets and quotes;
    no word twice in a row; not ending on a function word ("... by no?"); at most one finite ``is``/``are``
    verb ("What is X is by no?" joins two clauses); no adverb where a subject should be ("Must vain
    indeed be ..."); no he, she, it or they, which have nothing to refer to outside their sentence;
    no chapter numerals standing for a topic; not ending on a lone letter or an abbreviation
    ("... Salmonella and E?", "... speak to Mr?": a sentence cut at its full stop).
    """
    text = question.strip()
    tokens = words(text)
    if not 3 <= len(tokens) <= 24:
        return f"{len(tokens)} words: not the length of a question"
    if not text[:1].isupper() or text[-1:] not in "?.":
        return "not a sentence: no capital first letter or no final mark"
    if re.search(r"[{}<>|=_*\\#@$^~`]|!\w", text):
        return "markup or code characters"
    if any(text.count(a) != text.count(b) for a, b in ("()", "[]")) or text.count('"') % 2:
        return "unbalanced brackets or quotes"
    if any(a == b for a, b in itertools.pairwise(tokens)):
        return "a word twice in a row"
    if tokens[-1] in _FUNCTION_END:
        return f"ends on {tokens[-1]!r}: a fragment"
    if (len(tokens[-1]) == 1 and tokens[-1].isalpha()) or tokens[-1] in _ABBREVIATIONS:
        return f"ends on {tokens[-1]!r}: a sentence cut at an abbreviation"
    if sum(t in _FINITE for t in tokens) > 1:
        return "two finite verbs: two clauses joined into one question"
    if tokens[0] in _OPENERS and any(t in _ADVERBS for t in tokens[1:4]):
        return "an adverb where the subject should be"
    if any(t in _THIRD_PERSON for t in tokens):
        return "a pronoun with nothing to refer to"
    if any(_ROMAN.match(t) and t not in ("i", "c", "l") for t in tokens):
        return "a chapter numeral as a topic"
    return None


def restore_names(question: str, text: str) -> str:
    """``question`` with each word the document writes only capitalized (a name: ``London``) capitalized
    again where a template lowered it (``What is london?``)."""

    def fix(match: re.Match[str]) -> str:
        word = match.group(0)
        if not word.islower() or match.start() == 0:
            return word
        capital = word[:1].upper() + word[1:]
        inside = rf"(?<=[a-z,;:] ){re.escape(capital)}\b"  # capitalized inside a sentence: a name
        named = re.search(inside, text) and not re.search(rf"\b{re.escape(word)}\b", text)
        return capital if named else word

    return re.sub(r"[A-Za-z][\w'-]*", fix, question)
