"""``results/index.html``: every figure with its table and command, image paths relative to the page."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from nomad_lab.studies.gallery import entries, markdown_html, write_gallery
from nomad_lab.studies.registry import get, studies

PNG = bytes.fromhex("89504e470d0a1a0a")  # enough for a file that exists; the browser test loads real ones


def test_markdown_tables_become_html_tables_with_their_intervals() -> None:
    page = markdown_html(
        "**Gemma** `k`\n\n| floor | leak [95% CI] |\n|---|---:|\n| 0.62 | 0.009 [0.000, 0.026] |\n"
    )
    assert "<p><strong>Gemma</strong> <code>k</code></p>" in page
    assert "<thead><tr><th>floor</th><th>leak [95% CI]</th></tr></thead>" in page
    assert "<tr><td>0.62</td><td>0.009 [0.000, 0.026]</td></tr>" in page and "---" not in page
    assert "&lt;script&gt;" in markdown_html("| <script> |\n|---|\n| x |")


def test_the_page_shows_each_step_and_names_the_command_of_what_the_job_does_not_make(tmp_path: Path) -> None:
    results = tmp_path / "results"
    placement = get("placement")
    (results / "placement").mkdir(parents=True)
    (results / "placement" / "prefill_vs_turn.png").write_bytes(PNG)
    (results / "placement" / "placement.md").write_text("| series | ms |\n|---|---:|\n| tail | 2219 |\n")
    (results / "retrieval" / "core-floor-0").mkdir(parents=True)
    for stamp in ("2026-01-01", "2026-02-01"):
        (results / "retrieval" / "core-floor-0" / f"retrieval-{stamp}.md").write_text(
            f"| run |\n|---|\n| {stamp} |\n"
        )
    (results / "benchmarks").mkdir()
    (results / "benchmarks" / "core_throughput.md").write_text(
        "command: `python benchmarks/core_throughput.py`\n"
    )
    steps = [
        ("nomad-lab eval check", "validate"),
        ("nomad-lab eval retrieval --suite core --floor 0 --report results/retrieval/core-floor-0", "core"),
        ("nomad-lab study placement", placement.title),
    ]
    manifest = {
        "git": {"gitSha": "abc123", "gitBranch": "main", "gitDirty": False},
        "fingerprint": "1f06a1bd627a1fd7",
        "steps": {
            "nomad-lab study placement": {
                "step": 3,
                "seconds": 321.4,
                "commit": "abc123def4567",
                "dirty": False,
                "fingerprints": ["f" * 16],
            }
        },
    }
    page = write_gallery(results, manifest, steps)
    assert page == results / "index.html"
    text = page.read_text()
    sources = re.findall(r'<img src="([^"]+)"', text)
    assert sources == ["placement/prefill_vs_turn.png"]
    assert all(not s.startswith("/") and (results / s).is_file() for s in sources)
    assert "<code>nomad-lab study placement</code>" in text and "step 3, 321 s" in text and "f" * 16 in text
    assert "2026-02-01" in text and "2026-01-01" not in text  # the newest report of a folder
    assert "<code>1f06a1bd627a1fd7</code>" in text and "<code>abc123</code> on main" in text
    listed = {e.title: e for e in entries(steps, results)}
    assert listed[placement.title].in_main_job and not listed[get("growth").title].in_main_job
    assert "figure not stored yet: <code>results/library_growth/leak_vs_library_size.png</code>" in text
    assert listed["Benchmark: core_throughput"].command == "python benchmarks/core_throughput.py"
    assert "validate" not in listed  # a step that publishes nothing has no section


def test_every_result_the_main_job_does_not_make_is_published_with_its_command() -> None:
    """Read from the registry (unpublished studies, each study's other runs) and reproduce's own reports:
    every file the page names is stored, and no section of the real page is a hand-written list."""
    from nomad_lab.cli.reproduce import OWN_REPORTS, steps
    from nomad_lab.core.workspace import RESULTS_DIR

    lines = [("nomad-lab " + shlex.join(argv), what) for what, argv in steps()]
    reports = [("nomad-lab " + shlex.join(argv), what) for what, argv in OWN_REPORTS]
    listed = [e for e in entries(lines, RESULTS_DIR, reports) if not e.in_main_job]
    titles = {e.title for e in listed}
    for study in studies().values():
        assert study.published or study.title in titles
        assert {o.title for o in study.also} <= titles
    assert {what for what, _ in OWN_REPORTS} <= titles and "Call-log overhead" in titles
    for entry in listed:
        if entry.folder == "transport":
            continue  # it needs a real Ollama: nothing stored here
        folder = RESULTS_DIR / entry.folder
        for name in entry.figures + entry.tables:
            assert (folder / name).is_file(), f"{entry.title}: {entry.folder}/{name} missing"
        assert entry.tables, f"{entry.title}: no report in {entry.folder}"
