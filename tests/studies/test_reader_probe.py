"""The reader probe: replies stored one by one so a stopped run resumes, the whole study on a real run
with a scripted reader (its value, pages and rows, nothing written), and a tiny real model quoting."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nomad_lab.core.errors import NomadLabError
from nomad_lab.studies.gating import reader_probe
from nomad_lab.studies.gating.reader_probe import NO_QUOTE, answers_key, quoted_first, read_quotes
from tests.support.retrieval import embedder, fixture_run  # noqa: F401  (embedder: a fixture)

QUESTIONS = [
    ("q1", "How long should I boil water?", ["Bring water to a rolling boil for one minute. Then cool it."]),
    ("q2", "Who wrote Walden?", ["Add 8 drops of unscented bleach per gallon of water."]),
    ("q3", "How many drops of bleach?", ["Add 8 drops of unscented bleach per gallon of water."]),
    ("q4", "Is there a passage?", []),
]


class Reader:
    """Quotes the first sentence shown when the question asks how, else NONE; can stop after ``stop``."""

    def __init__(self, stop: int | None = None) -> None:
        self.calls, self.stop = 0, stop

    def __call__(self, prompt: str) -> str:
        if self.stop is not None and self.calls >= self.stop:
            raise KeyboardInterrupt  # the run is stopped mid-way
        self.calls += 1
        first = prompt.split("\n- ", 1)[1].split("\n", 1)[0]
        return f'"{first}"' if "Question: How" in prompt else "NONE"


def test_a_stopped_run_resumes_and_a_rerun_asks_nothing(tmp_path: Path) -> None:
    store = tmp_path / "ws.duckdb"
    key = answers_key("test:reader", 0)
    with pytest.raises(KeyboardInterrupt):
        read_quotes(store, QUESTIONS, Reader(stop=1), key, 0)
    resumed = Reader()
    answers = read_quotes(store, QUESTIONS, resumed, key, 0)
    assert resumed.calls == 2  # q1 was stored before the stop; q4 has no passage to read
    assert read_quotes(store, QUESTIONS, None, key, 0) == answers  # all stored: no reader needed
    assert [a["verified"] is not None for a in answers] == [True, False, True, False]
    assert answers[1]["quote"] is None and answers[3]["reply"] == ""
    other = Reader()
    read_quotes(store, QUESTIONS[:1], other, answers_key("test:reader", 5), 5)
    assert other.calls == 1  # another prompt's replies are never read for this one


def test_the_study_returns_its_value_per_kind_and_resumes(tmp_path: Path, embedder, monkeypatch) -> None:  # noqa: F811
    from nomad_lab.runners.studies import run_study

    store = tmp_path / "ws.duckdb"
    run_id = fixture_run(store, embedder)
    reader = Reader()
    monkeypatch.setattr(reader_probe, "open_reader", lambda spec, seed=0: reader)
    given = {"run": run_id, "store": store, "reader": "test:reader", "folds": 2, "no_progress": True}
    value, files = run_study("reader-probe", **given)
    assert files == {} and reader.calls > 0
    doc = value.json["reader_probe.json"]
    assert [r["spec"] for r in doc["rows"]][:2] == [
        "reader:test:reader",
        "reader:test:reader+sufficiency:zero-shot",
    ]
    assert len(doc["rows"]) == 4 and [p["row"] for p in doc["paired"]] == [r["row"] for r in doc["rows"][:2]]
    assert {p["baseline"] for p in doc["paired"]} <= {r["row"] for r in doc["rows"][2:]}
    own = doc["atOwnKeep"]  # the reader alone, against the zero-shot check at the keep it reaches
    assert own["keep"] == next(o["verified"] for o in doc["outcomes"] if o["kind"] == "answerable")
    assert [r["spec"] for r in own["rows"]] == ["reader:test:reader", "sufficiency:zero-shot"]
    assert own["paired"]["row"] == own["rows"][0]["row"]
    assert own["rows"][0]["answerableKeep"][0] == pytest.approx(own["keep"])  # its own decision, no threshold
    assert doc["counts"]["answerable"] + doc["counts"]["off-topic"] == doc["questions"]
    assert {o["kind"] for o in doc["outcomes"]} == {"answerable", "off-topic"}
    assert doc["cost"]["questionsAsked"] == reader.calls
    page = value.page("reader_probe.md").markdown()
    assert "off-topic pass" in page and "seconds per question, reader" in page
    monkeypatch.setattr(reader_probe, "open_reader", lambda spec, seed=0: pytest.fail("asked again"))
    again, _ = run_study("reader-probe", **given)
    assert again.json["reader_probe.json"]["rows"] == doc["rows"]
    fewer = run_study("reader-probe", **given, skip_kind=["off-topic"])[0].json["reader_probe.json"]
    assert fewer["counts"]["off-topic"] == 0 and fewer["questions"] == doc["counts"]["answerable"]
    with pytest.raises(NomadLabError, match=r"--skip-kind.*not a refusal kind: offtopic"):
        run_study("reader-probe", **given, skip_kind=["offtopic"])


@pytest.mark.slow
def test_a_tiny_model_quotes_or_says_none(tmp_path: Path) -> None:
    chat = reader_probe.open_reader("embedded:gemma3-270m?n_ctx=2048")
    answers = read_quotes(tmp_path / "ws.duckdb", QUESTIONS[:2], chat, answers_key("gemma", 4), 4)
    for answer in answers:  # whatever the tiny model writes, it is read as a checked quote or NONE
        assert answer["reply"] and answer["seconds"] > 0
        assert answer["verified"] is None or answer["verified"] in answer["quote"]


def test_largest_names_the_largest_instruct_model_already_installed(tmp_path: Path) -> None:
    from nomad_lab.backends.models import PART_MODELS, largest_instruct

    assert largest_instruct(tmp_path) == "embedded:gemma3-270m"  # always there, never assembled here
    (tmp_path / PART_MODELS["qwen2.5-coder-0.5b"].file).write_bytes(b"GGUF")
    assert largest_instruct(tmp_path) == "embedded:qwen2.5-coder-0.5b"
    assert reader_probe.reader_spec("openai://localhost:8080/v1/m") == "openai://localhost:8080/v1/m"


def test_quoted_questions_rank_above_every_unquoted_one_which_the_fallback_orders() -> None:
    probe = np.array([NO_QUOTE, 2.0, NO_QUOTE, -3.0, NO_QUOTE])
    fallback = np.array([5.0, -9.0, 1.0, 0.0, -np.inf])
    order = np.argsort(-quoted_first(probe, fallback))
    assert order.tolist() == [1, 3, 0, 2, 4]  # quotes by their score, then the rest by the fallback
    assert quoted_first(np.full(3, NO_QUOTE), fallback[:3]).tolist() == fallback[:3].tolist()
