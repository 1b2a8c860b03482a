"""Confidence scoring: advisory numbers from evidence, never a verdict.

Pure functions over ``EvalMetric``: no IO, no clock, no environment.
"""

from __future__ import annotations

from fractions import Fraction

from pytest_confgate.models import EvalMetric


def compute_confidence(metrics: list[EvalMetric]) -> float:
    """Weighted mean ``sum(w*v)/sum(w)`` in [0.0, 1.0].

    Unavailable or errored metrics count as 0.0 (conservative); no metrics, or weights that
    are all zero, give 0.0. ``[0.9, 0.8, 0.7]`` with equal weights gives 0.8.

    Computed exactly and rounded once: a float ``sum`` rounds differently from Python 3.12 on
    (compensated summation), and the mean above would be 0.8000000000000002 on 3.11 but
    0.7999999999999999 on 3.14, so a threshold of 0.8 would be met on one and not the other.
    """
    total_weight = sum(Fraction(m.weight) for m in metrics)
    if total_weight <= 0:
        return 0.0
    weighted = sum(
        Fraction(m.weight) * Fraction(m.value if m.available and m.value is not None else 0.0)
        for m in metrics
    )
    return min(1.0, max(0.0, float(weighted / total_weight)))


def compute_raw(metrics: list[EvalMetric]) -> list[float]:
    """Each metric's own value, in order, without aggregation; unavailable counts as 0.0."""
    return [m.value if m.available and m.value is not None else 0.0 for m in metrics]
