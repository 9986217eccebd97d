"""Training pairs of the answerability gate on planted questions: labels, sources, and no held-out reads."""

import re

import numpy as np

from nomad_lab.studies.gating import answer_pairs as ap

GOLD = "Cool the burn under running water for 20 minutes. The Ridgeline R4 stores 1 kWh."


def question(gid, query, refusal=False, top=(), gold=(), must=()):
    return ap.Question(
        gid,
        query,
        refusal,
        (),
        () if refusal else ("doc",),
        tuple(re.compile(m, re.I) for m in must),
        list(top),
        list(gold),
    )


QUESTIONS = [
    question(
        "a",
        "How long should I cool a burn?",
        top=[("doc", GOLD), ("x", "Radios use antennas.")],
        gold=[GOLD],
        must=["20 minutes"],
    ),
    question(
        "b", "What is the capacity of the Ridgeline R4?", top=[("doc", GOLD)], gold=[GOLD], must=["1 kWh"]
    ),
    question(
        "c",
        "What is the warranty of the Zephyr Z2?",
        refusal=True,
        top=[("x", "Radios use antennas."), ("doc", GOLD)],
    ),
    question(
        "held",
        "Does the Kestrel K9 remove viruses?",
        top=[("doc", "Kestrel K9 removes bacteria.")],
        gold=["Kestrel K9 removes bacteria."],
        must=["virus"],
    ),
]
ZERO = {(q.query, w): float(len(w)) for q in QUESTIONS for _, w in q.top} | {
    (q.query, w): 1.0 for q in QUESTIONS for w in q.gold
}


def test_examples_read_only_training_questions_and_label_by_source():
    ex = ap.training_examples(QUESTIONS, np.array([0, 1, 2]), [], ZERO, seed=1)
    texts = " ".join(q for q, _ in ex.pairs)
    assert "Kestrel" not in texts  # the held-out question is never read, not even for a swap name
    kinds = dict(zip(ex.pairs, zip(ex.labels, ex.kinds, strict=True), strict=True))
    assert kinds[("How long should I cool a burn?", GOLD)] == (1, "gold")
    assert kinds[("How long should I cool a burn?", "Radios use antennas.")] == (0, "re-paired")
    assert kinds[("What is the warranty of the Zephyr Z2?", GOLD)] == (0, "refusal")
    swapped = [(q, w) for (q, w), (_, k) in kinds.items() if k.startswith("swap")]
    assert swapped and all(ex.labels[ex.pairs.index(p)] == 0 for p in swapped)
    for q, _ in swapped:  # a swap is a new question text
        assert q not in {x.query for x in QUESTIONS}


def test_positives_need_a_required_pattern_else_the_best_gold_window():
    assert ap.positive_windows(QUESTIONS[0], ZERO) == [GOLD]
    assert ap.positive_windows(QUESTIONS[3], ZERO) == [
        "Kestrel K9 removes bacteria."
    ]  # no match: best window
    assert ap.positive_windows(QUESTIONS[2], ZERO) == []


def test_a_question_scores_its_best_window_and_nothing_when_nothing_is_retrieved():
    logits = {(q.query, w): i for i, (q, w) in enumerate((q, w) for q in QUESTIONS for _, w in q.top)}
    empty = question("e", "hello", refusal=True)
    best = ap.best_per_question([QUESTIONS[0], empty], logits)
    assert best[0] == 1 and np.isnan(best[1])
