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
# # Explore: move the floor, toggle the judge, read what leaks
#
# A stored retrieval run is re-gated live: no retrieval and no model call (judge verdicts come from
# the store; run `nomad-lab study judges` to fill them). The list shows the refusal questions that
# still got context, with their top passage.

# %% tags=["parameters"]
store = "runs/nomad-lab.duckdb"
run_id = None  # None: the latest retrieval run in the store
judge_model = "embedded:gemma3-270m"  # verdicts read from the store; None for no judge
judge_floor = 0.0  # the floor the stored verdicts were computed after
floor = 0.62
use_judge = False

# %%
import ipywidgets as widgets
import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from nomad_lab.gate import gates
from nomad_lab.gate.sweep import sweep
from nomad_lab.studies.gating.explore import leaked_table, load_explore_data, plot_snapshot, snapshot

data = load_explore_data(store, run_id, judge_model, judge_floor)
curve = sweep(data.pools, "score_floor", gates.FLOOR_GRID)
for note in data.notes:
    print(note)


def draw(floor: float, use_judge: bool) -> None:
    shot = snapshot(data, floor, use_judge)
    plot_snapshot(curve, shot)
    plt.show()
    display(Markdown(leaked_table(shot)))


controls = widgets.interactive(
    draw,
    floor=widgets.FloatSlider(value=floor, min=0.0, max=1.0, step=0.01, description="floor"),
    use_judge=widgets.Checkbox(value=use_judge, description="judge", disabled=data.verdicts is None),
)
display(controls)

# %% [markdown]
# ## The judge's confidence: drop a set when its stored P(true) is below tau
#
# P(on_topic = true) is read with every verdict (run `nomad-lab study judges` to fill it); tau 0 is off.
# Sets with no stored confidence are kept, as the judge fails open.

# %%
from nomad_lab.studies.gating.explore import tau_explorer

display(tau_explorer(store, run_id, judge_model, judge_floor, floor))
