"""The one place a judge runs over a stored run (``eval.gating.inputs.verdicts``): it computes only what
the verdict cache lacks, hands a filler hook exactly those inputs, never asks about an empty set, and as
a gate input computes only for the judges its caller lets it call."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nomad_lab.eval import gating
from nomad_lab.eval.gating.inputs import verdicts
from nomad_lab.gate.spec import parse_gate_spec
from nomad_lab.store import Store
from tests.support.retrieval import CountingJudgeBackend, fixture_run

SPEC = "test:counting-judge"


@pytest.fixture
def run(tmp_path: Path, embedder) -> tuple[Path, str]:
    store = tmp_path / "ws.duckdb"
    return store, fixture_run(store, embedder)


@pytest.mark.slow
def test_a_second_judging_computes_nothing_and_a_filler_gets_exactly_the_missing_inputs(
    run: tuple[Path, str],
) -> None:
    store_path, run_id = run
    backend = CountingJudgeBackend()
    with Store(store_path) as store:
        every = [item for item in verdicts.run_sets(store, run_id, floor=0.0).inputs() if item is not None]
        half = verdicts.select_ids(store, run_id, sample=6)
        first = verdicts.run_verdicts(store, run_id, [SPEC], ids=half, backend=backend)[SPEC]
        asked = backend.calls
        assert asked == first.stats.calls > 0 and first.missing == 0 and first.ids == half

        handed: list[dict] = []

        def filler(opened: Store, todo: dict) -> None:  # computes in process, records what it was handed
            handed.append({spec: [item.key for item in items] for spec, items in todo.items()})
            verdicts.fill_in_process(opened, todo, backend=backend)

        whole = verdicts.run_verdicts(store, run_id, [SPEC], filler=filler)[SPEC]
        cached = {item.key for item in every if store.get_verdict(SPEC, item.key) is not None}
        judged_before = {
            item.key for item in verdicts.run_sets(store, run_id, floor=0.0, ids=half).inputs() if item
        }
        assert len(handed) == 1 and set(handed[0]) == {SPEC}
        assert sorted(handed[0][SPEC]) == sorted({item.key for item in every} - judged_before)
        assert backend.calls == asked + len(handed[0][SPEC]) and cached == {item.key for item in every}
        again = verdicts.run_verdicts(store, run_id, [SPEC], filler=filler)[SPEC]
    assert len(handed) == 1 and backend.calls == asked + len(handed[0][SPEC])  # the cache held every set
    assert np.array_equal(again.verdicts, whole.verdicts, equal_nan=True)
    assert whole.stats.line() == again.stats.line()  # a cached verdict counts as the call it was
    assert (whole.verdicts == 0).any() and (whole.verdicts == 1).any()  # the counting judge rejects the haiku


@pytest.mark.slow
def test_a_floor_that_leaves_nothing_asks_no_judge(run: tuple[Path, str]) -> None:
    store_path, run_id = run
    backend = CountingJudgeBackend()
    with Store(store_path) as store:
        result = verdicts.run_verdicts(store, run_id, [SPEC], floor=10.0, backend=backend)[SPEC]
    assert backend.calls == 0 and result.stats.calls == 0
    assert np.isnan(result.verdicts).all() and np.isnan(result.gold).all()


@pytest.mark.slow
def test_the_gate_input_computes_only_for_the_judges_it_may_call(
    run: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store_path, run_id = run
    backend = CountingJudgeBackend()
    monkeypatch.setattr(verdicts, "open_backend", lambda spec: backend)  # the spec's backend, scripted
    spec = parse_gate_spec(f"judge:{SPEC}")
    data = gating.load_run(store_path, run_id, embed=False)
    _, read = gating.gather(store_path, data, spec)
    unjudged = next(iter(read.values()))
    assert backend.calls == 0 and unjudged.missing > 0 and np.isnan(unjudged.verdicts).all()
    _, computed = gating.gather(store_path, data, spec, judge=[SPEC])
    judged = next(iter(computed.values()))
    assert backend.calls == unjudged.missing and judged.missing == 0
    _, again = gating.gather(store_path, data, spec)  # now read from the cache, no call
    assert backend.calls == unjudged.missing
    assert np.array_equal(next(iter(again.values())).verdicts, judged.verdicts, equal_nan=True)
