"""The out-of-scope bank: it parses, is big and balanced, and is disjoint from every golden suite.

The disjointness checker is tested on planted duplicates first, so a bank test that passes means the bank
really has no near-copy of a golden, not that the checker is blind.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from nomad_lab.core.workspace import DATASETS_DIR, DEFAULT_BANK_PATH
from nomad_lab.data.bank import (
    bank_category,
    drop_near_duplicates,
    load_bank,
    near_duplicates,
    normalized_query,
)
from nomad_lab.data.golden_suites import Golden, GoldenError, load_suite_file, load_suites
from tests.support.paths import FIXTURES

MIN_QUESTIONS, MIN_PER_CATEGORY = 300, 30


def all_goldens() -> list[Golden]:
    """Every golden the project ships: the datasets' suites and the tests' fixture suites."""
    files = sorted((DATASETS_DIR / "goldens").glob("*.jsonl")) + sorted(FIXTURES.glob("*/goldens/*.jsonl"))
    assert len(files) >= 6, files
    return [golden for path in files for golden in load_suite_file(path)]


def golden(query: str, ident: str = "x") -> Golden:
    return Golden(id=ident, query=query, suite="t", file="t.jsonl", line=1, expect_refusal=True)


def write(path: Path, *rows: object) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows), "utf-8")
    return path


def row(ident: str, query: str, category: str = "chit-chat", **extra: object) -> dict[str, object]:
    return {"id": ident, "query": query, "expectRefusal": True, "tags": ["off-topic", category], **extra}


def test_the_bank_parses_is_large_and_balanced() -> None:
    bank = load_bank()
    assert len(bank) >= MIN_QUESTIONS
    assert len({g.id for g in bank}) == len(bank)
    assert all(g.expect_refusal and not g.relevant_doc_ids and g.suite == "bank" for g in bank)
    counts = Counter(bank_category(g) for g in bank)
    assert len(counts) == 8, counts
    assert min(counts.values()) >= MIN_PER_CATEGORY, counts
    for g in bank:
        assert re.fullmatch(rf"oos-{re.escape(bank_category(g))}-\d{{3}}", g.id), g.id
    assert DEFAULT_BANK_PATH.read_text("utf-8").startswith("//")


def test_the_bank_is_disjoint_from_every_golden_and_from_itself() -> None:
    bank = load_bank()
    clashes = near_duplicates(bank, all_goldens())
    assert not clashes, [f"{a.id} ~ {b.id} ({b.location}): {why}" for a, b, why in clashes]
    within = near_duplicates(bank)
    assert not within, [f"{a.id} ~ {b.id}: {why}" for a, b, why in within]


def test_the_checker_finds_planted_duplicates_and_nothing_else() -> None:
    goldens = [
        golden("What is the boiling point of water at sea level?", "g1"),
        golden("🦆🌮🚀", "g2"),
        golden("Write a short haiku about a lighthouse in winter fog", "g3"),
    ]
    same_text = golden("  what is the BOILING point of water at sea level ", "b1")
    one_word_changed = golden("Write a short haiku about a lighthouse in summer fog", "b2")
    emoji = golden("🦆🌮🚀", "b3")
    unrelated = golden("How do I reverse a linked list in C?", "b4")
    near_but_not = golden("What is the boiling point of olive oil?", "b5")
    clashes = near_duplicates([same_text, one_word_changed, emoji, unrelated, near_but_not], goldens)
    assert [(a.id, b.id, why.split()[0]) for a, b, why in clashes] == [
        ("b1", "g1", "same"),
        ("b2", "g3", "word"),
        ("b3", "g2", "same"),
    ]
    assert clashes[1][2] == "word Jaccard 0.80"  # 8 shared words of 10
    kept = drop_near_duplicates([same_text, one_word_changed, emoji, unrelated, near_but_not], goldens)
    assert [g.id for g in kept] == ["b4", "b5"]
    assert near_duplicates([same_text, unrelated, golden("What is the boiling point of water at sea level?")])


def test_the_checker_on_the_real_bank_catches_a_planted_golden() -> None:
    bank = load_bank()
    planted = golden(bank[17].query.upper() + " ?!", "planted")
    assert [(a.id, why) for a, _b, why in near_duplicates(bank, [planted])] == [
        (bank[17].id, "same normalized text")
    ]


def test_normalization_keeps_symbol_only_text() -> None:
    assert normalized_query("  Hello,   WORLD!! ") == "hello world"
    assert normalized_query("¯\\_(ツ)_/¯") != normalized_query("???")
    assert normalized_query("?? ") == normalized_query("??")


def test_categories_filter_and_unknown_category(tmp_path: Path) -> None:
    path = write(tmp_path / "b.jsonl", "// bank", row("a", "hey"), row("b", "asdf", "gibberish"))
    assert [g.id for g in load_bank(path, categories=["gibberish"])] == ["b"]
    with pytest.raises(GoldenError, match=r"b\.jsonl: unknown bank category 'poetry' \(available: chit-chat"):
        load_bank(path, categories=["poetry"])


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{oops", r"b\.jsonl:2: invalid JSON"),
        (row("a", "hi", expectRefusal=False, relevantDocIds=["d"]), r"b\.jsonl:2: bank question 'a' has"),
        (
            {"id": "a", "query": "hi", "expectRefusal": True, "tags": ["chit-chat"]},
            r"b\.jsonl:2: field 'tags'",
        ),
        (
            {"id": "a", "query": "hi", "expectRefusal": True},
            r"b\.jsonl:2: field 'tags' must hold 'off-topic'",
        ),
        (row("a", "hi") | {"tags": ["off-topic", "x", "y"]}, r"b\.jsonl:2: field 'tags' must hold"),
    ],
)
def test_bad_bank_lines_are_one_line_errors(tmp_path: Path, line: object, message: str) -> None:
    path = write(tmp_path / "b.jsonl", "// bank", line)
    with pytest.raises(GoldenError) as info:
        load_bank(path)
    assert len(info.value.errors) == 1 and "\n" not in info.value.errors[0]
    assert re.search(message, info.value.errors[0]), info.value.errors


def test_a_missing_bank_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(GoldenError, match=r"nope\.jsonl: cannot read"):
        load_bank(tmp_path / "nope.jsonl")


def test_suite_name_bank_resolves_to_the_shared_bank_unless_the_directory_has_one(tmp_path: Path) -> None:
    write(
        tmp_path / "core.jsonl", {"id": "g1", "query": "How long do I boil water?", "relevantDocIds": ["w"]}
    )
    loaded = load_suites(tmp_path, "core,bank")
    assert [g.suite for g in loaded[:2]] == ["core", "bank"] and len(loaded) == len(load_bank()) + 1
    assert [g.id for g in load_suites(tmp_path, "*")] == ["g1"]  # * is the directory's own suites
    with pytest.raises(GoldenError, match=r"unknown suite 'bnak' \(available: core; also bank\)"):
        load_suites(tmp_path, "bnak")
    write(tmp_path / "bank.jsonl", row("own-1", "my own negative"))
    assert [g.id for g in load_suites(tmp_path, "bank")] == ["own-1"]
