"""The pure core must import, and its logic run, with the standard library alone (python -S -I)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ["judge", "estimator", "context_window", "planner", "think_stream", "generation_metrics", "samplers"]

PROBE = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
stdlib = set(sys.stdlib_module_names)
before = set(sys.modules)
for name in {CORE!r}:
    __import__("nomad_lab." + name)
from nomad_lab.planner import plan_prompt
plan_prompt(system_blocks=[], history=[], query="q", rag_chunks=[{{"text": "t"}}], context_window=4096)
foreign = sorted(m for m in set(sys.modules) - before
                 if m.split(".")[0] not in stdlib and m.split(".")[0] != "nomad_lab")
print(",".join(foreign))
"""


def test_core_imports_with_no_site_packages() -> None:
    result = subprocess.run(
        [sys.executable, "-S", "-I", "-c", PROBE], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "", f"third-party modules imported: {result.stdout}"
