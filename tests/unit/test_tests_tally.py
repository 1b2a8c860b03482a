"""Test outcomes are counted as pytest's own summary counts them."""

from __future__ import annotations

import pytest

from pytest_confgate.collect.tests import TestTally, pass_rate_metric
from pytest_confgate.models import TestOutcomes


def test_reports_are_counted_by_pytests_own_categories() -> None:
    tally = TestTally()
    for category in [
        "passed", "failed", "error", "error", "skipped", "xfailed", "xpassed", "failed",
        "",  # a passing setup or teardown
        "subtests passed",  # not a test of its own: pytest's summary does not count it
        "rerun",  # a plugin's category that is not an outcome
    ]:
        tally.add_category(category)
    tally.add_collection_error()
    outcomes = tally.outcomes(1.5)
    assert outcomes == TestOutcomes(
        passed=1, failed=2, errors=3, skipped=1, xfailed=1, xpassed=1, duration_s=1.5
    )


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        (TestOutcomes(passed=3, failed=1), 0.75),
        (TestOutcomes(passed=3, errors=1, skipped=10), 0.75),
        (TestOutcomes(passed=1, xpassed=1, failed=2), 0.5),
        (TestOutcomes(skipped=4), 0.0),
        (TestOutcomes(), 0.0),
    ],
    ids=["failures", "skips-excluded", "xpass-counts-as-pass", "only-skips", "nothing-ran"],
)
def test_pass_rate_excludes_skips_and_is_zero_when_nothing_ran(
    outcomes: TestOutcomes, expected: float
) -> None:
    metric = pass_rate_metric(outcomes)
    assert metric.value == pytest.approx(expected)
    assert metric.details["ran"] == outcomes.ran
