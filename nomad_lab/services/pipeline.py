"""The RAG pipeline as ONE function: rewrite → retrieve → floor → judge → tier → plan → chat (SPEC §5).

Why one function: every experiment (the generation eval, the notebooks, a user's assistant) must put the
same bytes in front of the model, or their numbers describe different systems. ``run_pipeline`` does what
the reference's chat controller does for one turn and returns the answer with the full trace of SPEC §5.4,
so a result can always be explained: which query retrieved what, what the floor and the judge removed,
what the planner dropped, and what the model was actually sent.

Order, as in the reference:
1. query rewrite on the tasks model (§5.5), skipped without documents, when asked, for ``mock``, or with
   fewer than 2 user messages in the last 6 conversation messages;
2. retrieval with the post-rerank floor ``min_final_score`` (the eval pins 0.62) inside the index search;
3. the relevance judge when ``relevance_check_model`` is set (None = off), all-or-nothing, fail-open;
   then, when ``sufficiency_check`` is set (not the reference; None = off), does a passage state the
   answer? When not, the passages stay with a note in the prompt, or are dropped (``sufficiency_action``);
4. the model-size tier (``RAG_CONTEXT_LIMITS``) slices the chunks;
5. the planner, at the window resolved ONCE per model (``ContextWindowResolver`` over ``show()``; Ollama
   reloads a model whenever ``num_ctx`` changes) or given explicitly, with the calibrated token ratio;
6. the chat call with ``num_ctx`` and ``num_predict`` from the plan, then the calibrator is fed the real
   prompt count against the uncalibrated estimate of the exact messages sent (§3.3). Every model call
   (rewrite, judge, answer) crosses ``model_calls.chat_call`` and is logged to ``config.call_log`` if set.

``context_override`` bypasses rewrite and retrieval with given chunks (the eval's ``oracle`` and
``noretrieval`` modes); the chunks still go through the tier slice and the planner. The ``mock`` model
(§8.3) answers with the injected context, or a fixed refusal when nothing was injected, and calls no model.
The configuration and trace types are ``pipeline_types`` (re-exported here).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from nomad_lab.backends.base import (
    Backend,
    ChatOptions,
    ChatRequest,
    ChatResult,
    Usage,
)
from nomad_lab.core.planner import plan_prompt
from nomad_lab.core.prompts import SUFFICIENCY_DROP_ACTION, SUFFICIENCY_NOTE, render_rag_message
from nomad_lab.core.token_estimator import estimate_messages_tokens
from nomad_lab.services.judge_service import RelevanceJudge, resolve_tasks_model
from nomad_lab.services.model_calls import chat_call
from nomad_lab.services.pipeline_types import (
    MOCK_EMPTY_ANSWER,
    MOCK_MODEL,
    RAG_CONTEXT_LIMITS,
    Chunk,
    ContextLimits,
    Message,
    PipelineConfig,
    PipelineResult,
    PipelineTrace,
    Retriever,
    Timings,
    context_limits_for,
    doc_id_of,
)
from nomad_lab.services.query_rewrite import rewrite_query

if TYPE_CHECKING:
    pass

__all__ = [
    "MOCK_EMPTY_ANSWER",
    "MOCK_MODEL",
    "RAG_CONTEXT_LIMITS",
    "ContextLimits",
    "PipelineConfig",
    "PipelineResult",
    "PipelineTrace",
    "Retriever",
    "context_limits_for",
    "doc_id_of",
    "run_pipeline",
]

log = logging.getLogger(__name__)


def candidate_chunk(candidate: Any) -> Chunk:
    """A retrieved ``Candidate`` in the reference's chunk shape ``{text, score, metadata}`` (SPEC §2.4)."""
    return {
        "text": candidate.text,
        "score": candidate.final,
        "metadata": {
            "chunk_index": candidate.chunk_index,
            "semantic_score": candidate.semantic_score,
            "source": candidate.source,
            "article_title": candidate.article_title,
            "section_title": candidate.section_title,
            "full_title": candidate.full_title,
            "document_id": candidate.document_id,
            "doc_id": candidate.doc_id,
            "chunk_id": candidate.chunk_id,
        },
    }


def _judge_passage(chunk: Mapping[str, Any]) -> dict[str, Any]:
    """Title from content metadata only (SPEC §1.3): never the file name."""
    meta = chunk.get("metadata") or {}
    title = meta.get("full_title") or meta.get("article_title") or meta.get("archive_title")
    return {"text": chunk.get("text", ""), "title": title}


def split_messages(messages: Sequence[Mapping[str, Any]]) -> tuple[list[Message], list[Message], Message]:
    """(system blocks, history, query): the caller's system messages first, the LAST user message as the
    query, every other message before it as history (messages after it are dropped)."""
    system = [dict(m) for m in messages if m.get("role") == "system"]
    conversation = [dict(m) for m in messages if m.get("role") != "system"]
    last_user = max((i for i, m in enumerate(conversation) if m.get("role") == "user"), default=None)
    if last_user is None:
        raise ValueError("run_pipeline: the messages hold no user message to answer")
    return system, conversation[:last_user], conversation[last_user]


def _tasks_target(config: PipelineConfig, chat_model: str) -> tuple[Backend | None, str]:
    """(backend, model) for the rewrite: the tasks model if configured and installed, else the chat model
    on the chat backend (SPEC §1.6). Resolved once per chat model."""
    assert config.memo is not None
    if chat_model not in config.memo.tasks:
        where = config.tasks_backend or config.backend
        configured = config.tasks_model or (config.tasks_backend.model if config.tasks_backend else None)
        if where is None:
            config.memo.tasks[chat_model] = (None, chat_model)
        else:
            resolved = resolve_tasks_model(where, chat_model, configured)
            on_tasks = configured is not None and resolved == configured.strip()
            config.memo.tasks[chat_model] = (where if on_tasks else config.backend, resolved)
    return config.memo.tasks[chat_model]


@dataclass
class _Retrieval:
    query: str | None = None
    did_rewrite: bool = False
    reason: str | None = None
    chunks: list[Chunk] = field(default_factory=list)
    below_floor: int = 0
    rejected: int = 0
    judged: bool | None = None
    error: str | None = None
    tasks_model: str | None = None
    timings: Timings = field(default_factory=Timings)
    sufficiency: str | None = None
    sufficiency_ms: float = 0.0


def _retrieve(conversation: list[Message], config: PipelineConfig, chat_model: str) -> _Retrieval:
    """Rewrite, retrieve (floor inside the search), judge."""
    out = _Retrieval()
    if config.index is None:
        out.reason = "no-documents"
        return out
    tasks_backend, tasks_model = _tasks_target(config, chat_model)
    out.tasks_model = tasks_model
    rewrite = rewrite_query(
        tasks_backend,  # type: ignore[arg-type]  # None only for mock, which is skipped
        tasks_model,
        conversation,
        skip=config.skip_query_rewrite or config.is_mock or tasks_backend is None,
        calibrator=config.calibrator,
        sink=config.call_log,
        structured=config.structured_rewrite,
    )
    out.query, out.did_rewrite, out.reason = rewrite.query, rewrite.did_rewrite, rewrite.reason
    started = time.perf_counter()
    try:
        ranked = config.index.search(
            rewrite.query, config.top_k, config.score_threshold, config.min_final_score
        )
        out.chunks = [candidate_chunk(c) for c in ranked.chunks]
        out.below_floor = ranked.floor.below_floor
    except Exception as exc:  # the reference returns no chunks on any retrieval error; we also say why
        log.warning("retrieval failed, answering without context: %s", exc)
        out.error = f"{type(exc).__name__}: {exc}"
    retrieval_ms = (time.perf_counter() - started) * 1e3
    judge_ms = 0.0
    if config.relevance_check_model and out.chunks:
        judge = RelevanceJudge(
            config.judge_backend or config.backend,  # type: ignore[arg-type]
            config.relevance_check_model,
            calibrator=config.calibrator,
            sink=config.call_log,
        )
        verdict = judge.judge(rewrite.query, [_judge_passage(c) for c in out.chunks])
        judge_ms, out.judged, out.rejected = verdict.ms, verdict.judged, verdict.rejected
        if verdict.rejected:
            out.chunks = []
    if config.sufficiency_check is not None and out.chunks:
        _check_sufficiency(out, config, out.query or "")
    out.timings = Timings(rewrite.ms, retrieval_ms, judge_ms)
    return out


def _check_sufficiency(out: _Retrieval, config: PipelineConfig, question: str) -> None:
    """The second decision: does a passage state the answer? No: note it in the prompt, or drop."""
    assert config.sufficiency_check is not None
    started = time.perf_counter()
    stated = config.sufficiency_check(question, [str(c.get("text", "")) for c in out.chunks])
    out.sufficiency_ms = (time.perf_counter() - started) * 1e3
    if stated:
        out.sufficiency = "stated"
    elif config.sufficiency_action == SUFFICIENCY_DROP_ACTION:
        out.sufficiency, out.chunks = "dropped", []
    else:
        out.sufficiency = "note"


def _mock_answer(injected: Sequence[Mapping[str, Any]]) -> ChatResult:
    text = "\n\n".join(str(c.get("text", "")) for c in injected)
    return ChatResult(content=text or MOCK_EMPTY_ANSWER, usage=Usage(source="mock"), model=MOCK_MODEL)


def run_pipeline(
    messages: Sequence[Mapping[str, Any]],
    config: PipelineConfig,
    *,
    context_override: Sequence[Mapping[str, Any]] | None = None,
) -> PipelineResult:
    """Answer the last user message of ``messages`` the way the assistant would; returns answer and trace."""
    assert config.memo is not None
    chat_model = config.chat_model
    system, history, query = split_messages(messages)
    system_blocks = system or [{"role": "system", "content": config.system_prompt}]

    if context_override is not None:
        found = _Retrieval(chunks=[dict(c) for c in context_override], reason="context-override")
        if config.sufficiency_check is not None and found.chunks:  # the same second decision as retrieval's
            _check_sufficiency(found, config, str(query.get("content", "")))
    else:
        found = _retrieve([*history, query], config, chat_model)

    info = None if config.is_mock else config.memo.info(chat_model)
    limits = context_limits_for(
        info.parameter_size if info else None, chat_model, read_millions=config.read_million_sizes
    )
    candidates = found.chunks[: limits.max_results]
    if config.context_window is not None:
        window, window_source = int(config.context_window), "explicit"
    else:
        resolved = config.memo.resolver.resolve(chat_model)
        window, window_source = resolved.tokens, resolved.limited_by
    ratio = config.token_ratio
    if ratio is None:
        ratio = config.calibrator.ratio_for(chat_model) if config.calibrator is not None else 1.0

    plan = plan_prompt(
        system_blocks=system_blocks,
        history=history,
        query=query,
        rag_chunks=candidates,
        context_window=window,
        ratio=ratio,
        rag_placement=config.rag_placement,
        estimator=config.estimator,
        rag_token_cap=limits.max_tokens if config.enforce_context_tokens else None,
        render_rag_block=partial(
            render_rag_message, note=SUFFICIENCY_NOTE if found.sufficiency == "note" else None
        ),
    )
    budget = plan.budget
    if budget.turns_dropped or budget.chunks_dropped or budget.query_truncated:
        log.info(
            "Budget for %s: %d/%d tokens (window %d); dropped %d turn(s), %d chunk(s)%s",
            chat_model,
            budget.estimated_prompt_tokens,
            budget.prompt_budget,
            window,
            budget.turns_dropped,
            budget.chunks_dropped,
            ", truncated the question" if budget.query_truncated else "",
        )
    num_predict = budget.num_predict
    if config.num_predict_cap is not None:
        num_predict = min(num_predict, config.num_predict_cap)
    trace = PipelineTrace(
        rewritten_query=found.query,
        did_rewrite=found.did_rewrite,
        retrieved=found.chunks,
        injected=list(plan.kept_chunks) if config.injected_as_planned else candidates[: budget.chunks_kept],
        messages=plan.messages,
        num_ctx=window,
        num_predict=num_predict,
        context_limits=limits,
        timings=found.timings,
        min_final_score=config.min_final_score,
        chunks_below_floor=found.below_floor,
        relevance_check_model=config.relevance_check_model,
        chunks_rejected_by_check=found.rejected,
        budget=budget,
        uncalibrated_prompt_tokens=estimate_messages_tokens(plan.messages, 1.0),
        chat_model=chat_model,
        tasks_model=found.tasks_model,
        retrieval_query=found.query,
        rewrite_reason=found.reason,
        relevance_check_judged=found.judged,
        context_window_source=window_source,
        token_ratio=ratio,
        retrieval_error=found.error,
        sufficiency=found.sufficiency,
        sufficiency_ms=found.sufficiency_ms,
    )
    if config.is_mock:
        return PipelineResult(_mock_answer(trace.injected), trace)

    options = ChatOptions(
        num_ctx=window,
        num_predict=num_predict,
        seed=config.seed,
        keep_alive=config.keep_alive,
        think=False,
        thinking_capable=bool(info and info.has_thinking),
        **dict(config.sampling),
    )
    assert config.backend is not None
    answer = chat_call(
        config.backend,
        ChatRequest(plan.messages, options, config.model),
        purpose="answer",
        model=chat_model,
        calibrator=config.calibrator,
        sink=config.call_log,
    )
    return PipelineResult(answer, trace)
