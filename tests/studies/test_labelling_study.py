"""``nomad-lab study labelling`` on a sitting made here: the replay reports the off-topic leak and the
unanswerable and near-domain pass rates apart (a label given before kinds counted under its derived
kind), their n summing to the refusals labelled; the sitting's logs and a draft-share verdicts file are
read, a broken log line named by file:line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import nomad_lab.eval.gating.label_sitting as labelling
from nomad_lab.cli import main
from nomad_lab.core.errors import NomadLabError
from nomad_lab.data.drafts import read_corpus, write_drafts
from nomad_lab.data.labels import ANSWERABLE, REFUSAL, SKIP
from nomad_lab.data.refusal_kinds import NEAR_DOMAIN, OFF_TOPIC, REFUSAL_KINDS, UNANSWERABLE
from nomad_lab.eval.gating.label_replay import sitting_times
from nomad_lab.eval.gating.label_sitting import LabelSession
from nomad_lab.studies.gating.label_figure import figures_line
from tests.support.drafting import fixture_drafts
from tests.support.paths import CORPUS

KIND_CYCLE = (OFF_TOPIC, UNANSWERABLE, NEAR_DOMAIN, OFF_TOPIC)


def _sitting(tmp_path: Path) -> tuple[Path, Path]:
    """Drafts of the fixture corpus and 40 decisions: answerable ones with their top passage's document
    as the gold, refusals cycling through the kinds, skips; and one refusal labelled before kinds
    existed."""
    corpus = read_corpus(CORPUS)
    goldens, store = tmp_path / "goldens", tmp_path / "store.duckdb"
    write_drafts(goldens, fixture_drafts(corpus, per_doc=6, bank_per_category=3), corpus)
    session = LabelSession.open(CORPUS, goldens, store, who="tester")
    refusals = 0
    for n, draft_id in enumerate(session.queue()[:40]):
        draft = session.draft(draft_id)
        passages = session.passages(draft_id)
        if n in (5, 11) or not passages:  # a draft retrieval returns nothing for is skipped
            session.record(draft_id, SKIP)
        elif draft.expect_refusal or n % 3 == 0:
            session.record(draft_id, REFUSAL, refusal_type=KIND_CYCLE[refusals % len(KIND_CYCLE)])
            refusals += 1
        else:
            session.record(draft_id, ANSWERABLE, gold=passages[0].doc_id)
    log = session.labels.log
    last = json.loads(log.read_text().splitlines()[-1])
    old = {**last, "action": REFUSAL, "gold": None, "refusal_type": "adversarial/fictional"}
    with log.open("a") as out:  # as the books sitting's early labels were written
        out.write(json.dumps(old) + "\n")
    return goldens, store


def _logs(tmp_path: Path) -> dict[str, Path]:
    sitting, draft_time = tmp_path / "sitting.jsonl", tmp_path / "draft.time"
    sitting.write_text('{"labels": 20, "seconds": 40.0}\n{"labels": 20, "seconds": 30.0}\n')
    draft_time.write_text("3.09 s wall 2.55 user\n")
    verdicts = tmp_path / "verdicts.json"
    drafts = {"before": [True, False, False, False], "after": [True, True, False, False]}
    verdicts.write_text(
        json.dumps(
            {"who": "a test", "library": "fixture"}
            | {side: {"drafts": [{"kept": k} for k in kept]} for side, kept in drafts.items()}
        )
    )
    return {"sitting": sitting, "draft-time": draft_time, "verdicts": verdicts}


def test_the_replay_reports_each_refusal_kind_apart_with_n_summing_to_the_refusals(
    tmp_path: Path, embedder, capsys, monkeypatch
) -> None:
    monkeypatch.setattr(labelling, "REORDER_AFTER", 8)  # the fixture library is small: fit the gate early
    monkeypatch.setattr(labelling, "MIN_PER_CLASS", 3)
    goldens, store = _sitting(tmp_path)
    out = tmp_path / "out"
    options = [f"--{name}={path}" for name, path in _logs(tmp_path).items()]
    argv = ["study", "labelling", "--library", str(CORPUS), "--labels", str(goldens), "--store", str(store)]
    assert main([*argv, "--step", "15", "--out", str(out), "--no-progress", *options]) == 0
    narrowing = json.loads((out / "narrowing.json").read_text())
    steps = narrowing["steps"]
    assert [s["decisions"] for s in steps] == [15, 30, 40]
    last = steps[-1]
    assert sum(last["refusalsByKind"].values()) == last["refusals"] > 0
    assert all(last["refusalsByKind"][k] > 0 for k in REFUSAL_KINDS)  # the old label counts as unanswerable
    assert last.get("floor") and last.get("gate"), "the last step has no figure"
    measured = [(s, name) for s in steps for name in ("floor", "gate") if s.get(name)]
    for step, name in measured:
        by_kind = step[name]["byKind"]
        assert sum(v["n"] for v in by_kind.values()) == step["refusals"]
        assert {k: v["n"] for k, v in by_kind.items()} == {
            k: n for k, n in step["refusalsByKind"].items() if n
        }
        for v in by_kind.values():
            low, mean, high = v["pass"][1], v["pass"][0], v["pass"][2]
            assert 0.0 <= low <= mean <= high <= 1.0
    table = (out / "narrowing.md").read_text()
    assert (
        "**floor (top final score, in sample)**" in table
        and "**gate (pool + coverage, out of fold)**" in table
    )
    assert "off-topic leak [95% CI] | n off-topic" in table and "all refusals, blended" in table
    assert narrowing["walk"] == {
        "draftSeconds": 3.09,
        "batches": 2,
        "decisions": 40,
        "labelSeconds": 70.0,
        "secondsPerDecision": 1.75,
    }
    share = json.loads((out / "draft_share.json").read_text())
    assert share["before"]["kept"] == 1 and share["after"]["keptShare"] == 0.5 and share["ratio"] == 2.0
    assert (out / "narrowing.png").stat().st_size > 0 and (out / "provenance.json").is_file()
    assert "off-topic leak" in capsys.readouterr().out


def test_a_broken_sitting_log_is_named_by_file_and_line(tmp_path: Path) -> None:
    logs = _logs(tmp_path)
    logs["sitting"].write_text('{"labels": 10, "seconds": 20.0}\n{"labels": 3}\n')
    with pytest.raises(NomadLabError, match=rf"{logs['sitting']}:2: a batch needs labels and seconds"):
        sitting_times(logs["sitting"], logs["draft-time"])
    logs["sitting"].write_text('{"labels": 10, "seconds": 20.0}\nnot json\n')
    with pytest.raises(NomadLabError, match=rf"{logs['sitting']}:2: not JSON"):
        sitting_times(logs["sitting"], logs["draft-time"])


def test_the_labeller_caption_is_two_lines_per_kind_with_an_interval_only_from_five() -> None:
    floor = {
        "leak": 0.5,
        "leakLow": 0.2,
        "leakHigh": 0.8,
        "recall": 0.9,
        "byKind": {
            OFF_TOPIC: {"n": 5, "pass": [0.2, 0.0, 0.6]},
            UNANSWERABLE: {"n": 2, "pass": [1.0, 1.0, 1.0]},
        },
    }
    counts = {OFF_TOPIC: 5, UNANSWERABLE: 2, "near-domain": 0}
    line = figures_line({"answerable": 6, "refusals": 7, "refusalsByKind": counts, "floor": floor})
    first, second = line.split("\n")
    assert first == "6 answerable and 7 refusals labelled (5 off-topic, 2 unanswerable, 0 near-domain)."
    assert second.startswith("At recall@5 >= 0.90: floor (in sample): off-topic leak 20% [0%, 60%] (1/5)")
    assert "unanswerable pass 2/2" in second and "[100%" not in second  # n=2: a count, no interval
    early = figures_line({"answerable": 2, "refusals": 7, "refusalsByKind": counts})
    assert early.count("\n") == 1 and "needs at least 5 answerable and 5 refusals" in early


def test_the_live_figure_plots_the_off_topic_leak_with_intervals_from_five_floor_on_top() -> None:
    """Each gate's curve is its off-topic pass rate; the band starts where 5 off-topic labels back it;
    the floor's line is layered above the gate's; decision ticks are whole numbers."""
    import matplotlib.pyplot as plt

    from nomad_lab.studies.gating.label_figure import draw_history

    def at(n_off: int, rate: float) -> dict:
        kind = {"byKind": {OFF_TOPIC: {"n": n_off, "pass": [rate, rate - 0.1, rate + 0.1]}}}
        return {"answerable": 6, "refusals": 6, "floor": kind, "gate": kind}

    history = [(9, at(3, 0.5)), (10, at(4, 0.5)), (11, at(5, 0.4)), (13, at(6, 0.4))]
    history.insert(0, (4, {"answerable": 2, "refusals": 2}))  # too few labels: no point
    figure = draw_history(history)
    axes = figure.axes[0]
    floor, gate = axes.lines
    assert list(floor.get_xdata()) == [9, 10, 11, 13] and list(floor.get_ydata()) == [0.5, 0.5, 0.4, 0.4]
    assert floor.get_zorder() > gate.get_zorder() and floor.get_linestyle() != gate.get_linestyle()
    bands = [c for c in axes.collections]
    assert len(bands) == 2  # one per gate, each from decision 11 (5 off-topic labels) on
    xs = bands[0].get_paths()[0].vertices[:, 0]
    assert xs.min() == 11 and xs.max() == 13
    assert all(float(t).is_integer() for t in axes.get_xticks())
    plt.close(figure)
    empty = draw_history([(3, {"answerable": 1, "refusals": 2})])
    assert "needs at least 5 of each" in empty.axes[0].texts[0].get_text()
    plt.close(empty)
