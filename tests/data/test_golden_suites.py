"""Golden loader and validator (SPEC §8.1): every error names <file>:<line>; all are reported together."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from nomad_lab.data.golden_lines import js_truthy
from nomad_lab.data.golden_suites import (
    GATING_SUITES,
    GoldenError,
    load_suite_file,
    load_suites,
    parse_suite_spec,
)
from tests.support.paths import RETRIEVAL_FIXTURES as FIXTURES

DOCS = {"water-boiling", "water-bleach", "first-aid-burns"}


def write(tmp_path: Path, name: str, *lines: object) -> Path:
    path = tmp_path / name
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines), "utf-8")
    return path


def errors_of(path: Path, doc_ids: set[str] | None = DOCS) -> list[str]:
    with pytest.raises(GoldenError) as info:
        load_suite_file(path, doc_ids)
    return info.value.errors


GOOD = {"id": "g1", "query": "How long do I boil water?", "relevantDocIds": ["water-boiling"]}


def test_loads_fields_skips_comments_and_blank_lines(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "core.jsonl",
        "// a comment",
        "",
        "   ",
        {
            **GOOD,
            "turns": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
            "mustInclude": ["one MINUTE"],
            "mustNotInclude": ["ten minutes"],
            "tags": ["single-hop"],
        },
        "  "
        + json.dumps({"id": "r1", "query": "What is the capital of France?", "expectRefusal": True})
        + "  ",
    )
    first, refusal = load_suite_file(path, DOCS)
    assert (first.id, first.suite, first.line, first.location) == ("g1", "core", 4, f"{path}:4")
    assert [t.role for t in first.turns] == ["user", "assistant"]
    assert first.must_include[0].search("boil for One Minute")  # compiled case-insensitively
    assert first.must_include[0].flags & re.IGNORECASE
    assert first.tags == ("single-hop",) and not first.expect_refusal
    assert refusal.line == 5 and refusal.expect_refusal and refusal.relevant_doc_ids == ()
    assert refusal.turns == () and refusal.must_include == () and refusal.tags == ()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "invalid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ({"query": "q", "relevantDocIds": ["water-boiling"]}, "field 'id' is required"),
        ({"id": "  ", "query": "q", "relevantDocIds": ["water-boiling"]}, "field 'id' is required"),
        ({"id": 7, "query": "q", "relevantDocIds": ["water-boiling"]}, "field 'id' is required"),
        ({"id": "a", "relevantDocIds": ["water-boiling"]}, "field 'query' is required"),
        ({"id": "a", "query": " \t ", "relevantDocIds": ["water-boiling"]}, "non-empty after trimming"),
        ({**GOOD, "turns": "hi"}, "field 'turns' must be an array"),
        ({**GOOD, "turns": [{"role": "system", "content": "x"}]}, "turns[0].role"),
        ({**GOOD, "turns": [{"role": "user", "content": 3}]}, "turns[0].content"),
        ({**GOOD, "turns": ["hi"]}, "turns[0]' must be an object"),
        ({**GOOD, "relevantDocIds": "water-boiling"}, "field 'relevantDocIds' must be an array of strings"),
        ({**GOOD, "tags": [1]}, "field 'tags' must be an array of strings"),
        ({**GOOD, "mustInclude": ["(unclosed"]}, "field 'mustInclude[0]': invalid regex"),
        ({**GOOD, "mustNotInclude": ["ok", "a{2,1}"]}, "field 'mustNotInclude[1]': invalid regex"),
        ({**GOOD, "expectRefusal": True}, "expectRefusal is true but relevantDocIds is not empty"),
        ({"id": "a", "query": "q"}, "can never be scored"),
        ({"id": "a", "query": "q", "relevantDocIds": []}, "can never be scored"),
        ({**GOOD, "relevantDocIds": ["no-such-doc"]}, "'no-such-doc' is not a corpus document"),
        ({**GOOD, "relevantDocIds": ["../secrets"]}, "contains a path separator"),
        ({**GOOD, "relevantDocIds": ["sub\\doc"]}, "contains a path separator"),
        ({**GOOD, "relevantDocIds": [".."]}, "is a relative path component"),
        ({**GOOD, "relevantDocIds": [""]}, "is empty"),
    ],
)
def test_each_error_names_file_and_line(tmp_path: Path, line: object, message: str) -> None:
    path = write(tmp_path, "core.jsonl", "// header", GOOD | {"id": "ok"}, line)
    errors = errors_of(path)
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"{path}:3: "), errors[0]
    assert message in errors[0]


def test_all_errors_of_a_file_are_reported_together(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "core.jsonl",
        {"id": "a", "query": "", "relevantDocIds": ["nope"], "mustInclude": ["("]},
        "{broken",
        GOOD,
    )
    errors = errors_of(path)
    assert [e.split(": ", 1)[0] for e in errors] == [f"{path}:1"] * 3 + [f"{path}:2"]


def test_duplicate_id_in_one_file_points_at_both_lines(tmp_path: Path) -> None:
    path = write(tmp_path, "core.jsonl", GOOD, "", GOOD)
    assert errors_of(path) == [f"{path}:3: duplicate id 'g1' (first at {path}:1)"]


def test_ids_are_unique_across_loaded_suites(tmp_path: Path) -> None:
    write(tmp_path, "core.jsonl", GOOD)
    other = write(tmp_path, "off_topic.jsonl", "// x", GOOD | {"query": "again"})
    with pytest.raises(GoldenError) as info:
        load_suites(tmp_path, "core,off_topic", DOCS)
    assert info.value.errors == [f"{other}:2: duplicate id 'g1' (first at {tmp_path / 'core.jsonl'}:1)"]
    assert len(load_suites(tmp_path, "off_topic", DOCS)) == 1  # alone it is fine


def test_a_file_with_zero_goldens_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "empty.jsonl", "// only comments", "", "// here")
    errors = errors_of(path)
    assert len(errors) == 1 and errors[0].startswith(f"{path}:1: no goldens")


def test_unknown_doc_ids_are_only_checked_against_a_corpus(tmp_path: Path) -> None:
    path = write(tmp_path, "core.jsonl", GOOD | {"relevantDocIds": ["anything"]})
    assert load_suite_file(path, None)[0].relevant_doc_ids == ("anything",)


def test_expect_refusal_uses_javascript_truthiness() -> None:
    assert [js_truthy(v) for v in (True, 1, "yes", "false", [], {}, 0.5)] == [True] * 7
    assert [js_truthy(v) for v in (False, 0, 0.0, "", None, float("nan"))] == [False] * 6


def test_refusal_truthiness_in_a_file(tmp_path: Path) -> None:
    path = write(
        tmp_path, "s.jsonl", {"id": "a", "query": "q", "expectRefusal": "false"}, GOOD | {"expectRefusal": 0}
    )
    refusal, answerable = load_suite_file(path, DOCS)
    assert refusal.expect_refusal and not answerable.expect_refusal


def test_suite_selection(tmp_path: Path) -> None:
    write(tmp_path, "core.jsonl", GOOD)
    write(tmp_path, "off_topic.jsonl", {"id": "r", "query": "hello", "expectRefusal": True})
    (tmp_path / "notes.txt").write_text("not a suite")
    assert [g.id for g in load_suites(tmp_path, "core", DOCS)] == ["g1"]
    assert [g.id for g in load_suites(tmp_path, "*", DOCS)] == ["g1", "r"]
    assert [g.suite for g in load_suites(tmp_path, " off_topic , core ", DOCS)] == ["off_topic", "core"]
    with pytest.raises(
        GoldenError, match=r"unknown suite 'long_context' \(available: core, off_topic; also bank\)"
    ):
        load_suites(tmp_path, "core,long_context", DOCS)
    with pytest.raises(GoldenError, match="empty suite name"):
        parse_suite_spec("core,", ["core"])
    with pytest.raises(GoldenError, match="goldens directory not found"):
        load_suites(tmp_path / "missing", "core")


def test_the_fixture_suites_are_valid() -> None:
    goldens = load_suites(FIXTURES / "goldens", "*", {p.stem for p in (FIXTURES / "corpus").glob("*.md")})
    assert len(goldens) == 9 and sum(g.expect_refusal for g in goldens) == 3


FOLLOW_UP = {
    **GOOD,
    "query": "And at 2,400 m?",
    "turns": [
        {"role": "user", "content": "How long do I boil water?"},
        {"role": "assistant", "content": "1 min."},
    ],
}


def test_a_follow_up_carries_its_standalone_rewrite_and_retrieval_reads_it_only_when_asked(
    tmp_path: Path,
) -> None:
    rewrite = "How long do I boil water at 2,400 m?"
    (golden,) = load_suite_file(write(tmp_path, "core.jsonl", {**FOLLOW_UP, "standalone": rewrite}), DOCS)
    assert golden.standalone == rewrite
    assert golden.retrieval_text() == "And at 2,400 m?"  # the reference's raw query stays the default
    assert golden.retrieval_text(standalone=True) == rewrite
    (plain,) = load_suite_file(write(tmp_path, "other.jsonl", GOOD), DOCS)
    assert plain.standalone == "" and plain.retrieval_text(standalone=True) == GOOD["query"]


@pytest.mark.parametrize(
    ("golden", "message"),
    [
        ({**FOLLOW_UP, "standalone": "   "}, r"core\.jsonl:1: field 'standalone' must be a non-empty string"),
        ({**FOLLOW_UP, "standalone": ["a"]}, r"core\.jsonl:1: field 'standalone' must be a non-empty string"),
        ({**GOOD, "standalone": "How long?"}, r"core\.jsonl:1: field 'standalone' is only for follow-ups"),
    ],
)
def test_a_bad_standalone_is_refused_naming_file_and_line(tmp_path: Path, golden: dict, message: str) -> None:
    (error,) = errors_of(write(tmp_path, "core.jsonl", golden))
    assert re.match(message, error.split("/")[-1]), error


def test_an_optional_suite_is_kept_when_present_and_dropped_when_not(tmp_path: Path) -> None:
    assert parse_suite_spec("core,off_topic,hard_refusals?", ["core", "hard_refusals", "off_topic"]) == [
        "core",
        "off_topic",
        "hard_refusals",
    ]
    assert parse_suite_spec("core,off_topic,hard_refusals?", ["core", "off_topic"]) == ["core", "off_topic"]
    assert parse_suite_spec("core,bank?", ["core"], also=("bank",)) == ["core", "bank"]
    with pytest.raises(GoldenError, match="unknown suite 'off_topic'"):
        parse_suite_spec("off_topic,hard_refusals?", ["core"])  # only the marked name may be missing
    with pytest.raises(GoldenError, match="no suite of 'hard_refusals\\?' is present"):
        parse_suite_spec("hard_refusals?", ["core"])
    with pytest.raises(GoldenError, match="empty suite name"):
        parse_suite_spec("core,?", ["core"])
    write(tmp_path, "core.jsonl", GOOD)
    write(tmp_path, "off_topic.jsonl", {"id": "r", "query": "hello", "expectRefusal": True})
    assert [g.id for g in load_suites(tmp_path, GATING_SUITES)] == ["g1", "r"]  # no hard_refusals here
