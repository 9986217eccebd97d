"""A labelling sitting without a browser: drafts retrieved, decisions written as valid goldens, resumed,
relabelled, broken lines named, and the queue ordered by the gate once enough labels exist."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import nomad_lab.eval.gating.label_sitting as labelling
from nomad_lab.core.errors import NomadLabError
from nomad_lab.data.draft_deal import ANSWERABLE_DRAFT, EARLY_ROUNDS, draft_kind
from nomad_lab.data.drafts import read_corpus, write_drafts
from nomad_lab.data.golden_suites import GoldenError, load_suite_file
from nomad_lab.data.labels import ANSWERABLE, REFUSAL, SKIP, LabelFile
from nomad_lab.eval.gating.label_sitting import LabelSession, leak_at_recall
from nomad_lab.eval.gating.runs import resolve_run
from nomad_lab.eval.retrieval_service import LABEL_EDITS_KIND
from nomad_lab.store import Store
from tests.support.drafting import fixture_drafts
from tests.support.paths import CORPUS


@pytest.fixture
def sitting(tmp_path: Path, embedder) -> LabelSession:
    corpus = read_corpus(CORPUS)
    goldens = tmp_path / "goldens"
    write_drafts(goldens, fixture_drafts(corpus, per_doc=6, bank_per_category=3), corpus)
    return LabelSession.open(CORPUS, goldens, tmp_path / "store.duckdb", who="tester")


def test_decisions_become_valid_goldens_and_a_sitting_resumes(sitting: LabelSession) -> None:
    first, second, third = sitting.queue()[:3]
    gold = sitting.passages(first)[0].doc_id
    sitting.record(first, ANSWERABLE, gold=gold)
    sitting.record(second, REFUSAL, refusal_type="near-domain", query="Which tent fabric floats?")
    sitting.record(third, SKIP)
    labelled = {g.id: g for g in load_suite_file(sitting.labels.path)}
    assert set(labelled) == {f"label-{first}", f"label-{second}"}  # a skip is a decision, not a golden
    assert labelled[f"label-{first}"].relevant_doc_ids == (gold,)
    refusal = labelled[f"label-{second}"]
    assert refusal.expect_refusal and refusal.query == "Which tent fabric floats?" and refusal.draft is None
    line = json.loads(sitting.labels.path.read_text().splitlines()[-1])
    assert line["labelled"]["by"] == "tester" and line["labelled"]["edited"] is True
    assert line["labelled"]["draftSource"] == sitting.draft(second).draft.source
    again = LabelSession.open(sitting.corpus_dir, sitting.goldens_dir, sitting.store)
    assert again.progress() == (3, len(sitting.drafts))
    assert again.data.run_id == sitting.data.run_id and again.passages(first) == sitting.passages(first)
    assert {first, second, third}.isdisjoint(again.queue())
    again.record(first, REFUSAL, refusal_type="off-topic")  # relabelled: one line per id, the latest
    ids = [g.id for g in load_suite_file(sitting.labels.path)]
    assert ids.count(f"label-{first}") == 1 and load_suite_file(sitting.labels.path)[-1].expect_refusal


def drafts_runs(store: Path) -> list[str]:
    with Store(store, read_only=True) as opened:
        return [r for r in opened.run_ids("retrieval") if opened.get_run(r).suite == "drafts"]


def test_a_reopened_sitting_reads_its_stored_run_until_a_draft_changes(sitting: LabelSession) -> None:
    """Reopened over the same drafts and documents, a sitting retrieves nothing (one drafts run stored);
    a reworded draft is retrieved again, by its new wording."""
    again = LabelSession.open(sitting.corpus_dir, sitting.goldens_dir, sitting.store)
    assert drafts_runs(sitting.store) == [sitting.data.run_id] == [again.data.run_id]
    path = sitting.goldens_dir / "drafts.jsonl"
    lines = path.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("{"))
    draft = json.loads(lines[at]) | {"query": "How many drops of bleach per litre disinfect drinking water?"}
    lines[at] = json.dumps(draft)
    path.write_text("\n".join(lines) + "\n")
    reworded = LabelSession.open(sitting.corpus_dir, sitting.goldens_dir, sitting.store)
    assert drafts_runs(sitting.store) == [sitting.data.run_id, reworded.data.run_id]
    assert reworded.data.queries[reworded.by_id[draft["id"]]] == draft["query"]
    assert LabelSession.open(sitting.corpus_dir, sitting.goldens_dir, sitting.store).data.run_id == (
        reworded.data.run_id
    )  # the newest run of these drafts


def test_bad_decisions_and_a_hand_broken_line_are_one_line_each(sitting: LabelSession) -> None:
    draft_id = sitting.queue()[0]
    with pytest.raises(NomadLabError, match="needs its gold document"):
        sitting.record(draft_id, ANSWERABLE)
    with pytest.raises(NomadLabError, match="refusal type 'rude' is not one of"):
        sitting.record(draft_id, REFUSAL, refusal_type="rude")
    sitting.record(draft_id, REFUSAL, refusal_type="off-topic")
    path = sitting.labels.path
    path.write_text(path.read_text().replace('"expectRefusal": true', '"expectRefusal": tru'))
    with pytest.raises(GoldenError, match=rf"{path}:2: invalid JSON"):
        sitting.record(sitting.queue()[0], SKIP)
    assert LabelFile(sitting.goldens_dir).decisions()  # the decisions log survived


def test_the_queue_follows_the_gate_once_enough_labels_exist(sitting: LabelSession, monkeypatch) -> None:
    monkeypatch.setattr(labelling, "REORDER_AFTER", 10)
    monkeypatch.setattr(labelling, "MIN_PER_CLASS", 3)
    drafted = sitting.queue()
    for draft_id in drafted[:10]:  # the draft's own guess as the label: 3 answerable in the deal
        draft = sitting.draft(draft_id)
        if draft.expect_refusal:
            sitting.record(draft_id, REFUSAL, refusal_type="off-topic")
        else:
            sitting.record(draft_id, ANSWERABLE, gold=draft.relevant_doc_ids[0])
    labels = sitting._labelled().labels
    assert min(labels.sum(), (~labels).sum()) >= 3, "the drafts must hold both kinds"
    ordered = sitting.queue()
    assert sorted(ordered) == sorted(drafted[10:]) and ordered != drafted[10:]
    figures = sitting.figures()
    assert figures["answerable"] + figures["refusals"] == 10 and "floor" in figures
    early = sitting.figures(first=4)  # the sitting replayed: only the first four decisions
    assert early["answerable"] + early["refusals"] == 4 and "gate" not in early


def test_an_edited_question_is_judged_by_its_own_retrieval(sitting: LabelSession) -> None:
    """A draft reworded into a question another document answers: its recall@5 and gate features are
    those of the new wording's retrieval (retrieved once, found again by a resumed sitting)."""

    def edit_runs() -> list[str]:
        with Store(sitting.store, read_only=True) as store:
            return store.run_ids(LABEL_EDITS_KIND)

    wording = "How many drops of bleach per litre disinfect drinking water?"
    draft_id = next(  # a draft whose own top 5 hold passages, none of them from the bleach document
        d.id
        for d in sitting.drafts
        if sitting.passages(d.id) and "water-bleach" not in {p.doc_id for p in sitting.passages(d.id)}
    )
    sitting.record(draft_id, ANSWERABLE, gold="water-bleach", query=wording)
    sitting.record(sitting.queue()[0], REFUSAL, refusal_type="off-topic")
    labelled = sitting._labelled()
    assert labelled.recall[0] == 1.0  # by the draft's retrieval it would be 0.0
    ctx, j = sitting._edits[wording]
    assert ctx.data.queries[j] == wording and ctx.data.run_id != sitting.data.run_id
    features = list(labelling.KINDS)
    assert np.array_equal(labelled.x[0], ctx.data.features.matrix(features)[0][j])
    draft_row = sitting.data.features.matrix(features)[0][sitting.by_id[draft_id]]
    assert not np.array_equal(labelled.x[0], draft_row)
    assert "floor" in sitting.figures() and len(edit_runs()) == 1  # read again: not retrieved again
    again = LabelSession.open(sitting.corpus_dir, sitting.goldens_dir, sitting.store)
    assert again._labelled().recall[0] == 1.0 and len(edit_runs()) == 1  # resumed: found in the store
    with Store(sitting.store, read_only=True) as store:  # an edit of the sitting's run, not a run of its own
        assert store.get_run(edit_runs()[0]).params["editsOf"] == sitting.data.run_id
        assert store.run_ids("retrieval") == [sitting.data.run_id]
    assert resolve_run(sitting.store, "latest") == sitting.data.run_id


def test_leak_at_recall_reads_the_least_leaking_point_meeting_recall() -> None:
    scores = np.array([0.9, 0.8, 0.7, 0.2, 0.6, 0.1])
    recall = np.array([1.0, 1.0, 1.0, 1.0, np.nan, np.nan])
    nonempty = np.ones(6, dtype=bool)
    refusal = np.isnan(recall)
    out = leak_at_recall(scores, recall, nonempty, refusal)
    assert out["threshold"] == 0.2 and out["recall"] == 1.0 and out["leak"] == pytest.approx(0.5)
    assert leak_at_recall(scores, np.where(scores < 0.5, 0.0, recall), nonempty, refusal) is None
    assert out["leakLow"] <= out["leak"] <= out["leakHigh"]


def test_undo_takes_back_the_last_decision_and_restores_an_earlier_label(sitting: LabelSession) -> None:
    first, second = sitting.queue()[:2]
    sitting.record(first, REFUSAL, refusal_type="near-domain")
    sitting.record(second, SKIP)
    sitting.record(first, REFUSAL, refusal_type="unanswerable")  # relabelled
    assert load_suite_file(sitting.labels.path)[0].tags == ("unanswerable",)
    assert sitting.undo().refusal_type == "unanswerable"
    assert load_suite_file(sitting.labels.path)[0].tags == ("near-domain",)  # the earlier label is back
    assert sitting.undo().action == SKIP and sitting.progress()[0] == 1
    assert sitting.undo().draft_id == first and sitting.progress()[0] == 0
    assert not [line for line in sitting.labels.path.read_text().splitlines() if line.startswith("{")]
    assert sitting.undo() is None
    assert sitting.queue()[:2] == [first, second]  # undecided again, in their place


def test_the_gold_may_be_any_document_and_a_gold_retrieval_missed_counts_as_a_miss(
    sitting: LabelSession,
) -> None:
    draft_id = next(d.id for d in sitting.drafts if not d.expect_refusal)
    retrieved = {p.doc_id for p in sitting.passages(draft_id)}
    missed = next(doc for doc in sorted(sitting.documents()) if doc not in retrieved)
    decision = sitting.record(draft_id, ANSWERABLE, gold=missed)
    assert not sitting.retrieved(decision)
    sitting.record(next(d.id for d in sitting.drafts if d.expect_refusal), REFUSAL, refusal_type="off-topic")
    assert sitting._labelled().recall[0] == 0.0  # recorded as a retrieval miss
    with pytest.raises(NomadLabError, match="no document 'no-such-doc' in"):
        sitting.record(draft_id, ANSWERABLE, gold="no-such-doc")


def test_the_first_rounds_deal_every_refusal_kind_and_refusals_first_deals_them_before(
    sitting: LabelSession,
) -> None:
    """The fixture library drafts few refusals of some kinds: each round deals what each kind has left,
    and the answerable drafts only after the refusal rounds when asked."""
    kinds = [draft_kind(sitting.draft(i)) for i in sitting.queue()]
    have = {k: kinds.count(k) for k in set(kinds)}
    first = kinds[: 4 * EARLY_ROUNDS]
    for kind, n in have.items():
        assert first.count(kind) == min(n, EARLY_ROUNDS), kind
    assert kinds[0] == ANSWERABLE_DRAFT and kinds[1] == "off-topic"
    sitting.refusals_first = True
    kinds = [draft_kind(sitting.draft(i)) for i in sitting.queue()]
    refusals = sum(min(n, EARLY_ROUNDS) for k, n in have.items() if k != ANSWERABLE_DRAFT)
    assert ANSWERABLE_DRAFT not in kinds[:refusals] and kinds[refusals] == ANSWERABLE_DRAFT


def test_each_draft_suggests_its_own_guess(sitting: LabelSession) -> None:
    from nomad_lab.data.refusal_kinds import REFUSAL_KINDS

    for draft in sitting.drafts:
        action, guess = sitting.suggestion(draft.id)
        if draft.expect_refusal:
            assert action == REFUSAL and guess in REFUSAL_KINDS
        else:
            assert action == ANSWERABLE and guess == draft.relevant_doc_ids[0]
    kinds = {sitting.suggestion(d.id)[1] for d in sitting.drafts if d.expect_refusal}
    assert len(kinds) >= 2  # fictional attributes (unanswerable) and the bank (off-topic) at least
