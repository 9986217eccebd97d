"""Declared types applied at the edge: a notebook or Python caller gets the value the CLI would have made
from the same text, or one error line naming the parameter."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nomad_lab.core.errors import NomadLabError
from nomad_lab.studies import registry
from nomad_lab.studies.shape import Param, resolve_params

DECLARED = (
    Param("sample", int, 40, "questions"),
    Param("floor", float, 0.5, "floor"),
    Param("books", int, (3, 6), "books", many=True),
    Param("store", Path, None, "store"),
    Param("no_bank", bool, False, "leave the bank out", flag=True),
    Param("suite", str, "core", "suites"),
)


def resolve(**given: object):
    return resolve_params(DECLARED, given, "study x")


def test_text_becomes_the_declared_type() -> None:
    params = resolve(sample="5", floor="0.25", books=["3", 9], store="runs/s.duckdb", no_bank="yes", suite=7)
    assert params.sample == 5 and isinstance(params.sample, int)
    assert params.floor == 0.25 and params.books == [3, 9] and params.store == Path("runs/s.duckdb")
    assert params.no_bank is True and params.suite == "7"
    assert resolve(books="12").books == [12]  # one value for a repeatable parameter: a list of one
    assert (
        resolve(books=np.array([4, 5])).books == [4, 5] and type(resolve(books=np.array([4])).books[0]) is int
    )
    assert resolve(floor=1).floor == 1.0 and isinstance(resolve(floor=1).floor, float)
    assert resolve(sample=5.0).sample == 5 and resolve(no_bank="false").no_bank is False
    assert resolve().books == (3, 6)  # a default stays the declared value


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"sample": "five"}, "study x: --sample 'five': invalid literal for int() with base 10: 'five'"),
        ({"sample": 2.5}, "study x: --sample 2.5: must be a whole number"),
        ({"sample": True}, "study x: --sample True: must be a number, not True"),
        ({"floor": "high"}, "study x: --floor 'high': could not convert string to float: 'high'"),
        ({"books": ["3", "x"]}, "study x: --books ['3', 'x']: invalid literal for int() with base 10: 'x'"),
        ({"no_bank": "maybe"}, "study x: --no-bank 'maybe': must be true or false"),
        ({"store": 3}, "study x: --store 3: "),
    ],
)
def test_a_value_the_type_refuses_is_one_line_naming_the_parameter(given: dict, message: str) -> None:
    with pytest.raises(NomadLabError) as refused:
        resolve(**given)
    assert str(refused.value).startswith(message) and "\n" not in str(refused.value)


def test_a_registered_study_checks_its_typed_value_too() -> None:
    growth = registry.get("growth").params
    with pytest.raises(NomadLabError, match=r"^study growth: --judge-floor 2.0: must be between 0 and 1"):
        resolve_params(growth, {"judge_floor": "2"}, "study growth")
    assert resolve_params(growth, {"floor": ["0.3", 0.5]}, "study growth").floor == [0.3, 0.5]
