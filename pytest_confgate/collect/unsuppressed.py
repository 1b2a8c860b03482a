"""Findings that a suppression added by the change would hide still count (issue 15).

``# noqa`` and ``# nosec`` are how a change silences ruff and bandit on exactly the line it
should be judged on. When the change added such comments, the lint and security collectors
run their tool a second time with ``--ignore-noqa`` / ``--ignore-nosec`` on only those files,
and ``reveal`` adds the findings on the lines those comments cover to the first run's
metric. Suppressions already on the base keep working: their lines are not looked at.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_confgate.models import EvalMetric, MetricStatus

Hidden = Mapping[str, Sequence[tuple[int, int]]]
"""Root-relative file -> line ranges covered by a suppression the change added."""

_COUNTS = {
    "lint_score": ("violations", "files_checked", "files_with_violations"),
    "security_score": ("findings", "files_scanned", "files_with_findings"),
}


def reveal(metric: EvalMetric, unmasked: EvalMetric, hidden: Hidden, label: str) -> EvalMetric:
    """``metric`` plus the findings of ``unmasked`` (the run that ignored ``label``) that lie
    on lines ``hidden`` covers; a failed second run fails the metric closed."""
    if not metric.available:
        return metric
    if not unmasked.available:
        reason = (
            f"cannot check the lines where the change added `{label}`: "
            f"{unmasked.reason or 'the second run gave no result'}"
        )
        return metric.model_copy(update={"value": None, "status": MetricStatus.ERROR,
                                         "reason": reason})
    items: list[dict[str, Any]] = list(metric.details.get("items", []))
    seen = {_key(item) for item in items}
    found = [
        {**item, "message": f"{item.get('message')} (hidden by a `{label}` this change added)"}
        for item in unmasked.details.get("items", [])
        if _key(item) not in seen and _covered(item, hidden)
    ]
    details = {**metric.details, "suppressed_by_change": len(found)}
    if not found:
        return metric.model_copy(update={"details": details})
    total_key, checked_key, failing_key = _COUNTS[metric.type]
    items = sorted([*items, *found], key=lambda i: (i.get("file"), i.get("line"), i.get("column")))
    failing = len({item.get("file") for item in items})
    details.update({"items": items, total_key: len(items), failing_key: failing})
    if "by_severity" in details:
        by_severity = dict(details["by_severity"])
        for item in found:
            severity = str(item.get("severity"))
            by_severity[severity] = by_severity.get(severity, 0) + 1
        details["by_severity"] = by_severity
    checked = int(details.get(checked_key, 0)) or 1
    value = max(0.0, (checked - failing) / checked)
    return metric.model_copy(update={"value": value, "details": details})


def _key(item: Mapping[str, Any]) -> tuple[Any, ...]:
    return item.get("rule"), item.get("file"), item.get("line"), item.get("column")


def _covered(item: Mapping[str, Any], hidden: Hidden) -> bool:
    line = item.get("line")
    ranges = hidden.get(str(item.get("file")), ())
    return isinstance(line, int) and any(first <= line <= last for first, last in ranges)
