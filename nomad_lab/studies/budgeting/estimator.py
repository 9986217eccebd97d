"""Estimator error against real tokenizers, per content class, and how fast calibration converges.

The seed's claim: a structural segmenter with a learned per-model factor errs ~5% where a fixed
chars/N divisor errs 18–20%. This study measures it on seven content classes drawn from the project's
own datasets (prose from the Gutenberg distractors, code and tables from the MDN and Python docs,
JSON from the golden suites, bullet lists and whole documents from the domain corpus, CJK from
``datasets/estimator_samples``), against every real tokenizer in ``nomad_lab.backends.tokenizers``.

Calibration is measured honestly: each class is split in halves (seeded); the first halves, shuffled
together, feed a ``TokenCalibrator`` one observation at a time, and the error after n observations is
taken on the other halves, so the curve shows convergence on text the factor never saw. All error
tables are on the held-out halves.
"""

from __future__ import annotations

import csv
import io
import json
import math
import random
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt

from nomad_lab.backends.exact_tokens import ExactEstimator
from nomad_lab.backends.tokenizers import GGUF_FILES, TOKENIZERS, load_tokenizer
from nomad_lab.core.content_estimator import ClassCalibrator, class_bases, scaled_estimate
from nomad_lab.core.token_estimator import TokenCalibrator, chars_per_token_estimate, estimate_tokens
from nomad_lab.studies.budgeting.estimator_figure import plot_by_class
from nomad_lab.studies.params import DATASETS, STORE
from nomad_lab.studies.result import Figure, Page, Result
from nomad_lab.studies.shape import Param, Params, Study

CLASSES = ("prose", "markdown-table", "code", "json", "bullets", "cjk", "mixed-long-form")
METHODS = ("chars/4", "chars/3.5", "segmenter", "segmenter+calibrated", "content-aware+calibrated", "exact")
"""``exact`` is the model's own tokenizer through ``nomad_lab.backends.exact_tokens`` (GGUF models only)."""
SEED = 1341
# The goals the estimator is held to (docs/estimator.md quotes them from here): overall error, error
# in every class, and throughput.
ERROR_GOAL = 0.04
CLASS_ERROR_GOAL = 0.06
MB_PER_S_GOAL = 5.0
PER_CLASS = 12


@dataclass(frozen=True)
class Sample:
    content_class: str
    sample_id: str
    text: str


def _paragraphs(text: str, min_chars: int) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", text) if len(p.strip()) >= min_chars]


def _pick(rng: random.Random, items: list[str], n: int) -> list[str]:
    return rng.sample(items, min(n, len(items)))


def _tables(rng: random.Random, vocabulary: list[str], n: int) -> list[str]:
    """Markdown tables whose cells mix corpus words and numbers, the shape of a spec or gear table."""
    tables = []
    for _ in range(n):
        columns = rng.randint(3, 6)
        header = [rng.choice(vocabulary).title() for _ in range(columns)]
        rows = [
            [
                rng.choice([rng.choice(vocabulary), f"{rng.uniform(0, 500):.1f}", str(rng.randint(1, 9999))])
                for _ in range(columns)
            ]
            for _ in range(rng.randint(4, 12))
        ]
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * columns]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        tables.append("\n".join(lines))
    return tables


def collect_samples(datasets: Path, per_class: int = PER_CLASS, seed: int = SEED) -> list[Sample]:
    """Draw up to ``per_class`` samples of every content class from ``datasets`` (seeded)."""
    rng = random.Random(seed)
    corpus = datasets / "corpus"
    domain = sorted(p for p in corpus.glob("*.md") if not p.name.startswith("distractor-"))
    distractors = {p.stem: p.read_text(encoding="utf-8") for p in sorted(corpus.glob("distractor-*.md"))}
    prose_books = [t for name, t in distractors.items() if not any(k in name for k in ("mdn", "python"))]
    docs_text = "\n\n".join(t for name, t in distractors.items() if any(k in name for k in ("mdn", "python")))
    domain_text = [p.read_text(encoding="utf-8") for p in domain]

    pools: dict[str, list[str]] = {c: [] for c in CLASSES}
    pools["prose"] = _pick(rng, [p for t in prose_books for p in _paragraphs(t, 400)], per_class)
    code = re.findall(r"```(?:js|javascript|python|css|html)?\n(.*?)```", docs_text, flags=re.S)
    code += [m for m in re.findall(r"::\n\n((?:[ ]{3,}.*\n|\n)+)", docs_text) if len(m) > 200]
    pools["code"] = _pick(rng, [c for c in code if len(c) >= 150], per_class)
    golden_lines = [
        line
        for path in sorted((datasets / "goldens").glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.startswith("{")
    ]
    pools["json"] = [json.dumps(json.loads(line), indent=2) for line in _pick(rng, golden_lines, per_class)]
    bullets = [
        "\n".join(block)
        for text in domain_text
        for block in _runs(text.splitlines(), lambda line: re.match(r"\s*([-*]|\d+\.)\s", line) is not None)
        if len(block) >= 3
    ]
    pools["bullets"] = _pick(rng, bullets, per_class)
    cjk_file = datasets / "estimator_samples" / "cjk.md"
    if cjk_file.exists():
        pools["cjk"] = _pick(
            rng, _paragraphs(re.sub(r"<!--.*?-->", "", cjk_file.read_text("utf-8")), 50), per_class
        )
    pools["mixed-long-form"] = _pick(rng, domain_text, per_class)
    vocabulary = sorted({w.lower() for t in domain_text for w in re.findall(r"[A-Za-z]{4,}", t)}) or ["item"]
    pools["markdown-table"] = _tables(rng, vocabulary, per_class)
    return [Sample(c, f"{c}-{i}", text) for c in CLASSES for i, text in enumerate(pools[c])]


def _runs(lines: list[str], keep: object) -> Iterable[list[str]]:
    block: list[str] = []
    for line in lines:
        if keep(line):  # type: ignore[operator]
            block.append(line)
        elif block:
            yield block
            block = []
    if block:
        yield block


@dataclass(frozen=True)
class Row:
    """One sample measured by one tokenizer: real count and each method's estimate."""

    tokenizer: str
    content_class: str
    sample_id: str
    chars: int
    actual: int
    chars_4: int
    chars_3_5: int
    segmenter: int
    content_bases: str  # JSON: unscaled content-aware estimate per content class
    exact: int | None  # the exact mode's count (None without a local GGUF)


def measure(
    samples: list[Sample], tokenizers: dict[str, object], exact: dict[str, object] | None = None
) -> list[Row]:
    """Each sample counted by each tokenizer, estimated by each method; ``exact`` maps a tokenizer
    name to the exact-mode counter of the same model, where one exists."""
    rows = []
    for name, count in tokenizers.items():
        exact_count = (exact or {}).get(name)
        for s in samples:
            rows.append(
                Row(
                    name,
                    s.content_class,
                    s.sample_id,
                    len(s.text),
                    count(s.text),  # type: ignore[operator]
                    chars_per_token_estimate(s.text, 4),
                    chars_per_token_estimate(s.text, 3.5),
                    estimate_tokens(s.text),
                    json.dumps(class_bases(s.text), sort_keys=True),
                    exact_count(s.text) if exact_count else None,  # type: ignore[operator]
                )
            )
    return rows


def _error(estimate: float, actual: int) -> float:
    return abs(estimate - actual) / actual


@dataclass(frozen=True)
class Summary:
    """Mean absolute relative error per tokenizer × class × method, the learned factors and the curve."""

    errors: dict[str, dict[str, dict[str, float]]]  # tokenizer → class (and "overall") → method → MAE
    factors: dict[str, float]
    convergence: dict[str, list[tuple[int, float]]]  # tokenizer → (observations, held-out MAE)
    class_factors: dict[str, dict[str, float]]  # tokenizer → content-aware class → learned factor


def summarize(rows: list[Row], seed: int = SEED) -> Summary:
    errors: dict[str, dict[str, dict[str, float]]] = {}
    factors: dict[str, float] = {}
    convergence: dict[str, list[tuple[int, float]]] = {}
    class_factor_table: dict[str, dict[str, float]] = {}
    for tokenizer in sorted({r.tokenizer for r in rows}):
        mine = [r for r in rows if r.tokenizer == tokenizer and r.actual > 0]
        rng = random.Random(seed)
        train, test = [], []
        for cls in CLASSES:  # stratified halves, so every class is both learned from and tested on
            members = [r for r in mine if r.content_class == cls]
            rng.shuffle(members)
            train += members[: len(members) // 2]
            test += members[len(members) // 2 :]
        rng.shuffle(train)
        classes = ClassCalibrator()
        for r in train:
            classes.observe_bases(tokenizer, json.loads(r.content_bases), r.actual)
        class_factors = classes.factors.get(tokenizer, {})
        calibrator = TokenCalibrator()
        curve = [(0, _mean(_error(r.segmenter, r.actual) for r in test))]
        for n, r in enumerate(train, start=1):
            calibrator.observe(tokenizer, r.segmenter, r.actual)
            k = calibrator.ratio_for(tokenizer)
            curve.append((n, _mean(_error(math.ceil(r2.segmenter * k), r2.actual) for r2 in test)))
        k = calibrator.ratio_for(tokenizer)
        factors[tokenizer], convergence[tokenizer] = k, curve
        class_factor_table[tokenizer] = dict(class_factors)
        table: dict[str, dict[str, float]] = {}
        for cls in [*CLASSES, "overall"]:
            subset = [r for r in test if cls == "overall" or r.content_class == cls]
            if subset:
                table[cls] = {
                    "chars/4": _mean(_error(r.chars_4, r.actual) for r in subset),
                    "chars/3.5": _mean(_error(r.chars_3_5, r.actual) for r in subset),
                    "segmenter": _mean(_error(r.segmenter, r.actual) for r in subset),
                    "segmenter+calibrated": _mean(
                        _error(math.ceil(r.segmenter * k), r.actual) for r in subset
                    ),
                    "content-aware+calibrated": _mean(
                        _error(scaled_estimate(json.loads(r.content_bases), class_factors), r.actual)
                        for r in subset
                    ),
                    "exact": _mean(_error(r.exact, r.actual) for r in subset if r.exact is not None),
                }
        errors[tokenizer] = table
    return Summary(errors, factors, convergence, class_factor_table)


def _mean(values: Iterable[float]) -> float:
    items = list(values)
    return sum(items) / len(items) if items else float("nan")


def _percent(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{100 * value:.1f}%"


def markdown(summary: Summary) -> str:
    """One table per tokenizer: MAE per class and method (held-out half), and the learned factor."""
    out = []
    for tokenizer, table in summary.errors.items():
        classes = ", ".join(
            f"{c} {f:.2f}" for c, f in sorted(summary.class_factors.get(tokenizer, {}).items())
        )
        out.append(
            f"**{tokenizer}** (learned factor k = {summary.factors[tokenizer]:.3f}; per class: {classes})\n"
        )
        out.append("| class | " + " | ".join(METHODS) + " |")
        out.append("|---|" + "---:|" * len(METHODS))
        for cls, by_method in table.items():
            out.append(f"| {cls} | " + " | ".join(_percent(by_method[m]) for m in METHODS) + " |")
        out.append("")
    return "\n".join(out)


def rows_csv(rows: list[Row]) -> str:
    """The rows as ``rows.csv`` holds them (the real counts ``--from-rows`` re-reads; CRLF lines, as the
    csv module writes them)."""
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=list(asdict(rows[0])))
    writer.writeheader()
    writer.writerows(asdict(r) for r in rows)
    return text.getvalue()


def plot_convergence(summary: Summary) -> Any:
    """The segmenter's held-out error after n observations, one line per tokenizer."""
    fig, ax = plt.subplots(figsize=(6, 4))
    for tokenizer, curve in summary.convergence.items():
        ax.plot([n for n, _ in curve], [100 * e for _, e in curve], label=tokenizer)
    ax.set_xlabel("observations seen by the calibrator")
    ax.set_ylabel("held-out mean abs. error (%)")
    ax.set_title("Segmenter error as the per-model factor converges")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


@dataclass(frozen=True)
class EstimatorResult:
    rows: list[Row]
    summary: Summary


PARAMS = (
    DATASETS,
    Param("tokenizer", str, None, "limit to these tokenizers (repeatable; default: all)", many=True),
    Param(
        "from_rows",
        Path,
        None,
        "re-summarize the real counts stored in this rows.csv instead of loading the tokenizers",
    ),
    STORE,
)


def compute(params: Params) -> EstimatorResult:
    """Collect samples from ``datasets``, count them with each real tokenizer (``tokenizer``: names,
    default all) and, for a GGUF tokenizer, with the exact mode; or re-read the real counts of an earlier
    run's ``from_rows`` CSV (no tokenizer loaded). Then summarize."""
    datasets = Path(params.datasets)
    if params.from_rows:
        rows = rows_from_csv(Path(params.from_rows), datasets)
    else:
        names = params.tokenizer or list(TOKENIZERS)
        exact = {name: ExactEstimator(GGUF_FILES[name]()).estimate for name in names if name in GGUF_FILES}
        rows = measure(collect_samples(datasets), {name: load_tokenizer(name) for name in names}, exact)
    return EstimatorResult(rows, summarize(rows))


def rows_from_csv(path: Path, datasets: Path) -> list[Row]:
    """Rows re-read from an earlier run's ``rows.csv`` (its real counts kept), the samples regenerated
    from ``datasets`` to recompute the estimates: re-summarizing costs no tokenizer load. A sample
    whose length differs from the stored one (the datasets changed) is refused."""
    samples = {s.sample_id: s for s in collect_samples(datasets)}
    rows = []
    with path.open(encoding="utf-8") as handle:
        for line, stored in enumerate(csv.DictReader(handle), start=2):
            sample = samples.get(stored["sample_id"])
            if sample is None or len(sample.text) != int(stored["chars"]):
                raise ValueError(
                    f"{path}:{line}: sample {stored['sample_id']} is not in {datasets} as stored"
                )
            exact = stored.get("exact") or None
            rows.append(
                Row(
                    stored["tokenizer"],
                    sample.content_class,
                    sample.sample_id,
                    len(sample.text),
                    int(stored["actual"]),
                    chars_per_token_estimate(sample.text, 4),
                    chars_per_token_estimate(sample.text, 3.5),
                    estimate_tokens(sample.text),
                    json.dumps(class_bases(sample.text), sort_keys=True),
                    int(exact) if exact else None,
                )
            )
    return rows


def result(raw: EstimatorResult) -> Result:
    """``rows.csv`` (the real counts), ``summary.json``, ``summary.md`` and the two plots; written by the
    publish ring, nothing here."""
    summary = raw.summary
    return Result(
        "estimator",
        value=raw,
        json={"summary.json": asdict(summary)},
        pages=(Page("summary.md", (markdown(summary),)),),
        texts={"rows.csv": rows_csv(raw.rows)},
        figures=(
            Figure("convergence.png", partial(plot_convergence, summary)),
            Figure("by_class.png", partial(plot_by_class, summary.errors)),
        ),
    )


STUDY = Study(
    name="estimator",
    title="Token estimator error against real tokenizers",
    run=compute,
    rows=lambda result: [asdict(r) for r in result.rows],
    figures=("by_class.png", "convergence.png"),
    tables=("summary.md",),
    stage=20,
    notebook="estimator",
)
