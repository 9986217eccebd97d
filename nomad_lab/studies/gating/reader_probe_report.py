"""What ``study reader-probe`` publishes, as a value built from its stored summary alone: per row, each
refusal kind's pass rate at answerable keep >= 0.90 (never blended), what the reader did per kind
(quoted a verified sentence, wrote NONE, quoted something the passages lack), the paired test against the
better sufficiency row, the reader alone at the keep it reaches against the zero-shot check held to that
keep, and the cost per question."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from nomad_lab.data.refusal_kinds import REFUSAL_KINDS, UNANSWERABLE
from nomad_lab.eval.gating.fit import figures_json
from nomad_lab.gate import crossval
from nomad_lab.gate.stats import paired_bootstrap
from nomad_lab.studies.result import Field, Page, Table, Value, listing

ANSWERABLE = "answerable"
READER = "reader:"
"""How a reader row's spec begins (``reader:SPEC``, with ``+FALLBACK`` when ordered below its quotes)."""


def _kinds(result: Mapping[str, Any]) -> np.ndarray:
    return np.array(result["kinds"], dtype=object)


def _row_json(result: Mapping[str, Any], row: Mapping[str, Any]) -> dict[str, Any]:
    f = figures_json(row["figures"], _kinds(result))
    return {"row": row["name"], "spec": row["spec"], "answerableKeep": f["recallAtRecallTarget"],
            "byKind": f["byKind"]}  # fmt: skip


def _unanswerable_pass(row: Mapping[str, Any]) -> float:
    got = row["byKind"].get(UNANSWERABLE, {}).get("passAtRecallTarget")
    return float("inf") if not got else got[0]


def _pair(result: Mapping[str, Any], row: str, base: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Row ``row`` against row ``base`` of ``rows`` (the study's raw rows), paired over the same
    unanswerable refusals: the difference in their pass rates."""
    mask = _kinds(result) == UNANSWERABLE
    leaked = {r["name"]: r["figures"].extra["leaked"] for r in rows}
    test = paired_bootstrap(leaked[base][mask], leaked[row][mask])
    return {"row": row, "baseline": base, "difference": test.statistic, "low": test.low, "high": test.high,
            "p": test.p_value, "n": test.n, "method": test.method}  # fmt: skip


def _paired(result: Mapping[str, Any], table: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each reader row (its spec starts with :data:`READER`) against the sufficiency row passing fewer
    unanswerable refusals (chosen by its own figure, never by how the reader compares with it), paired
    over them."""
    readers = [r for r in table if r["spec"].startswith(READER)]
    best = min((r for r in table if r not in readers), key=_unanswerable_pass)
    return [_pair(result, r["row"], best["row"], result["rows"]) for r in readers]


def _own_keep(result: Mapping[str, Any]) -> dict[str, Any]:
    """The reader alone at the answerable keep it reaches (its share of answerable questions given a
    verified quote) against the zero-shot sentence check held to that keep, thresholds in training folds."""
    reader, zero_shot = result["atOwnKeep"]
    return {
        "keep": reader["figures"].recall_at_recall[0],
        "rows": [_row_json(result, r) for r in result["atOwnKeep"]],
        "paired": _pair(result, reader["name"], zero_shot["name"], result["atOwnKeep"]),
    }


def _outcomes(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per kind (answerable first): how many questions, the share quoted and verified, NONE, and quoted
    but not in the passages (a hallucinated quote, counted as NONE by the check)."""
    out = []
    for kind in ("", *REFUSAL_KINDS):
        mine = [a for a, k in zip(result["answers"], result["kinds"], strict=True) if k == kind]
        if mine:
            n = len(mine)
            out.append({
                "kind": kind or ANSWERABLE,
                "n": n,
                "verified": sum(a["verified"] is not None for a in mine) / n,
                "none": sum(a["quote"] is None for a in mine) / n,
                "unverified": sum(a["quote"] is not None and a["verified"] is None for a in mine) / n,
            })  # fmt: skip
    return out


def summary(result: Mapping[str, Any]) -> dict[str, Any]:
    """The stored document: everything the page shows, JSON only."""
    table = [_row_json(result, r) for r in result["rows"]]
    seconds = [a["seconds"] for a in result["answers"] if a["reply"]]
    return {
        "run": result["run"],
        "fingerprint": result["data"].pools.fingerprint,
        "reader": result["reader"],
        "sentencesShown": result["sentences"],
        "questions": len(result["answers"]),
        "counts": {k or ANSWERABLE: result["kinds"].count(k) for k in ("", *REFUSAL_KINDS)},
        "folds": len(result["splits"][0]),
        "repeats": len(result["splits"]),
        "keepTarget": crossval.RECALL_TARGET,
        "rows": table,
        "paired": _paired(result, table),
        "atOwnKeep": _own_keep(result),
        "outcomes": _outcomes(result),
        "cost": {
            "secondsPerQuestion": float(np.mean(seconds)) if seconds else None,
            "medianSecondsPerQuestion": float(np.median(seconds)) if seconds else None,
            "questionsAsked": len(seconds),
            "ceMsPerQuote": result["seconds"]["ceMsPerQuote"],
            "secondsThisRun": result["seconds"]["total"],
            "secondsReadingThisRun": result["seconds"]["read"],
            "loadAtStart": result["loadAtStart"],
        },
    }


def rows(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    return summary(result)["rows"]


def _pass(kind: str) -> Field:
    return Field(f"byKind.{kind}.passAtRecallTarget", f"{kind} pass [95% CI]", "share", ".1f", 100, "%")


def pages(doc: Mapping[str, Any]) -> tuple[Page, ...]:
    counts = ", ".join(f"{n} {k}" for k, n in doc["counts"].items())
    head = (
        f"Reader probe, run {doc['run']} ({counts}); reader `{doc['reader']}` shown "
        f"{doc['sentencesShown'] or 'every'} sentences of the top 5; {doc['folds']}x{doc['repeats']} grouped "
        f"folds, thresholds chosen inside training folds for answerable keep >= {doc['keepTarget']:.2f}."
    )
    fields = (
        Field("row", "check"),
        _pass(UNANSWERABLE),
        Field("answerableKeep", "answerable keep reached", "share", ".3f"),
        *(_pass(k) for k in REFUSAL_KINDS if k != UNANSWERABLE),
        Field("spec", "spec", code=True),
    )
    table = Table(
        "rows", fields, tuple(doc["rows"]), f"Per check, at answerable keep >= {doc['keepTarget']:.2f}:"
    )
    paired = " ".join(_paired_line(p) for p in doc["paired"])
    own = doc["atOwnKeep"]
    own_table = Table(
        "atOwnKeep",
        fields,
        tuple(own["rows"]),
        f"The reader alone (a verified quote passes, nothing chosen) reaches answerable keep "
        f"{own['keep']:.3f}; beside it the zero-shot sentence check held to that keep (thresholds chosen "
        f"inside training folds for it). {_paired_line(own['paired'])}",
    )
    share = {"unit": "share", "fmt": ".1f", "scale": 100, "suffix": "%"}
    outcomes = Table(
        "outcomes",
        (Field("kind", "questions"), Field("n", "n", "count", "d"), Field("verified", "quoted", **share),
         Field("none", "NONE", **share), Field("unverified", "quote not in the passages", **share)),
        tuple(doc["outcomes"]),
        "What the reader wrote, per kind:",
    )  # fmt: skip
    c = doc["cost"]
    cost = listing(
        "cost",
        ("cost", "value"),
        (
            ("seconds per question, reader (mean)", Value(c["secondsPerQuestion"], "s", ".1f")),
            ("seconds per question, reader (median)", Value(c["medianSecondsPerQuestion"], "s", ".1f")),
            ("questions asked of the reader (the rest had no passage)", Value(c["questionsAsked"], "", "d")),
            ("ms per verified quote, cross-encoder", Value(c["ceMsPerQuote"], "ms", ".1f")),
            ("seconds in all, this run (stored replies read back)", Value(c["secondsThisRun"], "s", ".0f")),
            ("load average (1, 5, 15 min) when the study began",
             Value(", ".join(f"{x:.2f}" for x in c["loadAtStart"]))),
        ),
    )  # fmt: skip
    return (Page("reader_probe.md", (head, table, paired, own_table, outcomes, cost)),)


def _paired_line(p: Mapping[str, Any]) -> str:
    return (
        f"Paired over the same {p['n']} unanswerable refusals, {p['row']} against {p['baseline']}: pass "
        f"difference {100 * p['difference']:+.1f} points [{100 * p['low']:+.1f}, {100 * p['high']:+.1f}] "
        f"({p['method']}, p {p['p']:.3f})."
    )
