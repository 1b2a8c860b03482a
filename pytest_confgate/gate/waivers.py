"""Waivers (issue 3): excuse a named finding, with a written reason, until a date.

Pure: the date is passed in. An active waiver removes the matching findings from a lint or
security metric and its counts; an expired one excuses nothing and says so, so that debt
comes back into view on the day its reason runs out.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from pytest_confgate.config import Waiver
from pytest_confgate.models import EvalMetric
from pytest_confgate.paths import glob_match, normalize_path

_COUNTS = {
    "lint_score": ("violations", "files_checked", "files_with_violations"),
    "security_score": ("findings", "files_scanned", "files_with_findings"),
}


def waiver_status(waiver: Waiver, today: dt.date) -> str:
    """``active`` through its ``expires`` day, ``expired`` after it."""
    return "active" if today <= waiver.expires else "expired"


def apply_waivers(
    metric: EvalMetric, waivers: Sequence[Waiver], today: dt.date
) -> tuple[EvalMetric, dict[int, int]]:
    """The metric with findings excused by active waivers removed, and excused counts by index.

    Only lint and security metrics carry findings; others are returned unchanged.
    """
    counts = _COUNTS.get(metric.type)
    if counts is None or not metric.available or not waivers:
        return metric, {}
    items = list(metric.details.get("items", []))
    kept: list[dict[str, Any]] = []
    excused: dict[int, int] = {}
    for item in items:
        index = _matching(waivers, item, today)
        if index is None:
            kept.append(item)
        else:
            excused[index] = excused.get(index, 0) + 1
    if not excused:
        return metric, {}
    return _recount(metric, kept, counts, sum(excused.values())), excused


def _matching(waivers: Sequence[Waiver], item: dict[str, Any], today: dt.date) -> int | None:
    path = normalize_path(str(item.get("file", "")))
    for index, waiver in enumerate(waivers):
        if waiver_status(waiver, today) != "active" or waiver.rule != item.get("rule"):
            continue
        if any(glob_match(pattern, path) for pattern in waiver.paths):
            return index
    return None


def _recount(
    metric: EvalMetric, kept: list[dict[str, Any]], counts: tuple[str, str, str], excused: int
) -> EvalMetric:
    total_key, checked_key, failing_key = counts
    details = dict(metric.details)
    checked = int(details.get(checked_key, 0))
    failing = len({str(item.get("file")) for item in kept})
    details.update({"items": kept, total_key: len(kept), failing_key: failing, "waived": excused})
    if metric.type == "security_score":
        by_severity = dict.fromkeys(("HIGH", "MEDIUM", "LOW"), 0)
        for item in kept:
            severity = str(item.get("severity"))
            by_severity[severity] = by_severity.get(severity, 0) + 1
        details["by_severity"] = by_severity
    value = (checked - failing) / checked if checked else metric.value
    return metric.model_copy(update={"value": value, "details": details})


def waiver_report(
    waivers: Sequence[Waiver], excused: dict[int, int], today: dt.date
) -> list[dict[str, Any]]:
    """One entry per configured waiver for the report: status and findings excused."""
    return [
        {
            "rule": waiver.rule,
            "paths": list(waiver.paths),
            "reason": waiver.reason,
            "expires": waiver.expires.isoformat(),
            "status": waiver_status(waiver, today),
            "excused": excused.get(index, 0),
        }
        for index, waiver in enumerate(waivers)
    ]
