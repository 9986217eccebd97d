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
# # Prefill by RAG placement (`RAG_PLACEMENT`: tail vs front)
#
# Every turn of a multi-turn conversation, with a different retrieved block every turn, charged in
# prompt tokens by the KV-prefix cache rule for both placements, with and without a query rewrite on
# the same slot between turns (exact, no decode; checked against the engine's own counts on real
# calls), and timed through a prefill cost model fitted to a planned sample of prefills. The seed
# measured 231 ms (tail) against 539 ms (front) at turn 14 on llama3:8b.

# %% [markdown]
# Relative paths below are read from the repository root, wherever the kernel runs.

# %% tags=["parameters"]
out_dir = "runs/placement"  # tables and plot (the main job passes results/placement)
stored_run = "results/placement"  # the published run read back unless recompute
corpus = "datasets/corpus"
turns = 16
context_window = 8192
backend = "embedded:gemma3-270m"  # or ollama://HOST:PORT/MODEL, openai://HOST:PORT/v1/MODEL
tokenizer = None  # a server's GGUF tokenizer (None: the served model when it is an embedded alias)
recompute = False  # False: reuse the stored run in out_dir when there is one
rounds = 3  # at most N rounds of the cost model's planned sample
store = None  # workspace store for the rows (None: runs/nomad-lab.duckdb)

# %%
from IPython.display import Image, Markdown, display

from nomad_lab.core.workspace import in_workspace
from nomad_lab.publish.results import write
from nomad_lab.studies.budgeting.placement import STUDY, load_or_run
from nomad_lab.studies.budgeting.placement_report import check_table, cost_table, markdown, turn_table

result = load_or_run(
    publish=write,
    recompute=recompute,
    stored=in_workspace(stored_run),
    out=in_workspace(out_dir),
    corpus=in_workspace(corpus),
    turns=turns,
    context_window=context_window,
    backend=backend,
    tokenizer=tokenizer,
    rounds=rounds,
    store=in_workspace(store),
)
paths = write(STUDY.result(result), in_workspace(out_dir))
display(Markdown(markdown(result)))
display(Image(filename=str(paths["prefill_vs_turn.png"])))

# %%
display(Markdown(cost_table(result)))
display(Markdown(check_table(result)))
display(Markdown(turn_table(result)))
