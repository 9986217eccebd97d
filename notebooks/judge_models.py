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
# # Judge models: leak and recall per relevance-judge model, against floor-only
#
# Each model judges the same stored pools (verdicts cached in the store by model and by a hash of
# the exact judge input, so a rerun computes nothing twice). Reported per model: leak and recall@5
# with 95% intervals, an exact McNemar test on leaks and a paired bootstrap on recall against the
# floor alone, latency per call and failures (fail-open). Any backend spec works here, e.g.
# `ollama://127.0.0.1:11434/llama3:8b`.

# %% [markdown]
# Relative paths below are read from the repository root, wherever the kernel runs.

# %% tags=["parameters"]
judge_model = ["embedded:gemma3-270m"]
suite = "off_topic"
run = None  # None: retrieve suite now; or "main" (the main job's run of corpus), "latest", a run id
floor = 0.0  # the floor the judge runs after
limit = None  # judge only the first N questions (None: all)
store = None  # workspace store (None: runs/nomad-lab.duckdb)
corpus = None  # corpus folder (None: datasets/corpus)
goldens = None  # golden suites folder (None: datasets/goldens)
out_dir = "runs/judges"  # the table and plots (the main job passes results/judges)
workers = 0  # > 0: compute missing verdicts on a local Dask cluster of this many processes
scheduler = None  # or a running Dask scheduler, e.g. "tcp://head:8786"
sample = None  # judge a stratified sample of N questions instead (intervals then cover the sample)
alpha = 0.05  # leak target of the calibrated (floor, tau)

# %%
from IPython.display import Markdown, display

from nomad_lab.core.workspace import in_workspace
from nomad_lab.publish.results import write
from nomad_lab.runners.studies import run_study
from nomad_lab.studies.gating.judges import markdown, plot_comparison

result, paths = run_study(
    "judges",
    publish=write,
    judge_model=judge_model,
    suite=suite,
    run=run,
    floor=floor,
    limit=limit,
    sample=sample,
    alpha=alpha,
    store=in_workspace(store),
    corpus=in_workspace(corpus),
    goldens=in_workspace(goldens),
    workers=workers,
    scheduler=scheduler,
    out=in_workspace(out_dir),
)
judged = result.value  # the comparison and confidence studies; the publish writer wrote their files
display(Markdown(markdown(judged.rows)))

# %%
fig = plot_comparison(judged.rows)

# %% [markdown]
# ## The judge's confidence: tau curve, the (floor, tau) surface and its Pareto frontier
#
# Each verdict carries P(on_topic = true). Rejecting a set when P(true) < tau gives the judge an operating
# curve; with the floor it gives a surface, its Pareto frontier and a calibrated (floor, tau) for `alpha`.

# %%
from nomad_lab.studies.gating.judge_confidence import markdown as confidence_markdown
from nomad_lab.studies.gating.judge_confidence import plot as confidence_plot

for study in judged.confidence:
    display(Markdown(confidence_markdown(study)))
    confidence_plot(study)
