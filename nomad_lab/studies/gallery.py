"""``results/index.html``: every published figure on one static page, with its provenance.

Why: the published results are many files under ``results/`` whose commands were scattered through
the README. The page shows, per figure: its table (with the intervals the table carries), the command
that made it, how long that step took, the corpus fingerprints it read and the commit it was made at,
from ``results/manifest.json``; a figure the main job does not make names its own command. It opens
from disk without a server: every image path is relative to the page, and nothing is fetched.

Nothing is listed here by hand: the sections are the main job's steps, the registry's studies (each
study's ``out_dir``, ``figures``, ``tables`` and ``command``, and its other published runs,
``Study.also``), the eval reports ``nomad-lab reproduce`` names as made by their own command, and any
other results folder whose table states its command (benchmarks).
"""

from __future__ import annotations

import html
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nomad_lab.studies.registry import studies

PAGE = "index.html"


@dataclass(frozen=True)
class Entry:
    """One section of the page: what it shows and where it came from."""

    title: str
    command: str
    folder: str  # under results/
    figures: tuple[str, ...]
    tables: tuple[str, ...]
    in_main_job: bool


def _entry(title: str, line: str, out_dir: str, figures: tuple[str, ...], tables: tuple[str, ...]) -> Entry:
    return Entry(title, line, out_dir.removeprefix("results/"), figures, tables, False)


def _line(prefix: str, command: tuple[str, ...]) -> str:
    return " ".join(filter(None, [prefix, "nomad-lab " + shlex.join(command)]))


def entries(
    step_lines: Sequence[tuple[str, str]], results: Path, reports: Sequence[tuple[str, str]] = ()
) -> list[Entry]:
    """The page's sections: each main-job step that publishes (a study or an ``--report``); then every
    registered study the main job does not run, and each study's other published runs (``Study.also``),
    each with its own command; then ``reports`` (``(command line, what)`` of eval reports made by their
    own command); then any other results folder whose tables state the command that made them."""
    registered = {_line(s.prefix, s.command): s for s in studies().values()}
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
        out.append(_entry(study.title, line, study.out_dir, study.figures, study.tables))
    for study in studies().values():
        for other in study.also:
            line = _line(other.prefix, other.command)
            out.append(_entry(other.title, line, other.out_dir, other.figures, other.tables))
    for line, what in reports:
        folder = shlex.split(line)[shlex.split(line).index("--report") + 1]
        out.append(_entry(what, line, folder, (), _latest_md(results / folder.removeprefix("results/"))))
    claimed = {e.folder.split("/")[0] for e in out}
    for folder in sorted(p for p in results.glob("*/") if p.is_dir() and p.name not in claimed):
        for path in sorted(folder.glob("*.md")):
            if (command := _stated_command(path)) is not None:
                out.append(Entry(_title(path), command, folder.name, (), (path.name,), False))
    return out


def _latest_md(folder: Path) -> tuple[str, ...]:
    """The newest report in a folder (reports are named by their timestamp)."""
    found = sorted(folder.glob("*.md"))
    return (found[-1].name,) if found else ()


def _stated_command(path: Path) -> str | None:
    """The command a stored table names: a ``command:`` line, or a line that is one backticked
    ``python ...``/``nomad-lab ...`` command. A benchmark table that names none still shows, with
    "(see the table)"; any other unclaimed table is not a published result (None)."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("command:"):
            return line.removeprefix("command:").strip(" `")
        if re.fullmatch(r"`(python|nomad-lab) [^`]+`", line.strip()):
            return line.strip(" `")
    return "(see the table)" if path.parent.name == "benchmarks" else None


def _title(path: Path) -> str:
    """A stored table's first heading, else ``Benchmark: <name>``."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if heading := re.match(r"#{1,4}\s+(.*)", line):
            return heading.group(1).strip()
    return f"Benchmark: {path.stem}"


def markdown_html(text: str) -> str:
    """The subset of markdown the results use: pipe tables, headings, paragraphs, `code`, **bold**."""
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
        if line.startswith("|"):
            cells = [_inline(c.strip()) for c in line.strip("|").split("|")]
            if not all(re.fullmatch(r":?-{3,}:?", c) for c in cells):
                table.append(cells)
            continue
        flush()
        if heading := re.match(r"(#{1,4})\s+(.*)", line):
            level = min(len(heading.group(1)) + 2, 6)
            out.append(f"<h{level}>{_inline(heading.group(2))}</h{level}>")
        elif line:
            out.append(f"<p>{_inline(line)}</p>")
    flush()
    return "\n".join(out)


def _inline(text: str) -> str:
    escaped = html.escape(text, quote=False)
    escaped = re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped)
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", escaped)


def _made(entry: Entry, step: dict[str, Any] | None) -> str:
    """Where a section's files came from: its main-job step (time, commit, corpora), or its own command."""
    if step is None:
        return (
            "not yet run by the main job"
            if entry.in_main_job
            else "made by its own command, not the main job"
        )
    corpora = ", ".join(f"<code>{f}</code>" for f in step.get("fingerprints", [])) or "-"
    dirty = " (uncommitted changes)" if step.get("dirty") else ""
    commit = html.escape(str(step.get("commit"))[:12])
    took = f"step {step['step']}, {step['seconds']:.0f} s"
    return f"{took}, at commit <code>{commit}</code>{dirty}; corpora: {corpora}"


def _missing(what: str, path: str) -> str:
    return f"<p class=missing>{what} not stored yet: <code>results/{html.escape(path)}</code></p>"


def _section(number: int, entry: Entry, results: Path, steps: dict[str, Any]) -> str:
    parts = [
        f'<section id="s{number}"><h2>{html.escape(entry.title)}</h2>',
        f"<p class=cmd><code>{html.escape(entry.command)}</code></p>",
        f"<p class=prov>{_made(entry, steps.get(entry.command))}</p>",
    ]
    for name in entry.figures:
        src = f"{entry.folder}/{name}"
        if (results / src).is_file():
            parts.append(f'<figure><img src="{html.escape(src)}" alt="{html.escape(entry.title)}"></figure>')
        else:
            parts.append(_missing("figure", src))
    for name in entry.tables:
        src = f"{entry.folder}/{name}"
        if (results / src).is_file():
            parts.append(
                f"<div class=table>{markdown_html((results / src).read_text(encoding='utf-8'))}</div>"
            )
            parts.append(
                f'<p class=src>source: <a href="{html.escape(src)}">results/{html.escape(src)}</a></p>'
            )
        else:
            parts.append(_missing("table", src))
    if not entry.figures and not entry.tables:
        parts.append("<p class=missing>nothing stored: run the command above</p>")
    parts.append("</section>")
    return "\n".join(parts)


STYLE = """body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:.5rem 0;font-size:.9rem}td,th{border:1px solid #ccc;padding:.2rem .5rem}
th{background:#f3f3f3}img{max-width:100%}section{border-top:1px solid #ddd;margin-top:2rem}
.cmd code{background:#f6f6f6;padding:.2rem;display:block;white-space:pre-wrap}
.prov,.src{color:#555;font-size:.85rem}.missing{color:#a40}"""


def write_gallery(
    results: Path,
    manifest: dict[str, Any],
    step_lines: Sequence[tuple[str, str]],
    reports: Sequence[tuple[str, str]] = (),
) -> Path:
    """Write ``results/index.html`` for the steps (``(command line, what)``), the eval reports made by
    their own command (same shape) and the stored manifest."""
    git = manifest.get("git", {})
    dirty = " (uncommitted changes)" if git.get("gitDirty") else ""
    versions = ", ".join(f"{k} {v}" for k, v in manifest.get("versions", {}).items() if v)
    models = ", ".join(f"{k} ({v:,} bytes)" for k, v in manifest.get("models", {}).items()) or "-"
    rows = {
        "commit": f"<code>{git.get('gitSha')}</code> on {git.get('gitBranch')}{dirty}",
        "updated": manifest.get("updated", "-"),
        "main job": f"{manifest.get('total_seconds', '-')} s over {len(manifest.get('steps', {}))} steps",
        "corpus fingerprint": f"<code>{manifest.get('fingerprint')}</code>",
        "machine": html.escape(str(manifest.get("platform", "-"))),
        "models": html.escape(models),
        "packages": html.escape(versions),
    }
    head = [
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>nomad-lab results</title>",
        f"<style>{STYLE}</style></head><body><h1>nomad-lab: published results</h1>",
        "<p>Made by <code>nomad-lab reproduce</code> (each section names its own command). Provenance from "
        '<a href="manifest.json">results/manifest.json</a>:</p><table>',
        *(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows.items()),
        "</table>",
    ]
    listed = entries(step_lines, results, reports)
    toc = (
        "<ul>"
        + "".join(f'<li><a href="#s{i}">{html.escape(e.title)}</a></li>' for i, e in enumerate(listed, 1))
        + "</ul>"
    )
    body = [_section(i, e, results, manifest.get("steps", {})) for i, e in enumerate(listed, 1)]
    path = results / PAGE
    results.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join([*head, toc, *body, "</body></html>"]) + "\n", encoding="utf-8")
    return path
