"""Budgeting studies: the estimator against real tokenizers, placement and prefill, and transport."""
