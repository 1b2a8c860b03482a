"""Confidence scoring: the seed's examples and properties that must always hold."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_confgate import EvalMetric, compute_confidence, compute_raw
from pytest_confgate.models import MetricStatus


def _metrics(values: list[float | None], weights: list[float] | None = None) -> list[EvalMetric]:
    weights = weights or [1.0] * len(values)
    return [
        EvalMetric(type=f"m{i}", value=v, weight=w)
        for i, (v, w) in enumerate(zip(values, weights, strict=True))
    ]


@pytest.mark.parametrize(
    ("values", "weights", "expected"),
    [
        ([0.9, 0.8, 0.7], None, 0.8),
        ([1.0, 0.0], [3.0, 1.0], 0.75),
        ([0.9, None], None, 0.45),
        ([0.5], [0.0], 0.0),
        ([], None, 0.0),
    ],
    ids=["seed-equal-weights", "weighted", "unavailable-counts-as-zero", "all-zero-weights",
         "no-metrics"],
)
def test_composite_confidence_is_the_weighted_mean(
    values: list[float | None], weights: list[float] | None, expected: float
) -> None:
    assert compute_confidence(_metrics(values, weights)) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("values", "weights", "expected"),
    [
        ([0.9, 0.8, 0.7], None, 0.8),
        ([0.1] * 10, None, 0.1),
        ([1.0, 0.7], [0.5, 0.5], 0.85),
    ],
    ids=["seed", "ten-tenths", "halves"],
)
def test_the_weighted_mean_is_rounded_once_so_every_python_gives_the_same_float(
    values: list[float | None], weights: list[float] | None, expected: float
) -> None:
    # Exactly, not approx: a threshold of 0.8 must be met by the seed's example on 3.11 and
    # on 3.12+ alike, where float sum() rounds differently.
    assert compute_confidence(_metrics(values, weights)) == expected


def test_an_errored_metric_counts_as_zero_even_with_a_value_left_in_it() -> None:
    broken = EvalMetric(type="llm_judge", value=None, status=MetricStatus.ERROR)
    assert compute_confidence([EvalMetric(type="a", value=1.0), broken]) == 0.5


def test_raw_mode_returns_each_value_unaggregated() -> None:
    assert compute_raw(_metrics([0.85, 0.90])) == [0.85, 0.90]
    assert compute_raw(_metrics([0.85, None])) == [0.85, 0.0]


def test_a_value_outside_zero_one_is_refused() -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        EvalMetric(type="x", value=1.5)
    with pytest.raises(ValueError, match="finite"):
        EvalMetric(type="x", value=float("nan"))


_metric = st.builds(
    EvalMetric,
    type=st.sampled_from(["a", "b", "c"]),
    value=st.one_of(st.none(), st.floats(0.0, 1.0)),
    weight=st.floats(0.0, 100.0),
)


@given(st.lists(_metric, max_size=8))
def test_confidence_always_stays_in_zero_one(metrics: list[EvalMetric]) -> None:
    assert 0.0 <= compute_confidence(metrics) <= 1.0


@given(st.lists(_metric, max_size=8), st.randoms())
def test_the_order_of_metrics_never_matters(metrics: list[EvalMetric], rnd: object) -> None:
    shuffled = list(metrics)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert compute_confidence(shuffled) == pytest.approx(compute_confidence(metrics))
