"""Golden suites in the reference's JSONL format (SPEC §8.1): load, validate, select.

The format is the interchange format, so a suite written for the reference system loads unchanged and
fails the same way. Every error names ``<file>:<line>`` (1-based), and all of a run's errors are
reported together so a suite author fixes them in one pass. Regexes are compiled at load: a pattern
that would only fail mid-run (in the generation tier, after minutes of model calls) fails here instead.

Regex dialect: patterns are compiled with Python's ``re`` (case-insensitive). JavaScript and Python agree
on the common subset (classes, groups, alternation, quantifiers, lookahead); JS-only syntax such as
``\\p{L}`` without the ``regex`` module, or ``(?<name>`` spelled ``(?P<name>`` in older Pythons, is
reported as an invalid regex at load rather than silently behaving differently.

Drafts: a line with a ``draft`` object (``{"source": ..., "doc": ..., "seed": ...}``) is a candidate
question a generator wrote (``nomad-lab goldens draft``), not one a person labelled. It is validated like
any line, but the loaders return it only when asked (``drafts=True``): every eval, study and gate loads
with the default and so can never count a draft as a labelled golden. ``*`` leaves out the suite
:data:`DRAFTS_SUITE` (the generator's output file), and a file holding nothing but drafts is an error
when loaded for labelled goldens, so a mistyped ``--suite drafts`` fails instead of scoring nothing.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.jsstring import js_trim
from nomad_lab.core.workspace import DEFAULT_BANK_PATH
from nomad_lab.data.refusal_kinds import REFUSAL_KINDS, KindError, kind_of, tag_kind

__all__ = [
    "BANK_SUITE",
    "DRAFTS_SUITE",
    "DRAFT_KINDS",
    "GATING_SUITES",
    "DraftMark",
    "Golden",
    "GoldenError",
    "Turn",
    "available_suites",
    "check_doc_id",
    "kindless_refusals",
    "load_suite_file",
    "load_suites",
    "parse_suite_spec",
    "suite_path",
]

SUITE_SUFFIX = ".jsonl"
BANK_SUITE = "bank"
"""A suite name every goldens directory accepts: its own ``bank.jsonl``, else the shared out-of-scope bank.

Why a name and not an option: the bank's questions must be retrieved like any suite's (a learned gate needs
their pools as negatives), and a suite name reaches the CLI, notebooks and studies with no new plumbing.
``*`` still means the directory's own files only, so existing runs and checks are unchanged."""
GATING_SUITES = "core,off_topic,hard_refusals?"
"""The suites a gate is scored on: the answerable core, the off-topic refusals, and the hand-written hard
refusals (``hard_refusals.jsonl``: fictional attributes, near-domain and out-of-corpus questions) where the
goldens directory has them. The ``?`` makes that suite optional (see :func:`parse_suite_spec`), so the same
default works on a corpus whose goldens hold only ``core`` and ``off_topic``."""
OPTIONAL_MARK = "?"
DECISIONS_SUFFIX = ".decisions.jsonl"
"""A labelling sitting's decisions log (``labelled.decisions.jsonl``, :mod:`nomad_lab.data.labels`) sits
beside the goldens it writes; it is a log, never a suite."""
DRAFTS_SUITE = "drafts"
"""The suite file ``goldens draft`` writes (``<dir>/drafts.jsonl``); ``*`` never expands to it."""
DRAFT_KINDS = ("template", "llm", "swap", "fictional-attribute", "bank")
"""What a draft's ``source`` may start with (``template:heading``, ``llm:SPEC``, ``bank:coding`` ...)."""
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


class _LineChecker:
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


def _parse_line(
    raw: str,
    where: str,
    suite: str,
    file: str,
    line_no: int,
    corpus_doc_ids: set[str] | None,
    errors: list[str],
) -> Golden | None:
    check = _LineChecker(where, errors)
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
    refusal_kind, kind_given = _refusal_kind(check, obj, tags, expect_refusal)
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


def _refusal_kind(
    check: _LineChecker, obj: dict[str, Any], tags: tuple[str, ...], expect_refusal: bool
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


def _load_file(
    path: Path, corpus_doc_ids: set[str] | None, errors: list[str], drafts: bool = False
) -> list[Golden]:
    file = str(path)
    suite = path.name[: -len(SUITE_SUFFIX)] if path.name.endswith(SUITE_SUFFIX) else path.stem
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        errors.append(f"{file}: cannot read: {exc}")
        return []
    goldens: list[Golden] = []
    seen: dict[str, int] = {}
    skipped_drafts = 0
    lines = text.split("\n")
    for line_no, raw_line in enumerate(lines, start=1):
        line = js_trim(raw_line)
        if not line or line.startswith("//"):
            continue
        where = f"{file}:{line_no}"
        golden = _parse_line(line, where, suite, file, line_no, corpus_doc_ids, errors)
        if golden is None:
            continue
        if golden.id in seen:
            errors.append(f"{where}: duplicate id {golden.id!r} (first at {file}:{seen[golden.id]})")
            continue
        seen[golden.id] = line_no
        if golden.draft is not None and not drafts:
            skipped_drafts += 1
            continue
        goldens.append(golden)
    if not goldens and skipped_drafts and not any(e.startswith(f"{file}:") for e in errors):
        errors.append(
            f"{file}:1: only drafts in file ({skipped_drafts} lines marked 'draft'): nobody has labelled "
            "them; label them first, or load drafts explicitly (drafts=True)"
        )
    elif not goldens and not any(e.startswith(f"{file}:") for e in errors):
        errors.append(f"{file}:1: no goldens in file (all {len(lines)} lines are blank or // comments)")
    return goldens


def load_suite_file(
    path: str | Path, corpus_doc_ids: Iterable[str] | None = None, *, drafts: bool = False
) -> list[Golden]:
    """Load and validate one suite file; raises :class:`GoldenError` with every problem found.

    Draft lines are validated but returned only with ``drafts=True`` (see the module doc)."""
    errors: list[str] = []
    doc_ids = None if corpus_doc_ids is None else set(corpus_doc_ids)
    goldens = _load_file(Path(path), doc_ids, errors, drafts)
    if errors:
        raise GoldenError(errors)
    _say_kindless(goldens)
    return goldens


def _say_kindless(goldens: list[Golden]) -> None:
    """Print how many refusals were counted as off-topic for want of a kind (once per load, per file)."""
    by_file: dict[str, int] = {}
    for golden in kindless_refusals(goldens):
        by_file[golden.file] = by_file.get(golden.file, 0) + 1
    for file, count in by_file.items():
        print(
            f"{file}: {count} refusal(s) name no refusal kind in their tags or refusalKind: counted as "
            "off-topic",
            file=sys.stderr,
        )


def available_suites(goldens_dir: str | Path) -> list[str]:
    """Suite names (file names without ``.jsonl``), sorted."""
    directory = Path(goldens_dir)
    if not directory.is_dir():
        raise GoldenError([f"{directory}: goldens directory not found"])
    return sorted(
        p.name[: -len(SUITE_SUFFIX)]
        for p in directory.glob(f"*{SUITE_SUFFIX}")
        if p.is_file() and not p.name.endswith(DECISIONS_SUFFIX)
    )


def parse_suite_spec(spec: str, available: Sequence[str], also: Sequence[str] = ()) -> list[str]:
    """``core``, ``a,b`` or ``*`` to suite names; an unknown name is an error listing the available ones.

    ``*`` expands to ``available``; names in ``also`` (such as :data:`BANK_SUITE`) are accepted when named.
    A name ending in ``?`` (``hard_refusals?``) is optional: kept when available, dropped silently when
    not, so one default spec (:data:`GATING_SUITES`) serves goldens directories with and without it.
    """
    if spec.strip() == "*":
        return list(available)
    extra = [name for name in also if name not in available]
    known = (", ".join(available) or "none") + (f"; also {', '.join(extra)}" if extra else "")
    names = [name.strip() for name in spec.split(",")]
    if not spec.strip() or any(not name.rstrip(OPTIONAL_MARK) for name in names):
        raise GoldenError([f"empty suite name in {spec!r} (available: {known})"])
    names = [
        name.removesuffix(OPTIONAL_MARK)
        for name in names
        if not name.endswith(OPTIONAL_MARK) or name.removesuffix(OPTIONAL_MARK) in (*available, *also)
    ]
    if not names:
        raise GoldenError([f"no suite of {spec!r} is present (available: {known})"])
    unknown = [name for name in names if name not in available and name not in also]
    if unknown:
        raise GoldenError([f"unknown suite {name!r} (available: {known})" for name in unknown])
    return list(dict.fromkeys(names))


def suite_path(goldens_dir: str | Path, name: str) -> Path:
    """The file of suite ``name``: ``<dir>/<name>.jsonl``; ``bank`` falls back to the shared bank file."""
    path = Path(goldens_dir) / f"{name}{SUITE_SUFFIX}"
    if name == BANK_SUITE and not path.is_file():
        return DEFAULT_BANK_PATH
    return path


def load_suites(
    goldens_dir: str | Path,
    spec: str = "core",
    corpus_doc_ids: Iterable[str] | None = None,
    *,
    drafts: bool = False,
) -> list[Golden]:
    """Load the suites named by ``spec`` from ``goldens_dir``; ids must be unique across all loaded suites.

    Labelled goldens only unless ``drafts=True``; ``*`` never includes :data:`DRAFTS_SUITE`."""
    directory = Path(goldens_dir)
    every = available_suites(directory)
    labelled = [name for name in every if name != DRAFTS_SUITE or drafts]
    names = parse_suite_spec(spec, labelled, also=(BANK_SUITE, *(n for n in every if n not in labelled)))
    doc_ids = None if corpus_doc_ids is None else set(corpus_doc_ids)
    errors: list[str] = []
    goldens: list[Golden] = []
    first_seen: dict[str, Golden] = {}
    for name in names:
        for golden in _load_file(suite_path(directory, name), doc_ids, errors, drafts):
            if golden.id in first_seen:
                errors.append(
                    f"{golden.location}: duplicate id {golden.id!r} "
                    f"(first at {first_seen[golden.id].location})"
                )
                continue
            first_seen[golden.id] = golden
            goldens.append(golden)
    if errors:
        raise GoldenError(errors)
    _say_kindless(goldens)
    return goldens
