"""``nomad-lab goldens draft``: candidate golden questions from a folder of documents, marked as drafts.

``goldens draft --corpus DIR --out DIR`` writes ``DIR/drafts.jsonl`` (answerable questions from
headings and sentences, fictional-attribute and entity-swap refusals, the bank's categories the corpus
does not answer), none repeating a golden already in ``--out``. Add ``--backend [SPEC]`` to also ask a
language model for questions per document. Drafts load only when asked for (``drafts=True``): no eval,
study or gate counts them until a person labels them. Python: ``nomad_lab.data.drafts``.
"""

from __future__ import annotations

import argparse
import re
import shlex
import time
from pathlib import Path
from typing import Any

from nomad_lab.cli import goldens_check, goldens_kinds
from nomad_lab.cli.workspace_args import add_corpus_arguments, add_progress_argument


def register(subparsers: Any) -> None:
    from nomad_lab.backends.backend_spec import DEFAULT_SPEC
    from nomad_lab.data.drafts import DraftOptions

    defaults = DraftOptions()
    parser = subparsers.add_parser("goldens", help="draft golden questions from a folder of documents")
    sub = parser.add_subparsers(dest="goldens_command", metavar="GOLDENS_COMMAND", required=True)
    draft = sub.add_parser("draft", help="write candidate questions (marked draft) to DIR/drafts.jsonl")
    add_corpus_arguments(draft, goldens=False)
    draft.add_argument(
        "--out",
        type=Path,
        required=True,
        help="goldens folder: drafts.jsonl is written here, its goldens kept",
    )
    draft.add_argument(
        "--seed", type=int, default=defaults.seed, help="seed of every choice (default: %(default)s)"
    )
    draft.add_argument(
        "--per-doc", type=int, default=defaults.per_doc, help="answerable drafts per document (%(default)s)"
    )
    draft.add_argument(
        "--refusals-per-doc",
        type=int,
        default=defaults.refusals_per_doc,
        help="fictional-attribute and entity-swap drafts per document, each (%(default)s)",
    )
    draft.add_argument(
        "--bank-per-category",
        type=int,
        default=defaults.bank_per_category,
        help="out-of-scope bank questions per category (%(default)s)",
    )
    draft.add_argument(
        "--bank-skip",
        nargs="+",
        default=[],
        metavar="CATEGORY",
        help="bank categories your corpus answers (coding for programming docs), left out",
    )
    draft.add_argument("--bank", type=Path, help="out-of-scope bank file (default: the shared bank)")
    draft.add_argument("--limit", type=int, help="keep at most this many drafts in all (a seeded sample)")
    draft.add_argument(
        "--backend",
        nargs="?",
        const=DEFAULT_SPEC,
        metavar="SPEC",
        help=f"also ask this model for questions per document (bare --backend: {DEFAULT_SPEC})",
    )
    draft.add_argument(
        "--llm-per-doc",
        type=int,
        default=defaults.llm_per_doc,
        help="model questions per document (%(default)s)",
    )
    add_progress_argument(draft)
    draft.set_defaults(func=run_draft)
    goldens_kinds.register(sub)
    goldens_check.register(sub)


_PROMPT = (
    'Here is a passage from the document "{title}".\n\n{passage}\n\n'
    "Write {n} different questions that a reader could answer from this passage alone. "
    "Write one question per line and nothing else."
)


def model_asker(spec: str, seed: int) -> Any:
    """An ``Ask`` over a backend: one chat call per passage, questions parsed one per line."""
    from nomad_lab.backends import ChatOptions, ChatRequest, open_backend

    backend = open_backend(spec)

    def ask(title: str, passage: str, n: int) -> list[str]:
        prompt = _PROMPT.format(title=title, passage=passage, n=n)
        options = ChatOptions(temperature=0.0, seed=seed, num_predict=60 * n)
        reply = backend.chat(ChatRequest([{"role": "user", "content": prompt}], options)).content
        lines = (re.sub(r"^\s*(?:[-*]|\d+[.)])\s*", "", line).strip() for line in reply.splitlines())
        return [line for line in lines if line.endswith("?") and 3 <= len(line.split()) <= 40]

    return ask


def run_draft(args: argparse.Namespace) -> int:
    from tqdm import tqdm  # heavy

    from nomad_lab.core.errors import NomadLabError
    from nomad_lab.data.drafts import DraftOptions, draft_goldens, existing_goldens, read_corpus, write_drafts

    for name in ("per_doc", "refusals_per_doc", "bank_per_category", "llm_per_doc", "limit"):
        if (value := getattr(args, name)) is not None and value < 0:
            raise NomadLabError(f"--{name.replace('_', '-')} must be >= 0, got {value}")
    started = time.perf_counter()
    corpus = read_corpus(args.corpus)
    existing = existing_goldens(args.out)
    options = DraftOptions(
        seed=args.seed,
        per_doc=args.per_doc,
        refusals_per_doc=args.refusals_per_doc,
        bank_per_category=args.bank_per_category,
        bank_skip=tuple(args.bank_skip),
        bank_path=args.bank,
        llm_per_doc=args.llm_per_doc,
        limit=args.limit,
    )
    ask = model_asker(args.backend, args.seed) if args.backend else None
    with tqdm(total=len(corpus.docs), desc="drafting", unit="doc", disable=args.no_progress) as bar:
        result = draft_goldens(
            corpus, existing, options, ask=ask, ask_spec=args.backend or "", on_doc=lambda _doc: bar.update()
        )
    if not result.drafts:
        raise NomadLabError(f"{args.corpus}: no drafts (every candidate repeats a golden in {args.out})")
    path = write_drafts(args.out, result, corpus, _command(args))
    seconds = time.perf_counter() - started
    counts = ", ".join(f"{kind} {n}" for kind, n in sorted(result.counts().items()))
    megabytes = result.bytes / 1e6
    print(
        f"{len(result.drafts)} drafts ({counts}) from {result.documents} documents, {megabytes:.2f} MB; "
        f"{result.duplicates} near-duplicates dropped ({len(existing)} goldens already in {args.out}), "
        f"{result.malformed} ill-formed questions dropped"
    )
    print(f"wrote {path} in {seconds:.1f} s ({megabytes / max(seconds, 1e-9):.2f} MB/s)")
    return 0


def _command(args: argparse.Namespace) -> str:
    """The options that decide the drafts, as a command line (written atop the drafts file)."""
    parts = ["nomad-lab", "goldens", "draft", "--corpus", str(args.corpus), "--out", str(args.out)]
    for name in (
        "seed",
        "per_doc",
        "refusals_per_doc",
        "bank_per_category",
        "limit",
        "backend",
        "llm_per_doc",
    ):
        if (value := getattr(args, name)) is not None and (name != "llm_per_doc" or args.backend):
            parts += [f"--{name.replace('_', '-')}", str(value)]
    if args.bank_skip:
        parts += ["--bank-skip", *args.bank_skip]
    if args.bank:
        parts += ["--bank", str(args.bank)]
    return shlex.join(parts)
