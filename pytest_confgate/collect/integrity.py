"""``test_integrity`` (issue 15): 1.0 when the change leaves its evidence alone, else 0.0.

The findings come from ``tamper.ChangeAnalysis`` (base through git, head from the working
tree); each one is a ``details.items`` entry naming the file and line. What a finding does to
the verdict is the policy's business: ``details.tier_floor`` says which tier the floor rule
in ``gate.tiers`` raises the change to (None when the metric is advisory or when
``max_test_tampering`` makes findings a hard failure instead).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from pytest_confgate.collect.tamper import ChangeAnalysis
from pytest_confgate.config import IntegrityMetricConfig
from pytest_confgate.exceptions import EvidenceError
from pytest_confgate.models import EvalMetric, MetricStatus
from pytest_confgate.paths import glob_match

MAX_ITEMS = 500
"""More findings than this are counted but not listed (the report stays readable)."""
NO_BASE = (
    "no base to compare the change against: set `base_ref:` in the configuration, pass "
    "--confgate-base, or run in a pull request (GITHUB_BASE_REF); or remove the "
    "test_integrity entry (it is on by default whenever a base is known)"
)


def integrity_metric(
    config: IntegrityMetricConfig, analysis: ChangeAnalysis | None
) -> EvalMetric:
    """The ``test_integrity`` metric; without a base, or when git fails, an error."""
    details: dict[str, Any] = {"tool": "confgate", "version": None, "duration_s": 0.0}
    if analysis is None:
        return _error(NO_BASE, details)
    try:
        report = analysis.report()
    except EvidenceError as exc:
        details["duration_s"] = analysis.duration_s
        return _error(f"cannot compare the change with its base: {exc}", details)
    counted = [f for f in report.findings if not _excluded(f.file, config.exclude)]
    floor = None if config.advisory or config.max_test_tampering is not None else (
        config.raise_tier_to
    )
    details.update(
        duration_s=analysis.duration_s,
        files_compared=report.files,
        findings=len(counted),
        by_rule=dict(sorted(Counter(f.rule for f in counted).items())),
        items=[finding.as_item() for finding in counted[:MAX_ITEMS]],
        excluded=len(report.findings) - len(counted),
        unreadable=list(report.unreadable),
        tier_floor=floor,
    )
    return EvalMetric(
        type="test_integrity",
        value=0.0 if counted else 1.0,
        status=MetricStatus.OK,
        details=details,
    )


def _excluded(path: str, patterns: list[str]) -> bool:
    return any(glob_match(pattern, path) for pattern in patterns)


def _error(reason: str, details: dict[str, Any]) -> EvalMetric:
    return EvalMetric(type="test_integrity", status=MetricStatus.ERROR, reason=reason,
                      details=details)
