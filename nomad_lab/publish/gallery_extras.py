"""Published results that no registered study makes: their folders, files and the commands that write them.

Why a module of its own: these are the one place the gallery names results by hand, and none of them is
a study (generation reports, retrieval ablations, benchmark tables). Every study, and every other
published run of one (``Study.also``), comes from the registry; an entry here whose files a registered
study's section already shows is skipped (:func:`nomad_lab.publish.gallery.entries`).
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
    page: str = ""  # its docs page when not its folder's (another published run of a study: the study's)


def _own(
    title: str, command: str, folder: str, figures: tuple[str, ...] = (), tables: tuple[str, ...] = ()
) -> Entry:
    return Entry(title, command, folder, figures, tables, False)


NOT_STUDIES: tuple[Entry, ...] = (
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
        "What reading P(true) costs per judge call",
        "python benchmarks/judge_confidence_cost.py --rounds 1",
        "judge_confidence",
        tables=("cost.md",),
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
    _own(
        "Gate leaderboard on the Gutenberg books' labels",
        "nomad-lab study gates --store runs/books.duckdb --corpus datasets/library_growth "
        "--goldens datasets/corpora/books/goldens --suite labelled --no-bank --fit pool pool,coverage "
        "--out results/gates/books",
        "gates/books",
        figures=("gates.png",),
        tables=("gates.md",),
    ),
    _own(
        "Drafting speed: goldens draft per folder (MB/s)",
        "python benchmarks/drafting_throughput.py --big DIR",
        "label_free",
        tables=("drafting.md",),
    ),
)
"""Published results no study makes, each with its command and files; an entry without tables shows the
newest report in its folder."""

BENCHMARK_COMMANDS: dict[str, str] = {
    "embedder_throughput": "python benchmarks/embedder_throughput.py --chunks 64 --spec st: "
    "--spec wordllama: --spec gguf:smollm2-135m --served wordllama: "
    "--out results/benchmarks/embedder_throughput.md",
}
"""Commands of stored benchmark tables written before their script headed the table with a ``command:``
line (the embedder benchmark does now; its stored table predates that)."""
