"""Training pairs of the sufficiency check on planted questions and a planted corpus: labels by source,
swaps paired with the answering unit as negatives, and no held-out question read."""

import re

import numpy as np

from nomad_lab.studies.gating import sufficiency_pairs as sp
from nomad_lab.studies.gating.sufficiency import STUDY

ANSWER = "Burns: Cool the burn under running water for 20 minutes."
OTHER = "Radios: Radios use antennas to reach the repeater."


def question(gid, query, refusal=False, units=(), answers=(), must=(), kind=""):
    return sp.UnitQuestion(
        gid,
        query,
        refusal,
        kind,
        () if refusal else ("doc",),
        tuple(re.compile(m, re.I) for m in must),
        list(units),
        list(answers),
    )


QUESTIONS = [
    question(
        "a",
        "How long should I cool a burn on the Ridgeline R4?",
        units=[("doc", ANSWER), ("x", OTHER)],
        answers=[ANSWER],
        must=["20 minutes"],
    ),
    question(
        "c", "What is the warranty of the Zephyr Z2?", refusal=True, kind="unanswerable", units=[("x", OTHER)]
    ),
    question(
        "held",
        "Does the Kestrel K9 remove viruses?",
        units=[("doc", "Kestrel K9 removes bacteria.")],
        answers=["Kestrel K9 removes bacteria."],
        must=["virus"],
    ),
]
ZERO = {(q.query, u): float(len(u)) for q in QUESTIONS for _, u in q.units}


def test_golden_examples_read_only_training_questions_and_label_by_source():
    ex = sp.golden_examples(QUESTIONS, np.array([0, 1]), ZERO, seed=1)
    assert "Kestrel" not in " ".join(q for q, _ in ex.pairs)
    labelled = dict(zip(ex.pairs, zip(ex.labels, ex.kinds, strict=True), strict=True))
    assert labelled[(QUESTIONS[0].query, ANSWER)] == (1, "gold")
    assert labelled[(QUESTIONS[0].query, OTHER)] == (0, "re-paired")
    assert labelled[(QUESTIONS[1].query, OTHER)] == (0, "refusal")
    swaps = [
        (q, label) for (q, u), (label, kind) in labelled.items() if kind.startswith("swap") and u == ANSWER
    ]
    assert swaps and all(label == 0 and q != QUESTIONS[0].query for q, label in swaps)


def test_answer_read_needs_a_pattern_in_a_relevant_documents_unit():
    assert QUESTIONS[0].answer_read and not QUESTIONS[2].answer_read


def test_pseudo_questions_pair_their_source_unit_against_nearby_units_of_the_same_document(tmp_path):
    (tmp_path / "filter.md").write_text(
        "# Kestrel K-9 filter\n\n"
        "The pre-filter cloth should be rinsed after every trip. "
        "Store the filter dry in its bag between trips. "
        "Rated capacity: 4,500 litres per cartridge, whichever comes first. "
        "A gravity filter is a filter that needs no pump.\n"
    )
    pseudo = sp.pseudo_questions(tmp_path, seed=3)
    assert pseudo and all(p.source not in p.others for p in pseudo)
    by_query = {p.query: p for p in pseudo}
    capacity = next(p for q, p in by_query.items() if "how many litres" in q)
    assert "4,500 litres" in capacity.source and all("4,500" not in o for o in capacity.others)
    ex = sp.pseudo_examples(pseudo, seed=3)
    assert ex.labels[ex.pairs.index((capacity.query, capacity.source))] == 1
    assert all(
        label == 0
        for (q, u), label in zip(ex.pairs, ex.labels, strict=True)
        if q == capacity.query and u in capacity.others
    )


def test_the_study_is_opt_in():
    assert STUDY.name == "sufficiency" and not STUDY.published
