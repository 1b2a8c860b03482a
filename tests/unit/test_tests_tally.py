"""Test outcomes are counted as pytest's own summary counts them."""

from __future__ import annotations

import pytest

from pytest_confgate.collect.tests import TestTally, pass_rate_metric
from pytest_confgate.models import TestOutcomes


def test_phases_are_counted_like_pytest_counts_them() -> None:
    tally = TestTally()
    tally.add_report("call", "passed")
    tally.add_report("call", "failed")
    tally.add_report("setup", "failed")  # fixture error
    tally.add_report("teardown", "failed")  # teardown error after a passed call
    tally.add_report("setup", "skipped")
    tally.add_report("call", "skipped", xfail=True)  # xfailed
    tally.add_report("call", "passed", xfail=True)  # xpassed (not strict)
    tally.add_report("call", "failed", xfail=True)  # strict xpass reports as failed
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
