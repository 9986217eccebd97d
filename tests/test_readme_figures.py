"""Every figure README.md, docs/*.md and the datasets' READMEs quote from results/ is rendered from the
file it names, and so is every comparison they state.

The committed pages must equal their render (``python -m nomad_lab.publish.docs`` rewrites them), so a
figure or a claim ("not met", "larger") retyped by hand, or left behind when its study is rerun, fails
here; a measurement-shaped number outside a marker (``0.47``, ``34%``, ``18.5 %``, ``2.3x``, ``2.34 ×``,
``1,742 tokens``, ``16 s``, ``n = 19``, any number in a heading) fails too, and so does a citation its
source does not bear out. Each results JSON agrees with the markdown table written beside it.
"""

from __future__ import annotations

import json
import math
import re
import shlex
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from nomad_lab.core.errors import NomadLabError
from nomad_lab.publish import docs, docs_prose
from nomad_lab.publish.gallery import doc_page, entries
from nomad_lab.studies.registry import studies
from tests.support.paths import ROOT

PAGES = docs.pages(ROOT)


def _changed(old: str, new: str) -> str:
    """The marker text of a line that differs from its render (from the marker's ``>`` to its ``<``)."""
    start = next(
        (i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new))
    )
    left = old.rfind(">", 0, start) + 1

    def upto(text: str) -> str:
        end = text.find("<", start)
        return text[left : end if end >= 0 else len(text)]

    return f"{upto(old)!r} should read {upto(new)!r}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_page_equals_its_render_from_the_stored_results(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    rendered = docs.render_text(text, page.name, ROOT)
    stale = [
        f"{page.relative_to(ROOT)}:{n}: {_changed(old, new)}"
        for n, (old, new) in enumerate(zip(text.splitlines(), rendered.splitlines(), strict=False), 1)
        if old != new
    ]
    assert rendered == text, "stale figures (run `python -m nomad_lab.publish.docs`):\n" + "\n".join(
        stale[:10]
    )


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_measurement_stands_outside_a_marker_and_every_citation_holds(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    problems = [
        f"{page.relative_to(ROOT)}:{line}: {problem}"
        for line, problem in docs.prose_problems(text, page.name, ROOT)
    ]
    assert problems == [], "\n".join(problems)


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
        "<!-- table t.md#{a} rows=y cols=0,2 -->\nold\n<!-- /table -->\n"
        '<!-- fig t.md#tables{a}[a=x]["b (2)"] -->?<!-- /fig --> '
        "<!-- fig rows.csv#[name=alpha].value fmt=.0% -->?<!-- /fig --> "
        "<!-- fig report-*.json#meta.createdAt -->?<!-- /fig -->"
    )
    assert docs.render_text(text, "p.md", tmp_path) == (
        "<!-- table t.md#{a} rows=y cols=0,2 -->\n| a | b |\n| --- | ---: |\n| y | 4 |\n<!-- /table -->\n"
        '<!-- fig t.md#tables{a}[a=x]["b (2)"] -->2<!-- /fig --> '
        "<!-- fig rows.csv#[name=alpha].value fmt=.0% -->50%<!-- /fig --> "
        "<!-- fig report-*.json#meta.createdAt -->2026-02-01<!-- /fig -->"
    )


def test_a_marker_that_does_not_resolve_is_one_error_naming_page_and_line(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_text('{"a": {"b": 1}}')
    with pytest.raises(NomadLabError, match=r"p.md:2: missing.json: no such file"):
        docs.render_text("x\n<!-- fig missing.json#a -->1<!-- /fig -->", "p.md", tmp_path)
    with pytest.raises(NomadLabError, match=r"p.md:1: 'a.c': nothing at '.c'"):
        docs.render_text("<!-- fig r.json#a.c -->1<!-- /fig -->", "p.md", tmp_path)


@pytest.mark.parametrize(
    "typed",
    ["0.47", "34%", "18.5 %", "2.3x", "2.34 x", "2.34×", "1,742 tokens", "16 s", "n = 19", "-0.158"],
)
def test_a_measurement_typed_in_any_spelling_is_flagged(typed: str) -> None:
    assert list(docs_prose.unmarked(f"the gate leaks {typed} here\n")) == [(1, typed.lstrip("-"))]


def test_numbers_in_headings_are_flagged_and_words_markers_code_and_links_are_not() -> None:
    text = (
        "## The 5 gates\n"
        "ok <!-- fig r.json#a -->0.345<!-- /fig --> `0.345` [p](x-0.62.md) 3 pairs, recall@5, 270M,\n"
        "Python 3.11\n"
        "```\n0.345\n```\n"
    )
    assert list(docs_prose.unmarked(text)) == [(1, "5")]


def test_a_given_setting_may_be_repeated_until_its_definition_changes(tmp_path: Path) -> None:
    (tmp_path / "k.py").write_text("FLOOR = 0.62\nTARGET: float = 0.05\n")
    text = "<!-- given k.py#FLOOR fmt=.2f --><!-- given k.py#TARGET fmt=.0% -->\nat 0.62, within 5% and 5 %\n"
    assert docs.prose_problems(text, "p.md", tmp_path) == []
    (tmp_path / "k.py").write_text("FLOOR = 0.65\nTARGET = 0.05\n")
    assert docs.prose_problems(text, "p.md", tmp_path) == [(2, "0.62 is outside a marker")]


def test_a_citation_must_name_a_source_that_holds_what_it_quotes(tmp_path: Path) -> None:
    (tmp_path / "src.py").write_text("MAX_CHARS = 6_500\n")
    assert list(docs_prose.cited("<!-- cited src.py -->6,500<!-- /cited -->", tmp_path)) == []
    assert list(docs_prose.cited("<!-- cited src.py -->6,600<!-- /cited -->", tmp_path)) == [
        (1, "6,600 is not in its cited source 'src.py'")
    ]
    assert [p for _, p in docs_prose.cited("x\n<!-- cited NOTES.md §8 -->4.6%<!-- /cited -->", tmp_path)] == [
        "cited source 'NOTES.md §8' is not a file of the repository or git:REV:PATH"
    ]
    readme = subprocess.run(
        ["git", "show", "HEAD:README.md"], cwd=ROOT, capture_output=True, text=True
    ).stdout
    quoted = re.search(r"\d+\.\d+", readme)
    assert (
        quoted
        and list(docs_prose.cited(f"<!-- cited git:HEAD:README.md -->{quoted.group(0)}<!-- /cited -->", ROOT))
        == []
    )


def test_rows_are_picked_by_key_and_a_position_is_refused(tmp_path: Path) -> None:
    (tmp_path / "g.json").write_text(
        '{"rows": [{"gate": "floor", "leak": [0.31, 0.24, 0.38]},'
        ' {"gate": "learned", "leak": [0.18, 0.12, 0.25]}]}'
    )
    assert docs.render_text(
        "<!-- fig g.json#rows[gate=learned].leak[0] -->?<!-- /fig -->", "p.md", tmp_path
    ).endswith("-->0.18<!-- /fig -->")  # a position inside an interval [estimate, low, high] is not a row
    with pytest.raises(NomadLabError, match=r"p.md:1: .*'\[1\]' picks a row by position; pick it by key"):
        docs.render_text("<!-- fig g.json#rows[1].leak[0] -->0.18<!-- /fig -->", "p.md", tmp_path)
    (tmp_path / "t.md").write_text("| gate | leak |\n|---|---|\n| floor | 0.31 |\n")
    with pytest.raises(NomadLabError, match=r"rows=0: not every key is a first cell"):
        docs.render_text("<!-- table t.md#{gate} rows=0 -->\n<!-- /table -->", "p.md", tmp_path)


def test_tables_are_picked_by_columns_or_title_and_a_new_table_cannot_re_point_a_page(tmp_path: Path) -> None:
    """The planted drift: a study adds a table above the one a page quotes. Picked by position, the page
    silently showed the new table; picked by its columns it still shows its own, and a new table that
    matches as well is an error, never a silent switch."""
    (tmp_path / "t.md").write_text("**one**\n\n| gate | leak |\n|---|---|\n| floor | 0.31 |\n")
    page = (
        "<!-- table t.md#{gate|leak} -->\n<!-- /table -->\n"
        "<!-- fig t.md#tables{leak}[gate=floor].leak -->?<!-- /fig -->"
    )
    before = docs.render_text(page, "p.md", tmp_path)
    assert "| floor | 0.31 |" in before and before.endswith("-->0.31<!-- /fig -->")
    one = "**one**\n\n| gate | leak |\n|---|---|\n| floor | 0.31 |\n"
    (tmp_path / "t.md").write_text("| tag | refusals |\n|---|---|\n| off-topic | 9 |\n\n" + one)
    assert docs.render_text(page, "p.md", tmp_path) == before
    with pytest.raises(NomadLabError, match=r"p.md:1: t.md#0: pick a table by its columns"):
        docs.render_text("<!-- table t.md#0 -->\n<!-- /table -->", "p.md", tmp_path)
    with pytest.raises(NomadLabError, match=r"picks a row by position"):
        docs.render_text("<!-- fig t.md#tables[1][gate=floor].leak -->?<!-- /fig -->", "p.md", tmp_path)
    (tmp_path / "t.md").write_text(one + "\n**two**\n\n| gate | leak |\n|---|---|\n| ce | 0.2 |\n")
    with pytest.raises(NomadLabError, match=r"2 tables with columns \['gate', 'leak'\]"):
        docs.render_text(page, "p.md", tmp_path)
    assert "| ce | 0.2 |" in docs.render_text(
        "<!-- table t.md#{two|gate} -->\n<!-- /table -->", "p.md", tmp_path
    )


def test_a_claim_is_rendered_from_the_results_and_follows_a_rerun(tmp_path: Path) -> None:
    (tmp_path / "m.json").write_text('{"placement": 531.6, "judges": 369.6, "p": 0.067}')
    text = (
        "<!-- claim m.json#judges gt m.json#placement yes=the_judges no=placement -->the judges"
        "<!-- /claim --> dominate; <!-- claim m.json#p lt 0.05 yes=significant no=not_significant -->?"
        "<!-- /claim -->; <!-- claim m.json#judges gt m.json#placement rscale=0.5 yes=yes no=no -->?"
        "<!-- /claim -->"
    )
    words = re.findall(r"-->([^<]*)<!-- /claim", docs.render_text(text, "p.md", tmp_path))
    assert words == ["placement", "not significant", "yes"]
    (tmp_path / "m.json").write_text('{"placement": 300, "judges": 369.6, "p": 0.01}')  # the study was rerun
    words = re.findall(r"-->([^<]*)<!-- /claim", docs.render_text(text, "p.md", tmp_path))
    assert words == ["the judges", "significant", "yes"]
    with pytest.raises(NomadLabError, match=r"p.md:1: cannot read claim"):
        docs.render_text("<!-- claim m.json#p below 0.05 yes=a no=b -->?<!-- /claim -->", "p.md", tmp_path)


def _json_numbers(value: object, out: list[float]) -> list[float]:
    if isinstance(value, bool) or value is None:
        return out
    if isinstance(value, int | float) and math.isfinite(value):
        out.append(float(value))
    elif isinstance(value, str):
        out += [float(x) for x in re.findall(r"[-+]?\d+(?:\.\d+)?", value)]
    elif isinstance(value, dict | list):
        for item in value.values() if isinstance(value, dict) else value:
            _json_numbers(item, out)
    return out


def _agrees(token: str, numbers: list[float]) -> bool:
    """A table cell's number is one of the JSON's, at the cell's precision (a percentage as a share, or
    as the JSON's own text writes it)."""
    text = token.rstrip("%×").replace(",", "")
    places = len(text.partition(".")[2])
    scales = (100.0, 1.0) if token.endswith("%") else (1.0, 100.0, 0.001, 1000.0)
    return any(abs(n * s - float(text)) <= 0.5 * 10**-places + 1e-9 for n in numbers for s in scales)


CELL_NUMBER = re.compile(r"(?<![\w.-])[-+]?\d+(?:,\d{3})*(?:\.\d+)?[%×]?(?![\w])|(?<=[\s(])-\d+(?:\.\d+)?")
SHARE = re.compile(r"(\d+)/(\d+) = (\d+)% \[\d+, \d+\]")


def _holds(value: object, key: str) -> bool:
    if isinstance(value, str):
        return value.strip() == key
    if isinstance(value, dict | list):
        return any(_holds(v, key) for v in (value.values() if isinstance(value, dict) else value))
    return False


def _first_is(row: dict, key: str) -> bool:
    first = next(iter(row.values()), None)
    try:
        return not isinstance(first, bool) and float(first) == float(key)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def row_sources(value: object, key: str, out: list) -> list:
    """What a table row keyed ``key`` (its first cell) may quote: a value stored under ``key``, and each
    row (a mapping in a list) that names ``key``, as a string anywhere in it or as its first number."""
    if isinstance(value, dict):
        for name, item in value.items():
            if name == key:
                out.append(item)
            row_sources(item, key, out)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict) and (_holds(item, key) or _first_is(item, key)):
                out.append(item)
            row_sources(item, key, out)
    return out


def table_disagreements(stored: dict | list, table_text: str) -> list[str]:
    """Each cell number of ``table_text`` that its own row of the JSON does not hold (at the cell's
    precision); a row whose key the JSON never names is checked against the whole file."""
    every = _json_numbers(stored, [])
    differing: list[str] = []
    for table in docs.markdown_tables(table_text):
        for line in table[2:]:
            key, *cells = docs.table_cells(line)
            own = row_sources(stored, key, [])
            numbers = _json_numbers(own, []) if own else every
            for k, n, pct in SHARE.findall(line):  # a share the table computes: checked as arithmetic
                if round(100 * int(k) / int(n)) != int(pct):
                    differing.append(f"{key}: {k}/{n} = {pct}%")
            found = CELL_NUMBER.findall(SHARE.sub("", " | ".join(cells)))
            differing += [f"{key}: {t}" for t in found if not _agrees(t, numbers)]
    return differing


def _numbers_by_path(value: object, path: tuple, out: list) -> list[tuple[tuple, float]]:
    """Every number in ``value`` with the path that reaches it (a string's numbers by their order)."""
    if isinstance(value, bool) or value is None:
        return out
    if isinstance(value, int | float) and math.isfinite(value):
        out.append((path, float(value)))
    elif isinstance(value, str):
        out += [((*path, i), float(x)) for i, x in enumerate(re.findall(r"[-+]?\d+(?:\.\d+)?", value))]
    elif isinstance(value, dict | list):
        for name, item in value.items() if isinstance(value, dict) else enumerate(value):
            _numbers_by_path(item, (*path, name), out)
    return out


def _readings(token: str, numbered: list[tuple[tuple, float]]) -> set[tuple[tuple, float]]:
    """Each (path, scale) under which ``token`` is one of a row's numbers, at the cell's precision."""
    text = token.rstrip("%×").replace(",", "")
    places = len(text.partition(".")[2])
    scales = (100.0, 1.0) if token.endswith("%") else (1.0, 100.0, 0.001, 1000.0)
    tolerance = 0.5 * 10**-places + 1e-9
    return {(path, s) for path, n in numbered for s in scales if abs(n * s - float(text)) <= tolerance}


def column_disagreements(stored: dict | list, table_text: str) -> list[str]:
    """Each column whose cells no one JSON path reads in every row (at one scale): a cell that holds a
    number of its own row, but another field's (the calls column's 2.77 shown as 0.003 ms), agrees cell
    by cell and disagrees here. Checked where each row is keyed by its first cell alone."""
    differing: list[str] = []
    for table in docs.markdown_tables(table_text):
        keys = [docs.table_cells(line)[0] for line in table[2:]]
        if len(set(keys)) != len(keys):
            continue  # rows keyed by more than their first cell: a path cannot name one row
        columns: dict[tuple[int, int], list[tuple[str, str, set]]] = {}
        for line in table[2:]:
            key, *cells = docs.table_cells(line)
            numbered = [
                x for source in row_sources(stored, key, []) for x in _numbers_by_path(source, (), [])
            ]
            if not numbered:
                continue
            for c, cell in enumerate(cells):
                for k, token in enumerate(CELL_NUMBER.findall(SHARE.sub("", cell))):
                    columns.setdefault((c, k), []).append((key, token, _readings(token, numbered)))
        for column in columns.values():
            if len(column) > 1 and not set.intersection(*(found for _, _, found in column)):
                usual = Counter(r for _, _, found in column for r in found).most_common(1)
                odd = [
                    f"{key}: {token}" for key, token, found in column if not usual or usual[0][0] not in found
                ]
                differing.append(" / ".join(odd[:4]))  # the cells the column's usual field does not read
    return differing


@pytest.mark.parametrize(
    "stored",
    [p for p in sorted((ROOT / "results").rglob("*.json")) if p.with_suffix(".md").is_file()],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_each_results_table_agrees_with_the_json_beside_it(stored: Path) -> None:
    data = json.loads(stored.read_text(encoding="utf-8"))
    table = stored.with_suffix(".md").read_text(encoding="utf-8")
    differing = table_disagreements(data, table)
    assert differing == [], f"{stored.with_suffix('.md').name}: {differing[:5]} not in {stored.name}"
    mixed = column_disagreements(data, table)
    assert mixed == [], f"{stored.with_suffix('.md').name}: no one field of {stored.name} reads {mixed[:3]}"


def test_a_cell_holding_another_row_s_value_disagrees() -> None:
    """The planted drift: the headline row shows the floor's leak. Matched against the whole file, the
    number was found (it is the floor's); matched against its own row, it is not."""
    stored = {
        "rows": [
            {"gate": "floor", "leak": [0.506, 0.44, 0.57]},
            {"gate": "learned", "leak": [0.308, 0.25, 0.37]},
        ]
    }
    right = (
        "| gate | leak [95% CI] |\n|---|---|\n"
        "| floor | 0.506 [0.440, 0.570] |\n| learned | 0.308 [0.250, 0.370] |\n"
    )
    assert table_disagreements(stored, right) == []
    swapped = right.replace("| learned | 0.308", "| learned | 0.506")
    assert table_disagreements(stored, swapped) == ["learned: 0.506"]


def test_a_cell_holding_another_field_of_its_own_row_disagrees() -> None:
    """The planted drift the row check lets through: the ms cell shows the row's calls at another scale
    (2.77 calls read as 0.003 s). Every cell is a number of its own row; no one field reads the column."""
    stored = {
        "rows": [
            {"gate": "floor", "calls": 0.0, "ms": 0.021},
            {"gate": "rerank", "calls": 2.77, "ms": 20.436},
            {"gate": "learned", "calls": 0.0, "ms": 0.004},
        ]
    }
    right = "| gate | calls | ms |\n|---|---|---|\n| floor | 0.00 | 0.021 |\n| rerank | 2.77 | 20.436 |\n"
    right += "| learned | 0.00 | 0.004 |\n"
    assert table_disagreements(stored, right) == [] and column_disagreements(stored, right) == []
    swapped = right.replace("| 2.77 | 20.436 |", "| 2.77 | 0.003 |")
    assert table_disagreements(stored, swapped) == []  # 2.77 x 0.001: a number of the row
    assert column_disagreements(stored, swapped) == ["rerank: 0.003"]
    keyed_twice = "| gate | ms |\n|---|---|\n| floor | 0.021 |\n| floor | 20.436 |\n"
    assert column_disagreements(stored, keyed_twice) == []  # rows a first cell cannot name: not judged


def test_the_gallery_s_own_prose_types_no_measurement() -> None:
    titles = [s.title for s in studies().values()] + [e.title for e in entries([], ROOT / "results")]
    typed = [f"{t!r}: {n}" for t in titles for _, n in docs_prose.unmarked(t)]
    assert typed == [], "a gallery title types a measurement: " + "; ".join(typed)


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
    from nomad_lab.publish.gallery import anchors
    from nomad_lab.publish.main_job import steps

    lines = [("nomad-lab " + shlex.join(argv), what) for what, argv in steps()]
    ids = set(anchors(entries(lines, ROOT / "results"))) | {"headlines"}
    linked = {
        (p.name, a) for p in PAGES for a in re.findall(r"index\.html#([\w-]+)", p.read_text(encoding="utf-8"))
    }
    assert linked and sorted((page, a) for page, a in linked if a not in ids) == []


COMPARATIVES = {
    frozenset(pair)
    for pair in (
        ("more", "fewer"),
        ("more", "less"),
        ("longer", "less time"),
        ("higher", "lower"),
        ("within", "outside"),
        ("reaches", "falls short of"),
        ("a significant", "no significant"),
    )
}
"""Claim words that stay true whichever way the comparison falls: a predicate and its opposite."""


def claim_words_problem(yes: str, no: str) -> str | None:
    """None when ``yes``/``no`` are a predicate and its negation ("met"/"not met", "beats"/"does not
    beat") or a listed comparative pair; else why the sentence would turn false when the claim flips
    (two subjects such as "placement"/"the judges" leave the rest of the sentence about one of them)."""
    a, b = yes.replace("_", " ").strip(), no.replace("_", " ").strip()
    for word, other in ((a, b), (b, a)):
        negated = other.removeprefix("not ").removeprefix("does not ").removeprefix("do not ")
        if other != word and other.startswith(("not ", "does not ", "do not ")) and word.startswith(negated):
            return None
    if frozenset((a, b)) in COMPARATIVES:
        return None
    return f"yes={yes} no={no}: not a predicate and its opposite, so the sentence cannot hold both ways"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_claim_renders_a_sentence_true_whichever_way_it_falls(page: Path) -> None:
    words = re.findall(r"<!-- claim [^>]*?yes=(\S+) no=(\S+)", page.read_text(encoding="utf-8"))
    problems = [p for yes, no in words if (p := claim_words_problem(yes, no))]
    assert problems == [], f"{page.relative_to(ROOT)}: {problems}"


def test_a_claim_naming_two_subjects_is_refused() -> None:
    """The planted drift: "the longer step is <placement|the judges>, which also prefills fewer tokens
    than the judges" reads "the judges ... than the judges" once the timing flips."""
    assert claim_words_problem("placement", "the_judges") is not None
    assert claim_words_problem("beats", "does_not_beat") is None
    assert claim_words_problem("not_met", "met") is None and claim_words_problem("more", "fewer") is None
