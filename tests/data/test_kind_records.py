"""A refusal kind is one record, and a new kind is one file: plant a fourth kind's module beside the three
and every table that lists kinds (tags, definitions, the leaderboard's columns and axes, the figure's
panel questions, the labelling widget's keys and choices, the labelling and label-free pages' heads)
picks it up.

Each case runs in a fresh process: the tables are read from the records when their modules load, so the
planted folder joins the package's ``__path__`` before anything imports them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from nomad_lab.data.kind_records import LEAK, PASS, RefusalKind
from nomad_lab.data.refusal_kinds import KINDS, REFUSAL_KINDS, TAG_KINDS
from tests.support.paths import ROOT

SPECULATIVE = """
from nomad_lab.data.kind_records import PASS, RefusalKind

KIND = RefusalKind(
    name="speculative",
    definition="asks what the library would say about a future it cannot know",
    question="does the library know yet?",
    counted=PASS,
    key="p",
    order=3,
    tags=("speculation",),
)
"""

PROBE = """
import json, sys
import nomad_lab.data.kind_records as records
records.__path__.append(sys.argv[1])
from nomad_lab.data import refusal_kinds
from nomad_lab.data.golden_lines import parse_line
from nomad_lab.studies.gating import family_plot, gate_report, label_figure, label_free, labeller, labelling
errors = []
line = json.dumps({"id": "q", "query": "Will it rain?", "expectRefusal": True, "refusalKind": "speculative"})
golden = parse_line(line, "s.jsonl:1", "s", "s.jsonl", 1, None, errors)
print(json.dumps({
    "kinds": list(refusal_kinds.REFUSAL_KINDS),
    "byTag": refusal_kinds.kind_of(["off-topic", "speculation"]),
    "definition": refusal_kinds.KIND_DEFINITIONS.get("speculative"),
    "column": gate_report.KIND_COLUMNS.get("speculative"),
    "axis": gate_report.KIND_AXES.get("speculative"),
    "panel": family_plot.QUESTIONS.get("speculative"),
    "key": labeller.REFUSAL_KEYS.get("p"),
    "choice": ["refusal: speculative", "speculative"] in [list(c) for c in labeller.CHOICES],
    "help": labeller.KEY_HELP,
    "head": labelling._what("speculative"),
    "figureHead": label_figure._kind_name("speculative"),
    "freeHead": label_free._kind_field("speculative", 3).label,
    "golden": golden.refusal_kind if golden else errors,
}))
"""


def probe(tmp_path: Path, files: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The probe run in a fresh process with ``files`` planted in a folder joined to the kinds' package."""
    folder = tmp_path / "kinds"
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-c", PROBE, str(folder)], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def test_a_fourth_kind_is_one_file_and_every_table_reads_it(tmp_path: Path) -> None:
    result = probe(tmp_path, {"speculative.py": SPECULATIVE})
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen["kinds"] == [*REFUSAL_KINDS, "speculative"]
    assert seen["byTag"] == "speculative"  # its tag, a specific kind, outranks the generic off-topic tag
    assert seen["definition"].startswith("asks what the library")
    assert (seen["column"], seen["axis"]) == ("speculative pass", "pass rate")
    assert seen["panel"] == "does the library know yet?"
    assert seen["key"] == "speculative" and seen["choice"] and " p refusal" in seen["help"]
    assert seen["head"] == seen["figureHead"] == "speculative pass"
    assert seen["freeHead"] == "speculative pass (n = 3) [95% CI]"
    assert seen["golden"] == "speculative"  # a golden may name it in refusalKind


def test_a_kind_module_must_be_named_for_its_kind_and_keys_stay_apart(tmp_path: Path) -> None:
    misnamed = probe(tmp_path / "a", {"guess.py": SPECULATIVE})
    assert misnamed.returncode != 0 and "guess: KIND must be a RefusalKind named 'guess'" in misnamed.stderr
    clash = probe(tmp_path / "b", {"speculative.py": SPECULATIVE.replace('key="p"', 'key="u"')})
    assert clash.returncode != 0 and "two share a key" in clash.stderr


def test_the_three_kinds_read_as_before() -> None:
    """The records reproduce the tables they replace (the refactor changes structure, not a label)."""
    assert REFUSAL_KINDS == ("off-topic", "unanswerable", "near-domain")
    assert [(k.label, k.axis, k.key) for k in KINDS.values()] == [
        ("off-topic leak", LEAK, "o"),
        ("unanswerable pass", "pass rate", "u"),
        ("near-domain pass", "pass rate", "n"),
    ]
    assert TAG_KINDS["adversarial/fictional"] == "unanswerable" and TAG_KINDS["coding"] == "off-topic"
    assert len(TAG_KINDS) == 17
    assert all(isinstance(k, RefusalKind) and k.counted in (LEAK, PASS) for k in KINDS.values())
