"""The blind rating sheet: no row tells its source (only the key does), each source and kind is sampled
apart, the bank is left out, and the same seed gives the same sheet, file for file."""

from __future__ import annotations

import json
from pathlib import Path

from nomad_lab.cli import main
from nomad_lab.data.draft_sheet import excerpt, rating_sheet
from nomad_lab.data.golden_suites import load_suite_file

TEXTS = {
    "doc-a": "# Pumps\n\nThe pump lifts water from the well. Its motor draws four amps at full speed. "
    "A float switch stops the pump when the tank is full. The filter is cleaned every month.\n",
    "doc-b": "# Valves\n\nA gate valve closes the line fully. A ball valve turns a quarter of a turn. "
    "Check valves let water flow one way only. Each valve is greased once a year.\n",
}
GENERATORS = {
    "template:sentence": False,
    "template:heading": False,
    "fictional-attribute": True,
    "swap:entity": True,
    "llm:embedded:qwen": False,
    "llm-refusal:embedded:qwen": True,
}


def _drafts(tmp_path: Path) -> Path:
    """Three drafts of every generator on each document, and two bank questions (no document)."""
    lines = []
    for generator, refusal in GENERATORS.items():
        for doc in TEXTS:
            for n in range(3):
                lines.append((generator, doc, refusal, f"Question {n} of {doc} number {len(lines)}?"))
    lines += [("bank:cooking", None, True, f"How long do I boil an egg, case {n}?") for n in range(2)]
    path = tmp_path / "goldens" / "drafts.jsonl"
    path.parent.mkdir()
    path.write_text(
        "\n".join(
            json.dumps(
                {
                    "id": f"draft-{i:03d}",
                    "query": query,
                    "relevantDocIds": [] if refusal else [doc],
                    "expectRefusal": refusal,
                    "tags": ["fictional"] if refusal else ["single-hop"],
                    "draft": {"source": generator, "doc": doc, "seed": 1},
                }
            )
            for i, (generator, doc, refusal, query) in enumerate(lines)
        )
        + "\n"
    )
    return path


def test_rows_hide_the_source_and_each_source_and_kind_is_sampled_apart(tmp_path: Path) -> None:
    drafts = load_suite_file(_drafts(tmp_path), TEXTS, drafts=True)
    rows, key = rating_sheet(drafts, TEXTS, per_group=4, seed=7)
    assert len(rows) == 16 == len(key)  # 4 of each (source, kind); the bank's questions left out
    assert [r["id"] for r in rows] == [f"r{n:03d}" for n in range(1, 17)] and set(key) == {
        r["id"] for r in rows
    }
    assert all(set(r) == {"id", "kind", "question", "doc", "title", "excerpt"} for r in rows)
    shown = json.dumps(rows)
    for word in ("template", "model", "llm", "fictional", "swap", "draft-"):
        assert word not in shown, f"the sheet shows {word!r}"
    groups = {(k["source"], k["kind"]) for k in key.values()}
    assert groups == {(s, k) for s in ("template", "model") for k in ("answerable", "refusal")}
    for group in groups:
        assert sum((k["source"], k["kind"]) == group for k in key.values()) == 4
    by_id = {d.id: d for d in drafts}
    for row in rows:
        draft = by_id[key[row["id"]]["draft"]]
        assert row["question"] == draft.query and row["doc"] == draft.draft.doc
        assert key[row["id"]]["generator"] == draft.draft.source
        assert row["kind"] == key[row["id"]]["kind"] == ("refusal" if draft.expect_refusal else "answerable")
    sources = [key[r["id"]]["source"] for r in rows]
    assert sources != sorted(sources) and sources != sorted(sources, reverse=True)  # shuffled together


def test_the_same_seed_gives_the_same_sheet_and_another_seed_another(tmp_path: Path) -> None:
    drafts_file = _drafts(tmp_path)
    drafts = load_suite_file(drafts_file, TEXTS, drafts=True)
    assert rating_sheet(drafts, TEXTS, 4, 7) == rating_sheet(drafts, TEXTS, 4, 7)
    assert rating_sheet(drafts, TEXTS, 4, 7)[0] != rating_sheet(drafts, TEXTS, 4, 8)[0]
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for doc, text in TEXTS.items():
        (corpus / f"{doc}.md").write_text(text)
    written = []
    for out in ("one", "two"):
        argv = ["goldens", "sheet", "--drafts", str(drafts_file), "--corpus", str(corpus)]
        assert main([*argv, "--out", str(tmp_path / out), "--per-group", "2", "--seed", "5"]) == 0
        written.append([(tmp_path / out / name).read_text() for name in ("sheet.json", "key.json")])
    assert [json.loads(text) != {} for text in written[0]] == [True, True]
    sheet_one, sheet_two = (json.loads(files[0]) for files in written)
    assert sheet_one["rows"] == sheet_two["rows"] and written[0][1] == written[1][1]
    assert "source" not in json.dumps(sheet_one["rows"]) and len(sheet_one["rows"]) == 8


def test_the_excerpt_centres_on_the_sentence_sharing_most_words() -> None:
    sentences = [f"Sentence {n} says nothing much here." for n in range(10)]
    sentences[6] = "The float switch stops the pump."
    shown = excerpt("What stops the pump?", sentences, size=3)
    assert shown == " ".join(sentences[5:8])
    assert excerpt("What stops the pump?", sentences[:2], size=3) == " ".join(sentences[:2])
    assert excerpt("Unrelated?", sentences, size=3) == " ".join(sentences[:3])
