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
# # Explore: move the floor, toggle the judge, read what leaks
#
# A stored retrieval run is re-gated live: no retrieval and no model call (judge verdicts come from
# the store; run `nomad-lab study judges` to fill them, with the judge's P(on_topic = true) for the tau
# slider). The list shows the refusal questions that still got context, with their top passage.
# `run` is a RUN value, read as every study's `--run` is: `"main"`, the main job's run of `corpus`
# (the default), `"latest"`, or any id `nomad-lab store runs` lists.

# %% tags=["parameters"]
store = None  # None: $NOMAD_LAB_STORE or runs/nomad-lab.duckdb; a relative path is under the repository
run = "main"  # "main": the main job's run of `corpus`; "latest"; or a run id from `nomad-lab store runs`
corpus = None  # the corpus "main" is over (None: $NOMAD_LAB_CORPUS or datasets/corpus)
refusals = "off-topic"  # the refusals a leak counts: off-topic, unanswerable, near-domain ("": all)
judge_model = "embedded:gemma3-270m"  # verdicts read from the store; None for no judge
judge_floor = 0.0  # the floor the stored verdicts were computed after
floor = 0.62
use_judge = False
tau = 0.0  # drop a set whose stored P(on_topic is true) is below tau; 0 is off

# %%
from IPython.display import display

from nomad_lab.studies.gating.explore import explorer

display(explorer(store, run, judge_model, judge_floor, floor, use_judge, tau, corpus, refusals))
