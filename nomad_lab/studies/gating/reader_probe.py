"""``nomad-lab study reader-probe``: a reader that quotes the answer or says none, as a sufficiency check.

Why: the sufficiency study's best check still passes 74.7% of unanswerable refusals at answerable keep
>= 0.90; every probe so far asked a model to judge. Here an instruct model (the largest embedded one
installed, or ``--reader SPEC``) is asked to copy the sentence of the top 5 that answers the question,
or write NONE (:mod:`nomad_lab.data.reader_quote`). The quote is verified against the passages (a quote
they do not hold counts as NONE) and scored by the cross-encoder against the question; NONE scores
:data:`NO_QUOTE`. That score is a gate family like the others: its threshold is chosen inside training
folds for answerable keep >= 0.90 (:func:`nomad_lab.gate.crossval.learned_figures`), and each refusal
kind's pass rate is reported apart, paired over the same unanswerable refusals against the better of the
sufficiency study's zero-shot rows (window, sentence unit) on the same folds. A reader that writes NONE
for more than a tenth of answerable questions cannot reach that keep alone, so two more views: the
reader's order with the NONE questions ordered by the zero-shot sentence score (:func:`quoted_first`),
and the reader alone at the keep it does reach, against the zero-shot check held to that same keep.

Resumable: each reply is stored in the store's answer table as soon as it exists, keyed by the reader,
the prompt version and the exact sentences shown, so a stopped run resumes where it stopped and a rerun
reads every answer back (and its measured seconds: the cost per question is the model's, not the cache's).
No file is written: the study returns its :class:`~nomad_lab.studies.result.Result`.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from nomad_lab.backends import ChatOptions, ChatRequest, open_backend
from nomad_lab.backends.models import largest_instruct
from nomad_lab.data.reader_quote import PROMPT_VERSION, parse_quote, reader_prompt, shown, verify
from nomad_lab.data.refusal_kinds import REFUSAL_KINDS
from nomad_lab.eval.gating import load_run, scores
from nomad_lab.eval.gating.context import GatherContext
from nomad_lab.gate import crossval
from nomad_lab.retrieval.cross_encoder import DEFAULT_CROSS_ENCODER, load_cross_encoder
from nomad_lab.retrieval.sufficiency_model import ZERO_SHOT
from nomad_lab.store import Store, pair_sha256
from nomad_lab.studies.gating.answerability import CountBar
from nomad_lab.studies.gating.reader_probe_report import READER, pages, rows, summary
from nomad_lab.studies.gating.run_param import GATED, RUN_INPUTS, study_run
from nomad_lab.studies.gating.sufficiency import fixed_row
from nomad_lab.studies.params import (
    PROGRESS,
    not_negative,
    on_second_corpus,
    positive,
)
from nomad_lab.studies.result import Result
from nomad_lab.studies.shape import Param, Params, Study, argv

SEED = 1341
BASELINES = (
    ("ms-marco L12 zero-shot, best window", f"ce:{DEFAULT_CROSS_ENCODER}"),
    ("ms-marco L12 zero-shot, best sentence unit", f"sufficiency:{ZERO_SHOT}"),
)
"""The sufficiency study's zero-shot rows the reader is paired against, on the same folds."""
UNANSWERABLE_TARGET = 0.50
"""Issue 43's target for the reader: at most this share of unanswerable refusals pass at answerable keep
>= the target (the best sufficiency check passed three in four)."""
FALLBACK = BASELINES[-1][1]
"""The score that orders the questions the reader found no quote for (:func:`quoted_first`)."""
NO_QUOTE = -1000.0
"""The score of NONE or of a quote the passages do not hold: below any cross-encoder logit."""
LARGEST = "largest"
READER_TOKENS = 120
"""Tokens a reply may take: one sentence, with room for a long one; a reader that rambles is cut."""
Chat = Callable[[str], str]


def reader_spec(given: str) -> str:
    """The backend spec ``--reader`` names (``largest``: the largest embedded instruct model installed)."""
    if given != LARGEST:
        return given
    return largest_instruct()


def refusal_kinds_only(kinds: Sequence[str]) -> str | None:
    """What is wrong with ``--skip-kind``: a value that is not a refusal kind, or None."""
    wrong = [k for k in kinds if k not in REFUSAL_KINDS]
    return f"not a refusal kind: {', '.join(wrong)} (one of {', '.join(REFUSAL_KINDS)})" if wrong else None


PARAMS = (
    *RUN_INPUTS,
    Param(
        "reader",
        str,
        LARGEST,
        "the instruct model quoting: a backend spec, or largest (embedded)",
        pin=lambda value, _values: reader_spec(value),  # provenance names the model, not "largest"
    ),
    Param(
        "sentences",
        int,
        24,
        "sentences shown per question, most question words first (0: all)",
        check=not_negative,
    ),
    Param("sample", int, 0, "questions read, a seeded sample of each kind (0: all)", check=not_negative),
    Param(
        "skip_kind",
        str,
        (),
        "refusal kinds left out (e.g. off-topic: the topicality gate's question, not a reader's)",
        check=refusal_kinds_only,
        many=True,
        metavar="KIND",
    ),
    Param("folds", int, crossval.FOLDS, "outer folds", check=positive),
    Param("repeats", int, 1, "repeated fold draws", check=positive),
    PROGRESS,
)


def open_reader(spec: str, seed: int = SEED) -> Chat:
    """A greedy one-turn chat over ``spec``: the prompt in, the reply's text out."""
    backend = open_backend(spec)
    options = ChatOptions(temperature=0.0, seed=seed, num_predict=READER_TOKENS)
    return lambda prompt: backend.chat(ChatRequest([{"role": "user", "content": prompt}], options)).content


def answers_key(spec: str, sentences: int) -> str:
    """The stored answers' parameter key: the reader, the prompt version, the sentences shown."""
    return f"{PROMPT_VERSION}:{spec}:s{sentences}"


def read_quotes(
    store_path: Path,
    questions: Sequence[tuple[str, str, list[str]]],
    chat: Chat | None,
    key: str,
    sentences: int,
    progress: Callable[[int], None] = lambda n: None,
) -> list[dict[str, Any]]:
    """Each question's reply, quote and verified quote: ``questions`` are (id, query, passages). Stored
    replies are read back; the others are asked of ``chat`` (opened only when one is missing) and stored
    one by one, so a stop loses at most the question being read. ``progress(1)`` after each question."""
    shown_lines = [shown(query, passages, sentences) for _, query, passages in questions]
    hashes = [
        hashlib.sha256(json.dumps([query, lines]).encode()).hexdigest()
        for (_, query, _), lines in zip(questions, shown_lines, strict=True)
    ]
    with Store(store_path, read_only=Path(store_path).exists()) as store:  # a new store is made here
        stored = [store.get_answer(key, qid, h, 0) for (qid, _, _), h in zip(questions, hashes, strict=True)]
    out: list[dict[str, Any]] = []
    for (qid, query, passages), lines, digest, got in zip(
        questions, shown_lines, hashes, stored, strict=True
    ):
        if got is None and not lines:
            got = {"reply": "", "seconds": 0.0}  # no passage: nothing to read, nothing asked
        elif got is None:
            if chat is None:
                raise RuntimeError("read_quotes: a reply is missing and no reader was given")
            began = time.perf_counter()
            reply = chat(reader_prompt(query, lines))
            got = {"reply": reply, "seconds": time.perf_counter() - began}
            with Store(store_path) as store:
                store.put_answer(key, {"study": "reader-probe", "key": key}, qid, digest, 0, got)
        quote = parse_quote(got["reply"])
        out.append({**got, "id": qid, "quote": quote, "verified": verify(quote, passages)})
        progress(1)
    return out


def quote_scores(
    store_path: Path, queries: Sequence[str], quotes: Sequence[str | None]
) -> tuple[np.ndarray, float]:
    """The cross-encoder's logit of each (question, verified quote), :data:`NO_QUOTE` without one, and
    the mean milliseconds per scored quote; scores are cached in the store's pair-score table."""
    out = np.full(len(queries), NO_QUOTE)
    todo = [(i, q, s) for i, (q, s) in enumerate(zip(queries, quotes, strict=True)) if s]
    if not todo:
        return out, 0.0
    scorer = load_cross_encoder(DEFAULT_CROSS_ENCODER)
    hashes = {pair_sha256(q, s): (q, s) for _, q, s in todo}
    with Store(store_path, read_only=True) as store:
        cached = store.get_pair_scores(scorer.model_key, hashes)
    missing = [h for h in hashes if h not in cached]
    if missing:
        began = time.perf_counter()
        scored = scorer.score_pairs([hashes[h] for h in missing])
        each = 1000 * (time.perf_counter() - began) / len(missing)
        rows_ = [(h, float(s), each) for h, s in zip(missing, scored, strict=True)]
        with Store(store_path) as store:
            store.put_pair_scores(scorer.model_key, rows_)
        cached.update({h: (s, ms) for h, s, ms in rows_})
    for i, q, s in todo:
        out[i] = cached[pair_sha256(q, s)][0]
    return out, float(np.mean([cached[h][1] or 0.0 for h in hashes]))


def quoted_first(probe: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """The reader's order, then ``fallback``'s: every question with a verified quote (ordered by its
    quote's cross-encoder score) above every question without one (ordered by ``fallback``).

    Why: a reader that writes NONE for more than one answerable question in ten cannot reach answerable
    keep >= 0.90 on its own: the threshold falls among the tied NONE scores and every question passes.
    Ordered this way the threshold falls among the NONE questions instead, where the zero-shot sentence
    score decides; nothing is fitted, and order is all a threshold sees."""
    quoted = probe > NO_QUOTE
    if not quoted.any():
        return fallback.astype(float)
    finite = fallback[np.isfinite(fallback)]
    top = float(finite.max()) if finite.size else 0.0
    return np.where(quoted, probe - probe[quoted].min() + top + 1.0, fallback)


def sampled(kinds: Sequence[str], n: int, seed: int = SEED) -> np.ndarray:
    """Indices of a seeded sample of about ``n`` questions, each kind (answerable: "") in its share and
    at least two of each; every question when ``n`` is 0 or covers them all."""
    if n <= 0 or n >= len(kinds):
        return np.arange(len(kinds))
    rng = random.Random(seed)
    chosen: list[int] = []
    for kind in dict.fromkeys(kinds):
        members = [i for i, k in enumerate(kinds) if k == kind]
        share = max(2, round(n * len(members) / len(kinds)))
        chosen += rng.sample(members, min(share, len(members)))
    return np.array(sorted(chosen))


def compute(p: Params) -> dict[str, Any]:
    started = time.perf_counter()
    load = os.getloadavg()  # the cost below is read beside the machine's load when the study began
    store = Path(p.store)
    run_id = study_run(p, **GATED)
    data = load_run(store, run_id)
    refusal_all = data.pools.expect_refusal
    kinds_all = [str(k) if r else "" for k, r in zip(data.pools.refusal_kinds, refusal_all, strict=True)]
    read = [i for i, k in enumerate(kinds_all) if k not in p.skip_kind]
    idx = np.array(read)[sampled([kinds_all[i] for i in read], p.sample)]
    ctx = GatherContext(store, data)
    spec = reader_spec(p.reader)
    questions = [(str(data.pools.ids[i]), data.queries[i], ctx.passages(int(i))[:5]) for i in idx]
    bar = CountBar(f"reader-probe: {spec} quoting", len(questions), not p.no_progress)
    chat: Chat | None = None

    def lazy(prompt: str) -> str:  # the model loads only when a reply is missing
        nonlocal chat
        chat = chat or open_reader(spec)
        return chat(prompt)

    read_started = time.perf_counter()
    answers = read_quotes(store, questions, lazy, answers_key(spec, p.sentences), p.sentences, bar)
    bar.close()
    read_seconds = time.perf_counter() - read_started
    probe, ce_ms = quote_scores(store, [q for _, q, _ in questions], [a["verified"] for a in answers])

    refusal = refusal_all[idx]
    y = (~refusal).astype(int)
    keep_base = np.where(refusal, np.nan, 1.0)  # "recall" = answerable keep
    ne = data.base_nonempty[idx]
    groups = crossval.question_groups([data.pools.tags[i] for i in idx], refusal, data.features.query[idx])
    splits = crossval.repeated_splits(y, groups, p.folds, p.repeats, SEED)
    baseline = {spec_: scores(store, data, spec_)[idx] for _, spec_ in BASELINES}
    checks = (
        (f"reader quote ({spec}) + cross-encoder", f"{READER}{spec}", probe),
        (f"reader quote ({spec}), else zero-shot sentence unit", f"{READER}{spec}+{FALLBACK}",
         quoted_first(probe, baseline[FALLBACK])),
        *((name, spec_, baseline[spec_]) for name, spec_ in BASELINES),
    )  # fmt: skip
    table = [fixed_row(name, spec_, score, y, groups, keep_base, ne, splits) for name, spec_, score in checks]
    # the reader's own decision (a verified quote passes): nothing to choose, so nothing held out
    alone = crossval.decision_figures(probe > NO_QUOTE, None, keep_base, ne, refusal, None)
    own_keep = alone.recall_at_recall[0]
    at_own_keep = [  # the reader where it stands alone, against the zero-shot check held to the same keep
        {"name": checks[0][0], "spec": checks[0][1], "figures": alone, "oof": probe, "chosen": []},
        fixed_row(*BASELINES[-1], baseline[FALLBACK], y, groups, keep_base, ne, splits, own_keep),
    ]
    return {
        "run": run_id,
        "data": data,
        "index": idx,
        "kinds": [kinds_all[i] for i in idx],
        "reader": spec,
        "sentences": p.sentences,
        "answers": answers,
        "rows": table,
        "atOwnKeep": at_own_keep,
        "splits": splits,
        "seconds": {"total": time.perf_counter() - started, "read": read_seconds, "ceMsPerQuote": ce_ms},
        "loadAtStart": list(load),
    }


def result(raw: dict[str, Any]) -> Result:
    """The study's value: ``reader_probe.json`` and its page; nothing written here."""
    return STUDY.documented(raw, summary(raw))


STUDY = Study(
    name="reader-probe",
    title="Reader probe: quote the answering sentence or say NONE, per refusal kind, out of fold",
    run=compute,
    rows=rows,
    pages=pages,
    out_dir="results/sufficiency/reader_probe",  # a sufficiency family: its page is docs/sufficiency.md
    command=argv("study reader-probe --skip-kind off-topic"),  # off-topic is the topicality gate's question
    published=False,  # hours of a chat model per corpus: its own command, under the heavy lock
    stage=62,
    also=(
        on_second_corpus(
            "reader-probe",
            "results/sufficiency/reader_probe",
            ("reader_probe.md",),
            "Reader probe",
            "--skip-kind off-topic",
        ),
    ),
)
