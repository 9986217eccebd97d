"""``results/index.html``: every figure with its table and command, image paths relative to the page."""

from __future__ import annotations

import re
from pathlib import Path

from nomad_lab.publish.gallery import entries, headline_figures, markdown_html, write_gallery
from nomad_lab.studies.registry import get, studies
from tests.support.paths import ROOT

PNG = bytes.fromhex("89504e470d0a1a0a")  # enough for a file that exists; the browser test loads real ones


def test_markdown_tables_become_html_tables_with_their_intervals() -> None:
    page = markdown_html(
        "**Gemma** `k`\n\n| floor | leak [95% CI] |\n|---|---:|\n| 0.62 | 0.009 [0.000, 0.026] |\n"
    )
    assert "<p><strong>Gemma</strong> <code>k</code></p>" in page
    assert "<thead><tr><th>floor</th><th>leak [95% CI]</th></tr></thead>" in page
    assert "<tr><td>0.62</td><td>0.009 [0.000, 0.026]</td></tr>" in page and "---" not in page
    assert "&lt;script&gt;" in markdown_html("| <script> |\n|---|\n| x |")
    linked = markdown_html(
        "| [Floor](docs/floor_sweep.md) <!-- fig a.json#b -->0.61<!-- /fig --> |\n|---|\n", "../"
    )
    assert '<a href="../docs/floor_sweep.md">Floor</a> 0.61' in linked and "fig" not in linked


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
    assert sources == ["placement/prefill_vs_turn.png", "placement/prefill_vs_turn.png"]  # headline, section
    assert all(not s.startswith("/") and (results / s).is_file() for s in sources)
    assert "<code>nomad-lab study placement</code>" in text and "step 3, 321 s" in text and "f" * 16 in text
    assert (
        text.index('id="headlines"')
        < text.index("<h2>What it found</h2>")
        < text.index('<section id="placement"')
    )
    assert "2026-02-01" in text and "2026-01-01" not in text  # the newest report of a folder
    assert "<code>1f06a1bd627a1fd7</code>" in text and "<code>abc123</code> on main" in text
    listed = {e.title: e for e in entries(steps, results)}
    assert listed[placement.title].in_main_job and not listed[get("growth").title].in_main_job
    assert "figure not stored yet: <code>results/library_growth/leak_vs_library_size.png</code>" in text
    assert listed["Benchmark: core_throughput"].command == "python benchmarks/core_throughput.py"
    assert "validate" not in listed  # a step that publishes nothing has no section


def test_every_result_the_main_job_does_not_make_is_published_with_its_command() -> None:
    from nomad_lab.core.workspace import RESULTS_DIR

    listed = [e for e in entries([], RESULTS_DIR) if e.folder != "benchmarks"]
    titles = {e.title for e in listed}
    registered = studies().values()
    # every study and every other published run of one is read from the registry, not listed by hand
    assert {s.title for s in registered} | {o.title for s in registered for o in s.also} <= titles
    for entry in listed:
        assert "<" not in entry.command, f"{entry.title}: placeholder in {entry.command}"
        assert not entry.in_main_job
        if entry.folder == "transport":
            continue  # it needs a real Ollama: nothing stored here
        folder = RESULTS_DIR / entry.folder
        for name in entry.figures + entry.tables:
            assert (folder / name).is_file(), f"{entry.title}: {entry.folder}/{name} missing"
        if not entry.tables:
            assert list(folder.glob("*.md")), f"{entry.title}: no report in {entry.folder}"


def test_the_page_opens_with_the_headline_figures_then_the_findings_then_folded_long_tables(
    tmp_path: Path,
) -> None:
    results = tmp_path / "results"
    for src in ("floor_sweep/leak_vs_recall.png", "placement/prefill_vs_turn.png", "estimator/by_class.png"):
        (results / src).parent.mkdir(parents=True, exist_ok=True)
        (results / src).write_bytes(PNG)
    rows = "".join(f"| {i} | {i / 10} |\n" for i in range(12))
    (results / "floor_sweep" / "floor_sweep.md").write_text("| floor | leak |\n|---|---|\n" + rows)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "floor_sweep.md").write_text("# Floor sweep\n")
    (tmp_path / "README.md").write_text(
        "# x\n\n## What it found\n\n| study | what it found |\n|---|---|\n"
        "| [Floor sweep](docs/floor_sweep.md) | leak <!-- fig r.json#a -->0.345<!-- /fig --> |\n\n## Next\n"
    )
    assert [src for _, src in headline_figures(results)] == [
        "floor_sweep/leak_vs_recall.png",
        "placement/prefill_vs_turn.png",
        "estimator/by_class.png",
    ]
    text = write_gallery(results, {"steps": {}}, []).read_text()
    body = text[text.index("</h1>") + 5 :]
    assert body.lstrip().startswith('<section id="headlines"')
    assert re.findall(r'<img src="([^"]+)"', body)[:3] == [src for _, src in headline_figures(results)]
    assert '<a href="../docs/floor_sweep.md">Floor sweep</a>' in text and "leak 0.345" in text
    assert "<details><summary>floor_sweep/floor_sweep.md (12 rows)</summary>" in text
    assert 'write-up: <a href="../docs/floor_sweep.md">docs/floor_sweep.md</a>' in text


def test_a_result_made_outside_the_main_job_shows_its_recorded_provenance(tmp_path: Path) -> None:
    results = tmp_path / "results"
    (results / "kv_window").mkdir(parents=True)
    (results / "kv_window" / "table.md").write_text("| a |\n|---|\n| 1 |\n")
    (results / "kv_window" / "provenance.json").write_text(
        '{"createdAt": "2026-12-03T20:00:00.000Z", "commit": "0123456789abcdef", "dirty": true, '
        '"run_id": "run-9", "fingerprints": ["ab12ab12ab12ab12"], '
        '"models": {"embedded:gemma3-270m": "feedbeef"}}'
    )
    (results / "judge_ladder").mkdir()
    (results / "judge_ladder" / "ladder.md").write_text("| a |\n|---|\n| 1 |\n")
    text = write_gallery(results, {"steps": {}}, []).read_text()
    kv = text[text.index("<h2>Context window with per-layer KV accounting</h2>") :]
    kv = kv[: kv.index("</section>")]
    assert "at commit <code>0123456789ab</code> (uncommitted changes); run <code>run-9</code>" in kv
    assert "ab12ab12ab12ab12" in kv and "embedded:gemma3-270m sha256 feedbeef" in kv
    assert "before commands recorded their provenance: rerun it" in text  # the ladder has no record yet


def test_every_stored_benchmark_names_its_command() -> None:
    from nomad_lab.core.workspace import RESULTS_DIR

    benchmarks = [e for e in entries([], RESULTS_DIR) if e.folder == "benchmarks"]
    assert benchmarks and all(e.command.startswith("python benchmarks/") for e in benchmarks)


def test_the_committed_gallery_equals_a_regeneration() -> None:
    """The planted drift: a study reruns (its tables change) and the committed page keeps showing the old
    ones. The page is a function of what is stored, so it must equal its regeneration."""
    from nomad_lab.publish import main_job as reproduce

    committed = (ROOT / "results" / "index.html").read_text(encoding="utf-8").splitlines()
    fresh = reproduce.gallery_page(ROOT).splitlines()
    stale = next((i for i, (a, b) in enumerate(zip(committed, fresh, strict=False)) if a != b), None)
    where = "" if stale is None else f" from line {stale + 1}: {committed[stale][:120]!r}"
    assert committed == fresh, f"results/index.html is stale{where}; run nomad-lab reproduce --gallery-only"
