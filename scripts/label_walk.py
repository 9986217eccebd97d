"""An agent's labelling sitting through the same library calls the notebook's widgets use.

Why a script: the helper that walked the books library is an AI agent, not a person at the notebook;
it reads the next drafts in the session's queue order (``show N``) and records its decisions from a
JSON list (``record FILE``), through :class:`LabelSession` exactly as the buttons do. Each ``record``
appends the batch's wall time (from ``show`` to ``record``) to ``datasets/corpora/books/sitting.jsonl``,
beside the labels it timed (``nomad-lab study labelling`` reads it; nothing here writes under results/).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from nomad_lab.eval.gating.label_sitting import LabelSession

WHO = "labelwalk helper (an AI agent, not a human)"
LOG = Path("datasets/corpora/books/sitting.jsonl")
STAMP = Path("runs/label_walk.shown")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("action", choices=("show", "record"))
    parser.add_argument("arg")
    parser.add_argument("--corpus", default="datasets/library_growth")
    parser.add_argument("--goldens", default="datasets/corpora/books/goldens")
    parser.add_argument("--store", default="runs/books.duckdb")
    args = parser.parse_args()
    session = LabelSession.open(args.corpus, args.goldens, args.store, who=WHO)
    if args.action == "show":
        for draft_id in session.queue()[: int(args.arg)]:
            draft = session.draft(draft_id)
            print(
                f"== {draft_id} [{draft.draft.source}] refusal={draft.expect_refusal} "
                f"gold={draft.relevant_doc_ids}\nQ: {draft.query}"
            )
            for p in session.passages(draft_id):
                print(f"   {p.score:.3f} {p.doc_id}: {' '.join(p.text.split())[:300]}")
        STAMP.write_text(str(time.time()))
        return
    started = float(STAMP.read_text())
    decisions = json.loads(Path(args.arg).read_text())
    for item in decisions:
        session.record(item.pop("id"), item.pop("action"), **item)
    seconds = time.time() - started
    with LOG.open("a") as out:
        out.write(json.dumps({"labels": len(decisions), "seconds": round(seconds, 1)}) + "\n")
    print(f"recorded {len(decisions)} in {seconds:.0f} s; progress {session.progress()}")


if __name__ == "__main__":
    main()
