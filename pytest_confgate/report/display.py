"""How numbers read in every report: percentages that never hide a failing value.

Leaf: the policy words its reasons with these, and every writer shows values with them, so a
value and its threshold read the same everywhere (SPEC 6: thresholds compare raw values,
rounding is for display only).
"""

from __future__ import annotations


def format_fraction(value: float, digits: int = 2) -> str:
    """A fraction as a percentage for people: 0.6996 -> ``69.96%``."""
    return f"{value * 100:.{digits}f}%"


def format_pair(value: float, threshold: float) -> tuple[str, str]:
    """Format a value and its threshold so that unequal numbers never print the same."""
    for digits in range(2, 9):
        shown, floor = format_fraction(value, digits), format_fraction(threshold, digits)
        if shown != floor or value == threshold:
            return shown, floor
    return repr(value), repr(threshold)
