"""``nomad-lab study draft-rating`` on a planted rating: each source and kind counted apart with its
Wilson interval (checked against the interval's values for those counts), never blended; a verdict
missing, one for a row the key lacks, or one outside the rubric is refused naming the row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nomad_lab.cli import main
from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.workspace import PROJECT_ROOT
from nomad_lab.eval.gating.draft_rates import rating_rates
from nomad_lab.studies.gating.draft_rating import STUDY

PLANTED = {
    ("model", "answerable"): ["usable"] * 7 + ["edit"] * 2 + ["broken"],
    ("template", "answerable"): ["usable"] + ["broken"] * 4,
    ("template", "refusal"): ["usable"] * 4 + ["edit"],
}
COST = {
    "backend": "embedded:qwen",
    "passages": 4,
    "modelSeconds": 100.0,
    "secondsPerPassage": 25.0,
    "medianSecondsPerPassage": 24.0,
    "kept": {"answerable": 3, "refusal": 2},
    "secondsPerKeptDraft": 20.0,
    "load": {"loadBefore": [2.0, 2.0, 2.0], "loadAfter": [2.5, 2.1, 2.0], "othersCpuShare": 0.4, "cpus": 2},
}


def _planted(tmp_path: Path) -> dict[str, Path]:
    """A key and verdicts with the rows of each group interleaved, as a shuffled sheet has them."""
    flat = [(group, v) for group, verdicts in PLANTED.items() for v in verdicts]
    flat = flat[::2] + flat[1::2]
    key = {
        f"r{i:03d}": {"source": s, "kind": k, "draft": f"d{i}", "generator": "x"}
        for i, ((s, k), _) in enumerate(flat)
    }
    verdicts = {
        "who": "a test",
        "library": "planted",
        "rubric": {"usable": "as written", "edit": "reworded first", "broken": "no use"},
        "verdicts": {f"r{i:03d}": {"verdict": v} for i, (_, v) in enumerate(flat)},
    }
    paths = {
        "key": tmp_path / "key.json",
        "verdicts": tmp_path / "verdicts.json",
        "cost": tmp_path / "cost.json",
    }
    for name, value in (("key", key), ("verdicts", verdicts), ("cost", COST)):
        paths[name].write_text(json.dumps(value))
    return paths


def test_rates_are_counted_per_source_and_kind_with_wilson_intervals(tmp_path: Path) -> None:
    paths = _planted(tmp_path)
    out = tmp_path / "out"
    options = [f"--{name}={path}" for name, path in paths.items()]
    assert (
        main(["study", "draft-rating", *options, "--store", str(tmp_path / "s.duckdb"), "--out", str(out)])
        == 0
    )
    stored = json.loads((out / "draft_rating.json").read_text())
    by = stored["bySource"]
    assert {s: sorted(k) for s, k in by.items()} == {
        "model": ["answerable"],
        "template": ["answerable", "refusal"],
    }
    model = by["model"]["answerable"]
    assert model["n"] == 10 and [model[v]["count"] for v in ("usable", "edit", "broken")] == [7, 2, 1]
    assert model["usable"]["share"] == 0.7
    assert model["usable"]["low"] == pytest.approx(0.396778, abs=1e-6)  # Wilson 95%, 7 of 10
    assert model["usable"]["high"] == pytest.approx(0.892209, abs=1e-6)
    assert model["broken"]["low"] == pytest.approx(0.017876, abs=1e-6)  # 1 of 10
    assert model["broken"]["high"] == pytest.approx(0.404150, abs=1e-6)
    template = by["template"]["answerable"]
    assert template["n"] == 5 and template["usable"]["count"] == 1 and template["broken"]["count"] == 4
    assert template["usable"]["low"] == pytest.approx(0.036224, abs=1e-6)  # 1 of 5
    assert template["edit"] == {
        "count": 0,
        "share": 0.0,
        "low": 0.0,
        "high": pytest.approx(0.434482, abs=1e-6),
    }
    refusal = by["template"]["refusal"]
    assert refusal["n"] == 5 and refusal["usable"]["share"] == 0.8 and refusal["broken"]["count"] == 0
    assert stored["who"] == "a test" and stored["cost"] == COST
    assert stored["targets"] == {"modelUsable": 0.6, "modelBroken": 0.05}
    page = (out / "draft_rating.md").read_text()
    assert "| model | answerable | 10 | 7 (70%) [40%, 89%] | 2 (20%) [6%, 51%] | 1 (10%) [2%, 40%] |" in page
    assert "Rated by a test." in page and "25.0 s a passage asked" in page
    assert (out / "provenance.json").is_file()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda v: v["verdicts"].pop("r003"), "rows without a verdict: r003; verdicts for rows the key"),
        (lambda v: v["verdicts"].update(r999={"verdict": "usable"}), "the key .* lacks: r999"),
        (lambda v: v["verdicts"]["r004"].update(verdict="fine"), "r004: verdict 'fine'"),
        (lambda v: v["verdicts"].update(r004="usable"), "r004: verdict None"),
        (lambda v: v.pop("rubric"), "verdicts.json: missing field\\(s\\) rubric"),
    ],
)
def test_a_rating_with_a_gap_or_an_unknown_verdict_is_refused_naming_the_row(
    tmp_path: Path, change, message
) -> None:
    paths = _planted(tmp_path)
    verdicts = json.loads(paths["verdicts"].read_text())
    change(verdicts)
    paths["verdicts"].write_text(json.dumps(verdicts))
    with pytest.raises(NomadLabError, match=message):
        rating_rates(paths["verdicts"], paths["key"])


def test_the_gnucash_run_reads_that_library_s_files_and_writes_its_own_folder() -> None:
    """The second library's published run (``Study.also``): its command names the GnuCash verdicts, key
    and cost (each a committed file), never the handbook's, and writes where the gallery looks for it;
    its stored result is that rater's on that sheet."""
    (run,) = STUDY.also
    command = list(run.command)
    options = dict(zip(command[2::2], command[3::2], strict=True))
    assert command[:2] == ["study", "draft-rating"] and options["--out"] == run.out_dir
    for name, path in options.items():
        if name != "--out":
            assert path.startswith("datasets/corpora/gnucash/") and (PROJECT_ROOT / path).is_file(), name
    stored = json.loads((PROJECT_ROOT / run.out_dir / "draft_rating.json").read_text(encoding="utf-8"))
    verdicts = json.loads((PROJECT_ROOT / options["--verdicts"]).read_text(encoding="utf-8"))
    assert stored["who"] == verdicts["who"] and "not a person" in stored["who"]
    assert sum(g["n"] for kinds in stored["bySource"].values() for g in kinds.values()) == len(
        verdicts["verdicts"]
    )
