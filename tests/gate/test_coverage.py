"""Lexical coverage features on planted questions, passages and indexes."""

from __future__ import annotations

import numpy as np
import pytest

from nomad_lab.gate.coverage import NAMES, Vocabulary, coverage, coverage_matrix, stem, terms

INDEX = [
    "Apply a tourniquet two to three inches above the wound, never over a joint.",
    "A tourniquet stops arterial bleeding from a limb.",
    "Boil water for one minute to make it safe to drink.",
    "Store water in clean food-grade containers away from sunlight.",
]


def test_terms_drop_stop_words_and_share_a_stem() -> None:
    assert terms("Where do I put the tourniquets?") == ("put", "tourniquet")
    assert stem("batteries") == "battery" and stem("boiling") == "boil" and stem("gas") == "gas"


def test_a_question_the_passages_answer_misses_nothing() -> None:
    vocabulary = Vocabulary.of(INDEX)
    row = dict(zip(NAMES, coverage("Where do I apply a tourniquet?", INDEX[:2], vocabulary), strict=True))
    assert row["missing_idf_share"] == 0.0 and row["missing_idf_max"] == 0.0 and row["unseen_share"] == 0.0


def test_a_fictional_attribute_is_missing_and_weighs_by_its_rarity() -> None:
    vocabulary = Vocabulary.of(INDEX)
    real = coverage("What colour is the tourniquet strap?", INDEX[:2], vocabulary)
    row = dict(zip(NAMES, real, strict=True))
    assert row["unseen_count"] == 2.0 and row["unseen_share"] == pytest.approx(2 / 3)  # colour, strap
    assert row["missing_idf_max"] == pytest.approx(vocabulary.idf("colour"))
    # a word the index holds but the passages lack is missing, yet less specific than an unseen word
    partly = dict(zip(NAMES, coverage("Tourniquet water?", INDEX[:2], vocabulary), strict=True))
    assert 0 < partly["missing_idf_share"] < 1 and partly["unseen_share"] == 0.0
    assert vocabulary.idf("water") < vocabulary.idf("colour")


def test_an_empty_question_and_an_empty_pool() -> None:
    vocabulary = Vocabulary.of(INDEX)
    assert coverage("the and of", INDEX, vocabulary) == [0.0] * len(NAMES)
    row = dict(zip(NAMES, coverage("boil water", [], vocabulary), strict=True))
    assert row["missing_idf_share"] == 1.0
    matrix = coverage_matrix(["boil water", "tourniquet"], [[INDEX[2]], [INDEX[0]]], vocabulary)
    assert matrix.shape == (2, len(NAMES)) and np.all(matrix[:, 0] == 0.0)


def test_an_entity_the_index_never_holds_stands_out_from_borrowed_vocabulary() -> None:
    vocabulary = Vocabulary.of(INDEX)
    other = dict(zip(NAMES, coverage("How do I boil water in Rust?", INDEX[2:3], vocabulary), strict=True))
    assert other["unseen_entity_share"] == 1.0 and other["unseen_share"] == pytest.approx(1 / 3)
    named = dict(zip(NAMES, coverage("Does a Tourniquet stop bleeding?", INDEX[:2], vocabulary), strict=True))
    assert named["unseen_entity_share"] == 0.0
    plain = dict(zip(NAMES, coverage("how do i boil water", INDEX[2:3], vocabulary), strict=True))
    assert plain["unseen_entity_share"] == 0.0  # no entity: nothing to be unseen


def test_a_name_the_library_mentions_elsewhere_but_the_passages_do_not_weighs_by_its_rarity() -> None:
    vocabulary = Vocabulary.of([*INDEX, "Boiling is slower in Denver than at sea level."])
    question = "How long do I boil water in Denver?"
    row = dict(zip(NAMES, coverage(question, INDEX[2:3], vocabulary), strict=True))
    assert row["unseen_entity_share"] == 0.0  # the index names Denver...
    assert row["entity_missing_idf_max"] == pytest.approx(vocabulary.idf("denver"))  # ...not its passages
    named = coverage(question, [*INDEX[2:3], "Denver sits high."], vocabulary)
    assert dict(zip(NAMES, named, strict=True))["entity_missing_idf_max"] == 0.0
