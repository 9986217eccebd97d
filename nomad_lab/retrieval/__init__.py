"""Embeddings and the retrieval index: MiniLM vectors in DuckDB, searched and reranked like the reference."""
