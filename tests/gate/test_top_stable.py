"""The partial top-k of the candidate net equals a full stable sort, ties and threshold included."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from nomad_lab.retrieval.index_kinds.search_exact import top_stable

# few distinct values, so ties at the top-k boundary are common
scores = st.lists(st.sampled_from([-0.5, 0.0, 0.3, 0.31, 0.7, 0.7001, 0.9, 1.0]), max_size=60)


@given(scores, st.integers(min_value=-1, max_value=70), st.sampled_from([-2.0, 0.0, 0.3, 0.7]))
def test_top_stable_is_the_stable_argsort_prefix(values: list[float], limit: int, threshold: float) -> None:
    array = np.array(values, dtype=np.float32)
    full = np.argsort(-array, kind="stable")[: max(limit, 0)]
    assert top_stable(array, limit, threshold) == [int(i) for i in full if array[i] >= threshold]
