"""``results/index.html``: the published results on one static page, opened the way a reader looks.

Why: the published results are many files under ``results/``. The page opens with the headline figures
(each family's best gate against the floor, prefill by placement, estimator error by class; each links to
its full-size file), then links to the README and every ``docs/`` page, then the findings table of the
README (each row linking to its study page under ``docs/``), then one section
per study: its write-up page, command, provenance, figures and tables, long tables folded. A section's
provenance is its main-job step in ``results/manifest.json`` (time, commit, corpora) or else the
``provenance.json`` its own command wrote beside its files; both say dirty by the one rule of
:mod:`nomad_lab.eval.provenance`. It opens from disk without a server: every path is relative to the
page, and nothing is fetched.
"""

from __future__ import annotations

import html
import re
import shlex
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from nomad_lab.eval.provenance import read_provenance
from nomad_lab.publish.gallery_extras import BENCHMARK_COMMANDS, NOT_STUDIES, Entry
from nomad_lab.studies.registry import studies

PAGE = "index.html"
FOLD_ROWS = 8
"""A table with more body rows than this is folded (``<details>``) so a section stays about a screen."""

GATES_STUDY = "gates"
"""The study whose figure, when stored, is the headline "leak against recall for every gate"; until
then the floor sweep's leak-against-recall plot stands in."""

HEADLINES: tuple[tuple[str, str], ...] = (
    (
        "Two questions apart: off-topic leak (is the context about the question?) and unanswerable pass "
        "(does a passage state the answer?), each row at the recall it reaches",
        "floor_sweep/leak_vs_recall.png",
    ),
    ("Prefill per turn by RAG placement", "placement/prefill_vs_turn.png"),
    ("Token-estimator error by content class", "estimator/by_class.png"),
)
"""The headline figures, in order (paths under ``results/``)."""


def entries(step_lines: Sequence[tuple[str, str]], results: Path) -> list[Entry]:
    """The page's sections: each main-job step that publishes (a study or an ``--report``), then the
    registered studies the main job does not run and their other published runs (``Study.also``), the
    results no study makes (:mod:`gallery_extras`) and the stored benchmarks, each with its command."""
    registered = {
        " ".join(filter(None, [s.prefix, "nomad-lab " + shlex.join(s.command)])): s
        for s in studies().values()
    }
    out: list[Entry] = []
    for line, what in step_lines:
        study = registered.pop(line, None)
        if study is not None:
            folder = study.out_dir.removeprefix("results/")
            out.append(Entry(study.title, line, folder, study.figures, study.tables, True))
        elif "--report" in (argv := shlex.split(line)):
            folder = argv[argv.index("--report") + 1].removeprefix("results/")
            out.append(Entry(what, line, folder, (), _latest_md(results / folder), True))
    for line, study in registered.items():
        folder = study.out_dir.removeprefix("results/")
        out.append(Entry(study.title, line, folder, study.figures, study.tables, False))
    for study, other in ((s, o) for s in studies().values() for o in s.also):
        line = " ".join(filter(None, [other.prefix, "nomad-lab " + shlex.join(other.command)]))
        folder = other.out_dir.removeprefix("results/")
        page = study.out_dir.removeprefix("results/").split("/")[0]  # the study's page shows its other runs
        out.append(Entry(other.title, line, folder, other.figures, other.tables, False, page))
    covered = [e for e in out if e.figures or e.tables]
    out += [
        e if e.tables else replace(e, tables=_latest_md(results / e.folder))
        for e in NOT_STUDIES
        if not any(_covers(study, e) for study in covered)
    ]
    for path in sorted((results / "benchmarks").glob("*.md")):
        command = _first_command(path) or BENCHMARK_COMMANDS.get(path.stem, "(see the table)")
        out.append(Entry(f"Benchmark: {path.stem}", command, "benchmarks", (), (path.name,), False))
    return out


def _covers(study: Entry, extra: Entry) -> bool:
    """Whether a registered study's section already shows everything an extra entry would."""
    return (
        study.folder == extra.folder
        and set(extra.figures) <= set(study.figures)
        and set(extra.tables) <= set(study.tables)
    )


def _latest_md(folder: Path) -> tuple[str, ...]:
    """The newest report in a folder (reports are named by their timestamp)."""
    found = sorted(folder.glob("*.md"))
    return (found[-1].name,) if found else ()


def _first_command(path: Path) -> str | None:
    """A stored benchmark table names its command on a ``command:`` line."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("command:"):
            return line.removeprefix("command:").strip(" `")
    return None


def markdown_html(text: str, link_base: str = "") -> str:
    """The subset of markdown the results use: pipe tables, headings, paragraphs, `code`, **bold** and
    [links](target) (a relative target is prefixed with ``link_base``)."""
    out: list[str] = []
    table: list[list[str]] = []

    def flush() -> None:
        if table:
            head, *body = table
            out.append("<table><thead><tr>" + "".join(f"<th>{c}</th>" for c in head) + "</tr></thead><tbody>")
            out.extend("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in body)
            out.append("</tbody></table>")
            table.clear()

    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("<!--"):
            continue
        if line.startswith("|"):
            cells = [_inline(c.strip(), link_base) for c in line.strip("|").split("|")]
            if not all(re.fullmatch(r":?-{3,}:?", c) for c in cells):
                table.append(cells)
            continue
        flush()
        if heading := re.match(r"(#{1,4})\s+(.*)", line):
            level = min(len(heading.group(1)) + 2, 6)
            out.append(f"<h{level}>{_inline(heading.group(2), link_base)}</h{level}>")
        elif line:
            out.append(f"<p>{_inline(line, link_base)}</p>")
    flush()
    return "\n".join(out)


def _inline(text: str, link_base: str = "") -> str:
    text = re.sub(r"<!--.*?-->", "", text)
    escaped = html.escape(text, quote=False)
    escaped = re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped)
    escaped = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", escaped)

    def link(match: re.Match[str]) -> str:
        target = match.group(2)
        if not re.match(r"[a-z]+:|#|/", target):
            target = link_base + target
        return f'<a href="{html.escape(target)}">{match.group(1)}</a>'

    return re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", link, escaped)


def doc_page(entry: Entry, results: Path) -> str | None:
    """The study's write-up, ``docs/<first folder of its results>.md`` (of the study's results, for another
    published run of it), relative to the page; None when there is none."""
    name = (entry.page or entry.folder.split("/")[0]) + ".md"
    return f"../docs/{name}" if (results.parent / "docs" / name).is_file() else None


def _made(entry: Entry, step: dict[str, Any] | None, results: Path) -> str:
    """Where a section's files came from: its main-job step (time, commit, corpora), else the record its
    own command wrote (``provenance.json``), else that no record exists."""
    if step is not None:
        took = f"main job step {step['step']}, {step['seconds']:.0f} s"
        return f"{took}, {_commit(step)}; corpora: {_corpora(step.get('fingerprints', []))}"
    record = read_provenance(results / entry.folder)
    if record is not None:  # a table another command added to the folder has its own record
        files = record.get("files", {})
        record = next((files[n] for n in (*entry.tables, *entry.figures) if n in files), record)
        if record.get("rerun") is False:
            return f"not rerun at the current code ({html.escape(str(record.get('why')))}), {_commit(record)}"
        models = ", ".join(f"{k} sha256 {str(v)[:12]}" for k, v in record.get("models", {}).items())
        run = f"; run <code>{html.escape(str(record.get('run_id')))}</code>" if record.get("run_id") else ""
        return (
            f"made by its own command on {html.escape(str(record.get('createdAt', '-'))[:10])}, "
            f"{_commit(record)}{run}; corpora: {_corpora(record.get('fingerprints', []))}"
            + (f"; models: {html.escape(models)}" if models else "")
        )
    if entry.in_main_job:
        return "not yet run by the main job"
    return "made by its own command, before commands recorded their provenance: rerun it to record one"


def _commit(record: dict[str, Any]) -> str:
    dirty = " (uncommitted changes)" if record.get("dirty") else ""
    return f"at commit <code>{html.escape(str(record.get('commit'))[:12])}</code>{dirty}"


def _corpora(fingerprints: Sequence[str] | None) -> str:
    if fingerprints is None:
        return "unknown (the store was busy when the record was written)"
    return ", ".join(f"<code>{html.escape(f)}</code>" for f in fingerprints) or "-"


def _missing(what: str, path: str) -> str:
    return f"<p class=missing>{what} not stored yet: <code>results/{html.escape(path)}</code></p>"


def anchors(listed: Sequence[Entry]) -> list[str]:
    """Each section's id: its folder (``floor-sweep``), or for a second section of the same folder the
    folder and its first table, so a docs page can link ``index.html#<folder>``."""
    out: list[str] = []
    for entry in listed:
        slug = re.sub(r"[^a-z0-9]+", "-", entry.folder.lower()).strip("-")
        if slug in out:
            slug = re.sub(r"[^a-z0-9]+", "-", f"{entry.folder} {entry.tables[:1]}".lower()).strip("-")
        out.append(slug)
    return out


def _table(results: Path, src: str) -> str:
    """A stored table, folded when it is long, with a link to its file."""
    text = (results / src).read_text(encoding="utf-8")
    body = markdown_html(text)
    rows = body.count("<tr>") - body.count("<thead>")
    link = f'<p class=src>source: <a href="{html.escape(src)}">results/{html.escape(src)}</a></p>'
    if rows > FOLD_ROWS:
        summary = f"<summary>{html.escape(src)} ({rows} rows)</summary>"
        return f"<details>{summary}<div class=table>{body}</div></details>{link}"
    return f"<div class=table>{body}</div>{link}"


def _section(entry: Entry, anchor: str, results: Path, steps: dict[str, Any]) -> str:
    page = doc_page(entry, results)
    parts = [
        f'<section id="{anchor}"><h2>{html.escape(entry.title)}</h2>',
        f'<p class=doc>write-up: <a href="{html.escape(page)}">{html.escape(page[3:])}</a></p>'
        if page
        else "",
        f"<p class=cmd><code>{html.escape(entry.command)}</code></p>",
        f"<p class=prov>{_made(entry, steps.get(entry.command), results)}</p>",
    ]
    figures = []
    for name in entry.figures:
        src = f"{entry.folder}/{name}"
        if (results / src).is_file():
            figures.append(
                f'<figure><img src="{html.escape(src)}" alt="{html.escape(entry.title)}"></figure>'
            )
        else:
            parts.append(_missing("figure", src))
    if figures:
        parts.append("<div class=figs>" + "".join(figures) + "</div>")
    for name in entry.tables:
        src = f"{entry.folder}/{name}"
        parts.append(_table(results, src) if (results / src).is_file() else _missing("table", src))
    if not entry.figures and not entry.tables:
        parts.append("<p class=missing>nothing stored: run the command above</p>")
    parts.append("</section>")
    return "\n".join(p for p in parts if p)


def headline_figures(results: Path) -> list[tuple[str, str]]:
    """(caption, path under results/) of each stored headline figure; the gates study's figure takes
    the first slot once it is stored."""
    chosen = list(HEADLINES)
    gates = studies().get(GATES_STUDY)
    if gates is not None and gates.figures:
        src = f"{gates.out_dir.removeprefix('results/')}/{gates.figures[0]}"
        if (results / src).is_file():
            chosen[0] = (chosen[0][0], src)
    return [(caption, src) for caption, src in chosen if (results / src).is_file()]


def _headlines(results: Path, listed: Sequence[Entry], ids: Sequence[str]) -> str:
    by_folder = {e.folder: i for e, i in reversed(list(zip(listed, ids, strict=True))) if e.figures}
    figures = []
    for caption, src in headline_figures(results):
        target = by_folder.get(src.rsplit("/", 1)[0])
        label = f'<a href="#{target}">{html.escape(caption)}</a>' if target else html.escape(caption)
        full = f'<a href="{html.escape(src)}">full size</a>'
        figures.append(
            f'<figure class=headline><a href="{html.escape(src)}"><img src="{html.escape(src)}" '
            f'alt="{html.escape(caption)}"></a><figcaption>{label} ({full})</figcaption></figure>'
        )
    return '<section id="headlines" class=headlines>' + "".join(figures) + "</section>"


def pages(root: Path) -> str:
    """Links to the README and every page under ``docs/`` (reproduce and workbench first: how to rerun
    and how to use what is shown here), relative to the page."""
    docs = sorted((root / "docs").glob("*.md"))
    first = [d for name in ("reproduce.md", "workbench.md") for d in docs if d.name == name]
    links = ['<a href="../README.md">README</a>'] + [
        f'<a href="../docs/{html.escape(d.name)}">{html.escape(d.stem)}</a>'
        for d in first + [d for d in docs if d not in first]
    ]
    return "<nav class=pages>Pages: " + " · ".join(links) + "</nav>"


def findings(readme: Path) -> str | None:
    """The README's findings table (the first table under its ``## What it found`` heading), as
    markdown; None when the README has none."""
    if not readme.is_file():
        return None
    text = readme.read_text(encoding="utf-8")
    _, found, after = text.partition("\n## What it found")
    if not found:
        return None
    lines = after.split("\n## ", 1)[0].splitlines()
    table = [line for line in lines if line.startswith("|")]
    return "\n".join(table) or None


STYLE = """body{font-family:system-ui,sans-serif;max-width:72rem;margin:1rem auto;padding:0 1rem;color:#222}
h1{font-size:1.3rem;margin:.3rem 0}
table{border-collapse:collapse;margin:.5rem 0;font-size:.85rem}
td,th{border:1px solid #ccc;padding:.2rem .5rem}
th{background:#f3f3f3}img{max-width:100%}section{border-top:1px solid #ddd;margin-top:2rem}
.headlines{display:flex;flex-wrap:wrap;gap:.5rem;border:0;margin:0}
.headline{flex:1 1 28rem;margin:0;max-width:48rem}.headline img{width:100%}
.figs{display:flex;flex-wrap:wrap;gap:.5rem}
.figs figure{flex:1 1 24rem;margin:0;max-width:40rem}figcaption{font-size:.85rem;text-align:center}
.cmd code{background:#f6f6f6;padding:.2rem;display:block;white-space:pre-wrap}
.prov,.src,.doc{color:#555;font-size:.85rem}.missing{color:#a40}.pages{margin:.6rem 0;font-size:.9rem}"""


def write_gallery(results: Path, manifest: dict[str, Any], step_lines: Sequence[tuple[str, str]]) -> Path:
    """Write ``results/index.html`` for the steps (``(command line, what)``) and the stored manifest."""
    path = results / PAGE
    results.mkdir(parents=True, exist_ok=True)
    path.write_text(gallery_html(results, manifest, step_lines), encoding="utf-8")
    return path


def gallery_html(results: Path, manifest: dict[str, Any], step_lines: Sequence[tuple[str, str]]) -> str:
    """The gallery page's text: a function of the stored results, the manifest and the steps alone, so
    the committed page can be checked against a regeneration."""
    git = manifest.get("git", {})
    dirty = " (uncommitted changes)" if git.get("gitDirty") else ""
    versions = ", ".join(f"{k} {v}" for k, v in manifest.get("versions", {}).items() if v)
    digests = manifest.get("model_sha256", {})
    models = (
        ", ".join(
            f"{k} ({v:,} bytes" + (f", sha256 {digests[k][:12]})" if k in digests else ")")
            for k, v in manifest.get("models", {}).items()
        )
        or "-"
    )
    rows = {
        "commit": f"<code>{git.get('gitSha')}</code> on {git.get('gitBranch')}{dirty}",
        "updated": manifest.get("updated", "-"),
        "main job": f"{manifest.get('total_seconds', '-')} s over {len(manifest.get('steps', {}))} steps",
        "corpus fingerprint": f"<code>{manifest.get('fingerprint')}</code>",
        "machine": html.escape(str(manifest.get("platform", "-"))),
        "models": html.escape(models),
        "packages": html.escape(versions),
    }
    listed = entries(step_lines, results)
    ids = anchors(listed)
    found = findings(results.parent / "README.md")
    head = [
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>nomad-lab results</title>",
        f"<style>{STYLE}</style></head><body><h1>nomad-lab: published results</h1>",
        _headlines(results, listed, ids),
        pages(results.parent),
        "<h2>What it found</h2>",
        markdown_html(found, link_base="../")
        if found
        else "<p class=missing>README.md has no findings table</p>",
        "<details><summary>Provenance of the main job (<code>nomad-lab reproduce</code>; "
        '<a href="manifest.json">results/manifest.json</a>)</summary><table>',
        *(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows.items()),
        "</table></details>",
        "<details><summary>Every section</summary><ul>"
        + "".join(
            f'<li><a href="#{i}">{html.escape(e.title)}</a></li>' for e, i in zip(listed, ids, strict=True)
        )
        + "</ul></details>",
    ]
    body = [_section(e, i, results, manifest.get("steps", {})) for e, i in zip(listed, ids, strict=True)]
    return "\n".join([*head, *body, "</body></html>"]) + "\n"
