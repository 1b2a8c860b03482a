"""Confidence scoring (SPEC 5): advisory numbers from evidence, never a verdict.

Pure functions over ``EvalMetric``: no IO, no clock, no environment.
"""

from __future__ import annotations

from pytest_confgate.models import EvalMetric


def compute_confidence(metrics: list[EvalMetric]) -> float:
    """Weighted mean ``sum(w*v)/sum(w)`` in [0.0, 1.0].

    Unavailable or errored metrics count as 0.0 (conservative); no metrics, or weights that
    are all zero, give 0.0. ``[0.9, 0.8, 0.7]`` with equal weights gives 0.8.
    """
    total_weight = sum(m.weight for m in metrics)
    if total_weight <= 0:
        return 0.0
    weighted = sum(
        m.weight * (m.value if m.available and m.value is not None else 0.0) for m in metrics
    )
    return min(1.0, max(0.0, weighted / total_weight))


def compute_raw(metrics: list[EvalMetric]) -> list[float]:
    """Each metric's own value, in order, without aggregation; unavailable counts as 0.0."""
    return [m.value if m.available and m.value is not None else 0.0 for m in metrics]
