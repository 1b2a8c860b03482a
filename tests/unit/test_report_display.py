"""Numbers for people: a failing value never reads as equal to its threshold (SPEC 6)."""

from __future__ import annotations

from pytest_confgate.report.display import format_fraction, format_pair


def test_a_fraction_reads_as_a_percentage_with_two_decimals() -> None:
    assert format_fraction(0.6996) == "69.96%"
    assert format_fraction(1.0) == "100.00%"


def test_a_failing_value_is_never_displayed_equal_to_its_threshold() -> None:
    shown, floor = format_pair(0.69999999, 0.70)
    assert shown != floor
    assert format_pair(0.6996, 0.7) == ("69.96%", "70.00%")
    assert format_pair(0.7, 0.7) == ("70.00%", "70.00%")
