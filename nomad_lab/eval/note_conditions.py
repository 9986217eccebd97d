"""Does the sufficiency note change the answer? One chat model answers the same questions, from the same
top-5 passages, three ways: as the reference prompts (``plain``), with the sufficiency check's note
(``note``), and with the passages dropped (``drop``).

Why forced conditions and not the check's own decisions: the question is what each *action* does to an
answer once the check has said "not stated", so every sampled question is answered under each action
(paired: same passages, same model, same sampling), through :func:`~nomad_lab.services.pipeline.run_pipeline`
with a check that always says "not stated" (:func:`never_stated`). How often the real check says so is
the sufficiency study's figure; together they say what a deployment gets.

Strata: ``answerable`` questions whose top 5 hold a relevant document and whose golden has
``mustInclude`` patterns (so correctness is defined and not limited by retrieval), and each refusal kind
asked for (``unanswerable`` by default: the one the check is for). Abstention and correctness are the
generation tier's deterministic checks (:func:`~nomad_lab.core.answer_checks.score_answer`); every
difference is paired per question (exact McNemar, bootstrap interval).

Resume: every answer is stored as it comes (:class:`~nomad_lab.eval.generation_answers.AnswerCache`),
keyed by the condition, the model, the sampling, the prompts' version and the run; an interrupted study
recomputes only what is missing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from nomad_lab.core.answer_checks import score_answer
from nomad_lab.core.prompts import SUFFICIENCY_DROP_ACTION, SUFFICIENCY_NOTE_ACTION
from nomad_lab.data.golden_suites import Golden
from nomad_lab.eval.generation_answers import AnswerCache, golden_messages, prompts_sha
from nomad_lab.gate.stats import bootstrap_means, mcnemar_exact
from nomad_lab.services.pipeline import PipelineConfig, run_pipeline

ANSWERABLE = "answerable"
PLAIN, NOTE, DROP = "plain", "note", "drop"
CONDITIONS = (PLAIN, NOTE, DROP)
"""In the order answered: ``note`` right after ``plain`` reuses its KV-cache prefix (the note follows the
passages), which is the cost a deployment pays too."""
COMPARISONS = ((PLAIN, NOTE), (PLAIN, DROP), (NOTE, DROP))


def never_stated(question: str, passages: Sequence[str]) -> bool:
    """A sufficiency check that always answers "not stated": forces the action under study."""
    return False


def condition_config(base: PipelineConfig, condition: str) -> PipelineConfig:
    """``base`` with the sufficiency decision forced for ``condition`` (``plain``: no check at all)."""
    if condition == PLAIN:
        return replace(base, sufficiency_check=None)
    action = {NOTE: SUFFICIENCY_NOTE_ACTION, DROP: SUFFICIENCY_DROP_ACTION}[condition]
    return replace(base, sufficiency_check=never_stated, sufficiency_action=action)


def stratum_of(golden: Golden, holds_relevant: bool) -> str | None:
    """``answerable`` when correctness is defined and retrieval found a relevant document, else the
    refusal's kind; None for an answerable question the study cannot score."""
    if golden.expect_refusal:
        return golden.refusal_kind
    return ANSWERABLE if golden.must_include and holds_relevant else None


def draw(candidates: Mapping[str, Sequence[str]], per_stratum: int, seed: int) -> dict[str, list[str]]:
    """Up to ``per_stratum`` ids of each stratum, drawn without replacement (seeded), in their given order."""
    rng = np.random.default_rng(seed)
    drawn = {}
    for stratum, ids in candidates.items():
        take = min(per_stratum, len(ids))
        chosen = set(rng.choice(len(ids), take, replace=False).tolist()) if take else set()
        drawn[stratum] = [gid for i, gid in enumerate(ids) if i in chosen]
    return drawn


@dataclass(frozen=True)
class Asked:
    """One sampled question: its golden, its stratum and the passages every condition is given."""

    golden: Golden
    stratum: str
    passages: list[dict[str, Any]]


def observe(asked: Asked, config: PipelineConfig) -> dict[str, Any]:
    """One answer, reduced to what scoring and the cost line need."""
    started = time.perf_counter()
    result = run_pipeline(golden_messages(asked.golden), config, context_override=asked.passages)
    answer, trace = result.answer, result.trace
    return {
        "answer": answer.content,
        "ms": (time.perf_counter() - started) * 1e3,
        "promptTokens": answer.usage.prompt_tokens,
        "cachedPromptTokens": answer.usage.cached_prompt_tokens,
        "completionTokens": answer.usage.completion_tokens,
        "doneReason": answer.done_reason,
        "sufficiency": trace.sufficiency,
        "injected": len(trace.injected),
        "contextText": trace.context_text,
    }


def answer_all(
    questions: Sequence[Asked],
    base: PipelineConfig,
    cache: AnswerCache,
    key_params: Mapping[str, Any],
    *,
    tick: Callable[[int], None] = lambda n: None,
    before_compute: Callable[[], None] = lambda: None,
) -> dict[str, dict[str, dict[str, Any]]]:
    """Every question under every condition (stored answers reused): ``{golden id: {condition: obs}}``.

    ``before_compute`` runs once before the first answer that is not stored (a warm-up)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    configs = {c: condition_config(base, c) for c in CONDITIONS}
    warm = [before_compute]
    for asked in questions:
        for condition in CONDITIONS:
            params = {**key_params, "condition": condition, "prompts": prompts_sha()}
            key = AnswerCache.key(params)
            stored = cache.get(key, asked.golden, 0)
            if stored is None:
                while warm:
                    warm.pop()()
                stored = observe(asked, configs[condition])
                cache.put(key, params, asked.golden, 0, stored)
            out.setdefault(asked.golden.id, {})[condition] = stored
            tick(1)
    return out


def scored(asked: Asked, observation: Mapping[str, Any]) -> dict[str, bool]:
    """Abstained (any refusal phrasing) and correct (the golden's patterns) for one answer."""
    score = score_answer(
        observation["answer"],
        must_include=asked.golden.must_include,
        must_not_include=asked.golden.must_not_include,
        expect_refusal=asked.golden.expect_refusal,
        context=observation.get("contextText", ""),
    )
    return {"abstained": score.refused, "correct": score.correct}


def _rate(flags: Sequence[bool]) -> dict[str, Any]:
    mean, lo, hi = bootstrap_means(np.asarray(flags, dtype=float)[None])
    return {"rate": [float(mean[0]), float(lo[0]), float(hi[0])], "n": len(flags), "count": int(sum(flags))}


def summarize(
    questions: Sequence[Asked], answers: Mapping[str, Mapping[str, Mapping[str, Any]]]
) -> dict[str, dict[str, Any]]:
    """Per stratum: each condition's abstention (and, on answerable questions, correctness) rate with
    its interval, and each paired comparison (B minus A) with its exact McNemar p-value."""
    out: dict[str, dict[str, Any]] = {}
    for stratum in dict.fromkeys(q.stratum for q in questions):
        chosen = [q for q in questions if q.stratum == stratum]
        checks = {
            c: [scored(q, answers[q.golden.id][c]) for q in chosen] for c in CONDITIONS
        }  # condition -> per question
        measures = ("abstained", "correct") if stratum == ANSWERABLE else ("abstained",)
        entry: dict[str, Any] = {"n": len(chosen), "ids": [q.golden.id for q in chosen]}
        for measure in measures:
            flags = {c: [s[measure] for s in checks[c]] for c in CONDITIONS}
            entry[measure] = {c: _rate(flags[c]) for c in CONDITIONS}
            tests = {}
            for a, b in COMPARISONS:
                t = mcnemar_exact(flags[a], flags[b])
                tests[f"{b}-{a}"] = {"diff": [t.statistic, t.low, t.high], "p": t.p_value, "n": t.n}
            entry[f"{measure}Paired"] = tests
        out[stratum] = entry
    return out


def costs(answers: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> dict[str, dict[str, float]]:
    """Per condition: the seconds its answers took when computed (summed, so a resumed study still
    reports its whole answering time), and the median milliseconds, prompt tokens, prompt tokens served
    from the KV cache and passages injected."""
    out = {}
    for c in CONDITIONS:
        obs = [by[c] for by in answers.values() if c in by]
        medians = {
            f"median{name[0].upper()}{name[1:]}": float(np.median([float(o.get(name) or 0) for o in obs]))
            if obs
            else float("nan")
            for name in ("ms", "promptTokens", "cachedPromptTokens", "injected")
        }
        total = sum(float(o.get("ms") or 0) for o in obs) / 1e3
        out[c] = {"answers": len(obs), "seconds": total, **medians}
    return out


def choose_action(summary: Mapping[str, Mapping[str, Any]], unanswerable: str, alpha: float = 0.05) -> dict:
    """The default ``sufficiency_action`` read from the paired results, by a rule fixed before the run.

    ``note`` keeps the passages, so it is the default unless dropping them raises abstention on
    ``unanswerable`` questions significantly more than the note does (McNemar drop vs note, p < alpha,
    drop higher) while not lowering correctness on answerable questions significantly (drop vs note).
    """
    gain = summary[unanswerable]["abstainedPaired"][f"{DROP}-{NOTE}"]
    loss = summary[ANSWERABLE]["correctPaired"][f"{DROP}-{NOTE}"]
    drop_helps = gain["diff"][0] > 0 and gain["p"] < alpha
    drop_hurts = loss["diff"][0] < 0 and loss["p"] < alpha
    action = SUFFICIENCY_DROP_ACTION if drop_helps and not drop_hurts else SUFFICIENCY_NOTE_ACTION
    return {"action": action, "dropRaisesAbstention": drop_helps, "dropLowersCorrectness": drop_hurts}
