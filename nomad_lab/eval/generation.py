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

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from nomad_lab.backends import Backend, ChatOptions, ChatRequest, open_backend
from nomad_lab.core.generation_metrics import GenerationCase, aggregate_by_tag, aggregate_generation
from nomad_lab.core.samplers import style_options
from nomad_lab.data.corpus import Corpus, corpus_fingerprint, load_corpus
from nomad_lab.data.golden_suites import Golden, load_suites
from nomad_lab.eval.generation_answers import GENERATION_MODES, AnswerCache, case_from, observe
from nomad_lab.eval.generation_config import (
    DEFAULT_GENERATION_MODEL,
    GENERATION_MIN_FINAL_SCORE,
    GENERATION_SEED,
    LONG_CONTEXT_WINDOW,
    GenerationEvalConfig,
    GenerationEvalError,
)
from nomad_lab.eval.generation_report import (
    ModeResult,
    decomposition,
    format_failures,
    format_mode_summary,
    render_generation_markdown,
)
from nomad_lab.eval.provenance import git_state, iso_now, package_versions, platform_info
from nomad_lab.eval.reports import EvalReport, write_report
from nomad_lab.retrieval.embedding import Embedder, load_embedder
from nomad_lab.retrieval.index import build_index, ingest_params
from nomad_lab.services.model_calls import chat_call
from nomad_lab.services.pipeline import MOCK_MODEL, PipelineConfig
from nomad_lab.store import CaseRecord, RunRecord, Store

__all__ = [
    "DEFAULT_GENERATION_MODEL",
    "GENERATION_MODES",
    "GENERATION_SEED",
    "LONG_CONTEXT_WINDOW",
    "AnswerCache",
    "GenerationEvalConfig",
    "GenerationEvalError",
    "GenerationEvalResult",
    "ModeResult",
    "decomposition",
    "format_failures",
    "format_mode_summary",
    "render_generation_markdown",
    "run_generation_eval",
]

WARMUP_PROMPT = "Reply with the single word: ready"
WARMUP_NUM_PREDICT = 8


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

    return open_backend(spec)


class WarmUp:
    """One throwaway chat before the first answer that is actually computed, so that answer does not pay
    the model load (at the window the run uses); a fully stored run loads no model at all."""

    def __init__(self, config: PipelineConfig | None, window: int | None) -> None:
        self.config, self.window = config, window

    def __call__(self) -> None:

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

    corpus = load_corpus(config.corpus_dir, include_distractors=config.include_distractors)
    goldens = select_goldens(
        load_suites(config.goldens_dir, config.suite, corpus.all_doc_ids), config.tag, config.limit
    )
    if not goldens:
        raise GenerationEvalError(
            f"no goldens matched suite {config.suite!r}" + (f" and tag {config.tag!r}" if config.tag else "")
        )
    with Store(config.store_path) as store:  # before the embedder: a bad or locked store fails in a blink
        embedder = embedder or load_embedder(config.embedder)
        index = None
        if "e2e" in config.modes:
            index, _ = build_index(corpus, store, embedder, progress=config.progress, index=config.index)
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
        warm = WarmUp(base if backend is not None else None, config.window_for(goldens[0]))
        cache = AnswerCache(store)
        result = GenerationEvalResult(config, fingerprint, len(goldens))
        for mode in config.modes:
            result.modes.append(
                _run_mode(mode, goldens, corpus, base, config, cache, store, fingerprint, warm)
            )
    if config.report_dir is not None:
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
    from tqdm.auto import tqdm  # heavy

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
        CaseRecord(
            g.id,
            i,
            g.tags,
            g.expect_refusal,
            g.relevant_doc_ids,
            g.suite,
            g.query,
            c.to_reference(),
            refusal_kind=g.refusal_kind if g.kind_given else None,
        )
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
