"""Saving publication figures (matplotlib, headless-safe): every plot as PNG and SVG."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt  # falls back to Agg by itself where there is no display


def save(fig: plt.Figure, path: str | Path) -> Path:
    """Write ``fig`` as PNG (150 dpi, for reading) and as SVG beside it (for publishing), then close it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=150)
    fig.savefig(path.with_suffix(".svg"))
    plt.close(fig)
    return path
