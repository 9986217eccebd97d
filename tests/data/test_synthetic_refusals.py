"""Synthetic unanswerables on planted questions: what is swapped, from where, when a passage still answers."""

import re
from types import SimpleNamespace

from nomad_lab.data.synthetic_refusals import (
    Synthetic,
    answers_swap,
    entity_spans,
    lacks_answer,
    swap_questions,
)


def q(gid: str, text: str, refusal: bool = False) -> SimpleNamespace:
    return SimpleNamespace(id=gid, query=text, expect_refusal=refusal)


PLANTED = [
    q("a", "What is the capacity of the Ridgeline R4 power station?"),
    q("b", "How long should I run the Harbor Point generator before refuelling?"),
    q("c", "Does the Kestrel K9 filter remove viruses?"),
    q("d", "What does CPR stand for?"),
    q("r", "What is the warranty of the Zephyr Z2?", refusal=True),
]


def test_entity_spans_find_names_acronyms_and_model_numbers_not_sentence_starts():
    assert entity_spans("Does the Kestrel K9 filter remove viruses?") == ["Kestrel K9"]
    assert entity_spans("What does CPR stand for?") == ["CPR"]
    assert entity_spans("How long should I boil water?") == []
    assert entity_spans("Harbor Point shelter opens when?") == ["Harbor Point"]


def test_swaps_are_deterministic_and_read_only_the_given_answerable_questions():
    first = swap_questions(PLANTED, seed=3)
    assert first == swap_questions(PLANTED, seed=3)
    assert {s.source_id for s in first} <= {"a", "b", "c", "d"}  # the refusal makes none
    names_given = {n for g in PLANTED if not g.expect_refusal for n in entity_spans(g.query)}
    for s in first:
        assert s.text != next(g.query for g in PLANTED if g.id == s.source_id)
        if s.kind == "entity":
            assert s.new in names_given and s.new != s.old and "Zephyr" not in s.text
    # only questions passed in are read: with "c" left out, no swap uses its name
    without_c = swap_questions([g for g in PLANTED if g.id != "c"], seed=3)
    assert all("Kestrel" not in s.text for s in without_c)


def test_attribute_swap_replaces_the_asked_attribute_or_cue():
    swaps = {(s.source_id, s.kind): s for s in swap_questions(PLANTED, seed=5)}
    capacity = swaps[("a", "attribute")]
    assert capacity.old == "capacity" and capacity.new != "capacity"
    assert capacity.text == PLANTED[0].query.replace("capacity", capacity.new)
    cue = swaps[("b", "attribute")]
    assert cue.old == "how long" and cue.text.lower().startswith(cue.new)


def test_a_passage_that_names_the_swapped_in_term_may_still_answer():
    swap = Synthetic("a", "What is the weight of the Ridgeline R4?", "attribute", "capacity", "weight")
    assert answers_swap(swap, "Its weight is 12 kg and its capacity 1 kWh.")
    assert not answers_swap(swap, "The Ridgeline R4 stores 1,024 Wh.")
    often = Synthetic("b", "How often should I run it?", "attribute", "how long", "how often")
    assert answers_swap(often, "Run it once a month.")
    assert not answers_swap(often, "Run it for 30 minutes.")


def test_a_retrieved_passage_lacks_the_answer_unless_relevant_or_holding_a_required_pattern():
    must = (re.compile(r"\b18 ?%", re.I),)
    assert lacks_answer("Burns are cooled with water.", "burns", ("first-aid",), must)
    assert not lacks_answer("One leg is 18% of the body.", "other", ("first-aid",), must)
    assert not lacks_answer("anything", "first-aid", ("first-aid",), must)
