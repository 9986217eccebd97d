"""The DuckDB workspace store: runs, pools, verdicts, study rows and notebook cells.

Every SQL statement of the project lives in this package: ``schema`` holds the DDL, ``records`` the
rows as dataclasses, and one small module per table group holds that group's SQL (``index_tables``,
``runs``, ``dumps``, ``verdicts``, ``pair_scores``, ``study_rows``, ``notebook_cells``, ``calls``,
``answers``, ``cache_files`` (portable copies of the model-output caches), over the shared connection
of ``tables``); ``db`` opens the file and composes them into
:class:`Store`. Import from here.
"""

from nomad_lab.store.db import (
    LOCK_WAIT_ENV,
    Store,
    StoreError,
    StoreLockedError,
    StoreSchemaError,
    record_study_rows,
)
from nomad_lab.store.pair_scores import pair_sha256
from nomad_lab.store.records import (
    CaseRecord,
    ChunkRecord,
    IndexRecord,
    ModelCall,
    PoolEntry,
    RunRecord,
    Verdict,
    json_sha256,
    judge_input_sha256,
    text_sha256,
)
from nomad_lab.store.schema import EMBEDDING_DIMENSION, SCHEMA_VERSION

__all__ = [
    "EMBEDDING_DIMENSION",
    "LOCK_WAIT_ENV",
    "SCHEMA_VERSION",
    "CaseRecord",
    "ChunkRecord",
    "IndexRecord",
    "ModelCall",
    "PoolEntry",
    "RunRecord",
    "Store",
    "StoreError",
    "StoreLockedError",
    "StoreSchemaError",
    "Verdict",
    "json_sha256",
    "judge_input_sha256",
    "pair_sha256",
    "record_study_rows",
    "text_sha256",
]
