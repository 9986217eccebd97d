"""Services that compose the adapters.

The relevance judge with its verdict cache, the query rewrite, the assistant pipeline, and the one
boundary every model call crosses.
"""
