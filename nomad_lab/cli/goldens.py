"""``nomad-lab goldens draft``: candidate golden questions from a folder of documents, marked as drafts.

``goldens draft --corpus DIR --out DIR`` writes ``DIR/drafts.jsonl`` (answerable questions from
headings and sentences, fictional-attribute and entity-swap refusals, the bank's categories the corpus
does not answer), none repeating a golden already in ``--out``. Add ``--backend [SPEC]`` to also ask a
language model, per passage, for a reader's question with the sentence answering it (``mustInclude``) and
a question the passage leaves open, each checked and read back by the model
(``nomad_lab.data.model_drafts``); a bare ``--backend``
takes the largest embedded instruct model installed, and the model's time per passage is written beside the
drafts with the machine's load (``DIR/draft_cost.json``). Drafts load only when asked for
(``drafts=True``): no eval, study or gate counts them until a person labels them. Python:
``nomad_lab.data.drafts``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import time
from pathlib import Path
from typing import Any

from nomad_lab.cli import goldens_check, goldens_kinds, goldens_sheet
from nomad_lab.cli.workspace_args import add_corpus_arguments, add_progress_argument

COST_FILE = "draft_cost.json"
"""Written beside the drafts by a run with ``--backend``: the model's seconds and the machine's load."""
LARGEST = "largest"
"""What a bare ``--backend`` means: the largest embedded instruct model installed, found when run."""


def register(subparsers: Any) -> None:
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
        const=LARGEST,
        metavar="SPEC",
        help="also ask this model for a question and a refusal per passage (bare --backend: the largest "
        "embedded instruct model installed)",
    )
    draft.add_argument(
        "--llm-per-doc",
        type=int,
        default=defaults.llm_per_doc,
        help="passages per document asked of the model (%(default)s)",
    )
    add_progress_argument(draft)
    draft.set_defaults(func=run_draft)
    goldens_kinds.register(sub)
    goldens_check.register(sub)
    goldens_sheet.register(sub)


def model_chat(spec: str, seed: int) -> Any:
    """A ``Chat`` over a backend: one greedy user turn per passage, the reply's text."""
    from nomad_lab.backends import ChatOptions, ChatRequest, open_backend

    backend = open_backend(spec)
    options = ChatOptions(temperature=0.0, seed=seed, num_predict=120)  # three lines; a loop is cut

    def chat(prompt: str) -> str:
        return backend.chat(ChatRequest([{"role": "user", "content": prompt}], options)).content

    return chat


class TimedChat:
    """A ``Chat`` that keeps each call's wall time: what a model draft costs, apart from the templates.
    A drafting prompt opens a passage; the read-backs that follow it are that passage's too."""

    def __init__(self, chat: Any) -> None:
        from nomad_lab.data.model_drafts import PROMPT

        self.chat, self.seconds, self.passages = chat, [], []
        self.opening = PROMPT.split("{", 1)[0]

    def __call__(self, prompt: str) -> str:
        started = time.perf_counter()
        try:
            return self.chat(prompt)
        finally:
            took = time.perf_counter() - started
            self.seconds.append(took)
            if prompt.startswith(self.opening) or not self.passages:
                self.passages.append(0.0)
            self.passages[-1] += took


def backend_spec(given: str | None) -> str | None:
    """The spec ``--backend`` names: a bare flag is the largest embedded instruct model installed."""
    if given != LARGEST:
        return given
    from nomad_lab.backends.models import largest_instruct

    return largest_instruct()


def run_draft(args: argparse.Namespace) -> int:
    from tqdm import tqdm  # heavy

    from nomad_lab.core.errors import NomadLabError
    from nomad_lab.data.drafts import DraftOptions, draft_goldens, existing_goldens, read_corpus, write_drafts
    from nomad_lab.eval import machine_load

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
    args.backend = backend_spec(args.backend)
    chat = TimedChat(model_chat(args.backend, args.seed)) if args.backend else None
    before = machine_load.mark()
    with tqdm(total=len(corpus.docs), desc="drafting", unit="doc", disable=args.no_progress) as bar:
        result = draft_goldens(
            corpus,
            existing,
            options,
            chat=chat,
            chat_spec=args.backend or "",
            on_doc=lambda _doc: bar.update(),
        )
    if not result.drafts:
        raise NomadLabError(f"{args.corpus}: no drafts (every candidate repeats a golden in {args.out})")
    path = write_drafts(args.out, result, corpus, _command(args))
    seconds = time.perf_counter() - started
    if chat is not None and chat.seconds:
        cost = _cost(
            args.backend,
            chat.seconds,
            chat.passages,
            result.counts(),
            machine_load.load_between(before, machine_load.mark()),
        )
        (args.out / COST_FILE).write_text(json.dumps(cost, indent=2) + "\n", encoding="utf-8")
        print(
            f"{args.backend}: {cost['secondsPerPassage']:.1f} s a passage over {cost['passages']} passages "
            f"({cost['calls']} calls)"
        )
    counts = ", ".join(f"{kind} {n}" for kind, n in sorted(result.counts().items()))
    megabytes = result.bytes / 1e6
    print(
        f"{len(result.drafts)} drafts ({counts}) from {result.documents} documents, {megabytes:.2f} MB; "
        f"{result.duplicates} near-duplicates dropped ({len(existing)} goldens already in {args.out}), "
        f"{result.malformed} ill-formed questions dropped"
    )
    if result.model_rejected:
        why = "; ".join(f"{reason} {n}" for reason, n in sorted(result.model_rejected.items()))
        print(f"{args.backend}: model drafts rejected by their checks: {why}")
    print(f"wrote {path} in {seconds:.1f} s ({megabytes / max(seconds, 1e-9):.2f} MB/s)")
    return 0


def _cost(
    spec: str, seconds: list[float], passages: list[float], counts: dict[str, int], load: dict[str, Any]
) -> dict[str, Any]:
    """What the model's drafts cost: its seconds per passage asked (all of a passage's calls: the drafting
    call and the read-backs of its drafts that passed the other checks; mean, and median, as the first may
    include the model's load) and per draft kept (each passage gives at most one question and one
    refusal), with the machine's load while it ran."""
    kept = counts.get("llm", 0) + counts.get("llm-refusal", 0)
    total = sum(seconds)
    return {
        "backend": spec,
        "passages": len(passages),
        "calls": len(seconds),
        "modelSeconds": round(total, 1),
        "secondsPerPassage": round(total / len(passages), 2),
        "medianSecondsPerPassage": round(statistics.median(passages), 2),
        "kept": {"answerable": counts.get("llm", 0), "refusal": counts.get("llm-refusal", 0)},
        "secondsPerKeptDraft": round(total / kept, 2) if kept else None,
        "load": load,
    }


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
