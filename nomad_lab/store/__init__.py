"""The DuckDB workspace store: runs, pools, verdicts, study rows and notebook cells.

Every SQL statement of the project lives in this package: ``schema`` holds the DDL, ``records`` the
rows as dataclasses, ``db`` the :class:`Store` that reads and writes them. Import from here.
"""

from nomad_lab.store.db import (
    LOCK_WAIT_ENV,
    Store,
    StoreError,
    StoreLockedError,
    StoreSchemaError,
    record_study_rows,
)
from nomad_lab.store.records import (
    CaseRecord,
    ChunkRecord,
    IndexRecord,
    PoolEntry,
    RunRecord,
    Verdict,
    judge_input_sha256,
)
from nomad_lab.store.schema import EMBEDDING_DIMENSION, SCHEMA_VERSION

__all__ = [
    "EMBEDDING_DIMENSION",
    "LOCK_WAIT_ENV",
    "SCHEMA_VERSION",
    "CaseRecord",
    "ChunkRecord",
    "IndexRecord",
    "PoolEntry",
    "RunRecord",
    "Store",
    "StoreError",
    "StoreLockedError",
    "StoreSchemaError",
    "Verdict",
    "judge_input_sha256",
    "record_study_rows",
]
