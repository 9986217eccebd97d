"""nomad-lab: a Jupyter-first workbench for what a local-LLM RAG assistant puts into its prompt.

The pure core (``judge``, ``estimator``, ``context_window``, ``planner``, ``think_stream``) imports
with the standard library alone; everything that needs models, HTTP, DuckDB or plotting lives in
modules around it and is imported only when used.
"""

__version__ = "0.1.0"
