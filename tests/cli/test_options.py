"""One vocabulary of options: every option has help text, and workspace options mean one thing everywhere.

The tree is walked from ``nomad_lab.cli.build_parser``, so a command added later is checked too.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from importlib.metadata import version

import pytest

from nomad_lab.cli import build_parser, main
from nomad_lab.core.workspace import DEFAULT_CORPUS_DIR, DEFAULT_GOLDENS_DIR, DEFAULT_STORE_PATH


def commands(
    parser: argparse.ArgumentParser, path: str = "nomad-lab"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every parser in the tree with its command line, depth first."""
    yield path, parser
    for action in parser._actions:  # argparse exposes subparsers only through its actions
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from commands(child, f"{path} {name}")


def options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {flag: action for action in parser._actions for flag in action.option_strings}


TREE = dict(commands(build_parser()))


def test_the_walk_reaches_every_command_group() -> None:
    for command in ("nomad-lab eval retrieval", "nomad-lab study judges", "nomad-lab store import"):
        assert command in TREE


@pytest.mark.parametrize("command", sorted(TREE))
def test_every_option_and_argument_has_help_text(command: str) -> None:
    missing = [
        "/".join(action.option_strings) or action.dest
        for action in TREE[command]._actions
        if not isinstance(action, argparse._SubParsersAction)
        and (action.help is None or not action.help.strip())
    ]
    assert missing == [], f"{command}: options without help text"
    for action in TREE[command]._actions:
        if isinstance(action, argparse._SubParsersAction):
            undescribed = [
                choice.dest for choice in action._choices_actions if not (choice.help or "").strip()
            ]
            assert undescribed == [], f"{command}: subcommands without help text"


def test_workspace_options_share_one_name_default_and_help() -> None:
    expected = {
        "--corpus": DEFAULT_CORPUS_DIR,
        "--goldens": DEFAULT_GOLDENS_DIR,
        "--store": DEFAULT_STORE_PATH,
    }
    for flag, default in expected.items():
        seen = {options(TREE[c])[flag].help for c in TREE if flag in options(TREE[c])}
        assert len(seen) == 1, f"{flag} is described differently across commands: {seen}"
        for command in TREE:
            if flag in options(TREE[command]):
                assert options(TREE[command])[flag].default == default, command


@pytest.mark.parametrize(
    ("command", "flags"),
    [
        ("nomad-lab eval check", {"--corpus", "--goldens"}),
        ("nomad-lab eval retrieval", {"--corpus", "--goldens", "--store"}),
        ("nomad-lab eval generation", {"--corpus", "--goldens", "--store"}),
        ("nomad-lab study judges", {"--corpus", "--goldens", "--store"}),
        ("nomad-lab study injection", {"--corpus", "--goldens", "--store"}),
        ("nomad-lab study growth", {"--corpus", "--goldens", "--store"}),
        ("nomad-lab study estimator", {"--store"}),
        ("nomad-lab study placement", {"--corpus", "--store"}),
        ("nomad-lab study transport", {"--corpus"}),
        ("nomad-lab sweep", {"--store"}),
        ("nomad-lab store import", {"--store"}),
    ],
)
def test_commands_that_read_the_corpus_or_touch_the_store_take_the_workspace_options(
    command: str, flags: set[str]
) -> None:
    assert flags <= set(options(TREE[command]))


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"nomad-lab {version('nomad-lab')}"
