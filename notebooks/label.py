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
# # Label your library's questions
#
# `nomad-lab first-run` drafts the default library's questions into `runs/label` (git-ignored, the default
# `goldens`); for your library `nomad-lab goldens draft --corpus DIR --out GOLDENS` writes them
# (`GOLDENS/drafts.jsonl`). Here a person decides each one: **answerable**, with the document that states
# the answer (one of the retrieved passages, or any document of the library searched by name: a gold
# retrieval did not return is recorded as a retrieval miss), a **refusal** of one of three kinds (each
# defined under the controls), or **skip**. The draft's own guess is pre-selected; **save** keeps it, and
# every passage is shown whole in the frame (scroll it), the question's words marked and its best-matching
# sentence shaded. Edit the question in its box to label your own wording. **undo** takes back the last
# decision, **back** shows the one before to keep or change. Each decision is written at once to
# `GOLDENS/labelled.jsonl` (a golden suite: `--goldens GOLDENS --suite labelled`) with who and when, so
# closing the notebook loses nothing and running it again resumes. The first 20 drafts are dealt as 5 rounds
# of one answerable, one off-topic, one unanswerable and one near-domain draft (`refusals_first`: the 15
# refusals first), so the figure is drawn early; after 30 labels the rest come in the order that moves the
# gate most (closest to its threshold first). The figure shows the off-topic leak at recall@5 >= 0.90 on the
# labels so far, its interval once 5 off-topic labels back it, from at least 5 answerable and 5 refusal
# labels; its history is replayed from the decisions log.
#
# Keys: click the key box, then `a` save the selection, `1`-`5` answerable (that passage's
# document), `o` off-topic, `u` unanswerable, `n` near-domain, `s` skip, `z` undo, `b` back.

# %% tags=["parameters"]
corpus = None  # the documents (None: $NOMAD_LAB_CORPUS or datasets/corpus)
goldens = None  # folder holding drafts.jsonl, labels beside it (None: $NOMAD_LAB_LABEL_DIR or runs/label)
store = None  # workspace store (None: $NOMAD_LAB_STORE or runs/nomad-lab.duckdb)
who = None  # recorded with every label (None: $NOMAD_LAB_LABELLER or the account name)
refusals_first = False  # True: the 15 refusal drafts (5 of each kind) before any answerable one

# %%
from IPython.display import display

from nomad_lab.core.workspace import in_workspace, store_path
from nomad_lab.studies.gating.labeller import labeller

display(labeller(in_workspace(corpus), in_workspace(goldens), store_path(store), who, refusals_first))
