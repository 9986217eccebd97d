"""``nomad-lab goldens sheet``: a blind rating sheet of drafts, and its key kept apart.

``goldens sheet --drafts FILE --corpus DIR --out DIR [--per-group N] [--seed S]`` samples up to N drafts
of each source (template, model) and kind (answerable, refusal) from a drafts file, shuffles them and
writes ``DIR/sheet.json`` (what a rater reads: opaque ids, questions, excerpts; no source) and
``DIR/key.json`` (row -> source), which a rater must not open until the verdicts are written. The same
seed gives the same sheet. ``nomad-lab study draft-rating`` counts the verdicts. Python:
``nomad_lab.data.draft_sheet.rating_sheet``.
"""

from __future__ import annotations

import argparse
import json
import shlex
from collections import Counter
from pathlib import Path
from typing import Any

from nomad_lab.cli.workspace_args import add_corpus_arguments

SHEET, KEY = "sheet.json", "key.json"


def register(sub: Any) -> None:
    sheet = sub.add_parser("sheet", help="a blind rating sheet of drafts (sources hidden) and its key")
    add_corpus_arguments(sheet, goldens=False)
    sheet.add_argument(
        "--drafts", type=Path, required=True, help="a drafts file (goldens draft's drafts.jsonl)"
    )
    sheet.add_argument("--out", type=Path, required=True, help=f"folder for {SHEET} and {KEY}")
    sheet.add_argument(
        "--per-group", type=int, default=20, help="drafts per source and kind, at most (%(default)s)"
    )
    sheet.add_argument("--seed", type=int, default=1341, help="seed of the sample and order (%(default)s)")
    sheet.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from nomad_lab.core.errors import NomadLabError
    from nomad_lab.data.corpus import load_corpus
    from nomad_lab.data.draft_sheet import rating_sheet
    from nomad_lab.data.golden_suites import load_suite_file

    if args.per_group <= 0:
        raise NomadLabError(f"--per-group must be > 0, got {args.per_group}")
    corpus = load_corpus(args.corpus)
    drafts = load_suite_file(args.drafts, corpus.all_doc_ids, drafts=True)
    rows, key = rating_sheet(drafts, {d.doc_id: d.text for d in corpus.docs}, args.per_group, args.seed)
    if not rows:
        raise NomadLabError(f"{args.drafts}: no template or model draft of a document to rate")
    parts = ["--drafts", args.drafts, "--corpus", args.corpus, "--out", args.out]
    parts += ["--per-group", args.per_group, "--seed", args.seed]
    command = shlex.join(["nomad-lab", "goldens", "sheet", *map(str, parts)])
    args.out.mkdir(parents=True, exist_ok=True)
    sheet = {"command": command, "drafts": str(args.drafts), "library": str(args.corpus), "rows": rows}
    (args.out / SHEET).write_text(json.dumps(sheet, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (args.out / KEY).write_text(json.dumps(key, indent=2) + "\n", encoding="utf-8")
    kinds = Counter(row["kind"] for row in rows)
    print(
        f"wrote {len(rows)} rows ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))}) to "
        f"{args.out / SHEET}; the key ({args.out / KEY}) stays closed until the verdicts are written"
    )
    return 0
