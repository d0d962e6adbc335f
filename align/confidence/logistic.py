"""Logistic regression on standardized features, fitted by Newton's method (numpy only): the cell model and the
sentence models of a calibration (:mod:`align.confidence.calibration`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Logistic:
    """``P(y = 1 | x) = sigmoid(w0 + w . (x - mean) / scale)``: a logistic regression on standardized features."""

    features: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray  # (1 + n_features,): intercept first

    def log_odds(self, x: np.ndarray) -> np.ndarray:
        """(n, n_features) -> (n,) log-odds, clipped to [-500, 500] (float64's sigmoid is 0 or 1 well before)."""
        z = (np.asarray(x, dtype=np.float64) - self.mean) / self.scale
        return np.asarray(np.clip(self.weights[0] + z @ self.weights[1:], -500, 500))

    def predict(self, x: np.ndarray) -> np.ndarray:
        """(n, n_features) -> (n,) probabilities."""
        return np.asarray(1.0 / (1.0 + np.exp(-self.log_odds(x))))

    def to_dict(self) -> dict[str, Any]:
        return {
            "features": list(self.features),
            "mean": self.mean.tolist(),
            "scale": self.scale.tolist(),
            "weights": self.weights.tolist(),
        }


def fit_logistic(
    x: np.ndarray,
    y: np.ndarray,
    features: Sequence[str],
    l2: float = 1e-2,
    iterations: int = 50,
    weights: np.ndarray | None = None,
) -> Logistic:
    """Fit :class:`Logistic` to (n, k) features and (n,) 0/1 labels by Newton's method; ``l2`` penalizes the
    weights (not the intercept), so separable data still give finite weights; ``weights`` (n,): each
    example's weight (default 1)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    sw = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=np.float64)
    mean, scale = x.mean(0), x.std(0)
    # a feature constant to within 1e-9 of its size has scale 1: float rounding leaves a constant column a
    # spread of about 2e-16, which would multiply any later change of that feature by 4.5e15
    scale = np.where(scale > 1e-9 * np.maximum(1.0, np.abs(mean)), scale, 1.0)
    z = np.c_[np.ones(len(x)), (x - mean) / scale]
    w = np.zeros(z.shape[1])
    rate = float((sw * y).sum() / sw.sum())
    w[0] = math.log((rate + 1e-6) / (1 - rate + 1e-6))
    penalty = np.diag(np.r_[0.0, np.full(z.shape[1] - 1, l2)])

    def loss(v: np.ndarray) -> float:  # penalized negative log-likelihood; logaddexp keeps it finite
        a = z @ v
        return float(np.sum(sw * (np.logaddexp(0.0, a) - y * a)) + 0.5 * v @ penalty @ v)

    current = loss(w)
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(z @ w, -500, 500)))
        grad = z.T @ (sw * (p - y)) + penalty @ w
        hess = (z * (sw * p * (1 - p))[:, None]).T @ z + penalty + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        t = 1.0  # Newton's step, halved until the loss goes down (collinear features make the full step overshoot)
        while t > 1e-10 and loss(w - t * step) > current:
            t /= 2
        w = w - t * step
        previous, current = current, loss(w)
        if np.abs(t * step).max() < 1e-8 or previous - current < 1e-10 * max(1.0, abs(current)):
            break
    return Logistic(tuple(features), mean, scale, w)
