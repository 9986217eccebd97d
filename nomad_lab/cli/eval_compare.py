"""``nomad-lab eval compare``: a report against its baseline (SPEC §8.5), or ``--promote`` it to a baseline.

Baselines live at ``results/baselines/<fingerprint>/<name>.json``: a baseline is only ever compared
with reports over the same corpus, chunking and embedding. Exit code 1 on any regression beyond the
tolerance or when the reports are not comparable; 2 when there is no baseline yet. Beside each metric's
verdict: a paired test over the questions both reports scored (exact McNemar for per-question yes/no
outcomes, paired bootstrap for recall and the other graded ones; see ``nomad_lab.eval.paired``).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    from nomad_lab.core.workspace import DEFAULT_BASELINES_DIR

    parser = subparsers.add_parser(
        "compare", help="compare a report with its baseline (exit 1 on regression)"
    )
    parser.add_argument("report", type=Path, help="a report JSON written by eval retrieval --report")
    parser.add_argument(
        "--baseline", type=Path, help="baseline report (default: <baselines>/<fingerprint>/<name>.json)"
    )
    parser.add_argument("--name", help="baseline name (default: the report kind, e.g. retrieval)")
    parser.add_argument("--baselines-dir", type=Path, default=DEFAULT_BASELINES_DIR, help="baselines root")
    parser.add_argument(
        "--promote", metavar="NAME", help="copy the report to <baselines>/<fingerprint>/NAME.json"
    )
    parser.add_argument(
        "--tolerance", type=float, default=0.02, help="allowed move the wrong way (default 0.02)"
    )
    parser.add_argument("--markdown", type=Path, metavar="PATH", help="also write the comparison as markdown")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from nomad_lab.eval.provenance import provenance_record, write_provenance
    from nomad_lab.eval.reports import baseline_path, compare_reports, load_report, render_comparison_markdown

    try:
        current = load_report(args.report)
    except ValueError as exc:
        print(f"eval compare: {exc}", file=sys.stderr)
        return 1
    if not current.fingerprint:
        print(f"eval compare: {args.report}: meta.corpusFingerprint is missing", file=sys.stderr)
        return 1
    if args.promote:
        target = baseline_path(args.baselines_dir, current.fingerprint, args.promote)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(args.report, target)
        write_provenance(target.parent, provenance_record(run_id=current.meta.get("runId")), file=target.name)
        print(f"promoted {args.report} to {target}")
        return 0
    source = args.baseline or baseline_path(
        args.baselines_dir, current.fingerprint, args.name or str(current.kind)
    )
    if not source.is_file():
        print(
            f"eval compare: no baseline at {source}; create one with --promote {args.name or current.kind}",
            file=sys.stderr,
        )
        return 2
    try:
        baseline = load_report(source)
    except ValueError as exc:
        print(f"eval compare: {exc}", file=sys.stderr)
        return 1
    from nomad_lab.eval.paired import paired_tests

    comparison = compare_reports(baseline, current, args.tolerance)
    tests = paired_tests(baseline, current) if comparison.comparable else None
    markdown = render_comparison_markdown(comparison, str(source), tests)
    print(markdown)
    if args.markdown:
        args.markdown.write_text(markdown, encoding="utf-8")
    return 1 if comparison.failed else 0
