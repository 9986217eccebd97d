"""``@recorded``: a command that writes results outside :func:`nomad_lab.studies.shape.execute` still
leaves the same ``provenance.json`` beside them.

Why: ``execute`` records every registered study it runs; a few commands still write their files
themselves (the judges' confidence tables, the ladder, per-passage, kv-window, rewrite, embedders).
Wrapping their ``run`` records the same things for them: commit, dirty, the exact command line, the
stored run it was given, the corpus fingerprints of the runs it stored or read, its embedders and the
digest of every model it called (:func:`nomad_lab.eval.provenance.provenance_record`).
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

Run = Callable[[argparse.Namespace], int]


def recorded(run: Run) -> Run:
    """``run`` that, when it succeeds, writes ``provenance.json`` into ``args.out`` (its folder when
    ``--out`` names a file)."""

    @functools.wraps(run)
    def wrapper(args: argparse.Namespace) -> int:
        from nomad_lab.eval.provenance import provenance_record, stored_fingerprints, write_provenance

        started = datetime.now(UTC)
        code = run(args)
        out = getattr(args, "out", None)
        if code or out is None:
            return code
        folder = Path(out) if Path(out).suffix == "" else Path(out).parent
        params = {k: v for k, v in vars(args).items() if k != "func" and not callable(v)}
        given = [str(args.run)] if getattr(args, "run", None) else []
        fingerprints = stored_fingerprints(getattr(args, "store", None), started, given)
        record = provenance_record(
            params=params, run_id=given[0] if given else None, fingerprints=fingerprints
        )
        path = write_provenance(folder, record)
        print(f"wrote provenance: {path}")
        return code

    return wrapper
