"""Every figure README.md and docs/*.md quote from results/ is rendered from the file it names.

The committed pages must equal their render (``python -m nomad_lab.studies.docs`` rewrites them), so a
figure retyped by hand, or left behind when its study is rerun, fails here; and a results-like number
(three decimals, a decimal percentage or ratio) outside a marker fails too.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from nomad_lab.core.errors import NomadLabError
from nomad_lab.studies import docs
from nomad_lab.studies.gallery import doc_page, entries
from nomad_lab.studies.registry import studies
from tests.support.paths import ROOT

PAGES = docs.pages(ROOT)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_page_equals_its_render_from_the_stored_results(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    rendered = docs.render_text(text, page.name, ROOT)
    stale = [
        f"{page.name}:{n}: {old!r} -> {new!r}"
        for n, (old, new) in enumerate(zip(text.splitlines(), rendered.splitlines(), strict=False), 1)
        if old != new
    ]
    assert rendered == text, "stale figures (run `python -m nomad_lab.studies.docs`):\n" + "\n".join(
        stale[:10]
    )


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_results_like_number_stands_outside_a_marker(page: Path) -> None:
    found = [
        f"{page.name}:{line}: {number}" for line, number in docs.unmarked(page.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_a_retyped_figure_differs_from_its_render(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_text(
        '{"rows": [{"floor": 0.55, "leak": 0.0259}, {"floor": 0.62, "leak": 0.0086}]}'
    )
    right = "leak <!-- fig r.json#rows[floor=0.62].leak fmt=.3f -->0.009<!-- /fig -->"
    assert docs.render_text(right, "p.md", tmp_path) == right
    retyped = right.replace("0.009<", "0.010<")
    assert docs.render_text(retyped, "p.md", tmp_path) == right
    (tmp_path / "r.json").write_text('{"rows": [{"floor": 0.62, "leak": 0.0172}]}')  # the study was rerun
    assert docs.render_text(right, "p.md", tmp_path) != right


def test_tables_and_selectors_read_markdown_csv_and_the_newest_report(tmp_path: Path) -> None:
    (tmp_path / "t.md").write_text("head\n\n| a | b | b |\n|---|---:|---:|\n| x | 1 | 2 |\n| y | 3 | 4 |\n")
    (tmp_path / "rows.csv").write_text("name,value\nalpha,0.5\n")
    for stamp in ("2026-01-01", "2026-02-01"):
        (tmp_path / f"report-{stamp}.json").write_text(f'{{"meta": {{"createdAt": "{stamp}"}}}}')
    text = (
        "<!-- table t.md#0 rows=1 cols=0,2 -->\nold\n<!-- /table -->\n"
        '<!-- fig t.md#tables[0][a=x]["b (2)"] -->?<!-- /fig --> '
        "<!-- fig rows.csv#[0].value fmt=.0% -->?<!-- /fig --> "
        "<!-- fig report-*.json#meta.createdAt -->?<!-- /fig -->"
    )
    assert docs.render_text(text, "p.md", tmp_path) == (
        "<!-- table t.md#0 rows=1 cols=0,2 -->\n| a | b |\n| --- | ---: |\n| y | 4 |\n<!-- /table -->\n"
        '<!-- fig t.md#tables[0][a=x]["b (2)"] -->2<!-- /fig --> '
        "<!-- fig rows.csv#[0].value fmt=.0% -->50%<!-- /fig --> "
        "<!-- fig report-*.json#meta.createdAt -->2026-02-01<!-- /fig -->"
    )


def test_a_marker_that_does_not_resolve_is_one_error_naming_page_and_line(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_text('{"a": {"b": 1}}')
    with pytest.raises(NomadLabError, match=r"p.md:2: missing.json: no such file"):
        docs.render_text("x\n<!-- fig missing.json#a -->1<!-- /fig -->", "p.md", tmp_path)
    with pytest.raises(NomadLabError, match=r"p.md:1: 'a.c': nothing at '.c'"):
        docs.render_text("<!-- fig r.json#a.c -->1<!-- /fig -->", "p.md", tmp_path)


def test_numbers_in_markers_code_and_citations_are_not_flagged() -> None:
    text = (
        "ok <!-- fig r.json#a -->0.345<!-- /fig --> `0.345` <!-- cited x.md -->4.6%<!-- /cited -->\n"
        "```\n0.345\n```\nbut 0.345 and 2.15× and 4.7% are\n"
    )
    assert list(docs.unmarked(text)) == [(5, "0.345"), (5, "2.15×"), (5, "4.7%")]


def test_the_front_door_is_short_and_every_study_page_is_reachable_from_it_and_the_gallery() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme) <= 15_000
    linked = set(re.findall(r"\(docs/([\w.-]+\.md)", readme))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert pages <= linked, f"docs pages the README does not link: {sorted(pages - linked)}"
    results = ROOT / "results"
    for study in studies().values():
        assert (ROOT / "docs" / (study.out_dir.removeprefix("results/").split("/")[0] + ".md")).is_file(), (
            study.name
        )
    for entry in entries([], results):
        assert doc_page(entry, results) is not None, f"{entry.title}: no docs page for results/{entry.folder}"
    assert "<run" not in readme and not any("<run" in (ROOT / "docs" / p).read_text() for p in pages)


def test_main_job_steps_are_picked_by_what_they_are_and_a_marker_never_holds_a_double_dash(
    tmp_path: Path,
) -> None:
    (tmp_path / "m.json").write_text(
        '{"steps": {"nomad-lab sweep --dump d.json": {"what": "Floor sweep: leak", "seconds": 1.44}}}'
    )
    text = "<!-- fig m.json#steps[what~=Floor sweep].seconds fmt=.1f -->?<!-- /fig -->"
    assert docs.render_text(text, "p.md", tmp_path).endswith("-->1.4<!-- /fig -->")
    with pytest.raises(NomadLabError, match=r"p.md:1: a marker cannot contain '--'"):
        docs.render_text(
            '<!-- fig m.json#steps["nomad-lab sweep --dump d.json"].seconds -->1<!-- /fig -->',
            "p.md",
            tmp_path,
        )


def test_every_figure_and_table_the_pages_cite_is_shown_by_the_gallery() -> None:
    shown = {f"{e.folder}/{name}" for e in entries([], ROOT / "results") for name in (*e.figures, *e.tables)}
    cited: set[str] = set()
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        cited |= set(re.findall(r"results/([\w./-]+\.(?:png|md|txt))", text))
        cited |= set(re.findall(r"<!-- table results/([\w./*-]+?)(?:#\d+)?[ \n]", text))
    assert "estimator/by_class.png" in cited and "judge_confidence/cost.md" in cited
    assert sorted(cited - shown) == [], "cited in README/docs but not shown by the gallery"


def test_every_gallery_section_a_page_links_exists() -> None:
    from nomad_lab.cli.reproduce import steps
    from nomad_lab.studies.gallery import anchors

    lines = [("nomad-lab " + shlex.join(argv), what) for what, argv in steps()]
    ids = set(anchors(entries(lines, ROOT / "results"))) | {"headlines"}
    linked = {
        (p.name, a) for p in PAGES for a in re.findall(r"index\.html#([\w-]+)", p.read_text(encoding="utf-8"))
    }
    assert linked and sorted((page, a) for page, a in linked if a not in ids) == []
