"""The reference's candidate dump (SPEC §2.5), the interchange format of stored runs.

:meth:`DumpFormat.export_dump` writes a stored run's pools in the reference shape and
:meth:`DumpFormat.import_dump` stores a dump as a run, with :func:`nomad_lab.data.dump.validate_dump`
naming the offending field on bad input.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nomad_lab.core.jsfmt import js_json_dumps
from nomad_lab.data.dump import DUMP_PARAM_KEYS, validate_dump
from nomad_lab.store.records import CaseRecord, PoolEntry, RunRecord
from nomad_lab.store.run_tables import RunTables
from nomad_lab.store.tables import StoreError

__all__ = ["DumpFormat"]


class DumpFormat(RunTables):
    """Methods of :class:`nomad_lab.store.Store` that read and write runs in the reference dump format."""

    def export_dump(self, run_id: str) -> dict[str, Any]:
        """The run's pools in the reference dump shape (SPEC §2.5), pools in question order."""
        run = self.get_run(run_id)
        missing = [key for key in DUMP_PARAM_KEYS if key not in run.params]
        if missing:
            raise StoreError(f"{self.path}: run {run_id} has no {', '.join(missing)} parameter(s) to dump")
        pools = self.get_pools(run_id)
        return {
            "fingerprint": run.fingerprint,
            "params": {key: run.params[key] for key in DUMP_PARAM_KEYS},
            "pools": [
                {
                    "id": case.golden_id,
                    "tags": list(case.tags),
                    "expectRefusal": case.expect_refusal,
                    "relevantDocIds": list(case.relevant_doc_ids),
                    **({} if case.refusal_kind is None else {"refusalKind": case.refusal_kind}),
                    "candidates": [
                        {"docId": p.doc_id, "score": p.score, "semanticScore": p.semantic_score}
                        for p in pools.get(case.golden_id, [])
                    ],
                }
                for case in self.get_cases(run_id)
            ],
        }

    def write_dump(self, run_id: str, path: str | os.PathLike[str]) -> Path:
        """Write :meth:`export_dump` as ``JSON.stringify(dump, null, 2)`` would."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(js_json_dumps(self.export_dump(run_id)), encoding="utf-8")
        return target

    def import_dump(self, dump: Mapping[str, Any], source: str = "<dump>") -> str:
        """Store a (validated) reference dump as a run of kind ``retrieval``; returns the new run id."""
        validate_dump(dump, source)
        run = RunRecord(
            kind="retrieval",
            fingerprint=dump["fingerprint"],
            params=dict(dump["params"]),
            source=f"import:{source}",
        )
        cases = [
            CaseRecord(
                p["id"],
                i,
                tuple(p["tags"]),
                p["expectRefusal"],
                tuple(p["relevantDocIds"]),
                refusal_kind=p.get("refusalKind"),
            )
            for i, p in enumerate(dump["pools"])
        ]
        pools = {
            p["id"]: [
                PoolEntry(rank, c["docId"], None, float(c["score"]), float(c["semanticScore"]))
                for rank, c in enumerate(p["candidates"], start=1)
            ]
            for p in dump["pools"]
        }
        return self.put_run(run, cases, pools)
