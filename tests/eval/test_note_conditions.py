"""The note-effect study's parts: strata, the seeded draw, forced actions through the real pipeline, the
answer cache, paired summaries and the rule that picks the default action."""

from __future__ import annotations

import json
import re

import pytest

from nomad_lab.data.golden_suites import Golden
from nomad_lab.data.refusal_kinds import UNANSWERABLE
from nomad_lab.eval.generation_answers import AnswerCache
from nomad_lab.eval.note_conditions import (
    ANSWERABLE,
    CONDITIONS,
    DROP,
    NOTE,
    PLAIN,
    Asked,
    answer_all,
    choose_action,
    draw,
    stratum_of,
    summarize,
)
from nomad_lab.services.pipeline import PipelineConfig
from nomad_lab.services.pipeline_types import MOCK_EMPTY_ANSWER
from nomad_lab.store import Store
from tests.support.paths import ROOT


def golden(gid: str, *, refusal: bool = False, must: tuple[str, ...] = ()) -> Golden:
    return Golden(
        id=gid,
        query=f"question {gid}?",
        suite="s",
        file="s.jsonl",
        line=1,
        must_include=tuple(re.compile(m, re.IGNORECASE) for m in must),
        expect_refusal=refusal,
        refusal_kind=UNANSWERABLE if refusal else None,
    )


def test_strata_keep_only_what_can_be_scored() -> None:
    assert stratum_of(golden("a", must=("410",)), holds_relevant=True) == ANSWERABLE
    assert (
        stratum_of(golden("b", must=("410",)), holds_relevant=False) is None
    )  # retrieval's miss, not the note's
    assert stratum_of(golden("c"), holds_relevant=True) is None  # no pattern: correctness undefined
    assert stratum_of(golden("d", refusal=True), holds_relevant=False) == UNANSWERABLE


def test_the_draw_is_seeded_bounded_and_keeps_order() -> None:
    pool = {ANSWERABLE: [f"a{i}" for i in range(50)], UNANSWERABLE: ["u1", "u2"]}
    drawn = draw(pool, 10, seed=7)
    assert drawn == draw(pool, 10, seed=7)
    assert len(drawn[ANSWERABLE]) == 10 and drawn[UNANSWERABLE] == ["u1", "u2"]
    assert drawn[ANSWERABLE] == sorted(drawn[ANSWERABLE], key=pool[ANSWERABLE].index)
    assert drawn[ANSWERABLE] != draw(pool, 10, seed=8)[ANSWERABLE]


def test_each_condition_sends_its_action_and_a_rerun_reads_the_store(tmp_path) -> None:
    """The mock model answers with the passages it was given: the note leaves them in, drop takes them out."""
    asked = [
        Asked(golden("g", refusal=True), UNANSWERABLE, [{"text": "The kit weighs 410 grams.", "score": 1.0}])
    ]
    computed = []
    with Store(tmp_path / "s.duckdb") as store:
        first = answer_all(
            asked, PipelineConfig(model="mock"), AnswerCache(store), {"study": "t"},
            before_compute=lambda: computed.append(1),
        )  # fmt: skip
        by = first["g"]
        assert [by[c]["sufficiency"] for c in CONDITIONS] == [None, "note", "dropped"]
        assert "410 grams" in by[PLAIN]["answer"] and "410 grams" in by[NOTE]["answer"]
        assert by[PLAIN]["injected"] == by[NOTE]["injected"] == 1
        assert by[DROP]["answer"] == MOCK_EMPTY_ANSWER and by[DROP]["injected"] == 0
        again = answer_all(
            asked, PipelineConfig(model="mock"), AnswerCache(store), {"study": "t"},
            before_compute=lambda: computed.append(2),
        )  # fmt: skip
        assert again == first and computed == [1]  # the warm-up ran once: nothing was recomputed
        other = answer_all(
            asked, PipelineConfig(model="mock"), AnswerCache(store), {"study": "other"},
            before_compute=lambda: computed.append(3),
        )  # fmt: skip
        assert other["g"][DROP]["answer"] == MOCK_EMPTY_ANSWER and computed == [1, 3]


def _planted(answers: dict[str, list[str]], stratum: str, must: tuple[str, ...] = ()) -> tuple:
    """Questions of one stratum whose answers per condition are given (index i for question i)."""
    n = len(answers[PLAIN])
    asked = [
        Asked(golden(f"{stratum}{i}", refusal=stratum != ANSWERABLE, must=must), stratum, [])
        for i in range(n)
    ]
    obs = {q.golden.id: {c: {"answer": answers[c][i]} for c in CONDITIONS} for i, q in enumerate(asked)}
    return asked, obs


def two_strata(claim: str = "It weighs 5 kg.") -> tuple[list[Asked], dict]:
    """20 unanswerable questions (the note makes 8 hedge) and 20 answerable ones (the note costs one
    correct answer, dropping the passages all of them)."""
    hedge = "The library does not state it."
    u_asked, u_obs = _planted(
        {PLAIN: [claim] * 20, NOTE: [hedge] * 8 + [claim] * 12, DROP: [claim] * 20}, UNANSWERABLE
    )
    a_asked, a_obs = _planted(
        {PLAIN: ["410 grams"] * 20, NOTE: ["410 grams"] * 19 + [hedge], DROP: ["about a pound"] * 20},
        ANSWERABLE,
        must=("410",),
    )
    return u_asked + a_asked, u_obs | a_obs


def test_summaries_pair_each_question_across_conditions() -> None:
    s = summarize(*two_strata())
    assert s[UNANSWERABLE]["abstained"][NOTE]["rate"][0] == pytest.approx(0.4)
    assert s[UNANSWERABLE]["abstained"][PLAIN]["count"] == 0 and "correct" not in s[UNANSWERABLE]
    paired = s[UNANSWERABLE]["abstainedPaired"]["note-plain"]
    assert paired["diff"][0] == pytest.approx(0.4) and paired["p"] < 0.01 and paired["diff"][1] > 0
    assert s[ANSWERABLE]["correct"][NOTE]["rate"][0] == pytest.approx(0.95)
    assert s[ANSWERABLE]["correctPaired"]["drop-plain"]["diff"][0] == pytest.approx(-1.0)
    assert choose_action(s, UNANSWERABLE)["action"] == "note"  # drop helps no refusal and costs every answer


def test_drop_is_chosen_only_when_it_helps_and_costs_nothing_significant() -> None:
    hedge, claim = "I don't know.", "It weighs 5 kg."
    u_asked, u_obs = _planted(
        {PLAIN: [claim] * 20, NOTE: [claim] * 20, DROP: [hedge] * 15 + [claim] * 5}, UNANSWERABLE
    )
    right = {c: ["410 grams"] * 20 for c in CONDITIONS}
    a_asked, a_obs = _planted(right, ANSWERABLE, must=("410",))
    chosen = choose_action(summarize(u_asked + a_asked, u_obs | a_obs), UNANSWERABLE)
    assert chosen == {"action": "drop", "dropRaisesAbstention": True, "dropLowersCorrectness": False}
    wrong = right | {DROP: ["about a pound"] * 20}
    a_asked, a_obs = _planted(wrong, ANSWERABLE, must=("410",))
    chosen = choose_action(summarize(u_asked + a_asked, u_obs | a_obs), UNANSWERABLE)
    assert chosen["action"] == "note" and chosen["dropLowersCorrectness"]


def test_the_default_action_is_the_one_the_published_study_chose() -> None:
    published = json.loads((ROOT / "results/note_effect/note_effect.json").read_text())
    assert PipelineConfig(model="mock").sufficiency_action == published["choice"]["action"]
