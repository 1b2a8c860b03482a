"""How numbers read in every report: percentages that never hide a failing value, line ranges.

Leaf: the policy words its reasons with these, and every writer shows values with them, so a
value and its threshold read the same everywhere (thresholds compare raw values,
rounding is for display only).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def format_fraction(value: float, digits: int = 2) -> str:
    """A fraction as a percentage for people: 0.6996 -> ``69.96%``."""
    return f"{value * 100:.{digits}f}%"


def coverage_fraction(value: float, precision: int) -> str:
    """A coverage figure as coverage.py shows it with ``precision`` digits: never 100% unless
    all is covered, never 0% unless nothing is (0.99996 -> ``99.99%`` at 2)."""
    percent, step = value * 100, 1.0 / 10**precision
    if 0 < percent < step:
        percent = step
    elif 100 - step < percent < 100:
        percent = 100 - step
    return f"{percent:.{precision}f}%"


def format_pair(value: float, threshold: float, least: int = 2) -> tuple[str, str]:
    """Format a value and its threshold so that unequal numbers never print the same
    (``least`` digits at least: a coverage figure's ``precision``)."""
    for digits in range(least, 9):
        shown, floor = format_fraction(value, digits), format_fraction(threshold, digits)
        if shown != floor or value == threshold:
            return shown, floor
    return repr(value), repr(threshold)


def line_ranges(lines: Iterable[int]) -> list[list[int]]:
    """``{1, 2, 3, 7}`` -> ``[[1, 3], [7, 7]]``: changed lines, compact enough for a report."""
    ranges: list[list[int]] = []
    for line in sorted(set(lines)):
        if ranges and line == ranges[-1][1] + 1:
            ranges[-1][1] = line
        else:
            ranges.append([line, line])
    return ranges


def in_ranges(line: int, ranges: Iterable[Sequence[int]]) -> bool:
    """Whether ``line`` falls inside one of ``line_ranges``' ``[first, last]`` pairs."""
    return any(len(pair) == 2 and pair[0] <= line <= pair[1] for pair in ranges)


def coverage_counts(details: Mapping[str, Any]) -> str:
    """``coverage: 6/7 lines, 1/2 branches``: lines and branches apart, never one fraction.

    A patch figure (``scope: changed``) reads ``changed-line coverage: 1/4 lines``, so a
    project and a patch row side by side are told apart.
    """
    what = "changed-line coverage" if details.get("scope") == "changed" else "coverage"
    text = f"{what}: {details.get('covered_lines', 0)}/{details.get('num_statements', 0)} lines"
    if "num_branches" in details:
        text += f", {details.get('covered_branches', 0)}/{details['num_branches']} branches"
    return text
