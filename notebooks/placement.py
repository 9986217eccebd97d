# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Prefill by RAG placement (`RAG_PLACEMENT`: tail vs front)
#
# Replays a multi-turn conversation turn by turn through llama.cpp with its prompt cache on, with a
# different retrieved block every turn, and records prefill per turn for both placements, with and
# without a query rewrite on the same slot between turns. The seed measured 231 ms (tail) against
# 539 ms (front) at turn 14 on llama3:8b.

# %% [markdown]
# Relative paths below are read from the repository root, wherever the kernel runs.

# %% tags=["parameters"]
out_dir = "results/placement"
corpus = "datasets/corpus"
turns = 16
context_window = 8192
model = None  # a GGUF path; None: the embedded Gemma 3 270M
recompute = False  # False: reuse the stored run in out_dir when there is one
repeats = 6  # at most N paired replays per series; prefill is the median per turn
store = None  # workspace store for the rows (None: runs/nomad-lab.duckdb)

# %%
from IPython.display import Image, Markdown, display

from nomad_lab.core.workspace import in_workspace
from nomad_lab.studies.budgeting.placement import load_or_run
from nomad_lab.studies.budgeting.placement_report import markdown, turn_table, write

result = load_or_run(
    recompute=recompute,
    out=in_workspace(out_dir),
    corpus=in_workspace(corpus),
    turns=turns,
    context_window=context_window,
    model=in_workspace(model),
    repeats=repeats,
    store=in_workspace(store),
)
paths = write(result, in_workspace(out_dir))
display(Markdown(markdown(result)))
display(Image(filename=str(paths["png"])))

# %%
display(Markdown(turn_table(result)))
