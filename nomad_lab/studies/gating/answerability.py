"""``nomad-lab study answerability``: a cross-encoder fine-tuned on the user's goldens to tell whether a
retrieved passage ANSWERS the question, evaluated out of fold and saved as an ``answer:`` gate file.

Why: every score- and distance-based gate lets through questions about a real entity's unstated
attribute (the pool is on topic, nothing answers), and the zero-shot ms-marco cross-encoder judges
topicality too. This study fine-tunes the last layer's [CLS] path of the offline ms-marco MiniLM-L12
(:mod:`nomad_lab.retrieval.answer_model`) on positives from answerable questions' gold windows and
negatives from refusals, the out-of-scope bank and model-free synthetic unanswerables
(:mod:`nomad_lab.studies.gating.answer_pairs`), all built from training folds only.

Out of fold with 5x1 grouped folds (:func:`nomad_lab.gate.crossval.learned_figures`: each outer fold
trains 3 inner models, which set its threshold and whose mean scores the held-out fold, 15 trainings
in all; 5x5 would be 75, beyond the ~30 min budget on two cores). The zero-shot model over the same windows is
the comparison row. Opt-in (``published=False``): reading every window with the ONNX body takes
minutes the first time (cached beside the store, so a rerun skips it).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.core.errors import NomadLabError
from nomad_lab.eval.gating.fit import bank_run, default_bank
from nomad_lab.eval.gating.run_data import load_run
from nomad_lab.gate import crossval
from nomad_lab.retrieval.answer_cache import BodyCache, cache_root
from nomad_lab.retrieval.answer_model import AnswerBody, BodyOut, TrainConfig, head_logits, train_head
from nomad_lab.studies.gating.answer_pairs import (
    Question,
    best_per_question,
    run_questions,
    scoring_pairs,
    training_examples,
)
from nomad_lab.studies.gating.answer_report import GATE_NAME, pages, rows, save_gate, summary
from nomad_lab.studies.gating.run_param import GATED, RUN, study_run
from nomad_lab.studies.params import CORPUS, EMBEDDER, GOLDENS, INDEX, PROGRESS, STORE, positive
from nomad_lab.studies.result import Artefact, Result
from nomad_lab.studies.shape import Param, Params, Study

SEED = 1341

PARAMS = (
    RUN,
    STORE,
    CORPUS,
    GOLDENS,
    Param("suite", str, "core,off_topic", "suites to retrieve when no --run is given"),
    EMBEDDER,
    INDEX,
    Param("bank", Path, None, "out-of-scope question bank (default: datasets/out_of_scope/bank.jsonl)"),
    Param("bank_skip", str, (), "bank categories this corpus answers", many=True, metavar="CATEGORY"),
    Param("folds", int, crossval.FOLDS, "outer folds", check=positive),
    Param("repeats", int, 1, "repeated fold draws (each costs 3 trainings per fold)", check=positive),
    Param("epochs", int, TrainConfig().epochs, "training epochs per model", check=positive),
    PROGRESS,
)


class CountBar:
    """A counted progress line on stderr (tqdm when it is installed)."""

    def __init__(self, label: str, total: int, show: bool) -> None:
        from tqdm import tqdm  # heavy

        self.bar = tqdm(total=total, desc=label, disable=not show, leave=False)

    def __call__(self, n: int) -> None:
        self.bar.update(n)

    def close(self) -> None:
        self.bar.close()


Pair = tuple[str, str]


@dataclass(frozen=True)
class PairReading:
    """Every distinct (question, text) pair read once by the frozen body: in read order, each pair's body
    output (:meth:`outs_of`), its zero-shot logit, and the seconds the reading took."""

    pairs: list[Pair]
    outs: list[BodyOut]
    index: dict[Pair, int]
    zero_shot: dict[Pair, float]
    seconds: float

    def outs_of(self, pairs: Iterable[Pair]) -> list[BodyOut]:
        """The body outputs of ``pairs``, each one of those read."""
        return [self.outs[self.index[pair]] for pair in pairs]


def read_every_pair(cache: BodyCache, pairs: Iterable[Pair], label: str, show: bool) -> PairReading:
    """Read each distinct pair of ``pairs`` once through ``cache``, behind a counted progress line, timed.

    Why one reading up front: a fine-tuned study (answerability, sufficiency) trains and scores many
    folds over the same pairs, so it reads every pair any fold scores or trains on once, before the
    folds, and the folds look outputs up by pair; the read time is reported apart from training.
    """
    everything = list(dict.fromkeys(pairs))
    bar = CountBar(label, len(everything), show)
    began = time.perf_counter()
    outs, zero = cache.read(everything, bar)
    bar.close()
    seconds = time.perf_counter() - began
    return PairReading(
        pairs=everything,
        outs=outs,
        index={pair: i for i, pair in enumerate(everything)},
        zero_shot=dict(zip(everything, zero.tolist(), strict=True)),
        seconds=seconds,
    )


def study_seconds(
    started: float, reading: PairReading, cache: BodyCache, train_seconds: list[float]
) -> dict[str, float]:
    """A fine-tuned study's ``seconds`` record: total since ``started``, the up-front reading, the pairs
    the body computed this run (the rest came from the cache, including pairs a fold read later) and the
    mean training time. One record so both studies' cost tables read the same fields."""
    return {
        "total": time.perf_counter() - started,
        "read": reading.seconds,
        "readPairs": cache.computed,
        "pairs": len(reading.pairs),
        "trainMean": float(np.mean(train_seconds)),
        "trainings": len(train_seconds),
    }


def per_question(questions: int, read: int, what: str, seconds: float) -> dict[str, float]:
    """A from-scratch timing as the cost tables read it: ``read`` texts (``what``: windows, units) for
    ``questions`` questions took ``seconds``; per question, in texts and milliseconds."""
    return {
        "questions": questions,
        what: read,
        f"{what}PerQuestion": read / max(1, questions),
        "msPerQuestion": 1000 * seconds / max(1, questions),
    }


def compute(p: Params) -> dict[str, Any]:
    started = time.perf_counter()
    store = Path(p.store)
    data = load_run(store, study_run(p, **GATED))
    bank_path = p.bank or default_bank()
    if bank_path is None:
        raise NomadLabError("study answerability: no out-of-scope bank (pass --bank FILE)")
    bank = bank_run(store, data, bank_path, p.bank_skip)
    questions = run_questions(store, data, p.goldens, p.suite)
    bank_questions = [q for q in run_questions(store, bank, None, "") if q.top]
    body = AnswerBody()
    cache = BodyCache(cache_root(store), body)
    reading = read_every_pair(
        cache,
        scoring_pairs(questions)
        + scoring_pairs(bank_questions)
        + [(q.query, w) for q in questions for w in q.gold],
        "answerability: reading windows",
        not p.no_progress,
    )
    zero_shot = reading.zero_shot
    config = TrainConfig(epochs=p.epochs, seed=SEED)
    y, groups, splits = crossval.answerable_folds(data.pools, data.features.query, p.folds, p.repeats, SEED)
    trainings = len(splits) * len(splits[0]) * crossval.INNER_FOLDS
    bar = CountBar("answerability: trainings", trainings, not p.no_progress)
    train_seconds: list[float] = []

    def fit(train: np.ndarray) -> tuple[Any, dict[str, int]]:
        ex = training_examples(questions, train, bank_questions, zero_shot, SEED)
        ex_outs, _ = cache.read(ex.pairs)
        began = time.perf_counter()
        head = train_head(body.weights, body.heads, ex_outs, np.array(ex.labels), config)
        train_seconds.append(time.perf_counter() - began)
        return head, ex.counts()

    def score(head: Any, chosen: list[Question]) -> np.ndarray:
        pairs = scoring_pairs(chosen)
        logits = head_logits(head, reading.outs_of(pairs))
        return best_per_question(chosen, dict(zip(pairs, logits.tolist(), strict=True)))

    def fit_score(train: np.ndarray, scored: np.ndarray, _: Any) -> np.ndarray:
        head, _counts = fit(train)
        bar(1)
        return score(head, [questions[i] for i in scored])

    figures, oof, _ = crossval.learned_figures(
        fit_score, y, groups, data.base_recall, data.base_nonempty, splits, seed=SEED
    )
    bar.close()
    zs = best_per_question(questions, zero_shot)
    _, rec, ne = crossval.threshold_grid(zs, data.base_recall, data.base_nonempty)
    zero_figures = crossval.grid_figures(rec, ne, data.pools.expect_refusal, splits, zs[None])
    head, counts = fit(np.arange(y.size))
    threshold = crossval.pooled_threshold(
        oof, data.base_recall, data.base_nonempty, data.pools.expect_refusal
    )
    timing = _time_questions(body, head, questions[:: max(1, len(questions) // 20)][:20])
    return {
        "run": data.run_id,
        "bank_run": bank.run_id,
        "data": data,
        "questions": questions,
        "figures": figures,
        "zero_figures": zero_figures,
        "oof": oof,
        "keep": figures.extra["kept"],
        "zero_scores": zs,
        "head": head,
        "body": body,
        "threshold": threshold,
        "examples": counts,
        "splits": splits,
        "config": config,
        "seconds": study_seconds(started, reading, cache, train_seconds),
        "timing": timing,
    }


def _time_questions(body: AnswerBody, head: Any, chosen: list[Question]) -> dict[str, float]:
    """Milliseconds per question to score it from scratch (body over every window, then the head),
    timed on a fixed sample of questions with passages; uncached."""
    chosen = [q for q in chosen if q.top]
    pairs = scoring_pairs(chosen)
    began = time.perf_counter()
    outs, _ = body.read(pairs)
    head_logits(head, outs)
    return per_question(len(chosen), len(pairs), "windows", time.perf_counter() - began)


def result(raw: dict[str, Any]) -> Result:
    """The study's value: ``answerability.json``, its page, and the gate file it saves."""
    return STUDY.documented(raw, summary(raw), artefacts=(Artefact(GATE_NAME, partial(save_gate, raw)),))


STUDY = Study(
    name="answerability",
    title="Answerability: a cross-encoder fine-tuned on the goldens, out of fold",
    run=compute,
    rows=rows,
    pages=pages,
    published=False,
    stage=60,
)
