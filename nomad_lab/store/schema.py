"""The store's schema as numbered migrations: migration N takes a store from version N-1 to N.

Why migrations: a workspace store holds hours of model verdicts and retrieval runs, so a newer nomad-lab
upgrades it in place rather than asking for a rebuild. A new store applies every migration; an older one
applies the ones it lacks, all in one transaction, on its first writable open (a read-only open reads it as
it is). A store newer than this code is refused untouched. Append migrations; never edit a shipped one.
"""

from __future__ import annotations

EMBEDDING_DIMENSION = 384  # FLOAT[384] in versions 1-2: all-MiniLM-L6-v2

V1_TABLES = f"""
CREATE TABLE IF NOT EXISTS nomad_lab_meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS indexes (
    fingerprint VARCHAR PRIMARY KEY, created_at TIMESTAMPTZ NOT NULL, corpus_dir VARCHAR NOT NULL,
    doc_count INTEGER NOT NULL, chunk_count INTEGER NOT NULL, model_key VARCHAR NOT NULL,
    params JSON NOT NULL, build_seconds DOUBLE);
CREATE TABLE IF NOT EXISTS chunks (
    fingerprint VARCHAR NOT NULL, chunk_id VARCHAR NOT NULL, doc_id VARCHAR NOT NULL, source VARCHAR NOT NULL,
    chunk_index INTEGER NOT NULL, total_chunks INTEGER NOT NULL, text VARCHAR NOT NULL,
    keywords VARCHAR NOT NULL, char_count INTEGER NOT NULL, text_sha256 VARCHAR NOT NULL,
    PRIMARY KEY (fingerprint, chunk_id));
CREATE TABLE IF NOT EXISTS embeddings (
    model_key VARCHAR NOT NULL, text_sha256 VARCHAR NOT NULL, vector FLOAT[{EMBEDDING_DIMENSION}] NOT NULL,
    PRIMARY KEY (model_key, text_sha256));
CREATE TABLE IF NOT EXISTS runs (
    run_id VARCHAR PRIMARY KEY, kind VARCHAR NOT NULL, created_at TIMESTAMPTZ NOT NULL,
    fingerprint VARCHAR NOT NULL, suite VARCHAR, params JSON NOT NULL, git_sha VARCHAR, git_branch VARCHAR,
    git_dirty BOOLEAN, versions JSON NOT NULL, source VARCHAR);
CREATE TABLE IF NOT EXISTS cases (
    run_id VARCHAR NOT NULL, golden_id VARCHAR NOT NULL, position INTEGER NOT NULL, suite VARCHAR,
    query VARCHAR, tags VARCHAR[] NOT NULL, expect_refusal BOOLEAN NOT NULL,
    relevant_doc_ids VARCHAR[] NOT NULL, result JSON, judge JSON,
    PRIMARY KEY (run_id, golden_id));
CREATE TABLE IF NOT EXISTS pools (
    run_id VARCHAR NOT NULL, golden_id VARCHAR NOT NULL, rank INTEGER NOT NULL, doc_id VARCHAR,
    chunk_id VARCHAR, score DOUBLE NOT NULL, semantic_score DOUBLE NOT NULL,
    PRIMARY KEY (run_id, golden_id, rank));
CREATE TABLE IF NOT EXISTS run_metrics (
    run_id VARCHAR NOT NULL, scope VARCHAR NOT NULL, name VARCHAR NOT NULL, value DOUBLE,
    ci_low DOUBLE, ci_high DOUBLE, ci_method VARCHAR, PRIMARY KEY (run_id, scope, name));
CREATE TABLE IF NOT EXISTS judge_verdicts (
    model VARCHAR NOT NULL, input_sha256 VARCHAR NOT NULL, on_topic BOOLEAN, ok BOOLEAN NOT NULL,
    reason VARCHAR, ms DOUBLE, prompt_tokens INTEGER, created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (model, input_sha256));
"""

# Version 2: result caches. Builds before numbered migrations added these to version-1 stores without a bump,
# hence IF NOT EXISTS: on such a store this migration only records the version.
V2_RESULT_TABLES = """
CREATE TABLE IF NOT EXISTS generation_answers (
    params_key VARCHAR NOT NULL, golden_id VARCHAR NOT NULL, golden_sha256 VARCHAR NOT NULL,
    repeat INTEGER NOT NULL, params JSON NOT NULL, observation JSON NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (params_key, golden_id, golden_sha256, repeat));
CREATE TABLE IF NOT EXISTS study_rows (
    run_id VARCHAR NOT NULL, study VARCHAR NOT NULL, created_at TIMESTAMPTZ NOT NULL, params JSON NOT NULL,
    position INTEGER NOT NULL, row_data JSON NOT NULL, PRIMARY KEY (run_id, position));
CREATE TABLE IF NOT EXISTS notebook_cells (
    cell_key VARCHAR PRIMARY KEY, notebook VARCHAR NOT NULL, parameters JSON NOT NULL,
    output_dir VARCHAR NOT NULL, seconds DOUBLE NOT NULL, git_sha VARCHAR, created_at TIMESTAMPTZ NOT NULL);
"""

# Version 3: the judge's confidence beside its verdict. ``p_true`` is P(on_topic = true) at the verdict token;
# ``confidence_reason`` says why it is null for a verdict whose confidence was asked for (no logprobs,
# malformed logprobs, no decision token). Both null: a verdict stored before confidence existed (never asked).
V3_VERDICT_CONFIDENCE = """
ALTER TABLE judge_verdicts ADD COLUMN IF NOT EXISTS p_true DOUBLE;
ALTER TABLE judge_verdicts ADD COLUMN IF NOT EXISTS confidence_reason VARCHAR;
"""

# Version 4: vectors of any dimension. Other embedders than MiniLM (nomic-embed-text 768, wordllama 256, ...)
# share the cache, so the column becomes FLOAT[] and each model key's dimension is recorded once, in
# embedding_models; existing vectors are MiniLM's, recorded as 384. The vectors themselves are untouched.
V4_ANY_DIMENSION = f"""
ALTER TABLE embeddings ALTER vector TYPE FLOAT[];
CREATE TABLE IF NOT EXISTS embedding_models (
    model_key VARCHAR PRIMARY KEY, dimension INTEGER NOT NULL, created_at TIMESTAMPTZ NOT NULL);
INSERT INTO embedding_models
    SELECT DISTINCT model_key, {EMBEDDING_DIMENSION}, now() FROM embeddings
    WHERE model_key NOT IN (SELECT model_key FROM embedding_models);
"""

# Version 5: the model-call log, one row per chat call made through ``services.model_calls.chat_call``
# (judge, rewrite, answer, warm-up). Append-only: ``call_id`` orders the calls.
V5_MODEL_CALLS = """
CREATE SEQUENCE IF NOT EXISTS model_call_ids START 1;
CREATE TABLE IF NOT EXISTS model_calls (
    call_id BIGINT PRIMARY KEY DEFAULT nextval('model_call_ids'), created_at TIMESTAMPTZ NOT NULL,
    model VARCHAR NOT NULL, purpose VARCHAR NOT NULL, request_sha256 VARCHAR NOT NULL,
    prompt_tokens INTEGER, completion_tokens INTEGER, ms DOUBLE NOT NULL, ok BOOLEAN NOT NULL,
    failure VARCHAR);
"""

# Version 6: the pair-score cache, one score per (scorer model key, SHA-256 of question + NUL + passage
# window), ever: what a cross-encoder gate reads (``pair_scores.PairScoreCache``). ``ms`` is the time the
# pair took to score, so a run's cost per question can be read back from a fully cached run.
V6_PAIR_SCORES = """
CREATE TABLE IF NOT EXISTS pair_scores (
    scorer VARCHAR NOT NULL, pair_sha256 VARCHAR NOT NULL, score DOUBLE NOT NULL, ms DOUBLE,
    created_at TIMESTAMPTZ NOT NULL, PRIMARY KEY (scorer, pair_sha256));
"""

# Version 7: a refusal's kind where its golden said it (``refusalKind``); NULL: derived from the tags
# (``data.refusal_kinds.kind_of``), as for every run stored before kinds existed and every reference dump.
V7_REFUSAL_KIND = """
ALTER TABLE cases ADD COLUMN IF NOT EXISTS refusal_kind VARCHAR;
"""

# Version 8: named score columns of imported candidate-pool files (``pool_import``): a stack's own reranker,
# BM25 or hybrid scores beside each stored candidate, one row per (candidate, column name), read by
# ``score:NAME`` gates and the ``scores`` feature kind.
V8_POOL_SCORES = """
CREATE TABLE IF NOT EXISTS pool_scores (
    run_id VARCHAR NOT NULL, golden_id VARCHAR NOT NULL, rank INTEGER NOT NULL, name VARCHAR NOT NULL,
    value DOUBLE NOT NULL);
"""

MIGRATIONS: tuple[str, ...] = (
    V1_TABLES,
    V2_RESULT_TABLES,
    V3_VERDICT_CONFIDENCE,
    V4_ANY_DIMENSION,
    V5_MODEL_CALLS,
    V6_PAIR_SCORES,
    V7_REFUSAL_KIND,
    V8_POOL_SCORES,
)
"""``MIGRATIONS[n - 1]`` is the DDL of migration ``n``; a store at version ``v`` lacks ``MIGRATIONS[v:]``."""

SCHEMA_VERSION = len(MIGRATIONS)
