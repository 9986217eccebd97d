"""A person's labels of drafted questions: goldens written one decision at a time, resumable.

Why a second file beside the goldens: a labelling sitting is interrupted (a kernel restart, lunch), and
skips and edits are decisions too, yet a skipped draft is not a golden. So every decision (answerable
with this gold document, refusal of a type, skip) is appended to ``<suite>.decisions.jsonl`` first, and
each label that is a golden is appended to the suite file ``<suite>.jsonl`` in the golden format, with
who labelled it, when, and the draft it came from (``labelled``). After each write the suite file is
loaded through the same validator the commands use, so a hand-edited line that breaks the format is
named by ``file:line`` at once, not at the next study. A draft's own guess (its draft mark, its source
document) is never copied as a label: only a person's decision writes a golden line.
"""

from __future__ import annotations

import getpass
import json
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nomad_lab.core.errors import NomadLabError
from nomad_lab.data.golden_suites import DECISIONS_SUFFIX, Golden, load_suite_file
from nomad_lab.data.refusal_kinds import REFUSAL_KINDS

ANSWERABLE = "answerable"
REFUSAL = "refusal"
SKIP = "skip"
ACTIONS = (ANSWERABLE, REFUSAL, SKIP)
REFUSAL_TYPES = REFUSAL_KINDS
"""The refusal kinds a person chooses from (:mod:`nomad_lab.data.refusal_kinds`, defined there once)."""
LABELLED_SUITE = "labelled"


@dataclass(frozen=True)
class Decision:
    """One decision on one draft. ``query`` is the question as labelled (the person may have edited it)."""

    draft_id: str
    action: str
    query: str
    gold: str | None = None
    refusal_type: str | None = None
    who: str = ""
    at: str = ""
    draft_source: str | None = None
    edited: bool = False

    def golden_line(self) -> dict[str, Any] | None:
        """The golden this decision makes (None for a skip)."""
        if self.action == SKIP:
            return None
        refusal = self.action == REFUSAL
        return {
            "id": f"label-{self.draft_id}",
            "query": self.query,
            "turns": [],
            "relevantDocIds": [] if refusal else [self.gold],
            "mustInclude": [],
            "mustNotInclude": [],
            "expectRefusal": refusal,
            "tags": [self.refusal_type] if refusal else ["labelled"],
            **({"refusalKind": self.refusal_type} if refusal else {}),
            "labelled": {
                "by": self.who,
                "at": self.at,
                "draftId": self.draft_id,
                "draftSource": self.draft_source,
                "edited": self.edited,
            },
        }


def default_labeller() -> str:
    """Who labels, when nobody says: ``$NOMAD_LAB_LABELLER``, else the account's login name
    (:func:`getpass.getuser`, which a Jupyter kernel without ``$USER`` still answers from the password
    database); "unknown" only when the account has no name at all. Recorded per label, never required."""
    if os.environ.get("NOMAD_LAB_LABELLER"):
        return os.environ["NOMAD_LAB_LABELLER"]
    try:
        return getpass.getuser() or "unknown"
    except (OSError, KeyError):  # no login variable and no password-database entry for the uid
        return "unknown"


def decide(
    draft: Golden,
    action: str,
    *,
    gold: str | None = None,
    refusal_type: str | None = None,
    query: str | None = None,
    who: str | None = None,
) -> Decision:
    """A checked decision on ``draft`` (one error line naming what is wrong otherwise)."""
    where = f"label {draft.id}"
    if action not in ACTIONS:
        raise NomadLabError(f"{where}: action {action!r} is not one of {', '.join(ACTIONS)}")
    if action == ANSWERABLE and not gold:
        raise NomadLabError(f"{where}: an answerable label needs its gold document")
    if action == REFUSAL and refusal_type not in REFUSAL_TYPES:
        raise NomadLabError(
            f"{where}: refusal type {refusal_type!r} is not one of {', '.join(REFUSAL_TYPES)}"
        )
    text = (query if query is not None else draft.query).strip()
    if not text:
        raise NomadLabError(f"{where}: the question is empty")
    return Decision(
        draft.id,
        action,
        text,
        gold if action == ANSWERABLE else None,
        refusal_type if action == REFUSAL else None,
        who or default_labeller(),
        datetime.now(UTC).isoformat(timespec="seconds"),
        draft.draft.source if draft.draft else None,
        text != draft.query,
    )


class LabelFile:
    """The suite file a sitting writes (``<dir>/labelled.jsonl``) and its decisions log beside it."""

    def __init__(self, goldens_dir: str | Path, suite: str = LABELLED_SUITE) -> None:
        self.path = Path(goldens_dir) / f"{suite}.jsonl"
        self.log = Path(goldens_dir) / f"{suite}{DECISIONS_SUFFIX}"

    def decisions(self) -> dict[str, Decision]:
        """Every decision taken so far, by draft id (the last one wins: a draft may be relabelled)."""
        return {decision.draft_id: decision for decision in self.history()}

    def history(self) -> list[Decision]:
        """Every decision line in the order given (a relabelled draft appears once per decision)."""
        if not self.log.is_file():
            return []
        out = []
        for number, line in enumerate(self.log.read_text().splitlines(), start=1):
            if not line.strip():
                continue
            try:
                out.append(Decision(**json.loads(line)))
            except (json.JSONDecodeError, TypeError) as exc:
                raise NomadLabError(f"{self.log}:{number}: not a decision line ({exc})") from None
        return out

    def undo(self) -> Decision | None:
        """Take back the last decision: drop its log line and rewrite the suite file from the decisions
        left (a relabelled draft gets its earlier label back). The decision taken back, or None."""
        history = self.history()
        if not history:
            return None
        *kept, undone = history
        self.log.write_text("".join(json.dumps(asdict(d), ensure_ascii=False) + "\n" for d in kept))
        final = {d.draft_id: d for d in kept}
        lines = [
            HEADER,
            *(json.dumps(line, ensure_ascii=False) for d in final.values() if (line := d.golden_line())),
        ]
        self.path.write_text("\n".join(lines) + "\n")
        return undone

    def goldens(self, corpus_doc_ids: Iterable[str] | None = None) -> list[Golden]:
        """The labelled goldens, validated (a broken line raises with its ``file:line``)."""
        return load_suite_file(self.path, corpus_doc_ids) if self.path.is_file() else []

    def record(self, decision: Decision, corpus_doc_ids: Iterable[str] | None = None) -> None:
        """Append the decision and, unless it is a skip, its golden line; then validate the suite file.

        A relabelled draft's earlier golden line is replaced, so the suite never holds one id twice."""
        golden_id = f"label-{decision.draft_id}"
        lines = self.path.read_text().splitlines() if self.path.is_file() else [HEADER]
        lines = [raw for raw in lines if _line_id(raw) != golden_id]
        line = decision.golden_line()
        if line is not None:
            lines.append(json.dumps(line, ensure_ascii=False))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("\n".join(lines) + "\n")
        with self.log.open("a") as log:
            log.write(json.dumps(asdict(decision), ensure_ascii=False) + "\n")
        if any(raw.strip() and not raw.lstrip().startswith("//") for raw in lines):
            self.goldens(corpus_doc_ids)  # a hand-broken line is named here, by file:line


HEADER = "// Labels from a labelling sitting (notebooks/label.ipynb): who and when on each line."


def _line_id(raw: str) -> str | None:
    try:
        value = json.loads(raw) if raw.strip().startswith("{") else None
    except json.JSONDecodeError:
        return None
    return value.get("id") if isinstance(value, dict) else None
