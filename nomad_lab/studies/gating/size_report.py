"""The gates-at-size page: a table per family and size, the carried gate's change, what to deploy, a plot.

Every figure here is read from the study's result (``gates_at_size.json``): off-topic leak, unanswerable
and near-domain pass apart (never blended), each at the recall target with its 95% interval and n, the
recall each row actually reaches out of fold, and its cost per question.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nomad_lab.data.refusal_kinds import OFF_TOPIC, REFUSAL_KINDS
from nomad_lab.gate.crossval import LEAK_TARGET, RECALL_TARGET
from nomad_lab.studies.result import Page

__all__ = [
    "PAGE",
    "PLOT",
    "deploy_choice",
    "families",
    "floor_fails_from",
    "markdown",
    "pages",
    "plot",
]

FLOOR, CE = "floor", "cross-encoder"
PAGE, PLOT = "gates_at_size.md", "leak_vs_size.png"  # the study's document is gates_at_size.json


def _cell(text: object) -> str:
    """A table cell that cannot break its row."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def rate(triple: Sequence[float] | None, n: int | None = None) -> str:
    """``12.3% [8.1, 17.0]`` (and ``n = 140`` when given); an absent rate is a dash."""
    if not triple or triple[0] is None or triple[0] != triple[0]:
        return "–"
    text = f"{triple[0]:.1%} [{100 * triple[1]:.1f}, {100 * triple[2]:.1f}]"
    return f"{text}, n = {n}" if n is not None else text


def families(size: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The rows the page follows across sizes: the floor, the cross-encoder, the best row refit at this
    size, the best with no model call, and each gate carried from the smallest size."""
    by_name = {r["gate"]: r for r in size["rows"]}
    found = {
        FLOOR: next((r for r in size["rows"] if r["family"] == "floor"), None),
        CE: next((r for r in size["rows"] if r["gate"].startswith("ce:")), None),
        "best refit here": by_name.get(size["best"]),
        "best with no model call": by_name.get(size["bestWithoutModelCall"]),
    }
    found |= {f"carried: {t['recipe']}": t for t in size.get("transfer", [])}
    return {k: v for k, v in found.items() if v is not None}


def _kind(row: dict[str, Any], kind: str) -> str:
    entry = (row.get("byKind") or {}).get(kind)
    return "–" if not entry else rate(entry.get("passAtRecallTarget"), entry.get("n"))


def off_topic_leak(row: dict[str, Any]) -> float | None:
    entry = (row.get("byKind") or {}).get(OFF_TOPIC) or {}
    leak = entry.get("passAtRecallTarget")
    return None if not leak else leak[0]


def recall(row: dict[str, Any]) -> float | None:
    reached = row.get("recallAtRecallTarget")
    return None if not reached else reached[0]


def deploy_choice(size: dict[str, Any]) -> dict[str, Any] | None:
    """The gate to deploy at one size: the least off-topic leak among the rows that reach the recall
    target out of fold, carried gates aside (None: no row reaches it). Stored in the study's result, so
    the page's deploy table reads one field per size."""
    picks = [
        (name, row)
        for name, row in families(size).items()
        if not name.startswith("carried") and (recall(row) or 0) >= RECALL_TARGET - 1e-9
    ]
    if not picks:
        return None
    name, row = min(picks, key=lambda p: off_topic_leak(p[1]) or 0.0)
    entry = (row.get("byKind") or {}).get(OFF_TOPIC) or {}
    return {
        "family": name,
        "gate": row["gate"],
        "threshold": size["gateThreshold"] if row["gate"] == size["gateName"] else None,
        "offTopicLeak": entry.get("passAtRecallTarget"),
        "n": entry.get("n"),
        "recall": row.get("recallAtRecallTarget"),
    }


def floor_fails_from(sizes: Sequence[dict[str, Any]]) -> float | None:
    """The first size (MB) at which the floor's off-topic leak exceeds the leak target (None: it never
    does up to the largest size)."""
    for size in sizes:
        floor = families(size).get(FLOOR)
        if floor is not None and (off_topic_leak(floor) or 0) > LEAK_TARGET:
            return size["megabytes"]
    return None


def markdown(result: dict[str, Any]) -> str:
    """The page's tables (see the module docstring)."""
    kinds = [k for k in REFUSAL_KINDS if any(s["refusalsByKind"].get(k) for s in result["sizes"])]
    head = "| library | MB | gate | " + " | ".join(f"{k} pass" for k in kinds) + " | recall@5 | ms/question |"
    lines = [head, "|" + "---|" * (5 + len(kinds))]
    for size in result["sizes"]:
        for family, row in families(size).items():
            cells = [size["label"], f"{size['megabytes']:.1f}", f"{family}: {row['gate']}"]
            cells += [_kind(row, k) for k in kinds]
            cells += [rate(row.get("recallAtRecallTarget")), f"{row.get('msPerQuestion') or 0:.2f}"]
            lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    out = [
        f"Gates at the size of a library (embedder {result['embedder'] or 'MiniLM'}, "
        f"index {result['index']}): "
        f"each refusal kind's pass rate at recall@5 >= {RECALL_TARGET:.2f} out of fold, 95% intervals, n "
        "refusals of that kind.",
        "",
        *lines,
    ]
    carried = [(s, t) for s in result["sizes"] for t in s.get("transfer", [])]
    if carried:
        out += [
            "",
            f"A gate fitted at {result['sizes'][0]['megabytes']:.1f} MB, applied unchanged (same held-out "
            "questions, paired):",
            "",
            "| library | MB | carried gate | off-topic leak where fitted | off-topic leak here "
            "| change (points) | recall@5 here |",
            "|---|---|---|---|---|---|---|",
        ]
        for size, t in carried:
            change = t["change"].get(OFF_TOPIC, {})
            diff = change.get("difference")
            shown = (
                "–"
                if diff is None
                else f"{100 * diff:+.1f} [{100 * change['low']:+.1f}, {100 * change['high']:+.1f}]"
            )
            small = (t["atSmall"].get(OFF_TOPIC) or {}).get("passAtRecallTarget")
            cells = [size["label"], f"{size['megabytes']:.1f}", t["recipe"], rate(small), _kind(t, OFF_TOPIC)]
            cells += [shown, rate(t["recallAtRecallTarget"])]
            out.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    out += [
        "",
        "What to deploy at your size:",
        "",
        "| library | MB | deploy | threshold | off-topic leak | recall@5 |",
        "|---|---|---|---|---|---|",
    ]
    for size in result["sizes"]:
        pick = size["deploy"]
        if pick is None:
            missing = "no row reaches the recall target | – | – | –"
            out.append(f"| {_cell(size['label'])} | {size['megabytes']:.1f} | {missing} |")
            continue
        threshold = "chosen in folds" if pick["threshold"] is None else f"{pick['threshold']:.3f} (gate file)"
        cells = [size["label"], f"{size['megabytes']:.1f}", pick["gate"], threshold]
        cells += [rate(pick["offTopicLeak"], pick["n"]), rate(pick["recall"])]
        out.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    out += index_lines(result.get("indexComparison"))
    floor_fails = result["floorFailsFromMegabytes"]
    out.append(
        ""
        if floor_fails is None
        else f"\nThe floor alone leaks more than {LEAK_TARGET:.0%} of off-topic refusals at recall@5 "
        f"{RECALL_TARGET:.2f} from {floor_fails:.1f} MB on."
    )
    return "\n".join(out).rstrip() + "\n"


def _paired(test: dict[str, Any], percent: bool) -> str:
    scale, unit = (100, " points") if percent else (1, "")
    fmt = ".1f" if percent else ".3f"
    return (
        f"{scale * test['a']:{fmt}} -> {scale * test['b']:{fmt}} ({scale * test['difference']:+{fmt}}{unit}, "
        f"[{scale * test['low']:+{fmt}}, {scale * test['high']:+{fmt}}], n = {test['n']})"
    )


def index_lines(compared: dict[str, Any] | None) -> list[str]:
    """The approximate index against exact search at the largest size, paired question by question."""
    if not compared:
        return []
    parameters = compared.get("indexParameters")  # results made before it was recorded lack it
    named = ", ".join(f"{k} {v}" for k, v in parameters.items() if k != "kind") if parameters else ""
    lines = [
        "",
        f"Index `{compared['index']}`{f' ({named})' if named else ''} against `{compared['against']}` at "
        f"{compared['megabytes']:.1f} MB, paired over the same {compared['questions']} questions (95% "
        "paired bootstrap intervals):",
        "",
        "| measure | " + f"{compared['against']} -> {compared['index']} (difference) |",
        "|---|---|",
        f"| recall@5, no floor | {_paired(compared['recallAt5NoFloor'], False)} |",
    ]
    for floor, test in compared["offTopicLeakAtFloor"].items():
        lines.append(f"| off-topic leak (%), floor {floor} | {_paired(test, True)} |")
    lines.append(f"| questions with the same top 5 | {compared['sameTop5']:.1%} |")
    return lines


def plot(result: dict[str, Any]) -> Any:
    """Off-topic leak against library size, a line per family, each point labelled with its recall."""
    import matplotlib.pyplot as plt  # heavy

    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    names = list(dict.fromkeys(n for s in result["sizes"] for n in families(s)))
    for name in names:
        points = [
            (s["megabytes"], off_topic_leak(r), recall(r))
            for s in result["sizes"]
            if (r := families(s).get(name)) is not None and off_topic_leak(r) is not None
        ]
        if not points:
            continue
        xs, ys, _ = zip(*points, strict=True)
        ax.plot(xs, ys, marker="o", label=name, linestyle="--" if name.startswith("carried") else "-")
        for x, y, r in points:
            if r is not None:
                ax.annotate(f"{r:.2f}", (x, y), textcoords="offset points", xytext=(3, 3), fontsize=6)
    ax.axhline(LEAK_TARGET, color="grey", linewidth=0.8, linestyle=":")
    ax.set_xscale("log")
    ax.set_xlabel("library size (MB of text, log scale)")
    ax.set_ylabel(f"off-topic leak at recall@5 >= {RECALL_TARGET:.2f}")
    ax.set_title("Off-topic leak as the library grows (labels: recall@5 reached out of fold)", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def pages(document: dict[str, Any]) -> tuple[Page, ...]:
    """``gates_at_size.md`` from the stored ``gates_at_size.json`` alone."""
    return (Page(PAGE, (markdown(document),)),)
