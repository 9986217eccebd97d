"""Leak against library size: the sizes, their corpus folders, and one real end-to-end run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nomad_lab.core.errors import NomadLabError
from nomad_lab.studies.gating.growth import library_sizes, materialize
from tests.support.fake_ollama import FakeServer, ollama_reply
from tests.support.retrieval import CORPUS, GOLDENS

BOOK = "# {title}\n\n# Title: {title} | Author: Nobody | Source: test\n\n{body}\n"


def _books(folder: Path, n: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    topics = ["whaling ships and harpoons", "autumn leaves falling in the forest", "poems about the sea"]
    for i in range(n):
        body = "\n\n".join(
            f"Chapter {c}. A long passage about {topics[i % 3]}, told again." for c in range(30)
        )
        (folder / f"book-{i}.md").write_text(BOOK.format(title=f"Book {i}", body=body))
    return folder


def test_sizes_grow_from_the_domain_corpus(tmp_path: Path) -> None:
    growth = _books(tmp_path / "growth", 3)
    sizes = library_sizes([2, 1, 2], growth)
    assert [(s.distractors, s.growth_books) for s in sizes] == [
        (False, ()),
        (True, ()),
        (True, ("book-0.md",)),
        (True, ("book-0.md", "book-1.md")),
    ]
    with pytest.raises(NomadLabError, match="--books 4: must be between 1 and 3"):
        library_sizes([4], growth)
    with pytest.raises(NomadLabError, match=r"--library .*empty: no \.md documents there .*library build"):
        library_sizes([1], tmp_path / "empty")
    assert library_sizes([1], growth)[-1].label == "+ distractors + 1 documents"  # not the books folder


def test_materialize_copies_exactly_the_size_and_removes_what_left(tmp_path: Path) -> None:
    growth = _books(tmp_path / "growth", 2)
    big, small = library_sizes([2], growth)[2], library_sizes([2], growth)[0]
    folder = materialize(big, CORPUS, growth, tmp_path / "work")
    names = {p.name for p in folder.glob("*.md")}
    assert names == {p.name for p in CORPUS.glob("*.md")} | {"book-0.md", "book-1.md"}
    domain = materialize(small, CORPUS, growth, tmp_path / "work")
    assert {p.name for p in domain.glob("*.md")} == {p.name for p in CORPUS.glob("*.md")}
    (folder / "book-1.md").unlink()
    (folder / "stale.md").write_text("# x\n")
    assert {p.name for p in materialize(big, CORPUS, growth, tmp_path / "work").glob("*.md")} == names


def test_each_refusal_kind_is_counted_apart_and_the_leak_table_names_only_the_others() -> None:
    from types import SimpleNamespace

    from nomad_lab.gate.pools import pools_from_records
    from nomad_lab.studies.gating.growth_kinds import kind_passes, kinds_markdown

    def record(i: str, tags: list[str], top: float | None, refusal: bool = True) -> dict:
        candidates = [] if top is None else [{"docId": "d", "score": top}]
        return {
            "id": i,
            "tags": tags,
            "expectRefusal": refusal,
            "relevantDocIds": [] if refusal else ["d"],
            "candidates": candidates,
        }

    pools = pools_from_records(
        [
            record("a", ["core"], 0.9, refusal=False),
            record("o1", ["off-topic"], 0.2),
            record("o2", ["off-topic"], None),  # nothing retrieved: never leaks
            record("n1", ["off-topic", "near-domain"], 0.7),  # tagged off-topic too, counted as near-domain
            record("u1", ["unanswerable"], 0.4),
            record("u2", ["unanswerable"], 0.6),
        ]
    )
    passes = kind_passes(pools, [0.0, 0.5])
    assert list(passes) == ["off-topic", "unanswerable", "near-domain"]
    assert {k: v.n for k, v in passes.items()} == {"off-topic": 2, "unanswerable": 2, "near-domain": 1}
    assert {k: (v.pass_by_floor["0"][0], v.pass_by_floor["0.5"][0]) for k, v in passes.items()} == {
        "off-topic": (0.5, 0.0),
        "unanswerable": (1.0, 0.5),
        "near-domain": (1.0, 1.0),
    }
    table = kinds_markdown([SimpleNamespace(label="small", by_kind=passes)])
    assert "| library | kind | n | context passed, floor 0 | context passed, floor 0.5 |" in table
    assert "| small | unanswerable | 2 | 1.000 " in table and "| small | near-domain | 1 | 1.000 " in table
    assert "| small | off-topic |" not in table  # the leak table's kind is not repeated here
    only_off_topic = {"off-topic": passes["off-topic"]}
    assert kinds_markdown([SimpleNamespace(label="small", by_kind=only_off_topic)]) == ""


@pytest.mark.slow
def test_growth_study_end_to_end_with_a_judge_that_rejects_everything(tmp_path: Path, embedder) -> None:
    from nomad_lab.publish.results import write
    from nomad_lab.studies.gating.growth import measure_size, result

    growth = _books(tmp_path / "growth", 3)
    store = tmp_path / "ws.duckdb"
    rows = []
    with FakeServer(ollama_reply('{"on_topic": false}')) as server:
        spec = f"ollama://127.0.0.1:{server.port}/judge"
        for size in library_sizes([3], growth):
            folder = materialize(size, CORPUS, growth, tmp_path / "work")
            rows.append(
                measure_size(
                    folder,
                    label=size.label,
                    include_distractors=size.distractors,
                    floors=[0.0, 0.9],
                    judge_model=spec,
                    judge_floor=0.0,
                    store_path=store,
                    goldens_dir=GOLDENS,
                    embedder=embedder,
                    alpha=0.8,  # two refusal questions: 0/2 leaked has a 95% upper bound of 0.776
                    progress=False,
                )
            )
        asked = len(server.chat_requests())
        assert asked > 0
    assert [r.docs for r in rows] == [4, 5, 8]
    assert rows[0].chunks < rows[1].chunks < rows[2].chunks
    leaks = [r.leak_by_floor["0"][0] for r in rows]
    assert leaks == sorted(leaks) and leaks[-1] > leaks[0]  # more prose, more off-topic context
    for r in rows:
        assert r.refusals == 3  # off-topic by kind: two of off_topic, one out-of-corpus in core
        assert list(r.by_kind) == ["off-topic"] and r.by_kind["off-topic"].n == 3  # the suites hold no other
        assert r.by_kind["off-topic"].pass_by_floor == r.leak_by_floor
        leak, lo, hi = r.leak_by_floor["0"]
        assert lo <= leak <= hi and r.leak_by_floor["0.9"][0] <= leak
        assert r.leak_judge is not None and r.leak_judge[0] == 0.0  # the judge rejected every set
        assert r.judge_failures == 0
    assert rows[-1].judge_calls > 0
    # the judge reads the off-topic questions of the one stored run (core questions are never judged)
    assert all(r.judge_calls <= len((GOLDENS / "off_topic.jsonl").read_text().splitlines()) for r in rows)
    assert rows[0].embedded == rows[0].chunks and rows[0].build_seconds > 0
    assert rows[0].chunks_per_s == rows[0].embedded / rows[0].build_seconds
    assert rows[2].embedded == rows[2].chunks - rows[1].chunks  # only the added books are embedded
    for r in rows:
        assert r.index_mb == round(r.chunks * embedder.dimension * 4 / 1e6, 2)
        assert r.calibrated_floor is not None and r.leak_calibrated is not None
        assert r.leak_calibrated[0] == 0.0  # the lowest floor with 0/2 leaked
        assert r.recall_calibrated is not None
    paths = write(result({"rows": rows, "judge_model": spec}), tmp_path / "out")
    paths["md"] = paths["growth.md"]
    saved = json.loads(paths["growth.json"].read_text())
    assert [r["docs"] for r in saved["rows"]] == [4, 5, 8]
    assert (tmp_path / "out" / "leak_vs_library_size.svg").exists()
    assert "floor 0 + ollama://" in paths["md"].read_text()
    assert "| calibrated floor |" in paths["md"].read_text()
    assert saved["rows"][0]["chunks_per_s"] > 0
    assert saved["rows"][0]["by_kind"]["off-topic"]["n"] == 3
    assert "refusals of kind off-topic" in paths["md"].read_text()
    assert "other kinds" not in paths["md"].read_text()  # none to report apart
