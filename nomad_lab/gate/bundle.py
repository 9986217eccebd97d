"""``gate export GATE --to ts --bundle DIR``: a folder the reference server vendors as it is.

Why a folder and not one module: a gate reading the cross-encoder needs the model (an ONNX file and its
``tokenizer.json``), a runtime for it (``onnxruntime-node``, ``@huggingface/tokenizers``, pinned in a
``package.json``) and the code that runs it as nomad-lab does (``cross_encoder.ts``). The folder holds
the gate module (:mod:`nomad_lab.gate.ts_module`), that code, the drop-in for the reference's relevance
judge (``relevance_check.ts``), the model files (or, with ``model_dir``, the place the server keeps them)
and a README saying how to wire it. Every file but the gate module is a template copied unchanged.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from nomad_lab.gate.ts_module import render_gate_module

HERE = Path(__file__).parent
TEMPLATES = ("cross_encoder.ts", "relevance_check.ts")
NODE_PACKAGES = {"onnxruntime-node": "1.30.0", "@huggingface/tokenizers": "0.2.0"}
"""The npm packages the bundle runs its model with, pinned (install: ``npm install --ignore-scripts``:
the CPU binaries ship inside ``onnxruntime-node``; its install script only fetches optional GPU ones)."""
MODEL_DIR = "model"

README = """# A nomad-lab gate for the reference server

{command}

Files: `gate.ts` (the fitted gate: features, coefficients, threshold {threshold:.6f}, fingerprints),
`relevance_check.ts` (the drop-in for the relevance judge){model_files}.

Install (Node >= 22.6 runs the `.ts` files as they are; a TypeScript build needs
`allowImportingTsExtensions`):

    npm install --ignore-scripts

Wire it where the pipeline calls its judge, enabled by the same setting:

    import {{ RelevanceGateService, isRelevanceCheckEnabled }} from "./relevance_check.ts";
    const gate = new RelevanceGateService();
    if (isRelevanceCheckEnabled(settings["rag.relevanceCheck"])) {{
      const verdict = await gate.judge(query, chunks, stages.candidates);  // keep all or drop all
      chunks = verdict.kept;
    }}

`chunks` are the passages that survived the floor; `stages.candidates` is the whole reranked pool (each
`{{text, score, semanticScore, source}}`), which the gate's features were fitted on. Any error keeps the
chunks (fail open) and is counted in `gate.stats`; `gate.line()` prints the judge's summary line.
The gate holds only for the embedder and corpus it was fitted on ({embedder}, corpus {fingerprint}).
"""


def package_json(name: str) -> str:
    """The bundle's ``package.json``: an ES module folder pinning the model runtime."""
    body = {"name": name, "private": True, "type": "module", "dependencies": dict(NODE_PACKAGES)}
    return json.dumps(body, indent=2) + "\n"


def write_bundle(
    out: Path,
    portable: Mapping[str, Any],
    command: str,
    model_files: Sequence[Path] = (),
    model_dir: str | None = None,
) -> list[Path]:
    """Write the bundle of a portable gate into ``out`` (created; files of the same names replaced) and
    return the files written. A gate reading the cross-encoder gets ``model_files`` copied under
    ``model/``, or with ``model_dir`` a reference to the folder the server keeps them in."""
    out.mkdir(parents=True, exist_ok=True)
    data = dict(portable)
    ce = data.get("crossEncoder")
    written = []
    if ce is not None:
        data["crossEncoder"] = {**ce, "modelDir": model_dir or MODEL_DIR}
        if model_dir is None:
            (out / MODEL_DIR).mkdir(exist_ok=True)
            for source, name in zip(model_files, (ce["model"], ce["tokenizer"]), strict=True):
                written.append(Path(shutil.copyfile(source, out / MODEL_DIR / name)))
    (out / "gate.ts").write_text(render_gate_module(data, command), encoding="utf-8")
    written.append(out / "gate.ts")
    for name in TEMPLATES:
        written.append(Path(shutil.copyfile(HERE / name, out / name)))
    (out / "package.json").write_text(package_json("nomad-lab-gate"), encoding="utf-8")
    model_note = ""
    if ce is not None:
        where = f"`{model_dir}` on the server" if model_dir else f"`{MODEL_DIR}/`"
        model_note = f", `cross_encoder.ts` and the cross-encoder {ce['name']} ({where})"
    embedder = (data.get("embedder") or {}).get("model", "unknown embedder")
    readme = README.format(
        command=command,
        threshold=float(data["threshold"]),
        model_files=model_note,
        embedder=embedder,
        fingerprint=data.get("corpusFingerprint") or "unknown",
    )
    (out / "README.md").write_text(readme, encoding="utf-8")
    return [*written, out / "package.json", out / "README.md"]


SUFFICIENCY_TEMPLATES = (
    "cross_encoder.ts",
    "half_precision.ts",
    "sufficiency_units.ts",
    "sufficiency_check.ts",
)
SUFFICIENCY_README = """# A nomad-lab sufficiency check for the reference server

{command}

Files: `sufficiency.ts` (threshold {threshold:.6f}, action `{action}`, the prompt note, the unit settings
and the text tables), `sufficiency_check.ts` (the check), `sufficiency_units.ts` (units and answer
types), `cross_encoder.ts` (runs the body), `model/` (`body.onnx`: the ms-marco model with its last
layer's outputs added, `tokenizer.json`{head_file}).

Install (Node >= 22.6 runs the `.ts` files as they are): `npm install --ignore-scripts`

Wire it after the relevance check, on the chunks that go into the prompt:

    import {{ SufficiencyCheckService }} from "./sufficiency_check.ts";
    const sufficiency = new SufficiencyCheckService();
    const verdict = await sufficiency.check(query, chunks);
    chunks = verdict.kept;            // [] when the action is drop and no passage states the answer
    const note = verdict.note;        // with the note action: put it after the passages in the prompt

Any error keeps the chunks without a note (fail open), counted in `sufficiency.stats`.
"""


def write_sufficiency_bundle(out: Path, portable: Mapping[str, Any], command: str) -> list[Path]:
    """Write the bundle of a portable sufficiency check into ``out``: the body with its outputs added
    (Node cannot edit an ONNX graph), the tokenizer and the head's tensors under ``model/``, the check's
    data as ``sufficiency.ts``, the templates, ``package.json`` and a README; returns the files."""
    from nomad_lab.gate.unit_reader import body_model  # heavy: onnx

    body = portable["body"]
    folder = out / MODEL_DIR
    folder.mkdir(parents=True, exist_ok=True)
    graph = body_model(Path(body["modelDir"]) / body["model"])[0]
    (folder / "body.onnx").write_bytes(graph.SerializeToString())
    tokenizer = Path(shutil.copyfile(Path(body["modelDir"]) / body["tokenizer"], folder / body["tokenizer"]))
    written = [folder / "body.onnx", tokenizer]
    data = {k: v for k, v in portable.items() if k != "head"}
    data["body"] = {**body, "model": "body.onnx", "modelDir": MODEL_DIR}
    data["head"] = None
    if portable.get("head"):
        (folder / "head.json").write_text(json.dumps({"tensors": portable["head"]}), encoding="utf-8")
        written.append(folder / "head.json")
        data["head"] = "head.json"
    text = json.dumps(data, indent=1, ensure_ascii=False, allow_nan=False)
    module = f"// {command}\nexport const SUFFICIENCY = {text} as const;\n"
    (out / "sufficiency.ts").write_text(module, encoding="utf-8")
    written.append(out / "sufficiency.ts")
    for name in SUFFICIENCY_TEMPLATES:
        written.append(Path(shutil.copyfile(HERE / name, out / name)))
    (out / "package.json").write_text(package_json("nomad-lab-sufficiency"), encoding="utf-8")
    readme = SUFFICIENCY_README.format(
        command=command,
        threshold=float(data["threshold"]),
        action=data["action"],
        head_file=", `head.json`: the fine-tuned head" if data["head"] else "",
    )
    (out / "README.md").write_text(readme, encoding="utf-8")
    return [*written, out / "package.json", out / "README.md"]
