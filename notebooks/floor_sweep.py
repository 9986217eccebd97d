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
# # Floor sweep: off-topic leak rate against recall@5
#
# Sweeps the post-rerank score floor (`RAG_MIN_FINAL_SCORE`), the cosine floor and the
# top-versus-median contrast test over a stored candidate dump, with 95% bootstrap bands, the
# seed's 0.62 default marked, a calibrated floor for a target leak rate, and the margin between
# each floor and the weakest correct top hit. No retrieval and no model runs here.

# %% [markdown]
# Relative paths below are read from the repository root, wherever the kernel runs.

# %% tags=["parameters"]
dump = "runs/dumps/core-off_topic.json"  # written by `nomad-lab eval retrieval --dump`
out_dir = "runs/floor_sweep"  # the main job passes results/...; a run by hand never writes there
alpha = 0.05  # target off-topic leak rate for the calibrated floor (the main job's)
refusal_tag = "off-topic"  # count leaks on this suite's refusals only ("": every refusal)
gate = []  # more gate specs, one curve each, e.g. ["floor@0.4+contrast", "judge:embedded:gemma3-270m"]
run = "latest"  # stored run the dump came from, for gates needing more than pools: "main", a run id
store = None  # workspace store holding that run (None: $NOMAD_LAB_STORE or runs/nomad-lab.duckdb)

# %%
from IPython.display import Markdown, display

from nomad_lab.core.workspace import in_workspace, store_path
from nomad_lab.publish.results import write
from nomad_lab.runners.studies import run_study
from nomad_lab.studies.gating.floor_sweep import markdown_table, tag_table

result, paths = run_study(
    "floor-sweep",
    publish=write,
    dump=in_workspace(dump),
    out=in_workspace(out_dir),
    alpha=alpha,
    refusal_tag=refusal_tag,
    gate=gate,
    run=run,
    store=store_path(store),
)
study = result.value  # the measured sweep; its files were written by the publish writer
display(Markdown(markdown_table(study)))
print(study.calibrated.message)

# %% [markdown]
# The curve: leak (solid) and recall@5 (dashed) against the floor; the purple line is the margin
# left before the weakest correct top hit.

# %%
from IPython.display import Image

display(Image(filename=str(paths["floor_sweep.png"])))
display(Image(filename=str(paths["leak_vs_recall.png"])))

# %% [markdown]
# Leak rate per tag at the default floor:

# %%
display(Markdown(tag_table(study)))
