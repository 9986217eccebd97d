"""``results/index.html``: every published figure on one static page, with its provenance.

Why: the published results are many files under ``results/`` whose commands were scattered through
the README. The page shows, per figure: its table (with the intervals the table carries), the command
that made it, how long that step took, the corpus fingerprints it read and the commit it was made at,
from ``results/manifest.json``; a figure the main job does not make names its own command. It opens
from disk without a server: every image path is relative to the page, and nothing is fetched.
"""

from __future__ import annotations

import html
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, replace
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


def _own(
    title: str, command: str, folder: str, figures: tuple[str, ...] = (), tables: tuple[str, ...] = ()
) -> Entry:
    return Entry(title, command, folder, figures, tables, False)


OTHER_COMMANDS: tuple[Entry, ...] = (
    _own(
        "Generation eval, SmolLM2 135M, first 20 core questions, all modes",
        "nomad-lab eval generation --model embedded:smollm2-135m --all-modes --suite core --limit 20 "
        "--repeats 1 --report results/generation/smollm2-core-limit20-all-modes",
        "generation/smollm2-core-limit20-all-modes",
    ),
    _own(
        "Generation eval, SmolLM2 135M, long_context, e2e",
        "nomad-lab eval generation --model embedded:smollm2-135m --mode e2e --suite long_context "
        "--repeats 1 --report results/generation/smollm2-long_context-e2e",
        "generation/smollm2-long_context-e2e",
    ),
    _own(
        "Embedders side by side: recall, leak, calibrated floor, and whether it transfers; floor presets",
        "nomad-lab study embedders --embedder st: --embedder wordllama: --store runs/embedders.duckdb "
        "--out results/embedders",
        "embedders",
        ("embedders.png",),
        ("embedders.md", "presets-st.md", "presets-wordllama.md"),
    ),
    _own(
        "Library scale: leak and the calibrated floor up to 51 MB of Debian documentation (WordLlama)",
        "nomad-lab library build && nomad-lab study growth --library runs/library --books 250 1000 2500 5144 "
        "--embedder wordllama:256 --no-judge --floor 0 0.32 0.51 --alpha 0.1 --store runs/library.duckdb "
        "--out results/library_scale",
        "library_scale",
        ("leak_vs_library_size.png",),
        ("growth.md",),
    ),
    _own(
        "The judge's confidence: agreement, tau curve, (floor, tau) surface (Gemma 3 270M, sample of 50)",
        "nomad-lab study judges --judge-model embedded:gemma3-270m --suite core,off_topic --sample 50 "
        "--store runs/judge.duckdb --out results/judge_confidence",
        "judge_confidence",
        ("confidence_embedded_gemma3_270m.png", "judges.png"),
        ("confidence_embedded_gemma3_270m.md", "judges.md", "cost.md"),
    ),
    _own(
        "The judge ladder: four small GGUF judges on a 30-question stratified sample",
        "NOMAD_LAB_MODELS=<assembled ladder GGUFs> nomad-lab study ladder --sample 30 "
        "--store runs/judge.duckdb --run <stored core,off_topic run at floor 0>",
        "judge_ladder",
        tables=("ladder.md",),
    ),
    _own(
        "Per-passage judge against one verdict per set (Gemma 3 270M)",
        "nomad-lab study per-passage --judge-model embedded:gemma3-270m --sample 40 "
        "--store runs/judge.duckdb --run <stored core,off_topic run at floor 0>",
        "judge_per_passage",
        tables=("per_passage.md",),
    ),
    _own(
        "Per-passage judge against one verdict per set (Qwen2.5-Coder 0.5B)",
        "NOMAD_LAB_MODELS=<assembled ladder GGUFs> nomad-lab study per-passage --judge-model "
        "embedded:qwen2.5-coder-0.5b --sample 40 --store runs/judge.duckdb "
        "--run <stored core,off_topic run at floor 0> --out results/judge_per_passage/qwen2.5-coder-0.5b",
        "judge_per_passage/qwen2.5-coder-0.5b",
        tables=("per_passage.md",),
    ),
    _own(
        "Per-passage judge against one verdict per set (Qwen2.5-Coder 1.5B)",
        "NOMAD_LAB_MODELS=<assembled ladder GGUFs> nomad-lab study per-passage --judge-model "
        "embedded:qwen2.5-coder-1.5b --sample 40 --store runs/judge.duckdb "
        "--run <stored core,off_topic run at floor 0> --out results/judge_per_passage/qwen2.5-coder-1.5b",
        "judge_per_passage/qwen2.5-coder-1.5b",
        tables=("per_passage.md",),
    ),
    _own(
        "Context window with per-layer KV accounting",
        "nomad-lab study kv-window",
        "kv_window",
        tables=("table.md",),
    ),
    _own(
        "Query rewrite: free text against the structured form (paired)",
        "nomad-lab study rewrite --store runs/budget.duckdb",
        "rewrite",
        tables=("summary.md",),
    ),
    _own(
        "Model-call log overhead",
        "python benchmarks/call_log_overhead.py --calls 2000 --runs 8 --out results/call_log/overhead.md",
        "call_log",
        tables=("overhead.md",),
    ),
)
"""Published results made by their own commands (not by ``nomad-lab reproduce``), each with its files; an
entry without tables shows the newest report in its folder."""


def entries(step_lines: Sequence[tuple[str, str]], results: Path) -> list[Entry]:
    """The page's sections: each main-job step that publishes (a study or an ``--report``), then the
    registered studies and other results the main job does not make, each with its own command."""
    registered = {"nomad-lab " + shlex.join(s.command): s for s in studies().values()}
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
    out += [e if e.tables else replace(e, tables=_latest_md(results / e.folder)) for e in OTHER_COMMANDS]
    bench = sorted((results / "benchmarks").glob("*.md"))
    for path in bench:
        out.append(
            Entry(f"Benchmark: {path.stem}", _first_command(path), "benchmarks", (), (path.name,), False)
        )
    return out


def _latest_md(folder: Path) -> tuple[str, ...]:
    """The newest report in a folder (reports are named by their timestamp)."""
    found = sorted(folder.glob("*.md"))
    return (found[-1].name,) if found else ()


def _first_command(path: Path) -> str:
    """A stored benchmark table names its command on a ``command:`` line."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("command:"):
            return line.removeprefix("command:").strip(" `")
    return "(see the table)"


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


def write_gallery(results: Path, manifest: dict[str, Any], step_lines: Sequence[tuple[str, str]]) -> Path:
    """Write ``results/index.html`` for the steps (``(command line, what)``) and the stored manifest."""
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
    listed = entries(step_lines, results)
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
