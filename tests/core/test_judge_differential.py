"""Differential test: nomad_lab.core.judge_prompt against the seed's own TypeScript, run by Node on the same
inputs.

Inputs are generated from a seeded RNG over an alphabet chosen to hit every edge the port must get
right: JS-only whitespace (U+FEFF), Python-only whitespace (U+001C, U+0085), letters and digits of
other scripts, combining marks, punctuation, casing that changes length (U+0130), BMP only.
"""

from __future__ import annotations

import json
import random
import subprocess

import pytest

from nomad_lab.core.judge_prompt import (
    build_judge_input,
    excerpt_for,
    is_relevance_check_enabled,
    pick_on_topic,
)
from nomad_lab.runners.programs import NODE as NODE_PROGRAM
from nomad_lab.runners.programs import find
from tests.support.paths import SEED_JS

HERE = SEED_JS
NODE = find(NODE_PROGRAM)


@pytest.fixture(autouse=True)
def node_installed() -> None:
    """scripts/setup.sh provides Node (the system's, or its wheel in .venv): after setup its absence fails."""
    if NODE is None:
        pytest.fail(NODE_PROGRAM.need)


ALPHABET = (
    list("abcdefghijklmnopqrstuvwxyz" * 3)
    + list("WATERwater0123456789")
    + [" ", " ", " ", "\n", "\t", "\r", "\v", "\f", "\u00a0", "\u2003", "\u3000", "\ufeff", "\u2028"]
    + ["\x1c", "\x1f", "\x85", "\u200b", "\u180e"]
    + list(".,;:!?-_'\"()[]{}/\\#*&%$@…—")
    + list("éüßçøÅİıΣσςжЖ日本語한국어٣४")
    + ["\u0301", "\u0663", "\u2160", "\u00bd"]
)
WORDS = ["water", "boil", "minute", "altitude", "antenna", "radio", "bleach", "drops", "Walden", "haiku"]


def _text(rng: random.Random, size: int) -> str:
    out: list[str] = []
    while len(out) < size:
        if rng.random() < 0.15:
            out.append(rng.choice(WORDS) + rng.choice([" ", ". ", "\n", ""]))
        else:
            out.append(rng.choice(ALPHABET))
    return "".join(out)


def _cases(seed: int, count: int) -> list[dict]:
    rng = random.Random(seed)
    cases: list[dict] = []
    for _ in range(count):
        kind = rng.random()
        question = _text(rng, rng.randint(0, 60))
        if kind < 0.6:
            case = {
                "fn": "excerptFor",
                "text": _text(rng, rng.choice([10, 200, 1600, 4000])),
                "question": question,
            }
            if rng.random() < 0.5:
                case["maxChars"] = rng.choice([0, 1, 5, 50, 100, 300, 1499, 1500])
            cases.append(case)
        else:
            passages = []
            for _ in range(rng.randint(0, 4)):
                passage = {"text": _text(rng, rng.choice([5, 300, 2000]))}
                if rng.random() < 0.5:
                    passage["title"] = rng.choice(["", "Walden", 'A "quoted" title', _text(rng, 10)])
                passages.append(passage)
            cases.append({"fn": "buildJudgeInput", "question": question, "passages": passages})
    values = [None, True, False, "true", "True", "1", 1, 0, "yes", [], {}, "false"]
    cases += [{"fn": "isRelevanceCheckEnabled", "raw": v} for v in values]
    objects = [
        None,
        {},
        {"on_topic": True},
        {"on_topic": False},
        {"on_topic": "yes"},
        {"on_topic": 1},
        {"on_topic": None},
        [True],
        {"other": True, "on_topic": False},
        "on_topic",
        3,
    ]
    cases += [{"fn": "pickOnTopic", "value": v} for v in objects]
    return cases


def _python(case: dict):
    if case["fn"] == "excerptFor":
        if "maxChars" in case:
            return excerpt_for(case["text"], case["question"], case["maxChars"])
        return excerpt_for(case["text"], case["question"])
    if case["fn"] == "buildJudgeInput":
        return build_judge_input(case["question"], case["passages"])
    if case["fn"] == "pickOnTopic":
        return pick_on_topic(case["value"])
    return is_relevance_check_enabled(case["raw"])


@pytest.mark.parametrize("seed", [1341, 2026])
def test_port_matches_the_seed_on_generated_inputs(seed: int) -> None:
    cases = _cases(seed, 1500)
    result = subprocess.run(
        [NODE, str(HERE / "run_cases.mjs")],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    expected = json.loads(result.stdout)
    mismatches = [
        (case, want, got)
        for case, want in zip(cases, expected, strict=True)
        if (got := _python(case)) != want
    ]
    assert not mismatches, f"{len(mismatches)} of {len(cases)} differ; first: {mismatches[0]!r}"[:3000]
