"""One golden line (SPEC §8.1): its record (:class:`Golden` and its parts) and the parser that validates it.

Why apart from the suites: a line's shape and checks are the interchange format itself, read by the suite
loader (:mod:`nomad_lab.data.golden_suites`) and by whatever else validates one line (a drafted question,
a labelled decision); the suites module is about files, names and selection. Every problem of a line is
collected (:class:`LineChecker`), so a suite author fixes a line in one pass.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.jsstring import js_trim
from nomad_lab.data.refusal_kinds import REFUSAL_KINDS, KindError, kind_of, tag_kind

__all__ = [
    "DRAFT_KINDS",
    "DraftMark",
    "Golden",
    "GoldenError",
    "LineChecker",
    "Turn",
    "check_doc_id",
    "js_truthy",
    "kindless_refusals",
    "parse_line",
]

DRAFT_KINDS = ("template", "llm", "llm-refusal", "swap", "fictional-attribute", "bank")
"""What a draft's ``source`` may start with (``template:heading``, ``llm:SPEC``, ``llm-refusal:SPEC``,
``bank:coding`` ...)."""
_ROLES = ("user", "assistant")


class GoldenError(NomadLabError, ValueError):
    """One or more golden-file problems; ``errors`` holds each ``<file>:<line>: message`` line."""

    def __init__(self, errors: Sequence[str]) -> None:
        self.errors = list(errors)
        super().__init__("\n".join(self.errors))


@dataclass(frozen=True)
class Turn:
    role: str
    content: str


@dataclass(frozen=True)
class DraftMark:
    """Where a drafted question came from: the generator (``source``), its document, the seed it ran with."""

    source: str
    doc: str | None
    seed: int

    @property
    def kind(self) -> str:
        return self.source.split(":", 1)[0]

    def as_json(self) -> dict[str, Any]:
        return {"source": self.source, "doc": self.doc, "seed": self.seed}


@dataclass(frozen=True)
class Golden:
    """One golden question. ``must_include``/``must_not_include`` hold compiled case-insensitive patterns."""

    id: str
    query: str
    suite: str
    file: str
    line: int
    turns: tuple[Turn, ...] = ()
    relevant_doc_ids: tuple[str, ...] = ()
    must_include: tuple[re.Pattern[str], ...] = ()
    must_not_include: tuple[re.Pattern[str], ...] = ()
    expect_refusal: bool = False
    tags: tuple[str, ...] = ()
    standalone: str = ""  # a follow-up's hand-written self-contained rewrite; "" for every other golden
    draft: DraftMark | None = None
    """Set on a generated candidate nobody has labelled yet (loaded only with ``drafts=True``)."""
    refusal_kind: str | None = None
    """A refusal's kind (:mod:`nomad_lab.data.refusal_kinds`): its ``refusalKind``, else what its tags
    name, else off-topic; None for an answerable question."""
    kind_given: bool = False
    """Whether ``refusalKind`` was written on the line (else the kind was derived from the tags)."""

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}"

    def retrieval_text(self, standalone: bool = False) -> str:
        """What retrieval embeds: the raw ``query`` (the reference), or with ``standalone`` its rewrite.

        Why both: the reference's retrieval tier embeds the last message as typed, and every score of it
        stays comparable only if that is the default; a gate, though, is meant to judge the question the
        user asked, which for an elliptical follow-up ("And at 2,400 m?") is only the rewrite."""
        return self.standalone if standalone and self.standalone else self.query


def js_truthy(value: Any) -> bool:
    """JavaScript truthiness: ``[]``, ``{}`` and ``"false"`` are true; ``0``, ``""``, null and NaN false."""
    if value is None or value is False:
        return False
    if isinstance(value, int | float):
        return value == value and value != 0  # NaN != NaN
    if isinstance(value, str):
        return value != ""
    return True


def check_doc_id(doc_id: str) -> str | None:
    """Why a doc id is unsafe, or None. Doc ids name files in the corpus dir and must not leave it."""
    if not doc_id:
        return "is empty"
    if "/" in doc_id or "\\" in doc_id or "\x00" in doc_id:
        return "contains a path separator"
    if doc_id in (".", "..") or doc_id.startswith(".."):
        return "is a relative path component"
    return None


class LineChecker:
    """Collects errors for one line so all problems of a golden are reported, not just the first."""

    def __init__(self, where: str, errors: list[str]) -> None:
        self.where = where
        self.errors = errors
        self.ok = True

    def fail(self, message: str) -> None:
        self.errors.append(f"{self.where}: {message}")
        self.ok = False

    def string_list(self, obj: dict[str, Any], name: str) -> tuple[str, ...]:
        value = obj.get(name)
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.fail(f"field '{name}' must be an array of strings")
            return ()
        return tuple(value)

    def patterns(self, obj: dict[str, Any], name: str) -> tuple[re.Pattern[str], ...]:
        compiled = []
        for i, pattern in enumerate(self.string_list(obj, name)):
            try:
                compiled.append(re.compile(pattern, re.IGNORECASE))
            except re.error as exc:
                self.fail(f"field '{name}[{i}]': invalid regex {pattern!r}: {exc}")
        return tuple(compiled)

    def turns(self, obj: dict[str, Any]) -> tuple[Turn, ...]:
        value = obj.get("turns")
        if value is None:
            return ()
        if not isinstance(value, list):
            self.fail("field 'turns' must be an array")
            return ()
        turns = []
        for i, turn in enumerate(value):
            if not isinstance(turn, dict):
                self.fail(f"field 'turns[{i}]' must be an object with 'role' and 'content'")
                continue
            role, content = turn.get("role"), turn.get("content")
            if role not in _ROLES:
                self.fail(f'field \'turns[{i}].role\' must be "user" or "assistant", got {role!r}')
            if not isinstance(content, str):
                self.fail(f"field 'turns[{i}].content' must be a string")
            if role in _ROLES and isinstance(content, str):
                turns.append(Turn(role, content))
        return tuple(turns)

    def draft(self, obj: dict[str, Any], doc_ids: set[str] | None) -> DraftMark | None:
        value = obj.get("draft")
        if value is None:
            return None
        if not isinstance(value, dict):
            self.fail("field 'draft' must be an object with 'source', 'doc' and 'seed'")
            return None
        source, doc, seed = value.get("source"), value.get("doc"), value.get("seed")
        if not isinstance(source, str) or source.split(":", 1)[0] not in DRAFT_KINDS:
            self.fail(f"field 'draft.source' must start with one of {', '.join(DRAFT_KINDS)}, got {source!r}")
        if doc is not None and not isinstance(doc, str):
            self.fail(f"field 'draft.doc' must be a doc id or null, got {doc!r}")
        elif isinstance(doc, str) and doc_ids is not None and doc not in doc_ids:
            self.fail(f"field 'draft.doc' {doc!r} is not a corpus document (no {doc}.md)")
        if not isinstance(seed, int) or isinstance(seed, bool):
            self.fail(f"field 'draft.seed' must be an integer, got {seed!r}")
        if not self.ok:
            return None
        return DraftMark(source, doc, seed)


def parse_line(
    raw: str,
    where: str,
    suite: str,
    file: str,
    line_no: int,
    corpus_doc_ids: set[str] | None,
    errors: list[str],
) -> Golden | None:
    check = LineChecker(where, errors)
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as exc:
        check.fail(f"invalid JSON: {exc.msg} (column {exc.colno})")
        return None
    if not isinstance(obj, dict):
        check.fail(f"a golden must be a JSON object, got {type(obj).__name__}")
        return None
    golden_id = obj.get("id")
    if not isinstance(golden_id, str) or not golden_id.strip():
        check.fail("field 'id' is required and must be a non-empty string")
    query = obj.get("query")
    if not isinstance(query, str) or not js_trim(query):
        check.fail("field 'query' is required and must be non-empty after trimming")
    turns = check.turns(obj)
    standalone = obj.get("standalone", "")
    if not isinstance(standalone, str) or ("standalone" in obj and not js_trim(standalone)):
        check.fail("field 'standalone' must be a non-empty string (a self-contained rewrite of the query)")
        standalone = ""
    elif standalone and not obj.get("turns"):
        check.fail("field 'standalone' is only for follow-ups: this golden has no 'turns' to resolve")
    relevant = check.string_list(obj, "relevantDocIds")
    must_include = check.patterns(obj, "mustInclude")
    must_not_include = check.patterns(obj, "mustNotInclude")
    tags = check.string_list(obj, "tags")
    draft = check.draft(obj, corpus_doc_ids)
    expect_refusal = js_truthy(obj.get("expectRefusal", False))
    if expect_refusal and relevant:
        check.fail("expectRefusal is true but relevantDocIds is not empty")
    relevant_valid = obj.get("relevantDocIds") is None or isinstance(obj.get("relevantDocIds"), list)
    if not expect_refusal and not relevant and relevant_valid:
        check.fail("relevantDocIds is empty and expectRefusal is false: this golden can never be scored")
    for doc_id in relevant:
        problem = check_doc_id(doc_id)
        if problem:
            check.fail(f"relevantDocIds entry {doc_id!r} {problem}")
        elif corpus_doc_ids is not None and doc_id not in corpus_doc_ids:
            check.fail(f"relevantDocIds entry {doc_id!r} is not a corpus document (no {doc_id}.md)")
    refusal_kind, kind_given = refusal_kind_of(check, obj, tags, expect_refusal)
    if not check.ok:
        return None
    return Golden(
        id=golden_id,
        query=query,
        suite=suite,
        file=file,
        line=line_no,
        turns=turns,
        relevant_doc_ids=relevant,
        must_include=must_include,
        must_not_include=must_not_include,
        expect_refusal=expect_refusal,
        tags=tags,
        standalone=standalone,
        draft=draft,
        refusal_kind=refusal_kind,
        kind_given=kind_given,
    )


def refusal_kind_of(
    check: LineChecker, obj: dict[str, Any], tags: tuple[str, ...], expect_refusal: bool
) -> tuple[str | None, bool]:
    """(the refusal kind, whether ``refusalKind`` gave it); an answerable golden has none."""
    given = obj.get("refusalKind")
    if given is not None and not expect_refusal:
        check.fail("field 'refusalKind' is only for refusals: this golden has expectRefusal false")
        return None, False
    if given is not None and given not in REFUSAL_KINDS:
        check.fail(f"field 'refusalKind' must be one of {', '.join(REFUSAL_KINDS)}, got {given!r}")
        return None, False
    if not expect_refusal:
        return None, False
    try:
        return kind_of(tags, given), given is not None
    except KindError as exc:
        check.fail(f"field 'tags': {exc}")
        return None, False


def kindless_refusals(goldens: Iterable[Golden]) -> list[Golden]:
    """Refusals that neither carry ``refusalKind`` nor have a tag naming a kind: counted as off-topic."""
    return [g for g in goldens if g.expect_refusal and not g.kind_given and tag_kind(g.tags) is None]
