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
# # Label your library's questions
#
# `nomad-lab goldens draft --corpus DIR --out GOLDENS` writes candidate questions (`GOLDENS/drafts.jsonl`);
# here a person decides each one: **answerable** with the document that answers it (a button per
# document among the top passages, the question's words marked), a **refusal** of a type, or **skip**.
# Edit the question in its box before deciding to label your own wording. Each decision is written at
# once to `GOLDENS/labelled.jsonl` (a golden suite: `--goldens GOLDENS --suite labelled`) with who and
# when, so closing the notebook loses nothing and running it again resumes. After 30 labels the rest
# come in the order that moves the gate most (closest to its threshold first), and the figure shows the
# leak at recall@5 >= 0.90 with its interval, narrowing as labels come in.
#
# Keys: click the key box, then `1`-`5` answerable (that passage's document), `n` near-domain,
# `f` fictional attribute, `o` out-of-corpus, `t` other off-topic, `s` skip.

# %% tags=["parameters"]
corpus = None  # the documents (None: $NOMAD_LAB_CORPUS or datasets/corpus)
goldens = None  # the folder holding drafts.jsonl; labels go beside it (None: $NOMAD_LAB_LABEL_DIR)
store = None  # workspace store (None: $NOMAD_LAB_STORE or runs/nomad-lab.duckdb)
who = None  # recorded with every label (None: $NOMAD_LAB_LABELLER or the account name)

# %%
from IPython.display import display

from nomad_lab.core.workspace import in_workspace, store_path
from nomad_lab.studies.gating.labeller import labeller

display(labeller(in_workspace(corpus), in_workspace(goldens), store_path(store), who))
