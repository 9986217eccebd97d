"""What a study or gate family declaration leaves out is derived: from its name, its form, or the steps
its module keeps beside ``run``; what it states wins.

The registered studies and families are checked against values written out here (what each declared
before the declarations were cut to what is their own, issue 42), so a wrong derivation fails by name.
"""

from __future__ import annotations

import importlib
import math
from typing import Any

import pytest

from nomad_lab.backends.backend_spec import BACKEND_SPEC
from nomad_lab.gate.families import OMIT_SAVED, OMIT_SWEEP, OMIT_VERDICT, Family, families
from nomad_lab.studies import registry
from nomad_lab.studies.gating.judge_confidence import LADDER
from nomad_lab.studies.params import judge_param
from nomad_lab.studies.result import Page, Result
from nomad_lab.studies.shape import Param, Study, argv

PARAMS = (Param("n", int, 2, "how many"),)


def compute(params: Any) -> dict:
    """A study's run; the declarations below find its other steps beside it, in this module."""
    return {"rows": [{"n": params.n}]}


def rows(raw: dict) -> list[dict]:
    return raw["rows"]


def result(raw: dict) -> Result:
    return Result("per-sample", value=raw)


def pages(document: Any) -> tuple[Page, ...]:
    return (Page("per_sample.md", ("x",)),)


def test_a_study_derives_its_folder_command_document_table_and_steps() -> None:
    study = Study(name="per-sample", title="t", run=compute)
    assert study.out_dir == "results/per_sample" and study.command == ("study", "per-sample")
    assert study.rows is rows and study.result is result and study.pages is pages and study.params is PARAMS
    assert study.document == "per_sample.json" and study.tables == ("per_sample.md",)


def test_a_stated_document_names_the_table_and_no_pages_means_no_document() -> None:
    stated = Study(name="per-sample", title="t", run=compute, document="summary.json")
    assert (stated.document, stated.tables) == ("summary.json", ("summary.md",))
    plain = Study(name="per-sample", title="t", run=len, rows=rows, result=result)
    assert (plain.document, plain.pages, plain.tables, plain.params) == (None, None, ("per_sample.md",), ())


def test_what_a_study_states_wins_and_tables_can_be_none() -> None:
    own_rows, own_params = (lambda raw: []), (Param("m", int, 1, "m"),)
    stated = {"rows": own_rows, "params": own_params, "out_dir": "results/elsewhere", "tables": ()}
    study = Study(name="per-sample", title="t", run=compute, command=argv("study per-sample --n 3"), **stated)
    assert study.rows is own_rows and study.params is own_params and study.result is result
    assert study.out_dir == "results/elsewhere" and study.command == ("study", "per-sample", "--n", "3")
    assert study.tables == () and study.document == "per_sample.json"
    with pytest.raises(ValueError, match="give rows= and result="):
        Study(name="x", title="t", run=print)  # builtins keep no study steps
    with pytest.raises(ValueError, match="give both or neither"):
        Study(name="x", title="t", run=print, rows=list, result=list, document="x.json")


# name: (out_dir, command, document, tables), as every study declared them in full before issue 42
OUTPUTS: dict[str, tuple[str, tuple[str, ...], str | None, tuple[str, ...]]] = {
    "answerability": (
        "results/answerability",
        ("study", "answerability"),
        "answerability.json",
        ("answerability.md",),
    ),
    "draft-rating": (
        "results/labelling/rating",
        ("study", "draft-rating"),
        "draft_rating.json",
        ("draft_rating.md",),
    ),
    "embedders": (
        "results/embedders",
        (
            "study",
            "embedders",
            "--embedder",
            "st:",
            "--embedder",
            "wordllama:",
            "--store",
            "runs/embedders.duckdb",
        ),
        None,
        ("embedders.md", "presets-st.md", "presets-wordllama.md"),
    ),
    "estimator": ("results/estimator", ("study", "estimator"), None, ("summary.md",)),
    "floor-sweep": (
        "results/floor_sweep",
        argv(
            "sweep --dump runs/dumps/core-off_topic.json --refusal-tag off-topic --alpha 0.05 "
            "--out results/floor_sweep"
        ),
        None,
        ("floor_sweep.md",),
    ),
    "gates": (
        "results/gates",
        argv(
            "study gates --reranker nanoranker --transfer-corpus datasets/corpora/pydocs/corpus "
            "--transfer-goldens datasets/corpora/pydocs/goldens --transfer-bank-skip coding "
            "--out results/gates"
        ),
        None,
        ("gates.md",),
    ),
    "gates-at-size": (
        "results/gates_at_size",
        argv(
            "study gates-at-size --library runs/library-large --docs 3160 6183 30330 "
            "--embedder wordllama:256 --compare-index hnsw --store runs/library.duckdb "
            "--out results/gates_at_size"
        ),
        "gates_at_size.json",
        ("gates_at_size.md",),
    ),
    "growth": ("results/library_growth", ("study", "growth"), "growth.json", ("growth.md",)),
    "injection": (
        "results/injection",
        (
            "study",
            "injection",
            "--judge-model",
            "embedded:gemma3-270m",
            "--suite",
            "off_topic",
            "--limit",
            "30",
        ),
        None,
        ("injection.md",),
    ),
    "judges": (
        "results/judges",
        ("sweep", "judge_models", "-p", "out_dir", "results/judges", "--rerun", "--cell-timeout", "3600"),
        None,
        ("judges.md",),
    ),
    "kv-window": ("results/kv_window", ("study", "kv-window"), None, ("table.md",)),
    "label-free": (
        "results/label_free",
        ("study", "label-free", "--store", "runs/label_free.duckdb"),
        "label_free.json",
        ("label_free.md",),
    ),
    "labelling": (
        "results/labelling",
        ("study", "labelling", "--store", "runs/books.duckdb"),
        "narrowing.json",
        ("narrowing.md",),
    ),
    "ladder": (
        "results/judge_ladder",
        ("study", "ladder", "--sample", "30", "--store", "runs/judge.duckdb"),
        None,
        ("ladder.md",),
    ),
    "note-effect": ("results/note_effect", ("study", "note-effect"), "note_effect.json", ("note_effect.md",)),
    "per-passage": (
        "results/judge_per_passage",
        argv("study per-passage --judge-model embedded:gemma3-270m --sample 40 --store runs/judge.duckdb"),
        None,
        ("per_passage.md",),
    ),
    "placement": ("results/placement", ("study", "placement"), "placement.json", ("placement.md",)),
    "reader-probe": (
        "results/sufficiency/reader_probe",
        ("study", "reader-probe", "--skip-kind", "off-topic"),
        "reader_probe.json",
        ("reader_probe.md",),
    ),
    "rewrite": (
        "results/rewrite",
        ("study", "rewrite", "--store", "runs/budget.duckdb"),
        "summary.json",
        ("summary.md",),
    ),
    "sufficiency": ("results/sufficiency", ("study", "sufficiency"), "sufficiency.json", ("sufficiency.md",)),
    "transport": ("results/transport", ("study", "transport", "--model", "llama3:8b"), None, ()),
}

OWN_ROWS = {"answerability", "draft-rating", "gates-at-size", "note-effect", "reader-probe", "sufficiency"}
"""The studies whose ``rows`` is the ``rows`` of their module; the others state theirs."""


def test_every_registered_study_publishes_where_and_what_it_did() -> None:
    known = registry.studies()
    assert sorted(known) == sorted(OUTPUTS), "a new study: add its out_dir, command, document and tables here"
    for name, study in known.items():
        assert (study.out_dir, study.command, study.document, study.tables) == OUTPUTS[name], name


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_every_registered_study_runs_the_steps_of_its_module(name: str) -> None:
    study = registry.studies()[name]
    module = vars(importlib.import_module(study.run.__module__))
    assert study.params is module["PARAMS"] and study.params
    assert (study.result is module.get("result")) == (name != "gates")  # gates states a report of its own
    assert (study.rows is module.get("rows")) == (name in OWN_ROWS)
    assert study.pages is module.get("pages") and (study.pages is None) == (study.document is None)


# name: (target, low, high, omitted), as every family declared them in full before issue 42
FAMILIES = {
    "answer": (True, -math.inf, None, OMIT_SAVED),
    "ce": (True, -math.inf, None, OMIT_SWEEP),
    "contrast": (False, 0.0, None, OMIT_SWEEP),
    "cosine": (False, 0.0, 1.0, OMIT_SWEEP),
    "floor": (False, 0.0, 1.0, OMIT_SWEEP),
    "judge": (True, 0.0, 1.0, OMIT_VERDICT),
    "learned": (True, 0.0, 1.0, OMIT_SAVED),
    "rerank": (True, -math.inf, None, OMIT_SWEEP),
    "score": (True, -math.inf, None, OMIT_SWEEP),
    "sufficiency": (True, -math.inf, None, OMIT_SAVED),
}


def test_every_gate_family_keeps_its_target_range_and_omitted_number() -> None:
    known = families()
    assert sorted(known) == sorted(FAMILIES), "a new gate family: add its target, range and omitted here"
    for name, family in known.items():
        assert (family.target, family.low, family.high, family.omitted) == FAMILIES[name], name


def _family(form: str, **more: Any) -> Family:
    none = lambda *args: None  # noqa: E731 - no mask or score is asked of these
    return Family(name="f", form=form, value="v", low=0.0, keep=none, score=none, **more)


def test_a_family_takes_a_target_when_its_form_shows_one_and_omits_by_what_it_saves() -> None:
    plain, targeted = _family("f[@D]"), _family("f:GATE_FILE[@T]", saved=lambda atom: 0.5)
    assert (plain.target, plain.omitted, plain.high) == (False, OMIT_SWEEP, None)
    assert (targeted.target, targeted.omitted, targeted.high) == (True, OMIT_SAVED, None)
    assert _family("f:SPEC[@T]").omitted == OMIT_SWEEP  # a target, but nothing saved: a sweep
    assert _family("f[@D|x:y]").target is False  # a ':' after the number's bracket is not a target
    stated = _family("f:SPEC[@TAU]", omitted=OMIT_VERDICT, high=1.0, target=True)
    assert (stated.target, stated.omitted, stated.high) == (True, OMIT_VERDICT, 1.0)
    with pytest.raises(ValueError, match="target=True but its form"):
        _family("f[@D]", target=True)
    with pytest.raises(ValueError, match="target=False but its form"):
        _family("f:SPEC[@T]", target=False)


def test_judge_param_is_required_without_a_default_and_repeatable_with_a_tuple() -> None:
    def judge(default: Any, help: str, **more: Any) -> Param:
        return Param("judge_model", BACKEND_SPEC, default, help, metavar="SPEC", **more)

    assert judge_param(None) == judge(None, "judge backend spec", required=True)
    assert judge_param(("a:b",), "h") == judge(("a:b",), "h", many=True)
    assert judge_param("embedded:gemma3-270m") == judge("embedded:gemma3-270m", "judge backend spec")
    assert judge_param("embedded:gemma3-270m").option == "--judge-model"
    declared = {n: next(p for p in registry.get(n).params if p.name == "judge_model") for n in JUDGED}
    assert declared == JUDGED


JUDGED = {
    "growth": Param(
        "judge_model", BACKEND_SPEC, "embedded:gemma3-270m", "judge backend spec", metavar="SPEC"
    ),
    "injection": Param(
        "judge_model",
        BACKEND_SPEC,
        None,
        "judge backend spec, e.g. embedded:gemma3-270m",
        required=True,
        metavar="SPEC",
    ),
    "judges": Param(
        "judge_model",
        BACKEND_SPEC,
        ("embedded:gemma3-270m",),
        "judge backend spec, e.g. embedded:gemma3-270m (repeatable: one row per model; SmolLM2-135M and "
        "the Qwen models are on the opt-in `study ladder`)",
        many=True,
        metavar="SPEC",
    ),
    "ladder": Param(
        "judge_model",
        BACKEND_SPEC,
        LADDER,
        "judge spec (repeatable; smallest to largest)",
        many=True,
        metavar="SPEC",
    ),
    "per-passage": Param(
        "judge_model", BACKEND_SPEC, None, "judge backend spec", required=True, metavar="SPEC"
    ),
}
"""The ``--judge-model`` of every study declaring it with :func:`judge_param`, as each stated it in full."""
