"""``nomad-lab study note-effect``: does the sufficiency note change the answer?

Why: the sufficiency check (``study sufficiency``) decides whether a top-5 passage states the answer;
what happens next is a setting (``sufficiency_action``: keep the passages with a note, or drop them).
This study measures both actions on a real chat model: a stratified sample of answerable and
unanswerable questions, each answered from the same passages with no note, with the note, and with the
passages dropped (:mod:`nomad_lab.eval.note_conditions`); abstention on unanswerable questions and
correctness on answerable ones, paired, with intervals. The default action is read from the result by a
rule fixed in :func:`~nomad_lab.eval.note_conditions.choose_action`.

Opt-in (``published=False``): the default model is the largest chat model that installs here
(Qwen2.5-Coder 1.5B Instruct, the ``ladder`` extra), about 25 s of 2-core time per question.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tqdm import tqdm

from nomad_lab.backends import open_backend
from nomad_lab.backends.backend_spec import BACKEND_SPEC
from nomad_lab.core.reference import RAG_MIN_FINAL_SCORE
from nomad_lab.core.samplers import style_options
from nomad_lab.data.golden_suites import load_suites
from nomad_lab.data.refusal_kinds import REFUSAL_KINDS, UNANSWERABLE
from nomad_lab.eval.gating import load_run
from nomad_lab.eval.gating.context import GatherContext
from nomad_lab.eval.generation import GENERATION_SEED, WarmUp
from nomad_lab.eval.generation_answers import AnswerCache
from nomad_lab.eval.note_conditions import (
    ANSWERABLE,
    COMPARISONS,
    CONDITIONS,
    Asked,
    answer_all,
    choose_action,
    costs,
    draw,
    scored,
    stratum_of,
    summarize,
)
from nomad_lab.services.pipeline import PipelineConfig
from nomad_lab.store import Store
from nomad_lab.studies.gating.run_param import RUN_INPUTS, study_run
from nomad_lab.studies.params import (
    PROGRESS,
    on_second_corpus,
    positive,
)
from nomad_lab.studies.result import Field, Page, Result, Table
from nomad_lab.studies.shape import Param, Params, Study

DEFAULT_MODEL = "embedded:qwen2.5-coder-1.5b"
SEED = 1342


def _kinds(text: str) -> tuple[str, ...]:
    kinds = tuple(k.strip() for k in text.split(",") if k.strip())
    bad = [k for k in kinds if k not in REFUSAL_KINDS]
    if bad or not kinds:
        raise ValueError(f"refusal kinds must be among {', '.join(REFUSAL_KINDS)}, got {text!r}")
    return kinds


PARAMS = (
    *RUN_INPUTS,
    Param("model", BACKEND_SPEC, DEFAULT_MODEL, "the chat model that answers", metavar="SPEC"),
    Param("per_stratum", int, 30, "questions drawn per stratum", check=positive),
    Param("refusals", _kinds, (UNANSWERABLE,), "refusal kinds sampled beside answerable questions"),
    Param("max_tokens", int, 160, "answer length cap (num_predict)", check=positive),
    Param("context_window", int, 4096, "the window every answer is planned in", check=positive),
    PROGRESS,
)


def _sample(p: Params, store: Path) -> tuple[str, list[Asked], dict[str, int]]:
    """The run's questions drawn per stratum, with the top-5 passages each is given."""
    run_id = study_run(p)
    data = load_run(store, run_id)
    goldens = {g.id: g for g in load_suites(p.goldens, p.suite)}
    strata = (ANSWERABLE, *p.refusals)
    candidates: dict[str, list[str]] = {s: [] for s in strata}
    where = {}
    for i, gid in enumerate(data.pools.ids):
        golden = goldens.get(gid)
        stratum = None if golden is None else stratum_of(golden, bool(data.base_recall[i] > 0))
        if stratum in candidates and data.base_nonempty[i]:
            candidates[stratum].append(gid)
            where[gid] = i
    drawn = draw(candidates, p.per_stratum, SEED)
    ctx = GatherContext(store, data)
    asked = [
        Asked(goldens[gid], stratum, [_chunk(c) for c in ctx.chunks(where[gid])])
        for stratum, ids in drawn.items()
        for gid in ids
    ]
    return run_id, asked, {s: len(ids) for s, ids in candidates.items()}


def _chunk(candidate: Any) -> dict[str, Any]:
    return {
        "text": candidate.text,
        "score": candidate.score,
        "metadata": {"doc_id": candidate.doc_id, "source": candidate.source},
    }


def compute(p: Params) -> dict[str, Any]:
    started = time.perf_counter()
    load = os.getloadavg()  # answers' times are read beside the machine's load when the study began
    store = Path(p.store)
    run_id, asked, available = _sample(p, store)
    backend = open_backend(p.model)
    sampling = style_options(None, openai_path=getattr(backend, "kind", "") == "openai")
    key_params = {
        "study": "note-effect",
        "model": p.model,
        "run": run_id,
        "seed": GENERATION_SEED,
        "sampling": sampling,
        "numPredictCap": p.max_tokens,
        "contextWindow": p.context_window,
        "enforceContextTokens": False,
    }
    with Store(store) as db:
        base = PipelineConfig(
            backend=backend,
            min_final_score=RAG_MIN_FINAL_SCORE,
            relevance_check_model=None,
            skip_query_rewrite=True,
            sampling=sampling,
            seed=GENERATION_SEED,
            num_predict_cap=p.max_tokens,
            context_window=p.context_window,
            enforce_context_tokens=False,  # else the note's tokens can push a passage out of the capped block
            call_log=db,
        )
        total = len(asked) * len(CONDITIONS)
        with tqdm(total=total, desc="note-effect answers", unit="answer", disable=p.no_progress) as bar:
            answers = answer_all(
                asked,
                base,
                AnswerCache(db),
                key_params,
                tick=bar.update,
                before_compute=WarmUp(base, p.context_window),
            )
    summary = summarize(asked, answers)
    return {
        "run": run_id,
        "model": p.model,
        "params": key_params | {"perStratum": p.per_stratum, "strata": list(summary)},
        "available": available,
        "asked": asked,
        "answers": answers,
        "summary": summary,
        "costs": costs(answers),
        "choice": choose_action(summary, UNANSWERABLE) if UNANSWERABLE in summary else None,
        "seconds": time.perf_counter() - started,
        "loadAtStart": list(load),
    }


def _json(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k not in ("asked", "answers")}


def rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for stratum, entry in result["summary"].items():
        for measure in ("abstained", "correct"):
            for condition, figure in entry.get(measure, {}).items():
                out.append({"stratum": stratum, "measure": measure, "condition": condition, **figure})
    return out


def _rate(condition: str) -> Field:
    return Field(f"{condition}.rate", condition, "share", ".1f", 100, "%")


def _difference(a: str, b: str) -> tuple[Field, Field]:
    pair = f"{b}-{a}"
    return Field(f"{pair}.diff", f"{b} - {a} (points)", "points", "+.1f", 100), Field(
        f"{pair}.p", "p", "", ".4f"
    )


RATE_FIELDS = (
    Field("stratum", "stratum"),
    Field("n", "n", "count", right=True),
    Field("measure", "measure"),
    *(_rate(c) for c in CONDITIONS),
)
PAIRED_FIELDS = (
    Field("stratum", "stratum"),
    Field("measure", "measure"),
    *(f for a, b in COMPARISONS for f in _difference(a, b)),
)
MEASURES = ("abstained", "correct")


def pages(doc: Mapping[str, Any]) -> tuple[Page, ...]:
    """``note_effect.md`` from the stored document alone (so it can be rebuilt from the JSON)."""
    s, c = doc["summary"], doc["costs"]
    rates = [
        {"stratum": stratum, "n": entry["n"], "measure": m, **entry[m]}
        for stratum, entry in s.items()
        for m in MEASURES
        if m in entry
    ]
    paired = [
        {"stratum": stratum, "measure": m, **entry[f"{m}Paired"]}
        for stratum, entry in s.items()
        for m in MEASURES
        if f"{m}Paired" in entry
    ]
    intro = (
        f"Does the sufficiency note change the answer? Model {doc['model']}, run {doc['run']}; "
        f"each question answered from its top-5 passages under {', '.join(CONDITIONS)} (temperature 0; "
        "the planner admits the first ones, the same in every condition: the size tier's token cap is "
        "not enforced, so the note cannot displace one). Abstained: any refusal phrasing of the generation "
        "checks; correct: every `mustInclude` pattern and no `mustNotInclude` one."
    )
    costs = (
        "Median per answer: "
        + "; ".join(
            f"{k} {c[k]['medianMs'] / 1000:.1f} s ({c[k]['medianPromptTokens']:.0f} prompt tokens, "
            f"{c[k]['medianCachedPromptTokens']:.0f} from the KV cache, "
            f"{c[k]['medianInjected']:.0f} passages)"
            for k in CONDITIONS
        )
        + f". Answering took {sum(v['seconds'] for v in c.values()) / 60:.1f} min in all (load average "
        f"when the study began {doc['loadAtStart'][0]:.2f})."
    )
    choice = (
        doc["choice"] and f"Default `sufficiency_action` by the study's rule: **{doc['choice']['action']}**."
    )
    blocks = (intro, Table("rates", RATE_FIELDS, tuple(rates)), Table("paired", PAIRED_FIELDS, tuple(paired)))
    return (Page("note_effect.md", (*blocks, costs, *([choice] if choice else []))),)


def _answers(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Every answer, one line per question and condition (``answers.jsonl``)."""
    lines = []
    for q in result["asked"]:
        for condition in CONDITIONS:
            obs = result["answers"][q.golden.id][condition]
            line = {"id": q.golden.id, "stratum": q.stratum, "condition": condition, "query": q.golden.query}
            checks = scored(q, obs)
            if q.stratum != ANSWERABLE:
                del checks["correct"]  # defined by mustInclude patterns, which refusals do not have
            lines.append(line | checks | {"answer": obs["answer"], "injected": obs["injected"]})
    return lines


def result(raw: dict[str, Any]) -> Result:
    """The study's value: ``note_effect.json``, its page and every answer (``answers.jsonl``)."""
    return STUDY.documented(raw, _json(raw), lines={"answers.jsonl": _answers(raw)})


STUDY = Study(
    name="note-effect",
    title="Does the sufficiency note change the answer? Abstention and correctness, paired",
    run=compute,
    published=False,
    stage=62,
    also=(
        on_second_corpus(
            "note-effect", "results/note_effect", ("note_effect.md",), "The note's effect", "--per-stratum 20"
        ),
    ),
)
