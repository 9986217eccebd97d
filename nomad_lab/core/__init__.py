"""The pure core: everything here imports with the standard library alone (``python -S``).

Both halves start here: the relevance judge's prompt and verdict parsing (gating) and the token
estimator, context window and prompt planner (budgeting), plus the seed's string compat helpers, the
reference constants and the workspace's default paths. A test imports every module of this package
under ``python -S -I``, so nothing here may reach for a third-party library.
"""
