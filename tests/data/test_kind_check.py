"""The unanswerable check: a refusal is unanswerable only if the library names what it asks about."""

from __future__ import annotations

import json
from pathlib import Path

from nomad_lab.cli import main
from nomad_lab.data.golden_suites import load_suite_file
from nomad_lab.data.kind_check import check_kinds, content_words, entity_terms

DOCS = [
    ("zephyr-tent", "# Zephyr Z-4 tent\nThe Zephyr Z-4 sleeps four. Its rain fly is silicone-coated nylon."),
    ("python-json", "# json\nUse json.dumps to serialise a value. Maps of strings keep their order."),
    ("stoves", "Liquid fuel stoves need priming. A canister stove works down to freezing."),
]


def test_entity_terms_read_names_codes_quotes_and_possessives_but_not_quantities() -> None:
    assert entity_terms("How heavy is the Zephyr Z-4's rain fly?") == ["Zephyr Z-4"]
    assert entity_terms("Which zone of Millbrook County's Zone E floods?") == ["Millbrook County", "Zone E"]
    assert entity_terms('What does the proword "wait out" mean?') == ["wait out"]
    assert entity_terms("Does json.dumps sort keys?") == ["json.dumps"]
    assert entity_terms("How long will a 3,500-watt generator run?") == []
    assert entity_terms("Where can I buy one?") == []  # a capital that only starts the question
    assert content_words("How long does a canister stove work?") == ["long", "canister", "stove", "work"]


def _suite(tmp_path: Path, *questions: tuple[str, str, dict]) -> Path:
    path = tmp_path / "hard.jsonl"
    lines = [
        json.dumps({"id": i, "query": q, "expectRefusal": True, "tags": ["adversarial"], **extra})
        for i, q, extra in questions
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_an_entity_the_library_never_names_is_not_unanswerable(tmp_path: Path) -> None:
    path = _suite(
        tmp_path,
        ("named", "What colour is the Zephyr Z-4 tent?", {}),
        ("head-word", "What does the Acme Z-4 cost?", {}),  # its head word Z-4 is named
        ("sibling", "How much does the Zephyr Z-9 weigh?", {}),
        ("module", "Does json.loads keep duplicate keys?", {}),  # its module json is named
        ("subject", "How cold can a canister stove go before it fails?", {}),
        ("nothing", "Which Ford pickup tows the most?", {}),
    )
    findings = {f.golden_id: f for f in check_kinds(load_suite_file(path), DOCS)}
    assert [k for k, f in findings.items() if f.named] == ["named", "head-word", "module", "subject"]
    assert findings["sibling"].suggested_kind == "near-domain"  # its subject (Zephyr tents) is covered
    assert findings["nothing"].suggested_kind == "off-topic"
    assert findings["sibling"].documents == {"Zephyr Z-9": ()}


def test_goldens_kinds_fails_until_a_person_writes_the_kind(tmp_path: Path, capsys) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for doc, text in DOCS:
        (corpus / f"{doc}.md").write_text(text)
    goldens = tmp_path / "goldens"
    goldens.mkdir()
    sibling = ("sibling", "How much does the Zephyr Z-9 weigh?", {})
    _suite(goldens, sibling).rename(goldens / "hard.jsonl")
    argv = ["goldens", "kinds", "--corpus", str(corpus), "--goldens", str(goldens)]
    assert main(argv) == 1
    printed = capsys.readouterr().out
    assert "1 refusals: 1 unanswerable" in printed and "-> suggested near-domain" in printed
    _suite(goldens, (*sibling[:2], {"refusalKind": "near-domain"})).rename(goldens / "hard.jsonl")
    assert main(argv) == 0
    assert "1 refusals: 1 near-domain (1 by refusalKind" in capsys.readouterr().out
