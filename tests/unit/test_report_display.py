"""Numbers for people: a failing value never reads as equal to its threshold (SPEC 6), and
changed lines read as compact ranges."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pytest_confgate.report.display import format_fraction, format_pair, in_ranges, line_ranges


def test_a_fraction_reads_as_a_percentage_with_two_decimals() -> None:
    assert format_fraction(0.6996) == "69.96%"
    assert format_fraction(1.0) == "100.00%"


def test_a_failing_value_is_never_displayed_equal_to_its_threshold() -> None:
    shown, floor = format_pair(0.69999999, 0.70)
    assert shown != floor
    assert format_pair(0.6996, 0.7) == ("69.96%", "70.00%")
    assert format_pair(0.7, 0.7) == ("70.00%", "70.00%")


def test_line_ranges_compact_consecutive_lines() -> None:
    assert line_ranges({7, 1, 2, 3, 9, 8}) == [[1, 3], [7, 9]]
    assert line_ranges([]) == []


@given(st.sets(st.integers(min_value=1, max_value=300), max_size=60))
def test_line_ranges_keep_exactly_the_lines(lines: set[int]) -> None:
    ranges = line_ranges(lines)
    assert {n for n in range(1, 302) if in_ranges(n, ranges)} == lines
