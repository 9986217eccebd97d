"""How the intervals narrowed as labels came in: the sitting replayed in the order it was labelled.

Why: a person deciding whether more labels are worth it needs to see how fast the leak interval at
recall@5 >= 0.90 shrinks; this replays the decisions log at 20, 40, 60, ... decisions (skips count as
decisions, as they cost the labeller time) through :meth:`LabelSession.figures` (floor in sample, gate
out of fold) and writes ``narrowing.json``, ``narrowing.md``, ``narrowing.png`` and provenance.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from nomad_lab.eval.gating.labelling import LabelSession
from nomad_lab.eval.provenance import provenance_record, write_provenance


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", default="datasets/library_growth")
    parser.add_argument("--goldens", default="datasets/corpora/books/goldens")
    parser.add_argument("--store", default="runs/books.duckdb")
    parser.add_argument("--step", type=int, default=20)
    parser.add_argument("--out", default="results/labelling")
    args = parser.parse_args()
    session = LabelSession.open(args.corpus, args.goldens, args.store)
    total = len(session.decisions())
    steps = [*range(args.step, total, args.step), total]
    rows = [{"decisions": n, **session.figures(first=n)} for n in steps]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "narrowing.json").write_text(json.dumps({"steps": rows, "walk": _walk(out)}, indent=2) + "\n")
    lines = [
        "# Leak at recall@5 >= 0.90 as labels came in (books library; labeller: an AI agent)",
        "",
        "| decisions | answerable | refusals | floor leak [95% CI] | gate leak, out of fold [95% CI] |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        cells = [_cell(row.get(name)) for name in ("floor", "gate")]
        lines.append(
            f"| {row['decisions']} | {row['answerable']} | {row['refusals']} | {' | '.join(cells)} |"
        )
    (out / "narrowing.md").write_text("\n".join(lines) + "\n")
    _plot(rows, out / "narrowing.png")
    write_provenance(out, provenance_record(params=vars(args)))
    print("\n".join(lines))


def _walk(out: Path) -> dict:
    """The sitting's timings as logged: drafting (``draft.time``, ``/usr/bin/time -f "%e s wall"``) and
    the agent's batches (``sitting.jsonl``, written by ``scripts/label_walk.py``)."""
    batches = [json.loads(line) for line in (out / "sitting.jsonl").read_text().splitlines() if line]
    decisions, seconds = sum(b["labels"] for b in batches), sum(b["seconds"] for b in batches)
    return {
        "draftSeconds": float((out / "draft.time").read_text().split()[0]),
        "batches": len(batches),
        "decisions": decisions,
        "labelSeconds": round(seconds, 1),
        "secondsPerDecision": round(seconds / decisions, 2),
    }


def _cell(fig: dict | None) -> str:
    if not fig:
        return "n/a"
    return f"{fig['leak']:.2f} [{fig['leakLow']:.2f}, {fig['leakHigh']:.2f}] (recall {fig['recall']:.2f})"


def _plot(rows: list[dict], path: Path) -> None:
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, colour in (("floor", "tab:blue"), ("gate", "tab:orange")):
        pts = [(r["decisions"], r[name]) for r in rows if r.get(name)]
        if not pts:
            continue
        x = [n for n, _ in pts]
        ax.plot(x, [f["leak"] for _, f in pts], "o-", color=colour, label=f"{name} leak")
        ax.fill_between(
            x, [f["leakLow"] for _, f in pts], [f["leakHigh"] for _, f in pts], color=colour, alpha=0.2
        )
    ax.set_xlabel("decisions so far (in labelling order)")
    ax.set_ylabel("leak at recall@5 >= 0.90 (95% interval)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
