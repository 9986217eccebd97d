"""A study's parameters are declared once: its CLI options and its notebook's papermill parameters are
checked against the declaration here, so a renamed option or a retyped default fails a test.

The one name that differs on purpose: a notebook's ``out_dir`` is the study's ``--out``, and its default
is the study's folder under ``runs/`` (so Run All never rewrites what is published; the main job passes
the published folder). A ``None`` for a path parameter in a notebook means the declared default
(the workspace convention of ``core.workspace.in_workspace``, e.g. ``store = None``).
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path
from typing import Any

import pytest

from nomad_lab.cli import build_parser
from nomad_lab.core.workspace import PROJECT_ROOT, in_workspace
from nomad_lab.studies import registry
from nomad_lab.studies.shape import Param, Study, declared
from tests.support.paths import ROOT

NOTEBOOK_ONLY = {"placement": {"recompute", "stored_run"}}
"""Notebook parameters no study declares: the placement notebook may reuse the published run."""


def notebook_out(study: Study) -> Path:
    """Where a notebook run by hand writes: the study's folder name under the workspace's ``runs/``,
    never the published ``results/`` (the main job passes its own ``out_dir``)."""
    return PROJECT_ROOT / "runs" / Path(study.out_dir).name


def study_parser(name: str) -> argparse.ArgumentParser:
    parser = build_parser()
    study_group = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[
        "study"
    ]
    studies = next(a for a in study_group._actions if isinstance(a, argparse._SubParsersAction))
    return studies.choices[name]


def cli_disagreements(study: Study, parser: argparse.ArgumentParser) -> list[str]:
    """Every way ``parser`` (the study's subcommand) differs from the study's declaration."""
    options = {a.dest: a for a in parser._actions if a.option_strings and a.dest != "help"}
    params = {p.name: p for p in declared(study)}
    problems = [f"--{d}: an option no parameter declares" for d in sorted(set(options) - set(params))]
    problems += [f"{p.option}: declared but not an option" for n, p in params.items() if n not in options]
    for name in sorted(set(options) & set(params)):
        action, param = options[name], params[name]
        if action.option_strings != [param.option]:
            problems.append(f"{param.option}: the option is spelled {action.option_strings}")
        if not param.required and action.default != param.default:
            problems.append(f"{param.option}: CLI default {action.default!r} != declared {param.default!r}")
        if not param.flag and action.type is not param.type:
            problems.append(f"{param.option}: CLI type {action.type} != declared {param.type}")
        if action.required != param.required or not (action.help or "").startswith(param.help[:20]):
            problems.append(f"{param.option}: required or help text differs from the declaration")
    return problems


def notebook_parameters(path: Path) -> dict[str, Any]:
    """The literal assignments of a jupytext script's ``parameters`` cell."""
    text = path.read_text(encoding="utf-8")
    start = text.index('# %% tags=["parameters"]')
    cell = text[start:].split("\n# %%", 1)[0]
    values = {}
    for node in ast.parse(cell).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            values[node.targets[0].id] = ast.literal_eval(node.value)
    return values


def _same(param: Param, value: Any) -> bool:
    if param.type is Path:
        return value is None or (param.default is not None and in_workspace(value) == Path(param.default))
    if param.many and value is not None and param.default is not None:
        return list(value) == list(param.default)
    return value == param.default and type(value) is type(param.default)


def notebook_disagreements(study: Study, values: dict[str, Any]) -> list[str]:
    """Every notebook parameter that is not a declared one (by name) or has another default."""
    params = {p.name: p for p in study.params}
    problems = []
    for name, value in values.items():
        if name == "out_dir":
            if in_workspace(value) != notebook_out(study):
                problems.append(f"out_dir = {value!r}: an interactive run writes to {notebook_out(study)}")
        elif name in NOTEBOOK_ONLY.get(study.name, ()):
            continue
        elif name not in params:
            problems.append(f"{name}: not a parameter of study {study.name} ({', '.join(params)})")
        elif not _same(params[name], value):
            problems.append(f"{name} = {value!r}: declared default {params[name].default!r}")
    return problems


STUDIES = sorted(registry.studies())


@pytest.mark.parametrize("name", STUDIES)
def test_every_cli_option_is_the_declaration(name: str) -> None:
    assert cli_disagreements(registry.get(name), study_parser(name)) == []
    assert "store" in {p.name for p in registry.get(name).params}  # its rows are stored: --store says where


@pytest.mark.parametrize("name", [n for n in STUDIES if registry.get(n).notebook])
def test_every_notebook_parameter_is_the_declaration(name: str) -> None:
    study = registry.get(name)
    values = notebook_parameters(ROOT / "notebooks" / f"{study.notebook}.py")
    assert values, f"notebooks/{study.notebook}.py: no parameters cell"
    assert notebook_disagreements(study, values) == []


def test_the_checks_catch_a_renamed_parameter_and_a_retyped_default() -> None:
    judges = registry.get("judges")
    drifted = {"judge_models": ["embedded:gemma3-270m"], "alpha": 0.1, "out_dir": "runs/judges"}
    assert notebook_disagreements(judges, drifted) == [
        "judge_models: not a parameter of study judges (" + ", ".join(p.name for p in judges.params) + ")",
        "alpha = 0.1: declared default 0.05",
    ]
    parser = argparse.ArgumentParser()
    parser.add_argument("--judge-models", help="x")
    problems = cli_disagreements(judges, parser)
    assert "--judge_models: an option no parameter declares" in problems
    assert "--judge-model: declared but not an option" in problems


def test_defaults_are_the_declaration() -> None:
    growth = registry.defaults("growth")
    assert growth["books"] == (3, 6, 9, 15) and growth["out"] == PROJECT_ROOT / "results" / "library_growth"
    assert (
        registry.defaults("floor-sweep")["alpha"] == 0.05
        and registry.defaults("floor-sweep")["refusal_tag"] == "off-topic"
    )
    assert "model" not in registry.defaults("transport")  # required: no default
