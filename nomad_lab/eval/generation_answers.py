"""One golden's answers in the generation eval: the pipeline run per mode, the answer cache, the scoring.

Why apart from the run loop (``eval.generation``): what one answer is (the messages a golden sends, the
oracle's injected documents, the observation kept of a pipeline run) and how stored answers are keyed
are the parts a reader checks when a score looks wrong; the loop only schedules, resumes and reports.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from nomad_lab.core import prompts
from nomad_lab.core.generation_metrics import GenerationCase, build_case, prompt_token_error
from nomad_lab.data.corpus import Corpus, read_doc_text
from nomad_lab.data.golden_suites import Golden
from nomad_lab.eval.token_errors import estimator_counts, token_errors
from nomad_lab.services.pipeline import PipelineConfig, run_pipeline
from nomad_lab.store import Store, json_sha256

__all__ = [
    "GENERATION_MODES",
    "AnswerCache",
    "case_from",
    "golden_input_sha",
    "golden_messages",
    "observe",
    "oracle_chunks",
    "prompts_sha",
]

GENERATION_MODES = ("oracle", "e2e", "noretrieval")
"""What a golden's answer is given: its relevant documents whole, the real pipeline, or nothing."""


def prompts_sha() -> str:
    """The prompt texts' version: a change to any system prompt or template makes stored answers stale."""
    return hashlib.sha256(Path(prompts.__file__).read_bytes()).hexdigest()[:16]


def golden_input_sha(golden: Golden) -> str:
    """What a golden feeds the pipeline (not its scoring patterns: changing those only rescores)."""
    return json_sha256(
        {
            "query": golden.query,
            "turns": [[t.role, t.content] for t in golden.turns],
            "relevantDocIds": list(golden.relevant_doc_ids),
        }
    )


class AnswerCache:
    """Stored answers, one row per (parameter key, golden, golden-input hash, repeat), in the workspace store.

    The rows live in ``generation_answers`` (schema version 2), read and written by the store's
    ``get_answer``/``put_answer``; this class only derives the key. Each row is written on its own as soon
    as the answer exists, so an interruption loses at most the answer in flight. Errors are never stored:
    a rerun retries them.
    """

    def __init__(self, store: Store) -> None:
        self.store = store

    @staticmethod
    def key(params: Mapping[str, Any]) -> str:
        return json_sha256(params)[:24]

    def get(self, key: str, golden: Golden, repeat: int) -> dict[str, Any] | None:
        return self.store.get_answer(key, golden.id, golden_input_sha(golden), repeat)

    def put(
        self, key: str, params: Mapping[str, Any], golden: Golden, repeat: int, observation: Mapping[str, Any]
    ) -> None:
        self.store.put_answer(key, params, golden.id, golden_input_sha(golden), repeat, observation)


def golden_messages(golden: Golden) -> list[dict[str, str]]:
    """Golden turns, then the query as the last user message (SPEC §8.3)."""
    return [
        *({"role": t.role, "content": t.content} for t in golden.turns),
        {"role": "user", "content": golden.query},
    ]


def oracle_chunks(golden: Golden, corpus: Corpus) -> list[dict[str, Any]]:
    """Each relevant document's full text as one chunk ``{text, score 1, metadata {source}}``."""
    docs = {doc.doc_id: doc for doc in corpus.docs}
    chunks = []
    for doc_id in golden.relevant_doc_ids:
        path = docs[doc_id].path if doc_id in docs else corpus.directory / f"{doc_id}.md"
        text = docs[doc_id].text if doc_id in docs else read_doc_text(path)
        chunks.append({"text": text, "score": 1, "metadata": {"source": str(path), "doc_id": doc_id}})
    return chunks


def observe(golden: Golden, mode: str, config: PipelineConfig, corpus: Corpus) -> dict[str, Any]:
    """One pipeline run for one golden in one mode, reduced to what scoring and the report need."""
    override = None
    if mode == "oracle":
        override = oracle_chunks(golden, corpus)
    elif mode == "noretrieval":
        override = []
    result = run_pipeline(golden_messages(golden), config, context_override=override)
    trace, answer = result.trace, result.answer
    return {
        "answer": answer.content,
        "thinking": answer.thinking,
        "doneReason": answer.done_reason,
        "chatMs": answer.ms,
        "promptTokens": answer.usage.prompt_tokens,
        "completionTokens": answer.usage.completion_tokens,
        "promptEvalMs": answer.usage.prompt_eval_ms,
        "usageSource": answer.usage.source,
        "uncalibratedPromptTokens": trace.uncalibrated_prompt_tokens,
        "estimatorPromptTokens": estimator_counts(trace.messages, config.backend),
        "contextText": trace.context_text,
        "budget": trace.budget.to_reference(),
        "numCtx": trace.num_ctx,
        "numPredict": trace.num_predict,
        "contextLimits": trace.context_limits.to_reference(),
        "rewrittenQuery": trace.rewritten_query,
        "didRewrite": trace.did_rewrite,
        "chunksBelowFloor": trace.chunks_below_floor,
        "retrievedDocIds": trace.retrieved_doc_ids,
        "injectedDocIds": trace.injected_doc_ids,
        "timings": trace.to_reference()["timings"],
    }


def case_from(golden: Golden, observations: Sequence[Mapping[str, Any]], error: str | None) -> GenerationCase:
    """Score a golden's observations; the budget is the last repeat's, the token error the last one that
    has a real prompt count (SPEC §3.4)."""
    last = observations[-1] if observations else None
    token_error, by_estimator = None, {}
    for obs in reversed(observations):
        if obs.get("promptTokens"):
            token_error = prompt_token_error(obs["promptTokens"], obs["uncalibratedPromptTokens"])
            by_estimator = token_errors(obs)
            break
    extra: dict[str, Any] = {}
    if last is not None:
        extra = {
            "injectedDocIds": last["injectedDocIds"],
            "rewrittenQuery": last["rewrittenQuery"],
            "didRewrite": last["didRewrite"],
            "chunksBelowFloor": last["chunksBelowFloor"],
            "numCtx": last["numCtx"],
            "numPredict": last["numPredict"],
            "promptTokens": last["promptTokens"],
            "completionTokens": [o["completionTokens"] for o in observations],
            "doneReasons": [o["doneReason"] for o in observations],
            "promptTokenErrors": by_estimator,
        }
    return build_case(
        golden.id,
        golden.tags,
        golden.expect_refusal,
        [o["answer"] for o in observations],
        [o["contextText"] for o in observations],
        must_include=golden.must_include,
        must_not_include=golden.must_not_include,
        budget=None if last is None else last["budget"],
        prompt_token_error=token_error,
        retrieved_doc_ids=[] if last is None else last["retrievedDocIds"],
        injected_chunks=0 if last is None else len(last["injectedDocIds"]),
        error=error,
        extra=extra,
    )
