"""Gate specs: one parser, canonical round trip, and one error line for every malformed spec."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.reference import RAG_MIN_FINAL_SCORE
from nomad_lab.gate import masks
from nomad_lab.gate.apply import points_for, spec_curve, spec_mask
from nomad_lab.gate.families import GateInputs, Need, families
from nomad_lab.gate.pools import pools_from_records
from nomad_lab.gate.spec import GateSpecError, parse_gate_spec
from tests.support.dumps import random_records

CANONICAL = [
    "floor@0.62",
    "floor",
    "cosine@0.5",
    "contrast@0.1",
    "contrast",
    "judge:embedded:gemma3-270m",
    "judge:embedded:gemma3-270m@0.5",
    "judge:ollama://127.0.0.1:11434/llama3:8b@0.7",
    "judge:openai+noformat://127.0.0.1:1234/v1/qwen2.5?timeout=30@0.25",
    "learned:gates/x.json",
    "learned:gates/x.json@0.4",
    "floor@0.4+learned:gates/x.json",
    "floor+judge:openai+noformat://h:1/v1/m@0.3",
]


@pytest.mark.parametrize("text", CANONICAL)
def test_canonical_specs_round_trip(text: str) -> None:
    assert str(parse_gate_spec(text)) == text
    assert parse_gate_spec(str(parse_gate_spec(text))) == parse_gate_spec(text)


def test_numbers_are_written_canonically_and_targets_keep_their_colons() -> None:
    assert str(parse_gate_spec(" floor@1.0 ")) == "floor@1"
    assert str(parse_gate_spec("floor@.5")) == "floor@0.5"
    atom = parse_gate_spec("judge:ollama://127.0.0.1:11434/llama3:8b@0.7").atoms[0]
    assert (atom.target, atom.value) == ("ollama://127.0.0.1:11434/llama3:8b", 0.7)
    both = parse_gate_spec("judge:openai+noformat://h:1/v1/m@0.3+floor@0.4").atoms
    assert [a.family for a in both] == ["judge", "floor"] and both[0].target == "openai+noformat://h:1/v1/m"
    assert parse_gate_spec("judge:embedded:/models/a@b.gguf").atoms[0].target == "embedded:/models/a@b.gguf"


def test_the_floor_default_is_the_reference_constant() -> None:
    assert families()["floor"].default == RAG_MIN_FINAL_SCORE


MALFORMED = {
    "": "empty",
    "flor@0.2": "unknown gate 'flor'",
    "floor@1.2": "out of range [0, 1]",
    "floor@-0.1": "out of range [0, 1]",
    "floor@x": "'x' is not a number",
    "floor@nan": "must be finite",
    "floor@": "nothing after '@'",
    "floor:abc": "takes no target",
    "judge": "needs a target",
    "judge:": "needs a target",
    "judge:@0.3": "needs a target",
    "judge:embedded:gemma3-270m@1.5": "tau 1.5 is out of range",
    "contrast@-1": "out of range >= 0",
    "learned:x.json@2": "threshold 2 is out of range",
    "floor+cosine": "at most one part may omit its number",
    "+floor": "empty part",
    "floor@0.4+": "empty part",
    "floors@0.2": "unknown gate 'floors'",
}


@pytest.mark.parametrize(("text", "problem"), sorted(MALFORMED.items()))
def test_malformed_specs_fail_with_one_line_naming_the_problem(text: str, problem: str) -> None:
    with pytest.raises(GateSpecError) as info:
        parse_gate_spec(text)
    message = str(info.value)
    assert isinstance(info.value, NomadLabError)
    assert "\n" not in message and problem in message and "accepted: floor[@F]" in message


def test_a_spec_applies_as_the_gate_functions_do() -> None:
    pools = pools_from_records(random_records(3, 60))
    points, mask = spec_mask(pools, "floor")
    assert np.array_equal(points, masks.FLOOR_GRID)
    assert np.array_equal(mask, masks.score_floor(pools, masks.FLOOR_GRID))
    _, both = spec_mask(pools, "floor@0.5+contrast")
    expected = masks.both(
        masks.score_floor(pools, [0.5]), masks.contrast(pools, families()["contrast"].grid())
    )
    assert np.array_equal(both, expected)
    curve = spec_curve(pools, "floor@0.62")
    assert curve.gate == "floor@0.62" and curve.points.tolist() == [0.62]
    verdicts = np.where(np.arange(pools.size) % 2 == 0, 1.0, 0.0)
    judged_inputs = GateInputs(
        {Need("verdicts", "embedded:x"): SimpleNamespace(verdicts=verdicts, p_true=verdicts)}
    )
    _, judged = spec_mask(pools, "judge:embedded:x", judged_inputs)
    assert np.array_equal(judged, masks.judge(pools, verdicts))
    assert points_for(parse_gate_spec("cosine@0.3").atoms[0], pools, GateInputs()).tolist() == [0.3]


def test_a_judge_gate_without_verdicts_says_so() -> None:
    pools = pools_from_records(random_records(3, 10))
    with pytest.raises(NomadLabError, match="gate input verdicts 'embedded:x' was not gathered"):
        spec_mask(pools, "judge:embedded:x")


def test_sweep_dump_takes_gate_specs_and_keeps_its_default_output(tmp_path) -> None:
    import json

    from nomad_lab.cli import main
    from tests.support.dumps import dump_of

    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps(dump_of(random_records(11, 80))))
    plain, named = tmp_path / "plain", tmp_path / "named"
    assert main(["sweep", "--dump", str(dump), "--out", str(plain)]) == 0
    curves = json.loads((plain / "floor_sweep.json").read_text())["curves"]
    assert set(curves) == {"floor", "cosine", "contrast"}
    argv = [
        "sweep",
        "--dump",
        str(dump),
        "--out",
        str(named),
        "--gate",
        "floor@0.4+contrast",
        "--gate",
        "cosine@.5",
    ]
    assert main(argv) == 0
    curves = json.loads((named / "floor_sweep.json").read_text())["curves"]
    assert (
        len(curves["floor@0.4+contrast"]) == len(families()["contrast"].grid())
        and len(curves["cosine@0.5"]) == 1
    )
    assert main(["sweep", "--dump", str(dump), "--out", str(named), "--gate", "floor@2"]) == 1
