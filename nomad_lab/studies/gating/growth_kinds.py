"""The growth study's refusals, split by kind: the leak counts one kind, the others are reported apart.

The core and off-topic suites hold refusals of every kind (:mod:`nomad_lab.data.refusal_kinds`): an
off-topic question asks about another subject, an unanswerable or near-domain one asks about the domain
or its siblings. A floor passing context to the last two is a different failure from an off-topic leak,
so one rate over all of them would blend two questions; each kind gets its own n and pass rate per floor.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nomad_lab.data.refusal_kinds import OFF_TOPIC, REFUSAL_KINDS
from nomad_lab.gate.apply import spec_curve
from nomad_lab.gate.operating_curves import OperatingCurve, restrict_refusals
from nomad_lab.gate.pools import PoolSet

LEAK_KIND = OFF_TOPIC  # the kind the growth study's leak counts

Interval = tuple[float, float, float]  # value, low, high


@dataclass(frozen=True)
class KindPass:
    """One refusal kind at one library size: how many, and the share that gets context at each floor."""

    n: int
    pass_by_floor: dict[str, Interval]  # floor -> share of this kind's refusals given any context


def kind_passes(pools: PoolSet, floors: Sequence[float]) -> dict[str, KindPass]:
    """Each refusal kind present in ``pools`` (in :data:`REFUSAL_KINDS` order): its n and, per floor, the
    share of its refusals with any context left, with a 95% bootstrap interval (off-topic: the leak)."""
    out = {}
    for kind in REFUSAL_KINDS:
        n = int(pools.of_kind(kind).sum())
        if n:
            curve = spec_curve(restrict_refusals(pools, kind), "floor", points=sorted(set(floors)))
            out[kind] = KindPass(n, {f"{f:g}": interval(curve, f, "leak") for f in floors})
    return out


def interval(curve: OperatingCurve, floor: float, metric: str) -> Interval:
    """``curve``'s leak (the share of its refusals given context) or recall at ``floor``, with its bounds."""
    row = curve.at(floor)
    key = "leak" if metric == "leak" else f"recall@{curve.k}"
    lo, hi = ("leak_lo", "leak_hi") if metric == "leak" else ("recall_lo", "recall_hi")
    return (row[key], row[lo], row[hi])


def ci(value: Interval | None) -> str:
    """An interval as a table cell: value [low, high], "n/a" when there is none."""
    return "n/a" if value is None else f"{value[0]:.3f} [{value[1]:.3f}, {value[2]:.3f}]"


def kinds_markdown(rows: Sequence[Any]) -> str:
    """One line per size and refusal kind other than :data:`LEAK_KIND`, the share given context per floor
    (``rows``: growth rows with ``label`` and ``by_kind``); "" when no row holds another kind."""
    floors = next((list(k.pass_by_floor) for r in rows for k in r.by_kind.values()), [])
    lines = [
        f"| {r.label} | {kind} | {figures.n} | "
        + " | ".join(ci(v) for v in figures.pass_by_floor.values())
        + " |"
        for r in rows
        for kind, figures in r.by_kind.items()
        if kind != LEAK_KIND
    ]
    if not lines:
        return ""
    head = "| library | kind | n | " + " | ".join(f"context passed, floor {f}" for f in floors) + " |"
    return (
        "\n".join(
            [
                "The other refusal kinds, apart (not in the leak above): the share of each kind's refusals "
                "that get any context.",
                "",
                head,
                "|" + "---|" * (3 + len(floors)),
                *lines,
            ]
        )
        + "\n"
    )
