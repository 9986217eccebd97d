"""A study's result value: a cell shows an absent value as "–" (never ``nan``), a ``|`` in a value
cannot break its row, an interval reads ``estimate [low, high]``, and a study moved onto the value
writes nothing itself: its files come from the publish ring's one writer."""

from __future__ import annotations

import json
import math
from pathlib import Path

from nomad_lab.publish.results import write
from nomad_lab.studies.result import ABSENT, Field, Page, Result, Table, Value, listing
from nomad_lab.studies.shape import Param, Study, execute

SHARE = Field("leak", "leak [95% CI]", "share", ".1f", 100, "%")


def cells(line: str) -> list[str]:
    """A markdown row's cells, split on the pipes a renderer splits on (an escaped one is text)."""
    parts, cell, escaped = [], "", False
    for ch in line.strip()[1:-1]:
        if ch == "|" and not escaped:
            parts.append(cell.strip())
            cell = ""
        else:
            cell += ch
        escaped = ch == "\\"
    return [*parts, cell.strip()]


def test_absent_values_show_a_dash_never_nan() -> None:
    table = Table("t", (Field("gate", "gate"), SHARE), ({"gate": "a", "leak": [math.nan] * 3}, {"gate": "b"}))
    text = table.markdown()
    assert "nan" not in text.lower() and text.count(ABSENT) == 2
    # an interval whose bounds alone are missing keeps its estimate
    assert SHARE.cell({"leak": [0.1, math.nan, None]}) == f"10.0% [{ABSENT}, {ABSENT}]"


def test_a_pipe_in_a_gate_name_cannot_shift_a_row() -> None:
    table = Table(
        "t", (Field("gate", "gate"), SHARE), ({"gate": "floor|0.5 || x", "leak": [0.1, 0.05, 0.2]},)
    )
    header, _, row = table.markdown().splitlines()
    assert len(cells(row)) == len(cells(header)) == 2
    assert cells(row)[1] == "10.0% [5.0%, 20.0%]"


def test_fields_walk_nested_rows_and_values_carry_their_own_format() -> None:
    nested = Field("byKind.off-topic.n", "n", "count")
    assert nested.cell({"byKind": {"off-topic": {"n": 7}}}) == "7" and nested.cell({}) == ABSENT
    costs = listing("cost", ("cost", "value"), [("ms per question", Value(563.7, "ms", ".0f"))])
    assert costs.markdown().splitlines()[-1] == "| ms per question | 564 |"
    assert Field("spec", "spec", absent="-", code=True).cell({"spec": ""}) == "`-`"


def test_a_page_is_its_blocks_with_one_blank_line_between() -> None:
    page = Page("p.md", ("Intro.", Table("t", (Field("a", "a", right=True),), ({"a": 1},)), "End."))
    assert page.markdown() == "Intro.\n\n| a |\n|---:|\n| 1 |\n\nEnd.\n"


def _study(tmp_path: Path) -> Study:
    def run(params):  # a study whose figure has no value
        return {"leak": [math.nan, math.nan, math.nan], "name": "g|x"}

    def result(raw: dict) -> Result:
        rows = ({"gate": raw["name"], "leak": raw["leak"]},)
        page = Page("t.md", (Table("gates", (Field("gate", "gate"), SHARE), rows),))
        return Result("demo", value=raw, json={"t.json": {"leak": raw["leak"]}}, pages=(page,))

    store = Param("store", Path, tmp_path / "store.duckdb", "store")
    return Study(name="demo", title="demo", run=run, rows=lambda r: [], result=result, out_dir="x",
                 command=("study", "demo"), params=(store,))  # fmt: skip


def test_a_study_on_the_value_writes_nothing_and_the_writer_writes_it_all(tmp_path: Path) -> None:
    study, out = _study(tmp_path), tmp_path / "out"
    value, paths = execute(study, {"out": out})
    assert paths == {} and not out.exists()  # the study wrote nothing
    assert value.provenance["run_id"] and value.out == out
    paths = write(value)
    assert sorted(p.name for p in out.iterdir()) == ["provenance.json", "t.json", "t.md"]
    assert json.loads((out / "t.json").read_text()) == {"leak": [None, None, None]}  # no NaN stored
    assert "nan" not in (out / "t.md").read_text() and paths["t.md"] == out / "t.md"
    _, published = execute(study, {"out": tmp_path / "again"}, publish=write)
    assert set(published) == {"t.json", "t.md", "provenance"}
