"""``nomad-lab study NAME``: every registered study, its options generated from its declaration.

No study is written here: the subcommands are the registry's studies (``nomad_lab.studies.registry``),
each option is one of the study's :class:`~nomad_lab.studies.shape.Param` declarations (help text,
default, type, ``many``/``flag``), and running any of them is the same call
(``nomad_lab.runners.studies.run_study``): rows stored, markdown printed, files written.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Sequence
from typing import Any

from nomad_lab.core.spec_text import SpecText
from nomad_lab.studies.shape import Param


class _Many(argparse.Action):
    """One or more values; repeatable (``--judge-model A --judge-model B`` or ``--books 3 6 9``). The
    first use replaces the declared default instead of extending it, as ``action="append"`` would."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        current = getattr(namespace, self.dest, None)
        kept = [] if current is self.default or current is None else list(current)
        setattr(namespace, self.dest, [*kept, *values])


def _help(param: Param) -> str:
    """The declared help and default, written out (not ``%(default)s``: a suppressed option has none);
    a spec parameter adds the forms its registry accepts now."""
    text = param.help
    if not (param.flag or param.required or param.default is None):
        shown = " ".join(map(str, param.default)) or "none" if param.many else str(param.default)
        text += f" (default: {shown})"
    if isinstance(param.type, SpecText):
        text += f"; one of: {forms_line(param.type)}"
    return text.replace("%", "%%")


def forms_line(spec_type: SpecText) -> str:
    """The accepted forms of a spec type, for a help text."""
    return ", ".join(spec_type.forms())


def add_param(parser: Any, param: Param, *, suppress: bool = False) -> None:
    """``param`` as an option of ``parser`` (a parser or an argument group). ``suppress`` leaves an
    option that is not given out of the namespace (its default is then the declaration's, later)."""
    default = argparse.SUPPRESS if suppress else param.default
    if param.flag:
        parser.add_argument(param.option, action="store_true", default=default, help=_help(param))
        return
    extra: dict[str, Any] = {"metavar": param.metavar} if param.metavar else {}
    if param.many:
        extra |= {"nargs": "+", "action": _Many}
    parser.add_argument(
        param.option,
        type=param.type,
        default=argparse.SUPPRESS if suppress or param.required else default,
        required=param.required,
        help=_help(param),
        **extra,
    )


def add_params(
    parser: argparse.ArgumentParser,
    params: Iterable[Param],
    *,
    skip: Sequence[str] = (),
    suppress: bool = False,
) -> None:
    for param in params:
        if param.name not in skip:
            add_param(parser, param, suppress=suppress)


def given(args: argparse.Namespace, params: Iterable[Param]) -> dict[str, Any]:
    """The parsed values of ``params`` (those present in ``args``), by parameter name."""
    return {p.name: getattr(args, p.name) for p in params if hasattr(args, p.name)}


def register(subparsers: Any) -> None:
    from nomad_lab.studies.registry import studies
    from nomad_lab.studies.shape import declared

    parser = subparsers.add_parser(
        "study",
        help="rerunnable experiments: every registered study (estimator, judges, growth, ...)",
        description="Every study of nomad_lab.studies.registry; `nomad-lab study NAME --help` shows its "
        "options. A study marked (own command) is not part of `nomad-lab reproduce`.",
    )
    commands = parser.add_subparsers(dest="study", metavar="STUDY", required=True)
    for study in studies().values():
        note = "" if study.published else " (own command)"
        child = commands.add_parser(study.name, help=study.title + note, description=study.title + note)
        add_params(child, declared(study))
        child.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Any registered study: its options as parameters, rows stored, markdown printed, files written."""
    from nomad_lab.publish.results import write
    from nomad_lab.runners.studies import run_study
    from nomad_lab.studies.registry import get
    from nomad_lab.studies.shape import declared

    study = get(args.study)
    result, paths = run_study(study.name, publish=write, **given(args, declared(study)))
    print(result.markdown())
    for name, path in paths.items():
        print(f"wrote {name}: {path}")
    return 0
