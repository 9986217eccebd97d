"""The folds every out-of-fold figure is scored on: question groups and repeated grouped, stratified splits.

Why apart from the scoring (:mod:`nomad_lab.gate.crossval`): which questions may share a fold is a
decision about the data (near-duplicates and refusals of one tag family always fall together, so a test
fold holds kinds of question its training folds never saw), made once and shared by every gate, learned
or fixed, that a leaderboard compares; the splits are remembered by content for the same reason.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from nomad_lab.gate.pools import PoolSet

NEAR_DUPLICATE = 0.92
"""Query-embedding cosine at or above which two questions are near-duplicates (always one group)."""

Split = list[tuple[np.ndarray, np.ndarray]]


def question_groups(
    tags: Sequence[Sequence[str]], refusal: np.ndarray, vectors: np.ndarray | None = None
) -> np.ndarray:
    """One group id per question: union of near-duplicate pairs and refusals with the same tag set."""
    n = len(tags)
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(i: int, j: int) -> None:
        parent[find(i)] = find(j)

    family: dict[tuple[str, ...], int] = {}
    for i in np.flatnonzero(refusal):
        key = tuple(sorted(tags[i]))
        join(int(i), family.setdefault(key, int(i)))
    if vectors is not None and n:
        unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        close = np.argwhere(np.triu(unit @ unit.T >= NEAR_DUPLICATE, k=1))
        for i, j in close:
            join(int(i), int(j))
    roots = [find(i) for i in range(n)]
    return np.unique(roots, return_inverse=True)[1]


def repeated_splits(
    labels: np.ndarray, groups: np.ndarray, folds: int, repeats: int, seed: int
) -> list[Split]:
    """``repeats`` grouped, stratified k-fold splits (folds capped by the smaller class's group count).

    Remembered by content: a leaderboard fits a dozen gates over the same outer folds, and each outer
    fold asks for the same inner splits once per gate, so StratifiedGroupKFold's search (seconds over a
    leaderboard) ran again for answers it had already given. The index arrays come back read-only,
    since every caller holding them shares them.
    """
    labels, groups = np.asarray(labels), np.asarray(groups)
    key = (labels.dtype.str, labels.tobytes(), groups.dtype.str, groups.tobytes(), folds, repeats, seed)
    if key not in _SPLITS:
        from sklearn.model_selection import StratifiedGroupKFold  # heavy

        smallest = min(len(np.unique(groups[labels == value])) for value in np.unique(labels))
        k = max(2, min(folds, smallest))
        out = []
        for r in range(repeats):
            splitter = StratifiedGroupKFold(n_splits=k, shuffle=True, random_state=seed + r)
            split = splitter.split(np.zeros(len(labels)), labels, groups)
            out.append([_read_only(train, test) for train, test in split])
        if len(_SPLITS) >= _SPLITS_KEPT:
            _SPLITS.pop(next(iter(_SPLITS)))  # the oldest: a study moves on to other questions
        _SPLITS[key] = out
    return [list(split) for split in _SPLITS[key]]


def answerable_folds(
    pools: PoolSet, vectors: np.ndarray | None, folds: int, repeats: int, seed: int
) -> tuple[np.ndarray, np.ndarray, list[Split]]:
    """A run's labels (1: answerable, 0: a refusal), its question groups (near-duplicates by ``vectors``,
    the query embeddings, and refusals of one tag family together) and ``repeats`` grouped, stratified
    splits over them.

    Why one function: every out-of-fold study of a whole run (the gates leaderboard and its transfer
    rows, the fitted learned gate, answerability, sufficiency, the size transfer, label-free against
    labels) folds its questions this way, so studies over one run hold out the same groups."""
    y = (~pools.expect_refusal).astype(int)
    groups = question_groups(pools.tags, pools.expect_refusal, vectors)
    return y, groups, repeated_splits(y, groups, folds, repeats, seed)


_SPLITS: dict[tuple, list[Split]] = {}
_SPLITS_KEPT = 4096


def _read_only(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    for array in arrays:
        array.setflags(write=False)
    return arrays


def fold_matrix(splits: list[Split], n: int, repeats: int) -> np.ndarray:
    """Each question's held-out fold per repeat (repeats × n); -1 where nothing was held out (a fixed
    point scored on every question)."""
    folds = np.full((repeats, n), -1, dtype=int)
    for r, split in enumerate(splits[:repeats]):
        for f, (_, test) in enumerate(split):
            folds[r, test] = f
    return folds
