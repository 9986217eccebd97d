"""Benchmark: ``store import`` of a pool Parquet file (10^5 questions, top 10), against the reference dump.

Synthetic pools stand in for a stack's log: every question has 10 candidates in rank order over 1,000
distinct passages (about 300 characters each, so the texts are stored as chunks), a final and a raw
cosine score and one named score column (``rerank``). Both files are written first (not timed); then,
each into a fresh store, best of ``--repeats``:

- baseline: the reference dump JSON (``load_dump`` + ``Store.import_dump``, the import that existed),
  on ``--dump-questions`` questions, since it stores rows one statement each;
- pools: the Parquet file (``read_pool_parquet`` + ``Store.import_pools``), everything checked in full.

Reported in seconds and questions per second, and as a ratio of throughputs (pool file over dump), so
the figure survives a noisy machine.

    python benchmarks/pool_import.py --questions 100000 --dump-questions 2000
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np
from _measure import best_of, published

from nomad_lab.data.dump import load_dump
from nomad_lab.data.pool_parquet import read_pool_parquet
from nomad_lab.store import Store

TOP = 10
PASSAGES = 1000


def write_parquet(path: Path, n: int) -> None:
    """``n`` questions' pools straight from DuckDB (a Python loop would dwarf what is measured)."""
    import duckdb

    con = duckdb.connect()
    words = [" ".join(f"word{(i * 7 + j) % 5000}" for j in range(40)) for i in range(PASSAGES)]
    con.execute(
        "CREATE TABLE passages AS SELECT unnest(?::VARCHAR[]) AS text, unnest(range(?)) AS i",
        [words, PASSAGES],
    )
    header = json.dumps({"format": "nomad-lab pools v1", "stack": {"name": "benchmark"}})
    candidate = (
        "{'rank': r::INTEGER, 'docId': 'doc' || ((q + r) % 97), 'chunkId': 'c' || p.i, 'text': p.text, "
        "'score': 0.9 - 0.01 * r - (q % 7) * 0.001, 'semanticScore': 0.8 - 0.01 * r, "
        "'scores': {'rerank': 5.0 - r}}"
    )
    con.execute(
        f"""COPY (
        SELECT 'q' || q AS id, 'question ' || q AS query, 'core' AS suite, ['t'] AS tags,
               CASE WHEN q % 4 = 0 THEN 'off-topic' END AS refusalKind,
               CASE WHEN q % 4 = 0 THEN []::VARCHAR[] ELSE ['doc' || (q % 97)] END AS relevantDocIds,
               list({candidate} ORDER BY r) AS candidates
        FROM range({n}) t(q) CROSS JOIN range(1, {TOP + 1}) s(r)
        JOIN passages p ON p.i = (q * 13 + r) % {PASSAGES}
        GROUP BY q ORDER BY q
        ) TO '{path}' (FORMAT parquet, KV_METADATA {{'nomad-lab': '{header}'}})"""
    )
    con.close()


def write_dump(path: Path, n: int) -> None:
    pools = [
        {
            "id": f"q{q}",
            "tags": ["t"],
            "expectRefusal": q % 4 == 0,
            "relevantDocIds": [] if q % 4 == 0 else [f"doc{q % 97}"],
            "candidates": [
                {
                    "docId": f"doc{(q + r) % 97}",
                    "score": 0.9 - 0.01 * r - (q % 7) * 0.001,
                    "semanticScore": 0.8 - 0.01 * r,
                }
                for r in range(1, TOP + 1)
            ],
        }
        for q in range(n)
    ]
    params = {"topK": 5, "scoreThreshold": 0.3, "minFinalScore": 0.62, "kValues": [1, 3, 5, 10]}
    path.write_text(json.dumps({"fingerprint": "0123456789abcdef", "params": params, "pools": pools}))


def fresh_import(folder: Path, reader, importer, source: Path) -> None:
    store = folder / f"s{np.random.default_rng().integers(1 << 30)}.duckdb"
    content = reader(source)
    with Store(store) as opened:
        importer(opened, content)
    store.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=100_000)
    parser.add_argument("--dump-questions", type=int, default=2_000)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    with published(__file__), tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        parquet, dump = folder / "pools.parquet", folder / "dump.json"
        write_parquet(parquet, args.questions)
        write_dump(dump, args.dump_questions)
        base = best_of(
            lambda: fresh_import(folder, load_dump, lambda s, d: s.import_dump(d), dump), args.repeats
        )
        pools = best_of(
            lambda: fresh_import(folder, read_pool_parquet, lambda s, c: s.import_pools(c), parquet),
            args.repeats,
        )
        rate_base, rate_pools = args.dump_questions / base, args.questions / pools
        print(f"{TOP} candidates per question; best of {args.repeats}, each into a fresh store\n")
        print("| import | questions | candidates | seconds | questions / s | throughput vs dump |")
        print("|---|---|---|---|---|---|")
        print(
            f"| reference dump JSON (baseline) | {args.dump_questions} | {args.dump_questions * TOP} | "
            f"{base:.2f} | {rate_base:,.0f} | 1.0× |"
        )
        print(
            f"| pool Parquet | {args.questions} | {args.questions * TOP} | {pools:.2f} | {rate_pools:,.0f} | "
            f"{rate_pools / rate_base:,.1f}× |"
        )


if __name__ == "__main__":
    main()
