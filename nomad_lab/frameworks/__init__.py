"""Your RAG framework and the workbench, both ways: recorders that run your retriever over golden suites
and write pool files (:mod:`nomad_lab.data.pool_format`), and adapters that apply a saved gate inside
your pipeline (:mod:`nomad_lab.gate.runtime`). LangChain (``nomad-lab[langchain]``) and LlamaIndex
(``nomad-lab[llamaindex]``) are optional extras, imported only inside the functions that use them.
"""
