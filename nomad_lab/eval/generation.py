"""The generation tier of the eval harness (the reference's ``eval:generation``, SPEC §8.3–8.5).

Each golden conversation goes through ``nomad_lab.services.pipeline.run_pipeline``, the same path a
user's turn takes, in one of three modes, so a bad answer can be attributed:

- ``oracle``: each relevant document's full text injected as a chunk (retrieval bypassed): the model's
  ceiling with perfect context;
- ``e2e``: the real pipeline (rewrite, retrieval with the floor pinned at 0.62, planner, chat);
- ``noretrieval``: no context at all: what the model knows by itself.

``--all-modes`` prints the decomposition: retrieval cost = oracle − e2e, RAG contribution = e2e −
noretrieval, with the reference's triage verdicts. Sampling is pinned (seed 42, temperature 0 unless a
response style is asked for) and the relevance check is pinned off, so no local setting moves a score.

Default model: ``embedded:smollm2-135m``. It is the one embedded model that is instruction-tuned and ships
a chat template; ``embedded:gemma3-270m`` is a BASE model whose free-form answers are noise (it is fine
as a grammar-constrained judge, not as a chat model). Any backend spec works (``ollama://…``,
``openai://…``), and ``mock`` answers with the injected context (the extractive ceiling of the current
retrieval) without any model.

``long_context`` goldens (tag ``long-context``) run at a pinned small window (4096 unless
``--context-window`` pins every case): their eviction conversations are ~6–7k estimated tokens and the
retention ones under 1k, so eviction really happens where it should and nowhere else.

Resume: every answer is stored as soon as it exists, keyed by (hash of the run parameters that shape an
answer, golden id, hash of the golden's inputs, repeat); every model call (warm-up, rewrite, answer) is
logged in the store's ``model_calls``. A crashed or interrupted run, or a ``--limit``
run extended later, recomputes only what is missing. ``limit`` and ``repeats`` are not part of the key.
The aggregate of each mode is stored as a run (kind ``generation``) and written as an ``EvalReport`` that
``nomad-lab eval compare`` reads.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.generation_metrics import (
    GenerationAggregate,
    GenerationCase,
    aggregate_by_tag,
    aggregate_generation,
    build_case,
    prompt_token_error,
)
from nomad_lab.core.reference import (
    RAG_DEFAULT_SCORE_THRESHOLD,
    RAG_DEFAULT_TOP_K,
    RAG_MIN_FINAL_SCORE,
    RAG_PLACEMENTS,
)
from nomad_lab.core.samplers import RESPONSE_STYLES, style_options
from nomad_lab.core.workspace import DEFAULT_CORPUS_DIR, DEFAULT_GOLDENS_DIR, DEFAULT_STORE_PATH
from nomad_lab.data.corpus import Corpus, corpus_fingerprint, load_corpus, read_doc_text
from nomad_lab.data.goldens import Golden, load_suites
from nomad_lab.eval.provenance import git_state, iso_now, package_versions, platform_info
from nomad_lab.eval.reports import EvalReport
from nomad_lab.eval.token_errors import estimator_counts, mean_token_errors, summary_line, token_errors
from nomad_lab.services.pipeline import MOCK_MODEL, PipelineConfig, run_pipeline
from nomad_lab.store import CaseRecord, RunRecord, Store, json_sha256

if TYPE_CHECKING:
    from nomad_lab.backends import Backend
    from nomad_lab.retrieval.embedding import Embedder

__all__ = [
    "DEFAULT_GENERATION_MODEL",
    "GENERATION_MODES",
    "AnswerCache",
    "GenerationEvalConfig",
    "GenerationEvalError",
    "GenerationEvalResult",
    "ModeResult",
    "decomposition",
    "format_mode_summary",
    "render_generation_markdown",
    "run_generation_eval",
]

DEFAULT_GENERATION_MODEL = "embedded:smollm2-135m"
GENERATION_MODES = ("oracle", "e2e", "noretrieval")
GENERATION_SEED = 42
GENERATION_MIN_FINAL_SCORE = RAG_MIN_FINAL_SCORE
"""Pinned: the eval never reads a user's relevance setting."""
LONG_CONTEXT_TAG = "long-context"
LONG_CONTEXT_WINDOW = 4096
WARMUP_PROMPT = "Reply with the single word: ready"
WARMUP_NUM_PREDICT = 8


class GenerationEvalError(NomadLabError, ValueError):
    """A generation run cannot start: a bad option, no goldens selected, or the model does not answer."""


@dataclass(frozen=True)
class GenerationEvalConfig:
    """One ``eval generation`` invocation. ``modes`` run in the order given, each stored as its own run."""

    model: str = DEFAULT_GENERATION_MODEL
    tasks_model: str | None = None
    suite: str = "core"
    modes: tuple[str, ...] = ("e2e",)
    repeats: int = 3
    limit: int | None = None
    tag: str | None = None
    style: str | None = None
    context_window: int | None = None
    long_context_window: int = LONG_CONTEXT_WINDOW
    rag_placement: str = "tail"
    token_ratio: float = 1.0
    num_predict_cap: int | None = None
    read_million_sizes: bool = False
    skip_query_rewrite: bool = False
    include_distractors: bool = True
    fresh: bool = False
    corpus_dir: Path = DEFAULT_CORPUS_DIR
    goldens_dir: Path = DEFAULT_GOLDENS_DIR
    store_path: Path = DEFAULT_STORE_PATH
    report_dir: Path | None = None
    progress: bool = True

    def __post_init__(self) -> None:
        bad = [m for m in self.modes if m not in GENERATION_MODES]
        if bad or not self.modes:
            raise GenerationEvalError(
                f"unknown mode(s) {bad or '(none)'}: expected {', '.join(GENERATION_MODES)}"
            )
        if self.style is not None and self.style not in RESPONSE_STYLES:
            raise GenerationEvalError(
                f"unknown style {self.style!r}: expected one of {', '.join(RESPONSE_STYLES)}"
            )
        if self.rag_placement not in RAG_PLACEMENTS:
            raise GenerationEvalError(
                f"rag_placement must be one of {RAG_PLACEMENTS}, got {self.rag_placement!r}"
            )
        for name in ("repeats", "limit", "context_window", "long_context_window", "num_predict_cap"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise GenerationEvalError(f"{name} must be a positive integer, got {value}")
        if not self.token_ratio > 0:
            raise GenerationEvalError(f"token_ratio must be positive, got {self.token_ratio}")

    @property
    def is_mock(self) -> bool:
        return self.model == MOCK_MODEL

    def window_for(self, golden: Golden) -> int | None:
        """The pinned window for a golden: ``context_window`` for all, else the long-context window for
        long-context goldens, else None (resolved from the model)."""
        if self.context_window is not None:
            return self.context_window
        return self.long_context_window if LONG_CONTEXT_TAG in golden.tags else None

    def answer_params(self, mode: str, fingerprint: str) -> dict[str, Any]:
        """Everything that shapes an answer: the resume key is the hash of exactly this."""
        return {
            "model": self.model,
            "tasksModel": self.tasks_model,
            "mode": mode,
            "style": self.style,
            "sampling": style_options(self.style),
            "seed": GENERATION_SEED,
            "contextWindow": self.context_window,
            "longContextWindow": self.long_context_window,
            "ragPlacement": self.rag_placement,
            "tokenRatio": self.token_ratio,
            "numPredictCap": self.num_predict_cap,
            "readMillionSizes": self.read_million_sizes,
            "skipQueryRewrite": self.is_mock or self.skip_query_rewrite,
            "topK": RAG_DEFAULT_TOP_K,
            "scoreThreshold": RAG_DEFAULT_SCORE_THRESHOLD,
            "minFinalScore": GENERATION_MIN_FINAL_SCORE,
            "relevanceCheckModel": None,
            "prompts": prompts_sha(),
            "corpusFingerprint": fingerprint,
            "includeDistractors": self.include_distractors,
        }


def prompts_sha() -> str:
    """The prompt texts' version: a change to any system prompt or template makes stored answers stale."""
    from nomad_lab.core import prompts

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


@dataclass
class ModeResult:
    mode: str
    cases: list[GenerationCase]
    aggregate: GenerationAggregate
    by_tag: dict[str, GenerationAggregate]
    report: EvalReport
    run_id: str
    computed: int
    cached: int
    elapsed_s: float
    report_paths: tuple[Path, Path] | None = None

    @property
    def unstable_ids(self) -> list[str]:
        return [c.id for c in self.cases if c.correctness.unstable]


@dataclass
class GenerationEvalResult:
    config: GenerationEvalConfig
    fingerprint: str
    goldens: int
    modes: list[ModeResult] = field(default_factory=list)

    @property
    def errors(self) -> int:
        return sum(m.aggregate.errors for m in self.modes)


def select_goldens(goldens: list[Golden], tag: str | None, limit: int | None) -> list[Golden]:
    chosen = [g for g in goldens if tag is None or tag in g.tags]
    return chosen[:limit] if limit is not None else chosen


def _open(spec: str) -> Backend:
    from nomad_lab.backends import open_backend

    return open_backend(spec)


class _WarmUp:
    """One throwaway chat before the first answer that is actually computed, so that answer does not pay
    the model load (at the window the run uses); a fully stored run loads no model at all."""

    def __init__(self, config: PipelineConfig | None, window: int | None) -> None:
        self.config, self.window = config, window

    def __call__(self) -> None:
        from nomad_lab.backends import ChatOptions, ChatRequest
        from nomad_lab.services.model_calls import chat_call

        config, self.config = self.config, None
        if config is None or config.backend is None or config.memo is None:
            return
        num_ctx = self.window or config.memo.resolver.resolve(config.chat_model).tokens
        options = ChatOptions(
            num_ctx=num_ctx, num_predict=WARMUP_NUM_PREDICT, temperature=0, seed=GENERATION_SEED
        )
        messages = [{"role": "user", "content": WARMUP_PROMPT}]
        try:
            request = ChatRequest(messages, options, config.model)
            chat_call(
                config.backend, request, purpose="warmup", model=config.chat_model, sink=config.call_log
            )
        except Exception as exc:
            raise GenerationEvalError(f"warm-up chat with {config.chat_model!r} failed: {exc}") from exc


def run_generation_eval(
    config: GenerationEvalConfig,
    *,
    embedder: Embedder | None = None,
    backend: Backend | None = None,
    tasks_backend: Backend | None = None,
) -> GenerationEvalResult:
    """Run every requested mode; stores answers as they come, then each mode's run and report.

    ``backend``/``tasks_backend`` replace what the specs would open (the specs still key the results).
    """
    from nomad_lab.retrieval.embedding import load_embedder
    from nomad_lab.retrieval.index import build_index, ingest_params

    corpus = load_corpus(config.corpus_dir, include_distractors=config.include_distractors)
    goldens = select_goldens(
        load_suites(config.goldens_dir, config.suite, corpus.all_doc_ids), config.tag, config.limit
    )
    if not goldens:
        raise GenerationEvalError(
            f"no goldens matched suite {config.suite!r}" + (f" and tag {config.tag!r}" if config.tag else "")
        )
    with Store(config.store_path) as store:  # before the embedder: a bad or locked store fails in a blink
        embedder = embedder or load_embedder()
        index = None
        if "e2e" in config.modes:
            index, _ = build_index(corpus, store, embedder, progress=config.progress)
            fingerprint = index.fingerprint
        else:
            fingerprint = corpus_fingerprint(corpus.docs, ingest_params(embedder))
        if config.is_mock:
            backend = None
        else:
            backend = backend or _open(config.model)
            if config.tasks_model and tasks_backend is None:
                tasks_backend = _open(config.tasks_model)
        base = PipelineConfig(
            backend=backend,
            model=MOCK_MODEL if config.is_mock else None,
            index=index,
            tasks_backend=tasks_backend,
            min_final_score=GENERATION_MIN_FINAL_SCORE,
            relevance_check_model=None,
            rag_placement=config.rag_placement,
            token_ratio=config.token_ratio,
            skip_query_rewrite=config.is_mock or config.skip_query_rewrite,
            sampling=style_options(config.style, openai_path=getattr(backend, "kind", "") == "openai"),
            seed=GENERATION_SEED,
            num_predict_cap=config.num_predict_cap,
            read_million_sizes=config.read_million_sizes,
            call_log=store,
        )
        warm = _WarmUp(base if backend is not None else None, config.window_for(goldens[0]))
        cache = AnswerCache(store)
        result = GenerationEvalResult(config, fingerprint, len(goldens))
        for mode in config.modes:
            result.modes.append(
                _run_mode(mode, goldens, corpus, base, config, cache, store, fingerprint, warm)
            )
    if config.report_dir is not None:
        from nomad_lab.eval.reports import write_report

        for mode_result in result.modes:
            mode_result.report_paths = write_report(
                mode_result.report, config.report_dir, render_generation_markdown(mode_result.report)
            )
    return result


def _run_mode(
    mode: str,
    goldens: Sequence[Golden],
    corpus: Corpus,
    base: PipelineConfig,
    config: GenerationEvalConfig,
    cache: AnswerCache,
    store: Store,
    fingerprint: str,
    warm_up: Callable[[], None],
) -> ModeResult:
    from tqdm.auto import tqdm

    started = time.perf_counter()
    created_at = iso_now()
    answer_params = config.answer_params(mode, fingerprint)
    key = AnswerCache.key(answer_params)
    cases: list[GenerationCase] = []
    computed = cached = 0
    with tqdm(
        total=len(goldens) * config.repeats,
        desc=f"generation {mode}",
        unit="answer",
        disable=not config.progress,
    ) as bar:
        for golden in goldens:
            pipeline = replace(base, context_window=config.window_for(golden))
            observations: list[dict[str, Any]] = []
            error = None
            for repeat in range(config.repeats):
                stored = None if config.fresh else cache.get(key, golden, repeat)
                if stored is not None:
                    observations.append(stored)
                    cached += 1
                else:
                    warm_up()  # outside the try: an unreachable model stops the run, not each case
                    try:
                        observation = observe(golden, mode, pipeline, corpus)
                    except Exception as exc:  # counted, and it stops this case's repeats (SPEC §8.3)
                        error = f"{type(exc).__name__}: {exc}"
                        bar.update(config.repeats - repeat)
                        break
                    cache.put(key, answer_params, golden, repeat, observation)
                    observations.append(observation)
                    computed += 1
                bar.update(1)
            cases.append(case_from(golden, observations, error))

    overall = aggregate_generation(cases)
    by_tag = aggregate_by_tag(cases)
    params = {
        **answer_params,
        "suite": config.suite,
        "repeats": config.repeats,
        "limit": config.limit,
        "tag": config.tag,
        "temperature": style_options(config.style).get("temperature"),
        "answersKey": key,
    }
    git = git_state()
    versions = dict(package_versions())
    meta = {
        "kind": "generation",
        "createdAt": created_at,
        "corpusFingerprint": fingerprint,
        **git,
        "nomadVersion": versions.get("nomad-lab"),
        "platform": platform_info(),
        "params": params,
        "versions": versions,
    }
    elapsed = time.perf_counter() - started
    report = EvalReport(
        meta=meta,
        metrics=overall.metrics(),
        by_tag={tag: agg.metrics() for tag, agg in by_tag.items()},
        cases=[c.to_reference() for c in cases],
        extra={
            "aggregate": overall.to_reference(),
            "unstableCases": [c.id for c in cases if c.correctness.unstable],
            "answers": {"computed": computed, "fromStore": cached},
            "elapsedSeconds": elapsed,
        },
    )
    records = [
        CaseRecord(g.id, i, g.tags, g.expect_refusal, g.relevant_doc_ids, g.suite, g.query, c.to_reference())
        for i, (g, c) in enumerate(zip(goldens, cases, strict=True))
    ]
    rows = [("all", name, value, None, None, None) for name, value in overall.metrics().items()]
    for tag, agg in by_tag.items():
        rows += [(f"tag:{tag}", name, value, None, None, None) for name, value in agg.metrics().items()]
    run = RunRecord.with_git(
        git, kind="generation", fingerprint=fingerprint, params=params, suite=config.suite, versions=versions
    )
    run_id = store.put_run(run, records, {}, rows)
    report.meta["runId"] = run_id
    return ModeResult(mode, cases, overall, by_tag, report, run_id, computed, cached, elapsed)


# ------------------------------------------------------------------------------------------ output


def _fmt(value: float | None) -> str:
    return "  n/a" if value is None else f"{value:.3f}"


def format_mode_summary(mode: ModeResult) -> str:
    """The reference's per-mode block, plus where the answers came from and which cases flipped."""
    agg = mode.aggregate
    lines = [
        f"=== {mode.mode.upper()} ({mode.elapsed_s:.1f}s) ===",
        f"  correctness        {_fmt(agg.correctness)}",
        f"  refusal correct    {_fmt(agg.refusal_correctness)}",
        f"  leakage rate       {_fmt(agg.leakage_rate)}  (lower is better)",
        f"  think-tag leak     {_fmt(agg.think_tag_leak_rate)}  (should be 0)",
        f"  markdown formatted {_fmt(agg.markdown_rate)}",
        "  numeric grounding  "
        + (f"{agg.groundedness['mean']:.3f} (n={agg.groundedness['n']})" if agg.groundedness else "  n/a"),
        "  mean answer length "
        + ("n/a" if agg.mean_answer_length is None else f"{round(agg.mean_answer_length)} chars"),
    ]
    if agg.mean_prompt_tokens is not None:
        lines.append(f"  mean prompt tokens {round(agg.mean_prompt_tokens)}")
    if agg.history_elided_rate is not None:
        lines.append(f"  history elided     {_fmt(agg.history_elided_rate)}  (share of cases needing a trim)")
    if agg.chunks_dropped_rate is not None:
        lines.append(
            f"  context dropped    {_fmt(agg.chunks_dropped_rate)}  (share of cases where a chunk didn't fit)"
        )
    if agg.prompt_token_error:
        lines.append(
            f"  token estimate err {agg.prompt_token_error['mean'] * 100:.1f}%  (vs the backend's real count)"
        )
    if line := summary_line(mean_token_errors(c.extra.get("promptTokenErrors") or {} for c in mode.cases)):
        lines.append(line)
    if agg.unstable:
        lines.append(
            f"  WARNING {agg.unstable} question(s) flipped between repeats — excluded from gating, do not "
            f"read them as a regression: {', '.join(mode.unstable_ids)}"
        )
    if agg.errors:
        first = next(c for c in mode.cases if c.error)
        lines.append(f"  ERROR {agg.errors} question(s) errored: the scores above are incomplete.")
        lines.append(f"    first error ({first.id}): {first.error}")
    lines.append(f"  answers: {mode.computed} computed, {mode.cached} from the store · run {mode.run_id}")
    if mode.report_paths:
        lines.append(f"  report: {mode.report_paths[0]}")
    return "\n".join(lines)


def decomposition(correctness: Mapping[str, float | None]) -> list[str]:
    """The attribution of ``--all-modes`` and the reference's triage verdicts."""
    oracle, e2e, none = (correctness.get(m) for m in GENERATION_MODES)
    lines = ["=== Decomposition ==="]
    if oracle is not None and e2e is not None:
        lines.append(f"  retrieval cost   {oracle - e2e:.3f}   (oracle {oracle:.3f} - e2e {e2e:.3f})")
        lines.append(f"  model ceiling    {oracle:.3f}   (what this model manages with perfect context)")
    if e2e is not None and none is not None:
        lines.append(f"  RAG contribution {e2e - none:.3f}   (e2e {e2e:.3f} - noretrieval {none:.3f})")
    if oracle is not None and e2e is not None:
        if oracle < 0.6:
            lines.append(
                "  VERDICT model struggles: oracle is low even with perfect context. Retrieval work will "
                "not fix it — try a larger model."
            )
        elif oracle - e2e > 0.15:
            lines.append(
                "  VERDICT work on retrieval: the model can use good context but is not being given it."
            )
        else:
            lines.append("  VERDICT OK: model and retrieval are both holding up on this corpus.")
    if none is not None and e2e is not None and e2e <= none:
        lines.append(
            "  WARNING RAG is not adding anything over the bare model on this set — check that retrieval "
            "is actually reaching the prompt."
        )
    return lines


def format_failures(mode: ModeResult) -> list[str]:
    """``--verbose``: every case that missed, with what it missed and what it said."""
    lines = []
    for case in mode.cases:
        if case.correctness.pass_rate >= 1 and case.refusal_correctness.pass_rate >= 1:
            continue
        c, r = case.correctness, case.refusal_correctness
        lines.append(f"  {case.id}  correct={c.passes}/{c.repeats} refusal={r.passes}/{r.repeats}")
        if case.scores and case.scores[0].missed_required:
            lines.append(f"    missed: {' | '.join(case.scores[0].missed_required)}")
        if case.scores and case.scores[0].hit_forbidden:
            lines.append(f"    said forbidden: {' | '.join(case.scores[0].hit_forbidden)}")
        if case.answers:
            said = " ".join(case.answers[0].split())
            lines.append(f"    said: {said[:220]}{'…' if len(said) > 220 else ''}")
    return ["--- failures ---", *lines] if lines else []


def render_generation_markdown(report: EvalReport) -> str:
    """The markdown report: parameters, metrics, per-tag correctness, unstable and errored cases."""
    meta, params = report.meta, report.meta["params"]
    lines = [
        f"# Generation eval · {params['mode']} · {params['model']} · {params['suite']}",
        "",
        f"- created: {meta['createdAt']} · run `{meta.get('runId')}`",
        f"- corpus fingerprint: `{meta['corpusFingerprint']}`",
        f"- git: `{meta.get('gitSha')}` ({meta.get('gitBranch')}{', dirty' if meta.get('gitDirty') else ''})",
        f"- repeats {params['repeats']} · seed {params['seed']} · style {params['style'] or 'deterministic'}"
        f" · floor {params['minFinalScore']} · relevance check off · placement {params['ragPlacement']}",
        f"- window: {params['contextWindow'] or 'resolved per model'}"
        f" (long-context goldens: {params['contextWindow'] or params['longContextWindow']})",
        f"- answers: {report.extra['answers']['computed']} computed, {report.extra['answers']['fromStore']}"
        " from the store",
        "",
        "## Metrics",
        "",
        "| metric | value |",
        "|---|---:|",
        *(f"| {name} | {'—' if v is None else f'{v:.4f}'} |" for name, v in report.metrics.items()),
        "",
        "## By tag",
        "",
        "| tag | correctness | refusalCorrectness | leakageRate | historyElidedRate |",
        "|---|---:|---:|---:|---:|",
    ]
    for tag, m in report.by_tag.items():
        cells = (m.get(k) for k in ("correctness", "refusalCorrectness", "leakageRate", "historyElidedRate"))
        lines.append(f"| {tag} | " + " | ".join("—" if v is None else f"{v:.3f}" for v in cells) + " |")
    unstable = report.extra.get("unstableCases") or []
    errored = [c for c in report.cases if c.get("error")]
    lines += ["", f"## Unstable cases ({len(unstable)})", "", *(f"- {i}" for i in unstable)]
    lines += ["", f"## Errors ({len(errored)})", "", *(f"- {c['id']}: {c['error']}" for c in errored)]
    return "\n".join(lines) + "\n"
