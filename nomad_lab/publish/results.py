"""The one writer of a study's files: a :class:`~nomad_lab.studies.result.Result` value to its folder
under ``results/`` (JSON documents, markdown pages, JSONL logs, other texts, plots, artefacts, provenance).

Why one writer: the studies' own writers had become near-copies that differed in their file names, each
with its own ``json.dumps`` (some letting NaN through, one of them writing ``default=float``) and its own
cell formatting. Here every JSON goes through :func:`nomad_lab.eval.provenance.write_json` (no machine
path, no NaN), every table through :meth:`Table.markdown` (no ``nan`` cell, ``|`` escaped), every plot
through :func:`nomad_lab.studies.plots.save` (PNG and SVG), and the provenance record beside them.

``nomad-lab study NAME`` passes :func:`write` to the study's run (``publish=``), so a notebook or a test
that wants the files does the same, and one that wants the value passes nothing and writes nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.workspace import PROJECT_ROOT
from nomad_lab.eval.provenance import write_json, write_provenance
from nomad_lab.studies.registry import studies
from nomad_lab.studies.result import Result
from nomad_lab.studies.shape import Study


def write(result: Result, out: str | Path | None = None) -> dict[str, Path]:
    """Every file of ``result`` in ``out`` (default: the folder its run asked for), by file name;
    ``provenance`` last, so a folder with a record holds the files it describes."""
    folder = Path(out) if out is not None else result.out
    if folder is None:
        raise ValueError(f"study {result.study}: no folder to write to (its run gave no --out)")
    folder.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    for name, document in result.json.items():
        paths[name] = write_json(folder / name, document)
    for page in result.pages:
        paths[page.name] = folder / page.name
        paths[page.name].write_text(page.markdown(), encoding="utf-8")
    for name, records in result.lines.items():
        paths[name] = folder / name
        text = "".join(json.dumps(record, allow_nan=False) + "\n" for record in records)
        paths[name].write_text(text, encoding="utf-8")
    for name, text in result.texts.items():
        paths[name] = folder / name
        paths[name].write_text(text, encoding="utf-8", newline="")
    if result.figures:
        from nomad_lab.studies.plots import save  # heavy: matplotlib, only for a result with plots

        for figure in result.figures:
            paths[figure.name] = save(figure.draw(), folder / figure.name)
    for artefact in result.artefacts:
        made = Path(artefact.save(folder / artefact.name))
        if made.suffix == ".json":  # a gate file too is portable: no machine path, no NaN
            write_json(made, json.loads(made.read_text(encoding="utf-8")))
        paths[artefact.name] = made
    if result.provenance is not None:
        paths["provenance"] = write_provenance(folder, result.provenance)
    return paths


def study_of(folder: Path) -> Study:
    """The study publishing ``folder`` (its ``out_dir`` or one of its ``also`` folders) from a document."""
    rel = folder.resolve().relative_to(PROJECT_ROOT.resolve()).as_posix()
    for study in studies().values():
        if study.pages is not None and rel in (study.out_dir, *(o.out_dir for o in study.also)):
            return study
    raise NomadLabError(f"{folder}: no study publishes its pages from a document in this folder")


def rebuild(folder: str | Path) -> list[Path]:
    """The pages of ``folder`` rendered again from its stored document, without rerunning the study
    (after a change of format, say); returns the pages rewritten."""
    folder = Path(folder)
    study = study_of(folder)
    source = folder / str(study.document)
    try:
        document = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise NomadLabError(f"{source}: cannot read the study's document: {exc}") from None
    written = []
    for page in study.pages(document):  # type: ignore[misc]  # study_of picked a study with pages
        (folder / page.name).write_text(page.markdown(), encoding="utf-8")
        written.append(folder / page.name)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nomad_lab.publish.results", description=rebuild.__doc__)
    parser.add_argument("--rebuild", nargs="+", type=Path, metavar="FOLDER", required=True)
    args = parser.parse_args(argv)
    try:
        for folder in args.rebuild:
            for path in rebuild(folder):
                print(f"wrote {path}")
    except NomadLabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
