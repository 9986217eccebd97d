"""The evaluation harness: retrieval and generation evals, their metrics, reports and provenance."""
