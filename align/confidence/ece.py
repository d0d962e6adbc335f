"""How well link probabilities are calibrated: reliability bins and the expected calibration error (numpy).

``eval.metrics`` re-exports both (they score probabilities as AER scores links); they live here so that
``align-calibrate`` reports them without importing the evaluation layer above ``align``.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def reliability(probs: np.ndarray, labels: np.ndarray, bins: int = 10) -> list[dict[str, Any]]:
    """Equal-width bins of predicted probability: per bin its range, cell count, mean prediction and rate of
    positives (None for an empty bin): the points of a reliability diagram."""
    p, y = np.asarray(probs, dtype=np.float64), np.asarray(labels, dtype=np.float64)
    idx = np.minimum((p * bins).astype(np.int64), bins - 1)
    out = []
    for b in range(bins):
        m = idx == b
        n = int(m.sum())
        out.append(
            {
                "low": b / bins,
                "high": (b + 1) / bins,
                "count": n,
                "mean_probability": float(p[m].mean()) if n else None,
                "positive_rate": float(y[m].mean()) if n else None,
            }
        )
    return out


def expected_calibration_error(probs: np.ndarray, labels: np.ndarray, bins: int = 10) -> float:
    """ECE (Naeini et al. 2015; Guo et al. 2017): the count-weighted mean over equal-width bins of
    |mean prediction - rate of positives|, in [0, 1]."""
    n = len(np.asarray(probs))
    if n == 0:
        return 0.0
    return float(
        sum(
            b["count"] / n * abs(b["mean_probability"] - b["positive_rate"])
            for b in reliability(probs, labels, bins)
            if b["count"]
        )
    )
