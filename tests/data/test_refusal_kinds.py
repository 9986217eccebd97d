"""Refusal kinds: one table from tags to a kind, checked at load with file:line, on every shipped suite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nomad_lab.data.golden_suites import GoldenError, available_suites, load_suite_file, load_suites
from nomad_lab.data.refusal_kinds import (
    KIND_DEFINITIONS,
    NEAR_DOMAIN,
    OFF_TOPIC,
    REFUSAL_KINDS,
    UNANSWERABLE,
    KindError,
    kind_of,
    tag_kind,
)
from nomad_lab.gate.pools import pools_from_records
from tests.support.paths import CORPUS, ROOT


def test_a_specific_kind_outranks_the_generic_off_topic_tag() -> None:
    assert kind_of(["off-topic", "near-domain"]) == NEAR_DOMAIN
    assert kind_of(["off-topic", "adversarial/fictional"]) == UNANSWERABLE
    assert kind_of(["adversarial", "fictional"]) == UNANSWERABLE
    assert kind_of(["out-of-corpus", "acronym"]) == OFF_TOPIC
    assert kind_of(["off-topic", "general-knowledge"]) == OFF_TOPIC


def test_tags_naming_no_kind_count_as_off_topic_and_two_specific_kinds_are_refused() -> None:
    assert tag_kind(["numeric"]) is None and kind_of(["numeric"]) == OFF_TOPIC and kind_of([]) == OFF_TOPIC
    with pytest.raises(KindError, match="unanswerable and near-domain"):
        kind_of(["adversarial", "near-domain"])
    assert kind_of(["adversarial", "near-domain"], NEAR_DOMAIN) == NEAR_DOMAIN  # said explicitly: taken
    with pytest.raises(KindError, match="one of off-topic, unanswerable, near-domain"):
        kind_of([], "unknowable")
    assert set(KIND_DEFINITIONS) == set(REFUSAL_KINDS)


def _line(**fields) -> str:
    base = {"id": "q", "query": "What is it?", "expectRefusal": True, "tags": ["off-topic"]}
    return json.dumps({**base, **fields})


def test_the_loader_checks_refusal_kind_and_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "suite.jsonl"
    path.write_text(
        "// a comment\n"
        + _line(id="a", refusalKind="unanswerable")
        + "\n"
        + _line(id="b", refusalKind="maybe")
        + "\n"
        + _line(id="c", expectRefusal=False, relevantDocIds=["doc"], refusalKind="off-topic")
        + "\n"
        + _line(id="d", tags=["fictional", "near-domain"])
        + "\n"
    )
    with pytest.raises(GoldenError) as caught:
        load_suite_file(path)
    errors = caught.value.errors
    assert len(errors) == 3
    assert errors[0].startswith(f"{path}:3: field 'refusalKind' must be one of")
    assert errors[1].startswith(f"{path}:4: field 'refusalKind' is only for refusals")
    assert errors[2].startswith(f"{path}:5: field 'tags': tags name two refusal kinds")


def test_a_suite_in_the_reference_format_loads_unchanged_and_says_how_many_were_counted_off_topic(
    tmp_path: Path, capsys
) -> None:
    path = tmp_path / "refs.jsonl"
    path.write_text(_line(id="a", tags=["numeric"]) + "\n" + _line(id="b", tags=["adversarial"]) + "\n")
    goldens = load_suite_file(path)
    assert [g.refusal_kind for g in goldens] == [OFF_TOPIC, UNANSWERABLE]
    assert not any(g.kind_given for g in goldens)
    assert f"{path}: 1 refusal(s) name no refusal kind" in capsys.readouterr().err


def test_every_refusal_of_every_shipped_suite_has_exactly_one_kind() -> None:
    directories = [ROOT / "datasets" / "goldens", *sorted((ROOT / "datasets" / "corpora").glob("*/goldens"))]
    seen = 0
    for directory in directories:
        for suite in available_suites(directory):
            for golden in load_suites(directory, suite, drafts=True):
                if golden.expect_refusal:
                    assert golden.refusal_kind in REFUSAL_KINDS, golden.location
                    seen += 1
                else:
                    assert golden.refusal_kind is None, golden.location
    bank = load_suite_file(ROOT / "datasets" / "out_of_scope" / "bank.jsonl")
    assert seen and all(g.refusal_kind in REFUSAL_KINDS for g in bank)


def test_pools_carry_the_kind_a_dump_names_or_derive_it_from_tags() -> None:
    records = [
        {"id": "a", "tags": ["x"], "expectRefusal": False, "relevantDocIds": ["d"], "candidates": []},
        {"id": "b", "tags": ["near-domain"], "expectRefusal": True, "relevantDocIds": [], "candidates": []},
        {
            "id": "c",
            "tags": ["adversarial"],
            "expectRefusal": True,
            "refusalKind": "off-topic",
            "relevantDocIds": [],
            "candidates": [],
        },
    ]
    pools = pools_from_records(records)
    assert pools.kinds == ["", NEAR_DOMAIN, OFF_TOPIC]
    assert pools.subset(pools.expect_refusal).kinds == [NEAR_DOMAIN, OFF_TOPIC]
    assert list(pools.of_kind(OFF_TOPIC)) == [False, False, True]


def test_drafts_and_labels_write_the_kind_they_mean(tmp_path: Path) -> None:
    from nomad_lab.data.drafts import DraftOptions, draft_goldens, read_corpus, write_drafts
    from nomad_lab.data.labels import REFUSAL, decide

    corpus = read_corpus(CORPUS)
    path = write_drafts(tmp_path, draft_goldens(corpus, (), DraftOptions(seed=3, per_doc=1)), corpus)
    drafts = load_suite_file(path, drafts=True)
    refusals = [d for d in drafts if d.expect_refusal]
    assert refusals and all(d.kind_given and d.refusal_kind in REFUSAL_KINDS for d in refusals)
    line = decide(refusals[0], REFUSAL, refusal_type="unanswerable", who="t").golden_line()
    assert line["refusalKind"] == UNANSWERABLE
    labelled = tmp_path / "labelled.jsonl"
    labelled.write_text(json.dumps(line) + "\n")
    assert load_suite_file(labelled)[0].refusal_kind == UNANSWERABLE
