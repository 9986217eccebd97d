"""The first-run route: the one command that gives a fresh clone a stored run fit for every notebook, and
the one line every place that finds no run prints.

Why one route: a newcomer who opened a notebook on a fresh clone used to meet three different messages
(``store runs``: "no store yet"; explore: the right retrieval; floor_sweep: a traceback whose command
wrote a core-only dump at the 0.62 floor), so following one of them left another notebook still empty.
``nomad-lab first-run`` stores what every notebook reads (the ``core,off_topic`` retrieval at floor 0,
the main run, with its candidate dump beside it in :data:`DEFAULT_DUMP`, and template drafts for the
label notebook in :data:`DEFAULT_LABEL_DIR`), and :func:`first_run_line` is the sentence that names it,
used by the store listing, the run resolver, the dump reader and the labeller alike.

Standard library only (the core ring): the data ring's dump reader prints it too.
"""

from __future__ import annotations

from pathlib import Path

from nomad_lab.core.workspace import DEFAULT_CORPUS_DIR, PROJECT_ROOT

__all__ = [
    "DEFAULT_DUMP",
    "DEFAULT_LABEL_DIR",
    "FIRST_RUN_COMMAND",
    "first_run_command",
    "first_run_line",
    "shown",
]

FIRST_RUN_COMMAND = "nomad-lab first-run"
"""The command a fresh clone runs once before any notebook (a few minutes on two cores)."""
DEFAULT_DUMP = "runs/dumps/core-off_topic.json"
"""Where the first run writes the candidate dump the floor sweep reads (the main job's path too)."""
DEFAULT_LABEL_DIR = "runs/label"
"""Where the first run writes drafts and where the label notebook keeps its sitting (git-ignored)."""
WHAT_IT_STORES = "the core and off-topic questions retrieved at floor 0, with their dump"


def shown(folder: str | Path | None) -> str:
    """A path as messages name it: relative to the repository when inside it (None: the default corpus)."""
    resolved = Path(folder if folder is not None else DEFAULT_CORPUS_DIR).resolve()
    return str(resolved.relative_to(PROJECT_ROOT)) if resolved.is_relative_to(PROJECT_ROOT) else str(resolved)


def first_run_command(corpus: str | Path | None = None, dump: str | Path | None = None) -> str:
    """The first-run command for ``corpus`` (None: the default corpus) writing its dump to ``dump``
    (None: :data:`DEFAULT_DUMP`); an option appears only where it differs from the default."""
    parts = [FIRST_RUN_COMMAND]
    if corpus is not None and Path(corpus).resolve() != DEFAULT_CORPUS_DIR.resolve():
        parts.append(f"--corpus {shown(corpus)}")
    if dump is not None and Path(dump).resolve() != (PROJECT_ROOT / DEFAULT_DUMP).resolve():
        parts.append(f"--dump {shown(dump)}")
    return " ".join(parts)


def first_run_line(missing: str, corpus: str | Path | None = None, dump: str | Path | None = None) -> str:
    """The one line shown wherever a run (or its dump, or drafts) is missing: ``missing`` says what was
    looked for, then the command that stores it."""
    command = first_run_command(corpus, dump)
    return f"{missing}; run `{command}` first (once, a few minutes: {WHAT_IT_STORES})"
