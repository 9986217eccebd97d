"""``gate export``: a fitted gate, or the floor, out of the workbench and into the pipeline that asked.

Why the eval ring: a gate reading coverage needs its index's vocabulary (document frequencies over the
chunks of the run it was fitted on), read from the store; the floor's preset is measured on a stored
run's pools. The rendering itself is pure (:mod:`nomad_lab.gate.portable`, :mod:`nomad_lab.gate.ts_module`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from nomad_lab.core.errors import NomadLabError
from nomad_lab.eval import gating
from nomad_lab.eval.gating.runs import RunChoice, parse_stored_run, resolve_run
from nomad_lab.gate.apply import spec_curve
from nomad_lab.gate.bundle import write_bundle, write_sufficiency_bundle
from nomad_lab.gate.coverage import Vocabulary
from nomad_lab.gate.floor_presets import preset_floors
from nomad_lab.gate.logistic_gate import LearnedGate
from nomad_lab.gate.portable import portable_gate, refuse_unportable
from nomad_lab.gate.portable_sufficiency import portable_sufficiency
from nomad_lab.gate.spec import parse_gate_spec
from nomad_lab.gate.ts_module import render_floor_snippet, render_gate_module
from nomad_lab.retrieval.answer_model import default_model_dir
from nomad_lab.retrieval.cross_encoder import portable_cross_encoder
from nomad_lab.store import Store

TARGETS = ("ts", "json")


def vocabulary_of(store_path: str | Path, fingerprint: str | None, where: str) -> tuple[int, dict[str, int]]:
    """Documents and document frequencies over the chunks of the index ``fingerprint`` (as the coverage
    gatherer counts them for a run of that index)."""
    with Store(store_path, read_only=True) as store:
        texts = [c.text for c in store.get_chunks(fingerprint)] if fingerprint else []
    if not texts:
        raise NomadLabError(
            f"{where}: the gate reads coverage and {store_path} holds no chunks of its index {fingerprint}"
        )
    vocabulary = Vocabulary.of(texts)
    return vocabulary.documents, dict(vocabulary.frequencies)


def portable_from_file(
    store_path: str | Path, gate_file: str | Path, with_model: bool = False
) -> tuple[dict[str, Any], list[Path]]:
    """The portable form of a learned gate file (its vocabulary read from the store when it needs one) and
    the model files it reads. ``with_model``: the export carries the cross-encoder (a bundle, or the
    portable JSON the Python runtime runs it from); without it a cross-encoder gate is refused."""
    where = str(gate_file)
    gate = LearnedGate.load(gate_file)  # one error line for a missing or foreign file
    refuse_unportable(gate.kinds, f"gate export {where}", ["ce"] if with_model else [])
    fingerprint = gate.training.get("fingerprint")
    vocabulary = vocabulary_of(store_path, fingerprint, where) if "coverage" in gate.kinds else None
    cross_encoder, files = None, []
    if "ce" in gate.kinds:
        cross_encoder, files = portable_cross_encoder()  # the ce kind's default spec
    raw = json.loads(Path(gate_file).read_text(encoding="utf-8"))
    return portable_gate(raw, where, vocabulary, cross_encoder=cross_encoder), files


def is_sufficiency(gate: str) -> bool:
    return str(gate).startswith("sufficiency:")


def portable_check(gate: str, action: str) -> dict[str, Any]:
    """The portable form of ``sufficiency:zero-shot@T`` or ``sufficiency:GATE_FILE[@T]`` with its action
    (:func:`nomad_lab.gate.portable_sufficiency.portable_sufficiency`), on the installed body."""
    atom = parse_gate_spec(gate).atoms[0]
    folder = default_model_dir()
    digest = hashlib.sha256((folder / "model.onnx").read_bytes()).hexdigest()[:16]  # AnswerBody's digest
    files = [folder / "model.onnx", folder / "tokenizer.json"]
    return portable_sufficiency(atom.target, atom.value, action, files, digest)


def export_bundle(
    store_path: str | Path,
    gate: str,
    out: str | Path,
    command: str,
    model_path: str | None = None,
    action: str = "note",
) -> list[Path]:
    """What ``gate export GATE --to ts --bundle DIR`` writes (:func:`nomad_lab.gate.bundle.write_bundle`,
    or for a sufficiency check :func:`~nomad_lab.gate.bundle.write_sufficiency_bundle` with ``action``);
    ``model_path``: the folder the server keeps the model in, instead of a copy in the bundle."""
    if is_sufficiency(gate):
        if model_path is not None:
            raise NomadLabError(
                "gate export sufficiency: the bundle ships its body (the model with its last layer's "
                "outputs added); --model-path is for cross-encoder gates"
            )
        return write_sufficiency_bundle(Path(out), portable_check(gate, action), command)
    if gate == "floor" or gate.startswith("floor@"):
        raise NomadLabError("gate export floor: the floor is a settings snippet (--out FILE), not a bundle")
    portable, files = portable_from_file(store_path, gate, with_model=True)
    return write_bundle(Path(out), portable, command, files, model_path)


def floor_value(
    store_path: str | Path, spec: str, run: str | RunChoice | None
) -> tuple[float, dict[str, Any], str]:
    """The floor of ``floor@F``, or of ``floor`` the balanced preset measured on the run (a stored RUN
    value: a run id, ``main`` or ``latest``; None: ``latest``); with the run's embedder identity and corpus
    fingerprint."""
    atom = parse_gate_spec(spec).atoms[0]
    data = gating.load_run(store_path, resolve_run(store_path, parse_stored_run(run)), embed=False)
    if atom.value is not None:
        return float(atom.value), data.embedder, data.pools.fingerprint or ""
    balanced = next(p for p in preset_floors(spec_curve(data.pools, "floor")) if p.rule.name == "balanced")
    if balanced.floor is None:
        raise NomadLabError(
            f"gate export floor: run {data.run_id} has no answerable questions to set a floor on"
        )
    return float(balanced.floor), data.embedder, data.pools.fingerprint or ""


def export_text(
    store_path: str | Path,
    gate: str,
    to: str,
    command: str,
    run: str | RunChoice | None = None,
    action: str = "note",
) -> str:
    """What ``gate export GATE --to TO`` writes: a TypeScript module or a portable JSON for a gate file,
    a ``RAG_MIN_FINAL_SCORE`` snippet for ``floor[@F]``, the portable JSON of a sufficiency check."""
    if to not in TARGETS:
        raise NomadLabError(f"gate export: --to {to!r} (targets: {', '.join(TARGETS)})")
    if is_sufficiency(gate):
        if to != "json":
            raise NomadLabError("gate export sufficiency: --to ts writes a folder (--bundle DIR)")
        return json.dumps(portable_check(gate, action), ensure_ascii=False) + "\n"
    if gate == "floor" or gate.startswith("floor@"):
        if to != "ts":
            raise NomadLabError(
                "gate export floor: the floor exports as a TypeScript settings snippet (--to ts)"
            )
        floor, embedder, fingerprint = floor_value(store_path, gate, run)
        return render_floor_snippet(floor, embedder, fingerprint, command)
    portable, _ = portable_from_file(store_path, gate, with_model=to == "json")
    if to == "json":
        return json.dumps(portable, indent=1, ensure_ascii=False) + "\n"
    return render_gate_module(portable, command)


def pipeline_questions(store: str | Path, run_id: str, vectors: bool = True) -> list[dict[str, Any]]:
    """Each question of a stored run as a pipeline holds it when it asks an exported gate: its text, the
    whole reranked pool (text, score, raw cosine, source) and, with ``vectors``, its query vector by the
    run's embedder (``queryVector``). What the export tests and ``benchmarks/gate_bundle.py`` feed to
    the TypeScript module, the bundle and the Python runtime alike."""
    data = gating.load_run(store, run_id, embed=vectors)
    with Store(store, read_only=True) as opened:
        pools = opened.get_pools(run_id)
        chunks = {c.chunk_id: c for c in opened.get_chunks(data.pools.fingerprint)}
    query = data.features.query if vectors else None
    return [
        {
            "id": golden_id,
            "question": text,
            **({"queryVector": query[i].tolist()} if query is not None else {}),
            "passages": [
                {
                    "text": chunks[p.chunk_id].text,
                    "score": p.score,
                    "semanticScore": p.semantic_score,
                    "source": chunks[p.chunk_id].source,
                }
                for p in pools.get(golden_id, [])
            ],
        }
        for i, (golden_id, text) in enumerate(zip(data.pools.ids, data.queries, strict=True))
    ]
