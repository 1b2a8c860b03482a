"""Learning from feedback: category weights, within bounds.

The rule, pure and replayed from all stored feedback at every ranking:

1. Each feedback event compares the categories of the solution the user took with the one the
   ranking preferred: ``--chose ID`` (not the winner) compares the chosen solution with the
   ranked #1 at rate 0.10; ``--accepted-winner`` (or choosing #1) compares #1 with #2 at rate
   0.05, reinforcing what separated them; ``--rejected-all`` and choices of a blocked solution
   say nothing about categories and change nothing.
2. ``shift[c] = sum(rate * (taken[c] - other[c]))`` and ``w[c] = base[c] + shift[c]``.
3. Each weight stays within ``[0.5 * base[c], 1.5 * base[c]]`` (a category can at most halve or
   grow by half; a zero-weight category stays zero), and the weights are brought back to a sum
   of 1 by spreading the difference over the categories not at a bound.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pytest_confgate.rank.models import CATEGORIES

Choice = Literal["accepted_winner", "chose_other", "rejected_all"]
RATES: dict[str, float] = {"chose_other": 0.10, "accepted_winner": 0.05, "rejected_all": 0.0}
LOWER, UPPER = 0.5, 1.5
_ROUNDS = 100


@dataclass(frozen=True)
class FeedbackEvent:
    """One user decision about one ranking, with the two solutions' category scores."""

    choice: Choice
    taken: Mapping[str, float] | None = None
    other: Mapping[str, float] | None = None


def adjusted_weights(
    base: Mapping[str, float], events: Sequence[FeedbackEvent]
) -> dict[str, float]:
    """``base`` moved by ``events`` under the module's rule; always sums to 1, within bounds."""
    total = sum(base[name] for name in CATEGORIES)
    start = {name: base[name] / total for name in CATEGORIES}
    shift = dict.fromkeys(CATEGORIES, 0.0)
    for event in events:
        if event.taken is None or event.other is None:
            continue
        rate = RATES[event.choice]
        for name in CATEGORIES:
            shift[name] += rate * (event.taken[name] - event.other[name])
    raw = {name: start[name] + shift[name] for name in CATEGORIES}
    return fit_to_bounds(raw, {n: LOWER * start[n] for n in CATEGORIES},
                         {n: UPPER * start[n] for n in CATEGORIES})


def fit_to_bounds(
    raw: Mapping[str, float], low: Mapping[str, float], high: Mapping[str, float]
) -> dict[str, float]:
    """Clamp each weight to its bounds, then spread ``1 - sum`` over the unclamped ones.

    Converges because ``sum(low) <= 1 <= sum(high)``; the last residual (float noise) goes to
    the largest weight that can take it.
    """
    weights = {name: _clamp(raw[name], low[name], high[name]) for name in CATEGORIES}
    for _ in range(_ROUNDS):
        residual = 1.0 - sum(weights.values())
        if abs(residual) < 1e-15:
            break
        free = [
            name for name in CATEGORIES
            if (residual > 0 and weights[name] < high[name])
            or (residual < 0 and weights[name] > low[name])
        ]
        if not free:
            break
        share = residual / len(free)
        for name in free:
            weights[name] = _clamp(weights[name] + share, low[name], high[name])
    return weights


def _clamp(value: float, low: float, high: float) -> float:
    return min(high, max(low, value))
