# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     notebook_metadata_filter: -jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Embedders side by side: does a floor transfer?
#
# Retrieves the same goldens with each embedder spec (the strings `nomad-lab eval retrieval --embedder`
# takes), then compares recall, leak, the calibrated floor and its margin per embedder, applies every
# embedder's floor to every other's pools, and writes each embedder's Off / Lenient / Balanced / Strict
# floor presets. Same functions as `nomad-lab study embedders --embedder SPEC ...`.

# %% tags=["parameters"]
embedder = [
    "st:",
    "wordllama:",
]  # embedder specs: st:, ollama://h:p/m, openai://h:p/v1/m, gguf:PATH, wordllama:
corpus = "datasets/corpus"  # relative paths are read from the repository root
goldens = "datasets/goldens"
suite = "core,off_topic"
store = None  # workspace store (None: $NOMAD_LAB_STORE or runs/nomad-lab.duckdb)
out_dir = "runs/embedders"  # a run by hand never writes the published results/
alpha = 0.10  # leak target of the calibrated floor

# %%
from IPython.display import Image, Markdown, display

from nomad_lab.core.workspace import in_workspace, store_path
from nomad_lab.publish.results import write
from nomad_lab.runners.studies import run_study
from nomad_lab.studies.gating.embedders import comparison_markdown

out = in_workspace(out_dir)
result, paths = run_study(
    "embedders",
    publish=write,
    embedder=embedder,
    alpha=alpha,
    corpus=in_workspace(corpus),
    goldens=in_workspace(goldens),
    suite=suite,
    store=store_path(store),
    out=out,
)
display(Markdown(comparison_markdown(result.value["data"])))  # the publish writer wrote the files
display(Image(filename=f"{out}/embedders.png"))

# %% [markdown]
# Each embedder's floor presets (the JSON to carry to the assistant's settings):

# %%
import json
from pathlib import Path

from nomad_lab.studies.gating.presets import presets_markdown

for path in sorted(Path(out).glob("presets-*.json")):
    display(Markdown(presets_markdown(json.loads(path.read_text()))))
