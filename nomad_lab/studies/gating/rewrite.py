"""Recall@5 on the multi-turn goldens with the free-text and the structured query rewrite, paired.

Why: the reference moved its rewrite to structured JSON (``{"queries": [...]}`` under a schema, thinking
off, an empty result falling back to the raw message). Whether that changes what retrieval finds on a
small tasks model is an empirical question, so both rewrites run on the same questions with the same
real model and index, and the difference is tested paired (bootstrap on recall@5, exact McNemar on
hit@5). The raw last message (no rewrite, what the retrieval tier uses) is reported beside them.

It is a gating study rather than a budgeting one: the rewrite feeds retrieval (and the paired tests
are the gate's statistics), which the budgeting half may not reach.

Each question's rewrites are appended to ``rows.jsonl`` in the study's ``--out`` folder as they finish,
so an interrupted run resumes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from nomad_lab.backends import open_backend
from nomad_lab.backends.backend_spec import BACKEND_SPEC
from nomad_lab.data.corpus import load_corpus
from nomad_lab.data.golden_suites import load_suites
from nomad_lab.eval.retrieval_metrics import RetrievedChunk, score_case
from nomad_lab.gate.stats import mcnemar_exact, paired_bootstrap
from nomad_lab.retrieval.embedder_spec import parse_embedder_spec
from nomad_lab.retrieval.embedding import load_embedder
from nomad_lab.retrieval.index import build_index
from nomad_lab.retrieval.index_spec import parse_index_spec
from nomad_lab.services.query_rewrite import rewrite_query
from nomad_lab.store import Store
from nomad_lab.store.records import json_sha256
from nomad_lab.studies.params import EMBEDDER, INDEX, WORKSPACE, suite_param
from nomad_lab.studies.result import Field, Page, Result, Table
from nomad_lab.studies.shape import Param, Params, Study, argv

MODES = ("raw", "free-text", "structured")
K = 5


@dataclass(frozen=True)
class RewriteRow:
    """One question under one rewrite mode: the query retrieval got and what it found."""

    case_id: str
    mode: str
    query: str
    did_rewrite: bool
    reason: str | None
    recall: float | None
    hit: float | None
    retrieved: list[str]


def multi_turn_goldens(goldens: Sequence[Any]) -> list[Any]:
    """Goldens with prior turns and at least one relevant document (recall is defined)."""
    return [g for g in goldens if g.turns and g.relevant_doc_ids]


def _embedding(spec: str | None) -> dict[str, Any]:
    """What an embedder spec selects, however it is spelled (``st:`` and the default's full name agree)."""
    return {k: v for k, v in asdict(parse_embedder_spec(spec)).items() if k != "text"}


def rows_log_name(embedder: str | None, index: str | None) -> str:
    """``rows.jsonl`` for the default embedder (however it is spelled) and exact search; another retrieval
    resumes from its own log, so rows retrieved one way are never reused for another. Both specs are
    parsed here, so a bad one is refused before any work."""
    searched = parse_index_spec(index)
    embedding = _embedding(embedder)
    if embedding == _embedding(None) and searched.kind == "exact":
        return "rows.jsonl"
    return f"rows-{json_sha256({'embedder': embedding, 'index': searched.identity()})[:12]}.jsonl"


def _load_done(path: Path) -> dict[tuple[str, str], RewriteRow]:
    done: dict[tuple[str, str], RewriteRow] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = RewriteRow(**json.loads(line))
                done[(row.case_id, row.mode)] = row
    return done


PARAMS = (
    *WORKSPACE,
    EMBEDDER,
    INDEX,
    suite_param("core,long_context"),
    Param(
        "tasks_model", BACKEND_SPEC, "embedded:gemma3-270m", "backend spec of the tasks model", metavar="SPEC"
    ),
)


def compute(params: Params) -> dict[str, Any]:
    """Rewrite every multi-turn question both ways on the tasks model, retrieve, score, compare."""
    return run(
        corpus_dir=params.corpus,
        goldens_dir=params.goldens,
        suite=params.suite,
        store_path=params.store,
        out_dir=params.out,
        tasks_model=params.tasks_model,
        embedder=params.embedder,
        index=params.index,
        progress=not params.no_progress,
    )


def run(
    *,
    corpus_dir: Path,
    goldens_dir: Path,
    suite: str,
    store_path: Path,
    out_dir: Path,
    tasks_model: str,
    embedder: str | None = None,
    index: str | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Rewrite every multi-turn question both ways on ``tasks_model``, retrieve, score, compare; the
    summary and its rows (``rows``)."""
    from tqdm.auto import tqdm  # heavy

    corpus = load_corpus(corpus_dir)
    cases = multi_turn_goldens(load_suites(goldens_dir, suite, corpus.all_doc_ids))
    backend = open_backend(tasks_model)
    out_dir.mkdir(parents=True, exist_ok=True)
    rows_path = out_dir / rows_log_name(embedder, index)
    done = _load_done(rows_path)
    with Store(store_path) as store, rows_path.open("a", encoding="utf-8") as sink:
        searched, _ = build_index(corpus, store, load_embedder(embedder), progress=progress, index=index)
        for golden in tqdm(cases, desc="rewrite study", unit="q", disable=not progress):
            messages = [{"role": t.role, "content": t.content} for t in golden.turns]
            messages.append({"role": "user", "content": golden.query})
            for mode in MODES:
                if (golden.id, mode) in done:
                    continue
                result = rewrite_query(
                    backend, None, messages, skip=mode == "raw", structured=mode == "structured"
                )
                chunks = searched.search(result.query).chunks
                case = score_case(
                    golden.id,
                    [RetrievedChunk(c.doc_id, c.final, c.semantic_score) for c in chunks],
                    golden.relevant_doc_ids,
                    k_values=(K,),
                )
                row = RewriteRow(
                    golden.id,
                    mode,
                    result.query,
                    result.did_rewrite,
                    result.reason,
                    case.recall[K],
                    case.hit_rate[K],
                    list(case.retrieved_doc_ids),
                )
                sink.write(json.dumps(asdict(row)) + "\n")
                sink.flush()
                done[(golden.id, mode)] = row
    rows = [done[(g.id, m)] for g in cases for m in MODES]
    return summarize(rows, tasks_model, suite) | {"rows": [asdict(r) for r in rows]}


def summarize(rows: Sequence[RewriteRow], tasks_model: str, suite: str) -> dict[str, Any]:
    """Mean recall@5 and hit@5 per mode; paired tests of structured vs free-text and each vs raw."""

    by_mode = {m: sorted((r for r in rows if r.mode == m), key=lambda r: r.case_id) for m in MODES}
    means = {
        m: {
            "recall@5": sum(r.recall or 0.0 for r in rs) / len(rs) if rs else None,
            "hit@5": sum(r.hit or 0.0 for r in rs) / len(rs) if rs else None,
            "rewritten": sum(r.did_rewrite for r in rs),
            "n": len(rs),
        }
        for m, rs in by_mode.items()
    }
    tests = {}
    for a, b in (("free-text", "structured"), ("raw", "free-text"), ("raw", "structured")):
        recall = paired_bootstrap([r.recall for r in by_mode[a]], [r.recall for r in by_mode[b]])
        misses = mcnemar_exact([not r.hit for r in by_mode[a]], [not r.hit for r in by_mode[b]])
        tests[f"{b} vs {a}"] = {"recall@5": asdict(recall), "miss@5 (McNemar)": asdict(misses)}
    return {"tasksModel": tasks_model, "suite": suite, "k": K, "modes": means, "paired": tests}


MODE_FIELDS = (
    Field("mode", "rewrite"),
    Field("recall@5", "recall@5", "share", ".3f", right=True),
    Field("hit@5", "hit@5", "share", ".3f", right=True),
    Field("rewrittenOf", "rewritten", "count", right=True),
)
PAIRED_FIELDS = (
    Field("comparison", "comparison"),
    Field("recall@5.statistic", "Δ recall@5 [95% CI]", "share", "+.3f", right=True),
    Field("recall@5.p_value", "p (bootstrap)", "", ".3f", right=True),
    Field("miss@5 (McNemar).statistic", "Δ miss@5", "share", "+.3f", right=True),
    Field("miss@5 (McNemar).p_value", "p (exact McNemar)", "", ".3f", right=True),
)


def pages(summary: Mapping[str, Any]) -> tuple[Page, ...]:
    """``summary.md`` from ``summary.json`` alone: the means per mode and the paired tests."""
    modes = tuple(
        {"mode": mode, **m, "rewrittenOf": f"{m['rewritten']}/{m['n']}"}
        for mode, m in summary["modes"].items()
    )
    paired = tuple(
        {
            "comparison": name,
            **test,
            "recall@5": {**test["recall@5"], "statistic": _interval(test["recall@5"])},
        }
        for name, test in summary["paired"].items()
    )
    intro = (
        f"Tasks model `{summary['tasksModel']}`, multi-turn goldens of `{summary['suite']}` "
        f"(n = {summary['modes']['raw']['n']})."
    )
    return (
        Page(
            "summary.md", (intro, Table("modes", MODE_FIELDS, modes), Table("paired", PAIRED_FIELDS, paired))
        ),
    )


def _interval(test: Mapping[str, Any]) -> list[float]:
    return [test["statistic"], test["low"], test["high"]]


def result(raw: dict[str, Any]) -> Result:
    """``summary.json`` (the per-question rows stay in ``rows.jsonl``, the resume log) and its page."""
    return STUDY.documented(raw, {k: v for k, v in raw.items() if k not in ("rows", "run_id")})


STUDY = Study(
    name="rewrite",
    title="Query rewrite: free text against the structured form (paired)",
    run=compute,
    rows=lambda result: result["rows"],
    document="summary.json",
    command=argv("study rewrite --store runs/budget.duckdb"),
    published=False,  # three rewrites per multi-turn question on the tasks model: its own command
    stage=64,
)
