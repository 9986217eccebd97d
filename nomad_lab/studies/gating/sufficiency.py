"""``nomad-lab study sufficiency``: does a top-5 passage state the answer? A second decision after the
topicality gate, measured per refusal kind.

Why: a topicality gate rightly passes the on-topic context of an ``unanswerable`` refusal (a document
is about the entity, none states what is asked), so those leak through every topicality gate. This
study builds and measures, out of fold, the checks that read for the answer, each a gate family through
the gating service:

- ``ce:ms-marco-minilm-l12``: the zero-shot cross-encoder's best window (the topicality instrument, a
  baseline);
- ``sufficiency:zero-shot``: the same model's best sentence unit (a sentence with its heading and the
  sentence before it, the :data:`~nomad_lab.data.sentence_units.CHOSEN` units sharing most question
  words), a baseline; and with the expected-answer-type evidence as an input;
- a **containment head** (the L12 body frozen, its last layer's [CLS] path fine-tuned on cached states,
  :mod:`nomad_lab.retrieval.answer_model`) trained for containment on pseudo-questions drafted from the
  corpus's sentences and the training folds' goldens (:mod:`nomad_lab.studies.gating.sufficiency_pairs`),
  alone and with the answer-type evidence; saved as ``sufficiency:GATE_FILE``.

Measure: the share of each refusal kind whose context passes (never blended across kinds) at answerable
keep >= 0.90 (the share of answerable questions whose context passes), thresholds chosen inside training
folds (:func:`nomad_lab.gate.crossval.learned_figures`; the answer-type weight is chosen there too).
Opt-in (``published=False``): the body reads thousands of pairs the first time (cached beside the store).
"""

from __future__ import annotations

import os
import time
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.eval.gating import load_run, scores
from nomad_lab.eval.gating.context import GatherContext
from nomad_lab.gate import crossval
from nomad_lab.retrieval.answer_cache import BodyCache, cache_root
from nomad_lab.retrieval.answer_model import AnswerBody, TrainConfig, head_logits, train_head
from nomad_lab.retrieval.cross_encoder import DEFAULT_CROSS_ENCODER
from nomad_lab.retrieval.sufficiency_model import (
    ZERO_SHOT,
    best_per_question,
    question_units,
    split_by,
    type_shift,
)
from nomad_lab.studies.gating.answerability import CountBar, per_question, read_every_pair, study_seconds
from nomad_lab.studies.gating.run_param import GATED, RUN_INPUTS, study_run
from nomad_lab.studies.gating.sufficiency_pairs import (
    PSEUDO,
    golden_examples,
    pseudo_examples,
    pseudo_questions,
    run_questions,
    scoring_pairs,
)
from nomad_lab.studies.gating.sufficiency_report import GATE_NAME, pages, rows, save_gate, summary
from nomad_lab.studies.params import (
    PROGRESS,
    on_second_corpus,
    positive,
)
from nomad_lab.studies.result import Artefact, Result
from nomad_lab.studies.shape import Param, Params, Study

SEED = 1341
TYPE_WEIGHTS = (0.0, 0.5, 1.0, 2.0, 4.0)
"""Answer-type weights (logit units) the training folds choose among; 0 is the model alone."""
KEEP_TARGET = crossval.RECALL_TARGET
UNANSWERABLE_TARGET = 0.35
"""Issue 32's target: at most this share of unanswerable refusals pass at answerable keep >= the target."""
BUDGET_MS = 400
"""Issue 32's budget for the topicality gate and the sufficiency check together, per question, 2 cores."""

PARAMS = (
    *RUN_INPUTS,
    Param("units", int, 8, "sentence units read per question", check=positive),
    Param("pseudo", int, PSEUDO, "pseudo-questions drafted from the corpus", check=positive),
    Param("folds", int, crossval.FOLDS, "outer folds", check=positive),
    Param("repeats", int, 1, "repeated fold draws (each costs 3 trainings per fold)", check=positive),
    Param("epochs", int, TrainConfig().epochs, "training epochs per model", check=positive),
    PROGRESS,
)


def fixed_row(
    name: str, spec: str, fixed: np.ndarray, y: np.ndarray, groups: np.ndarray, keep_base: np.ndarray,
    nonempty: np.ndarray, splits: list, target: float = KEEP_TARGET,
) -> dict[str, Any]:  # fmt: skip
    """A row whose score needs no training: its threshold is still chosen inside the training folds (for
    answerable keep >= ``target``)."""
    figures, oof, _ = crossval.learned_figures(
        lambda train, scored, _: fixed[scored], y, groups, keep_base, nonempty, splits, target, seed=SEED
    )
    return {"name": name, "spec": spec, "figures": figures, "oof": oof, "chosen": []}


def compute(p: Params) -> dict[str, Any]:
    started = time.perf_counter()
    load = os.getloadavg()  # the timing below is read beside the machine's load when the study began
    store = Path(p.store)
    run_id = study_run(p, **GATED)
    data = load_run(store, run_id)
    kinds = [str(k) for k in data.pools.refusal_kinds]
    questions = run_questions(store, data, kinds, p.goldens, p.suite, p.units)
    pseudo = pseudo_questions(p.corpus, SEED, p.pseudo)
    pseudo_ex = pseudo_examples(pseudo, SEED)
    body = AnswerBody()
    cache = BodyCache(cache_root(store), body)
    scored = scoring_pairs(questions)
    reading = read_every_pair(
        cache,
        scored + [(q.query, u) for q in questions for u in q.answers] + pseudo_ex.pairs,
        "sufficiency: reading units",
        not p.no_progress,
    )
    zero_shot = reading.zero_shot
    sizes = [len(q.units) for q in questions]
    shifts = [type_shift(q.query, [u for _, u in q.units]) for q in questions]
    scored_outs = reading.outs_of(scored)
    pseudo_outs = reading.outs_of(pseudo_ex.pairs)

    refusal = data.pools.expect_refusal
    keep_base = np.where(refusal, np.nan, 1.0)  # "recall" = answerable keep
    y, groups, splits = crossval.answerable_folds(data.pools, data.features.query, p.folds, p.repeats, SEED)
    config = TrainConfig(epochs=p.epochs, seed=SEED)
    trainings = len(splits) * len(splits[0]) * crossval.INNER_FOLDS
    heads: dict[bytes, list[np.ndarray]] = {}
    counts: dict[str, int] = {}
    train_seconds: list[float] = []
    tbar = CountBar("sufficiency: trainings", trainings, not p.no_progress)

    def fit(train: np.ndarray) -> Any:
        ex = golden_examples(questions, train, zero_shot, SEED)
        ex_outs = cache.read(ex.pairs)[0] + pseudo_outs  # a fold's swaps are read here, once
        began = time.perf_counter()
        labels = np.array(ex.labels + pseudo_ex.labels)
        head = train_head(body.weights, body.heads, ex_outs, labels, config)
        train_seconds.append(time.perf_counter() - began)
        counts.update(ex.counts() | pseudo_ex.counts())
        return head

    def unit_logits(train: np.ndarray) -> list[np.ndarray]:
        key = train.tobytes()
        if key not in heads:
            heads[key] = split_by(head_logits(fit(train), scored_outs), sizes)
            tbar(1)
        return heads[key]

    def fitted(train: np.ndarray, chosen: np.ndarray, weight: float) -> np.ndarray:
        logits = unit_logits(train)
        return best_per_question([logits[i] for i in chosen], [shifts[i] for i in chosen], weight)

    zero_units = split_by(np.array([zero_shot[pair] for pair in scored]), sizes)

    def typed_zero(train: np.ndarray, chosen: np.ndarray, weight: float) -> np.ndarray:
        return best_per_question([zero_units[i] for i in chosen], [shifts[i] for i in chosen], weight)

    ne = data.base_nonempty
    ce = scores(store, data, f"ce:{DEFAULT_CROSS_ENCODER}")
    units_zero = scores(store, data, f"sufficiency:{ZERO_SHOT}")
    table = [
        fixed_row("ms-marco L12 zero-shot, best window", f"ce:{DEFAULT_CROSS_ENCODER}", ce, y, groups,
                  keep_base, ne, splits),
        fixed_row("ms-marco L12 zero-shot, best sentence unit", f"sufficiency:{ZERO_SHOT}", units_zero, y,
                  groups, keep_base, ne, splits),
    ]  # fmt: skip
    for name, fn, choices in (
        ("zero-shot sentence unit + answer type", typed_zero, TYPE_WEIGHTS),
        ("containment head (fine-tuned)", fitted, (0.0,)),
        ("containment head + answer type", fitted, TYPE_WEIGHTS),
    ):
        figures, oof, chosen = crossval.learned_figures(
            fn, y, groups, keep_base, ne, splits, seed=SEED, choices=choices
        )
        spec = "sufficiency:GATE_FILE" if fn is fitted else ""
        table.append({"name": name, "spec": spec, "figures": figures, "oof": oof, "chosen": chosen})
    tbar.close()
    final_weight = Counter(table[-1]["chosen"]).most_common(1)[0][0]
    head = fit(np.arange(y.size))
    threshold = crossval.pooled_threshold(table[-1]["oof"], keep_base, ne, refusal, KEEP_TARGET)
    sample = [q for q in questions if q.units][:: max(1, len(questions) // 20)][:20]
    return {
        "run": run_id,
        "data": data,
        "kinds": kinds,
        "questions": questions,
        "rows": table,
        "splits": splits,
        "head": head,
        "body": body,
        "typeWeight": float(final_weight),
        "threshold": threshold,
        "units": p.units,
        "pseudo": len(pseudo),
        "examples": counts,
        "config": config,
        "seconds": study_seconds(started, reading, cache, train_seconds),
        "timing": _time_questions(body, head, sample, store, data, p.units) | {"loadAtStart": list(load)},
    }


def _time_questions(body: AnswerBody, head: Any, chosen: list, store: Path, data: Any, k: int) -> dict:
    """Milliseconds per question to run the check from scratch (cut and choose units, read them with the
    body, the head, the answer-type shift), on a fixed sample of questions with passages; uncached."""
    ctx = GatherContext(store, data)
    where = {qid: i for i, qid in enumerate(data.pools.ids)}
    passages = [ctx.passages(where[q.id]) for q in chosen]
    began = time.perf_counter()
    units = [question_units(q.query, ps, k) for q, ps in zip(chosen, passages, strict=True)]
    pairs = [(q.query, u) for q, us in zip(chosen, units, strict=True) for u in us]
    outs, _ = body.read(pairs)
    logits = split_by(head_logits(head, outs), [len(us) for us in units])
    shifts = [type_shift(q.query, us) for q, us in zip(chosen, units, strict=True)]
    best_per_question(logits, shifts, 1.0)
    return per_question(len(chosen), len(pairs), "units", time.perf_counter() - began)


def result(raw: dict[str, Any]) -> Result:
    """The study's value: ``sufficiency.json``, its page, and the gate file it saves."""
    return STUDY.documented(raw, summary(raw), artefacts=(Artefact(GATE_NAME, partial(save_gate, raw)),))


STUDY = Study(
    name="sufficiency",
    title="Sufficiency: does a top-5 passage state the answer? Per refusal kind, out of fold",
    run=compute,
    rows=rows,
    pages=pages,
    published=False,
    stage=61,
    also=(on_second_corpus("sufficiency", "results/sufficiency", ("sufficiency.md",), "Sufficiency check"),),
)
