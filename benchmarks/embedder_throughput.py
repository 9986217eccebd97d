"""Benchmark: embedding throughput (chunks/s) per embedder spec, in one run, as ratios to MiniLM.

Embedding is the slow step of an index build, so this is what decides how long a library takes to index
with each model. The same real corpus chunks (3,000 characters, as indexed) are embedded by every spec in
turn, in this process, after one warm-up batch each; the first spec is the baseline the ratios are
against (a noisy shared machine moves seconds, much less ratios). ``ollama://`` and ``openai://`` specs
run against ``nomad-lab serve --embed`` started here over the same local model, so their row is that
model plus the HTTP round trips.

    python benchmarks/embedder_throughput.py --chunks 64 --spec st: --spec wordllama: \
        --spec gguf:smollm2-135m --served wordllama: --out results/benchmarks/embedder_throughput.md
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

from _measure import record

from nomad_lab.core.workspace import DEFAULT_CORPUS_DIR
from nomad_lab.data.corpus import load_corpus
from nomad_lab.eval.provenance import platform_info
from nomad_lab.retrieval.embedding import load_embedder
from nomad_lab.retrieval.index import chunk_text
from nomad_lab.serve.process import ServerProcess, free_port


def chunks(count: int) -> list[str]:
    texts = [piece for doc in load_corpus(DEFAULT_CORPUS_DIR).docs for piece in chunk_text(doc.text)]
    return texts[:count]


def throughput(spec: str, texts: list[str]) -> tuple[float, int]:
    """(chunks per second, dimension) of one spec over ``texts`` after a warm-up."""
    embedder = load_embedder(spec)
    embedder.embed(texts[:4])
    start = time.perf_counter()
    vectors = embedder.embed(texts)
    return len(texts) / (time.perf_counter() - start), int(vectors.shape[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=64, help="corpus chunks embedded per spec")
    parser.add_argument(
        "--spec", action="append", default=None, help="embedder spec (repeatable; first = baseline)"
    )
    parser.add_argument(
        "--served", default=None, help="also time ollama:// and openai:// over serve --embed SPEC"
    )
    parser.add_argument("--out", type=Path, default=None, help="write the table (markdown) here too")
    args = parser.parse_args()
    specs = args.spec or ["st:", "wordllama:"]
    texts = chunks(args.chunks)
    rows = [(spec, *throughput(spec, texts)) for spec in specs]
    if args.served:
        port = free_port()
        argv = [sys.executable, "-m", "nomad_lab", "serve", "--model", "smollm2-135m", "--port", str(port)]
        with ServerProcess([*argv, "--embed", args.served, "--embed-name", "served"], host="127.0.0.1",
                           port=port, ready_path="/api/version"):  # fmt: skip
            for spec in (f"ollama://127.0.0.1:{port}/served", f"openai://127.0.0.1:{port}/v1/served"):
                rows.append((f"{spec} ({args.served})", *throughput(spec, texts)))
    base = rows[0][1]
    machine = platform_info()
    lines = [
        f"Embedding throughput, {len(texts)} corpus chunks of up to 3,000 characters per spec "
        f"(machine: {machine['cpuArchitecture']}, {machine['cpuCount']} cores, "
        f"Python {machine['pythonVersion']}; shared with other jobs, so compare ratios)",
        "",
        f"| embedder | dimension | chunks/s | ratio to {rows[0][0]} |",
        "|---|---:|---:|---:|",
        *(f"| {spec} | {dim} | {rate:.1f} | {rate / base:.2f}× |" for spec, rate, dim in rows),
    ]
    table = "\n".join(lines)
    print(table)
    if args.out:  # headed by its exact command, as every stored benchmark table is
        command = shlex.join(["python", "benchmarks/embedder_throughput.py", *sys.argv[1:]])
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(f"command: `{command}`\n\n{table}\n")
        record(args.out)


if __name__ == "__main__":
    main()
