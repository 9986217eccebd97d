"""Golden suites in the reference's JSONL format (SPEC §8.1): load, validate, select.

A line's record and checks are :mod:`nomad_lab.data.golden_lines` (re-exported here, where every loader
has always found them); this module is the files: names, selection, ids unique across suites.

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

import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from nomad_lab.core.jsstring import js_trim
from nomad_lab.core.workspace import DEFAULT_BANK_PATH
from nomad_lab.data.golden_lines import (
    DRAFT_KINDS,
    DraftMark,
    Golden,
    GoldenError,
    Turn,
    check_doc_id,
    kindless_refusals,
    parse_line,
)

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
        golden = parse_line(line, where, suite, file, line_no, corpus_doc_ids, errors)
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
